// In-place writes into views, rewritten into functional form (see pass_view_writes.h).
#include "torch/pass_view_writes.h"

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace oxport {

namespace jit = torch::jit;

namespace {

using c10::Symbol;

bool isInplace(const jit::Node* n) {
  const std::string k = n->kind().toQualString();
  if (k.rfind("aten::", 0) != 0 || k.size() < 8 || k.back() != '_') return false;
  return k.compare(k.size() - 2, 2, "__") != 0;
}

// The views this pass can scatter a write back through.
bool isInvertibleView(const jit::Node* n) {
  static const std::unordered_set<std::string> kinds = {
      "aten::slice", "aten::select",  "aten::narrow",   "aten::view",    "aten::reshape", "aten::_reshape_alias",
      "aten::view_as", "aten::unsqueeze", "aten::squeeze", "aten::transpose", "aten::t",     "aten::permute",
      "aten::detach", "aten::alias",  "aten::flatten",  "aten::unflatten"};
  return kinds.count(n->kind().toQualString()) != 0;
}

// Any op whose output aliases its first input (what a write through it would reach).
bool isViewOp(const jit::Node* n) {
  static const std::unordered_set<std::string> kinds = {
      "aten::slice",  "aten::select",   "aten::narrow",  "aten::view",     "aten::_reshape_alias", "aten::view_as",
      "aten::unsqueeze", "aten::squeeze", "aten::transpose", "aten::t",    "aten::permute",        "aten::expand",
      "aten::expand_as", "aten::as_strided", "aten::diagonal", "aten::unfold", "aten::movedim",    "aten::alias",
      "aten::detach", "aten::unflatten", "aten::swapaxes", "aten::swapdims", "aten::reshape", "aten::flatten"};
  return kinds.count(n->kind().toQualString()) != 0;
}

// The node of `u`'s ancestors (u included) that lives in block `b`, or nullptr.
jit::Node* ancestorIn(jit::Node* u, jit::Block* b) {
  while (u && u->owningBlock() != b) {
    jit::Block* ob = u->owningBlock();
    u = ob ? ob->owningNode() : nullptr;
  }
  return u;
}

// Replaces the uses of `from` that come after `after` (in its block, or nested in a later node).
void replaceUsesAfter(jit::Value* from, jit::Value* to, jit::Node* after) {
  std::vector<jit::Use> uses = from->uses();
  for (const auto& use : uses) {
    jit::Node* a = ancestorIn(use.user, after->owningBlock());
    if (a && a != after && a->isAfter(after)) use.user->replaceInput(use.offset, to);
  }
}

bool usedAfter(jit::Value* v, jit::Node* after) {
  for (const auto& use : v->uses()) {
    jit::Node* a = ancestorIn(use.user, after->owningBlock());
    if (a && a != after && a->isAfter(after)) return true;
  }
  return false;
}

jit::Value* insert(jit::Graph& g, const char* op, std::vector<jit::NamedValue> args) {
  return g.insert(Symbol::fromQualString(op), args);
}

// The out-of-place form of in-place `n` applied to `target` (the view), or nullptr.
jit::Value* functionalForm(jit::Graph& g, jit::Node* n, jit::Value* target) {
  const std::string k = n->kind().toQualString();
  if (k == "aten::copy_") {
    jit::Value* src = insert(g, "aten::type_as", {n->input(1), target});
    return insert(g, "aten::expand_as", {src, target});
  }
  if (k == "aten::zero_") return insert(g, "aten::zeros_like", {target});
  const c10::FunctionSchema* schema = n->maybeSchema();
  if (!schema) return nullptr;
  std::vector<jit::NamedValue> args{target};
  for (size_t i = 1; i < n->inputs().size(); ++i) {
    const auto& schema_args = schema->arguments();
    std::string name = i < schema_args.size() ? schema_args[i].name() : std::string();
    args.emplace_back(name.empty() ? jit::NamedValue(n->input(i)) : jit::NamedValue(name, n->input(i)));
  }
  try {
    return g.insert(Symbol::fromQualString(k.substr(0, k.size() - 1)), args);
  } catch (const std::exception&) {
    return nullptr;  // no functional overload matches
  }
}

// `updated` is the new value of view node `v`'s output: the new value of its input.
jit::Value* scatterBack(jit::Graph& g, jit::Node* v, jit::Value* updated) {
  const std::string k = v->kind().toQualString();
  jit::Value* parent = v->input(0);
  if (k == "aten::slice")
    return insert(g, "aten::slice_scatter", {parent, updated, v->input(1), v->input(2), v->input(3), v->input(4)});
  if (k == "aten::select") return insert(g, "aten::select_scatter", {parent, updated, v->input(1), v->input(2)});
  if (k == "aten::narrow") {
    jit::Value* end = insert(g, "aten::add", {v->input(2), v->input(3)});
    jit::Value* one = g.insertConstant(int64_t(1));
    return insert(g, "aten::slice_scatter", {parent, updated, v->input(1), v->input(2), end, one});
  }
  if (k == "aten::detach" || k == "aten::alias") return updated;
  if (k == "aten::unsqueeze") return insert(g, "aten::squeeze", {updated, v->input(1)});
  if (k == "aten::transpose") return insert(g, "aten::transpose", {updated, v->input(1), v->input(2)});
  if (k == "aten::t") return insert(g, "aten::t", {updated});
  if (k == "aten::permute") {
    auto dims = jit::toIValue(v->input(1));
    if (!dims || !dims->isIntList()) return nullptr;
    std::vector<int64_t> p = dims->toIntVector();
    std::vector<int64_t> inv(p.size());
    const int64_t r = static_cast<int64_t>(p.size());
    for (int64_t i = 0; i < r; ++i) inv[static_cast<size_t>((p[static_cast<size_t>(i)] % r + r) % r)] = i;
    return insert(g, "aten::permute", {updated, g.insertConstant(c10::IValue(inv))});
  }
  // view/reshape/squeeze/flatten/unflatten: back to the parent's sizes.
  return insert(g, "aten::reshape", {updated, insert(g, "aten::size", {parent})});
}

// Replays view node `v` (an alias of the old base made before the write) on `new_parent` for
// the reads after `after`, and the views made from it in turn.
void replayAliases(jit::Graph& g, jit::Value* old_parent, jit::Value* new_parent, jit::Node* after,
                   const std::unordered_set<jit::Node*>& skip) {
  std::vector<jit::Use> uses = old_parent->uses();
  for (const auto& use : uses) {
    jit::Node* v = use.user;
    if (skip.count(v) || !isViewOp(v) || use.offset != 0 || v->owningBlock() != after->owningBlock() ||
        !after->isAfter(v))
      continue;
    jit::Value* alias = v->output();
    if (!usedAfter(alias, after)) {
      // Its own views may still be read later.
      jit::Node* copy = g.createClone(v, [&](jit::Value* in) { return in == old_parent ? new_parent : in; });
      copy->insertBefore(after);
      replayAliases(g, alias, copy->output(), after, skip);
      if (!copy->output()->hasUses()) copy->destroy();
      continue;
    }
    jit::Node* copy = g.createClone(v, [&](jit::Value* in) { return in == old_parent ? new_parent : in; });
    copy->insertBefore(after);
    replaceUsesAfter(alias, copy->output(), after);
    replayAliases(g, alias, copy->output(), after, skip);
  }
}

// Rewrites the write `n` if it can; returns whether it did.
bool rewrite(jit::Graph& g, jit::Node* n) {
  jit::Value* target = n->input(0);
  if (!isViewOp(target->node())) return false;
  std::vector<jit::Node*> chain;  // innermost (producing target) first
  jit::Value* base = target;
  while (isViewOp(base->node())) {
    jit::Node* v = base->node();
    if (!isInvertibleView(v) || v->owningBlock() != n->owningBlock()) return false;
    chain.push_back(v);
    base = v->input(0);
  }
  // A base from an outer block (a tensor a loop body or a branch writes into) would need the new
  // value carried out of this block: left to the converters' refusal.
  if (base->node()->owningBlock() != n->owningBlock()) return false;

  jit::WithInsertPoint guard(n);
  jit::Value* updated = functionalForm(g, n, target);
  if (!updated) return false;
  std::unordered_map<jit::Value*, jit::Value*> new_value{{target, updated}};
  jit::Value* cur = updated;
  for (jit::Node* v : chain) {
    cur = scatterBack(g, v, cur);
    if (!cur) return false;
    new_value[v->input(0)] = cur;
  }
  // Reads after the write see the new values: the base, every view in the chain, the op's own
  // result, and aliases of any of them made before the write.
  std::unordered_set<jit::Node*> skip(chain.begin(), chain.end());
  skip.insert(n);
  for (auto& [old_v, new_v] : new_value) replaceUsesAfter(old_v, new_v, n);
  for (auto& [old_v, new_v] : new_value) replayAliases(g, old_v, new_v, n, skip);
  n->output()->replaceAllUsesWith(updated);
  n->destroy();
  return true;
}

int rewriteBlock(jit::Graph& g, jit::Block* b) {
  int count = 0;
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;  // n may be destroyed; what the rewrite inserts goes before it
    for (jit::Block* sb : n->blocks()) count += rewriteBlock(g, sb);
    if (isInplace(n) && n->inputs().size() >= 1 && n->outputs().size() == 1 && rewrite(g, n)) ++count;
  }
  return count;
}

}  // namespace

int functionalizeViewWrites(jit::Graph& g) { return rewriteBlock(g, g.block()); }

}  // namespace oxport
