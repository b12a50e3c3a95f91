// Writes into dicts at constant keys as new dicts (see pass_dict_writes.h).
#include "frontend/pass_dict_writes.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include <torch/csrc/jit/ir/constants.h>

namespace oxport {

namespace jit = torch::jit;

namespace {

struct Entries {
  std::vector<std::pair<c10::IValue, jit::Value*>> items;  // key (a constant), value, in order
};

// The entries of a dict made empty or from a literal with constant keys.
bool initialEntries(jit::Node* def, Entries& out) {
  const std::string kind = def->kind().toQualString();
  if (kind == "aten::dict" && def->inputs().empty()) return true;
  if (kind != "prim::DictConstruct") return false;
  for (size_t i = 0; i + 1 < def->inputs().size(); i += 2) {
    c10::optional<c10::IValue> k = jit::toIValue(def->input(i));
    if (!k) return false;
    out.items.emplace_back(*k, def->input(i + 1));
  }
  return true;
}

bool isSetItem(const jit::Node* n) { return std::string(n->kind().toQualString()) == "aten::_set_item"; }

// Every use of `d` in `b` itself; writes only with constant keys.
bool rewritable(jit::Value* d, jit::Block* b) {
  for (const jit::Use& u : d->uses()) {
    if (u.user->owningBlock() != b) return false;
    if (isSetItem(u.user) && (u.offset != 0 || !jit::toIValue(u.user->input(1)))) return false;
  }
  return true;
}

// ---- dicts read or written inside an if or a loop (a KV cache keyed by layer, carried by a
// decoder's step loop): one value per key, and a bool per key whose presence the control flow
// decides, carried by the Loop or leaving the If like any scripted variable.

bool isDictOp(const jit::Node* n, const char* kind) { return std::string(n->kind().toQualString()) == kind; }

bool isKeyedUse(const jit::Use& u) {
  const jit::Node* n = u.user;
  return u.offset == 0 && n->inputs().size() >= 2 &&
         (isSetItem(n) || isDictOp(n, "aten::__getitem__") || isDictOp(n, "aten::__contains__")) &&
         jit::toIValue(n->input(1)).has_value();
}

// Whether `n` (at any depth of its blocks) reads or writes dict `d`; `writes` collects the keys
// written, in order.
bool touches(const jit::Node* n, const jit::Value* d, std::vector<c10::IValue>* writes) {
  bool any = false;
  for (const jit::Block* b : n->blocks())
    for (const jit::Node* bn : b->nodes()) {
      for (size_t i = 0; i < bn->inputs().size(); ++i)
        if (bn->input(i) == d) {
          any = true;
          if (writes && isSetItem(bn) && i == 0) {
            const c10::IValue k = *jit::toIValue(bn->input(1));
            bool seen = false;
            for (const auto& w : *writes) seen = seen || w == k;
            if (!seen) writes->push_back(k);
          }
        }
      any = touches(bn, d, writes) || any;
    }
  return any;
}

struct KeyState {
  jit::Value* present = nullptr;  // a bool value: the constants true/false, or one the graph computes
  jit::Value* value = nullptr;    // nullptr: never set on this path
};
using DictState = std::vector<std::pair<c10::IValue, KeyState>>;

KeyState* findKey(DictState& s, const c10::IValue& k) {
  for (auto& [key, st] : s)
    if (key == k) return &st;
  return nullptr;
}

struct Scalarizer {
  jit::Graph& g;
  jit::Value* d;
  c10::TypePtr value_type;
  jit::Value* yes;
  jit::Value* no;
  std::vector<jit::Node*> dead;

