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
    if (!initialEntries(def, e) || !rewritable(d, b)) continue;
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