  KeyState get(DictState& s, const c10::IValue& k) {
    KeyState* st = findKey(s, k);
    return st ? *st : KeyState{no, nullptr};
  }
  void set(DictState& s, const c10::IValue& k, KeyState v) {
    if (KeyState* st = findKey(s, k)) *st = v;
    else s.emplace_back(k, v);
  }
  jit::Value* uninitialized(jit::Node* before) {
    jit::Node* u = g.create(c10::prim::Uninitialized, {}, 1);
    u->output()->setType(value_type);
    u->insertBefore(before);
    return u->output();
  }
  // A dict of the keys present here, for a use that needs the dict itself (returned, len()).
  jit::Value* materialize(DictState& s, jit::Node* before) {
    std::vector<jit::Value*> ins;
    jit::WithInsertPoint guard(before);
    for (const auto& [k, st] : s)
      if (st.present == yes) {
        ins.push_back(g.insertConstant(k));
        ins.push_back(st.value);
      }
    jit::Node* made = g.create(c10::prim::DictConstruct, ins, 1);
    made->output()->setType(d->type());
    made->insertBefore(before);
    return made->output();
  }

  void use(jit::Node* n, DictState& s) {
    const bool keyed = n->inputs().size() >= 2 && n->input(0) == d && jit::toIValue(n->input(1)).has_value();
    if (keyed && isSetItem(n)) {
      set(s, *jit::toIValue(n->input(1)), {yes, n->input(2)});
      dead.push_back(n);
      return;
    }
    if (keyed && isDictOp(n, "aten::__getitem__")) {
      // A key absent here raises KeyError in TorchScript; the paths that read it are guarded by `in`.
      KeyState st = get(s, *jit::toIValue(n->input(1)));
      n->output()->replaceAllUsesWith(st.value ? st.value : uninitialized(n));
      dead.push_back(n);
      return;
    }
    if (keyed && isDictOp(n, "aten::__contains__")) {
      n->output()->replaceAllUsesWith(get(s, *jit::toIValue(n->input(1))).present);
      dead.push_back(n);
      return;
    }
    jit::Value* whole = materialize(s, n);
    for (size_t i = 0; i < n->inputs().size(); ++i)
      if (n->input(i) == d) n->replaceInput(i, whole);
  }

  void walk(jit::Block* b, DictState& s) {
    for (jit::Node* n : b->nodes()) {
      if (n->blocks().empty()) {
        bool reads = false;
        for (jit::Value* in : n->inputs()) reads = reads || in == d;
        if (reads) use(n, s);
        continue;
      }
      if (!touches(n, d, nullptr)) continue;
      if (n->kind() == c10::prim::Loop) loop(n, s);
      else branches(n, s);
    }
  }

  // prim::If: each branch from the state before it; a key's value or presence that the branches
  // leave different becomes an If output.
  void branches(jit::Node* n, DictState& s) {
    std::vector<DictState> after;
    for (jit::Block* b : n->blocks()) {
      after.push_back(s);
      walk(b, after.back());
    }
    std::vector<c10::IValue> keys;
    for (const auto& st : after)
      for (const auto& [k, v] : st) {
        bool seen = false;
        for (const auto& x : keys) seen = seen || x == k;
        if (!seen) keys.push_back(k);
      }
    for (const auto& k : keys) {
      std::vector<KeyState> per;
      for (auto& st : after) per.push_back(get(st, k));
      KeyState out = per.front();
      bool same_present = true, same_value = true;
      for (const auto& p : per) {
        same_present = same_present && p.present == out.present;
        same_value = same_value && p.value == out.value;
      }
      if (!same_present) {
        for (size_t i = 0; i < per.size(); ++i) n->blocks()[i]->registerOutput(per[i].present);
        out.present = n->addOutput()->setType(c10::BoolType::get());
      }
      if (!same_value) {
        for (size_t i = 0; i < per.size(); ++i) {
          jit::Block* b = n->blocks()[i];
          b->registerOutput(per[i].value ? per[i].value : uninitialized(b->return_node()));
        }
        out.value = n->addOutput()->setType(value_type);
      }
      set(s, k, out);
    }
  }

  // prim::Loop: each key written in the body is carried (its value, and whether it is present when
  // that is not known to be true before the loop: `if "prev_key" in state` of an incremental decoder).
  void loop(jit::Node* n, DictState& s) {
    jit::Block* body = n->blocks()[0];
    std::vector<c10::IValue> written;
    touches(n, d, &written);
    DictState inner = s;
    std::vector<bool> carries_presence;
    for (const auto& k : written) {
      KeyState before = get(s, k);
      KeyState in{yes, nullptr};
      carries_presence.push_back(before.present != yes);
      if (carries_presence.back()) {
        n->addInput(before.present);
        in.present = body->addInput()->setType(c10::BoolType::get());
      }
      n->addInput(before.value ? before.value : uninitialized(n));
      in.value = body->addInput()->setType(value_type);
      set(inner, k, in);
    }
    walk(body, inner);
    for (size_t i = 0; i < written.size(); ++i) {
      KeyState fin = get(inner, written[i]);
      KeyState out{yes, nullptr};
      if (carries_presence[i]) {
        body->registerOutput(fin.present);
        out.present = n->addOutput()->setType(c10::BoolType::get());
      }
      body->registerOutput(fin.value);
      out.value = n->addOutput()->setType(value_type);
      set(s, written[i], out);
    }
    for (auto& [k, st] : inner)  // keys only read in the body keep their state
      if (!findKey(s, k)) s.emplace_back(k, KeyState{no, nullptr});
  }
};

// A dict made in block `b` with constant keys, read and written at constant keys inside ifs and
// loops (any other use only in `b`, where every key's presence is known): scalarized.
bool scalarizeDict(jit::Graph& g, jit::Node* def) {
  Entries e;
  if (!initialEntries(def, e)) return false;
  jit::Value* d = def->output();
  jit::Block* b = def->owningBlock();
  auto dt = d->type()->cast<c10::DictType>();
  if (!dt) return false;
  bool nested = false;
  for (const jit::Use& u : d->uses()) {
    if (isKeyedUse(u)) {
      // Inside ifs and loops only (their outputs and carried values take the keys' states).
      for (jit::Block* ub = u.user->owningBlock(); ub != b; ub = ub->owningNode()->owningBlock()) {
        if (!ub->owningNode()) return false;
        const auto k = ub->owningNode()->kind();
        if (k != c10::prim::If && k != c10::prim::Loop) return false;
        nested = true;
      }
      continue;
    }
    if (u.user->owningBlock() != b) return false;
  }
  if (!nested) return false;
  // Keys read must be set somewhere; a use of the whole dict needs every key's presence known.
  std::vector<c10::IValue> keys;
  for (const auto& [k, v] : e.items) keys.push_back(k);
  std::vector<c10::IValue> all_written;
  for (const jit::Use& u : d->uses())
    if (isKeyedUse(u) && isSetItem(u.user)) all_written.push_back(*jit::toIValue(u.user->input(1)));
  for (const jit::Use& u : d->uses())
    if (isKeyedUse(u) && isDictOp(u.user, "aten::__getitem__")) {
      const c10::IValue k = *jit::toIValue(u.user->input(1));
      bool known = false;
      for (const auto& x : keys) known = known || x == k;
      for (const auto& x : all_written) known = known || x == k;
      if (!known) return false;
    }
  {
    std::vector<c10::IValue> sure = keys, unsure;
    auto has = [](const std::vector<c10::IValue>& l, const c10::IValue& k) {
      for (const auto& x : l)
        if (x == k) return true;
      return false;
    };
    for (jit::Node* n = def->next();; n = n->next()) {
      if (n == b->return_node()) {
        for (jit::Value* in : n->inputs())
          if (in == d && !unsure.empty()) return false;
        break;
      }
      if (!n->blocks().empty()) {
        std::vector<c10::IValue> w;
        touches(n, d, &w);
        for (const auto& k : w)
          if (!has(sure, k)) unsure.push_back(k);
        continue;
      }
      bool reads = false;
      for (jit::Value* in : n->inputs()) reads = reads || in == d;
      if (!reads) continue;
      if (isSetItem(n) && n->input(0) == d && jit::toIValue(n->input(1))) {
        const c10::IValue k = *jit::toIValue(n->input(1));
        if (!has(sure, k)) sure.push_back(k);
        std::vector<c10::IValue> rest;
        for (const auto& x : unsure)
          if (!(x == k)) rest.push_back(x);
        unsure = rest;
        continue;
      }
      const bool keyed = n->inputs().size() >= 2 && n->input(0) == d && jit::toIValue(n->input(1)) &&
                         (isDictOp(n, "aten::__getitem__") || isDictOp(n, "aten::__contains__"));
      if (!keyed && !unsure.empty()) return false;
    }
  }
  jit::Value *yes, *no;
  {
    jit::WithInsertPoint guard(g.block()->nodes().front());
    yes = g.insertConstant(true);
    no = g.insertConstant(false);
  }
  Scalarizer sc{g, d, dt->getValueType(), yes, no, {}};
  DictState s;
  for (const auto& [k, v] : e.items) s.emplace_back(k, KeyState{yes, v});
  // The nodes after the definition, in its block (those before it cannot read it).
  for (jit::Node* n = def->next(); n != b->return_node(); n = n->next()) {
    if (n->blocks().empty()) {
      bool reads = false;
      for (jit::Value* in : n->inputs()) reads = reads || in == d;
      if (reads) sc.use(n, s);
      continue;
    }
    if (!touches(n, d, nullptr)) continue;
    if (n->kind() == c10::prim::Loop) sc.loop(n, s);
    else sc.branches(n, s);
  }
  jit::Node* ret = b->return_node();
  for (size_t i = 0; i < ret->inputs().size(); ++i)
    if (ret->input(i) == d) ret->replaceInput(i, sc.materialize(s, ret));
  for (auto it = sc.dead.rbegin(); it != sc.dead.rend(); ++it) (*it)->destroy();
  return true;
}

int rewriteBlock(jit::Graph& g, jit::Block* b) {
  int rewritten = 0;
  for (jit::Node* n : b->nodes())
    for (jit::Block* sb : n->blocks()) rewritten += rewriteBlock(g, sb);
  std::vector<jit::Node*> defs;
  for (jit::Node* n : b->nodes())
    if (n->outputs().size() == 1 && n->output()->type()->kind() == c10::TypeKind::DictType) defs.push_back(n);
  for (jit::Node* def : defs) {
    jit::Value* d = def->output();
    Entries e;
    if (!initialEntries(def, e)) continue;
    if (!rewritable(d, b)) {
      rewritten += scalarizeDict(g, def) ? 1 : 0;
      continue;
    }
    bool any_write = false;
    for (const jit::Use& u : d->uses()) any_write = any_write || isSetItem(u.user);
    if (!any_write) continue;
    // Walk the block from the definition on; every use reads the newest version.
    jit::Value* current = d;
    std::vector<jit::Node*> writes;
    for (jit::Node* n = def->next(); n != b->return_node(); n = n->next()) {
      bool uses = false;
      for (jit::Value* in : n->inputs()) uses = uses || in == d;
      if (!uses) continue;
      if (isSetItem(n) && n->input(0) == d) {
        const c10::IValue key = *jit::toIValue(n->input(1));
        bool replaced = false;
        for (auto& [k, v] : e.items)
          if (k == key) {
            v = n->input(2);
            replaced = true;
          }
        if (!replaced) e.items.emplace_back(key, n->input(2));
        jit::WithInsertPoint guard(n);
        std::vector<jit::Value*> ins;
        for (const auto& [k, v] : e.items) {
          ins.push_back(g.insertConstant(k));
          ins.push_back(v);
        }
        jit::Node* made = g.create(c10::prim::DictConstruct, ins, 1);
        made->output()->setType(d->type());
        made->insertBefore(n);
        made->setSourceRange(n->sourceRange());
        made->setScope(n->scope());
        current = made->output();
        writes.push_back(n);
        continue;
      }
      for (size_t i = 0; i < n->inputs().size(); ++i)
        if (n->input(i) == d) n->replaceInput(i, current);
    }
    jit::Node* ret = b->return_node();
    for (size_t i = 0; i < ret->inputs().size(); ++i)
      if (ret->input(i) == d) ret->replaceInput(i, current);
    for (jit::Node* w : writes) w->destroy();
    rewritten += static_cast<int>(writes.size());
  }
  return rewritten;
}

}  // namespace

int functionalizeDictWrites(jit::Graph& g) { return rewriteBlock(g, g.block()); }

}  // namespace oxport
