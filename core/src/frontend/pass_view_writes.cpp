// In-place writes into views, rewritten into functional form (see pass_view_writes.h).
#include "frontend/pass_view_writes.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/jit_util.h"

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
      "aten::detach", "aten::alias",  "aten::flatten",  "aten::unflatten", "aten::swapaxes", "aten::swapdims",
      "aten::movedim", "aten::diagonal"};
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

// In-place ops whose out-of-place form makes another dtype: `masks.gt_(0.5)` (YOLACT) keeps masks'
// float dtype, gt makes bool. TorchScript's RemoveTensorMutation rewrites them to the out-of-place
// op as it is (torch 1.13), so this pass takes them even on a whole tensor (functionalForm casts).
bool changesDtype(const jit::Node* n) {
  static const std::unordered_set<std::string> kinds = {
      "aten::eq_", "aten::ne_", "aten::lt_", "aten::gt_", "aten::le_", "aten::ge_", "aten::greater_",
      "aten::less_", "aten::greater_equal_", "aten::less_equal_", "aten::not_equal_", "aten::logical_and_",
      "aten::logical_or_", "aten::logical_xor_", "aten::logical_not_"};
  return kinds.count(n->kind().toQualString()) > 0;
}

// The out-of-place form of in-place `n` applied to `target` (the view), or nullptr. An in-place op
// keeps its target's dtype: the out-of-place result is cast back to it (type_as, nothing when the
// dtypes agree), which comparisons and promotions (half.add_(float)) need.
jit::Value* functionalForm(jit::Graph& g, jit::Node* n, jit::Value* target) {
  const std::string k = n->kind().toQualString();
  if (k == "aten::copy_") {
    jit::Value* src = insert(g, "aten::type_as", {n->input(1), target});
    return insert(g, "aten::expand_as", {src, target});
  }
  if (k == "aten::zero_") return insert(g, "aten::zeros_like", {target});
  if (k == "aten::fill_diagonal_") {  // (self, fill_value, wrap): a matrix's; wrap matters for tall ones only
    auto wrap = jit::toIValue(n->input(2));
    if (!wrap || !wrap->isBool() || wrap->toBool()) return nullptr;
    jit::Value* zero = g.insertConstant(int64_t(0));
    jit::Value* one = g.insertConstant(int64_t(1));
    // A matrix's only (an N-d one fills x[i, i, ..., i]): t() fails the example run on others; the
    // main diagonal of t(target) is target's.
    jit::Value* diag = insert(g, "aten::diagonal", {insert(g, "aten::t", {target}), zero, zero, one});
    jit::Value* filled = insert(g, "aten::full_like", {diag, n->input(1)});
    return insert(g, "aten::diagonal_scatter", {target, filled, zero, zero, one});
  }
  // The functional overload with the same arguments (add_.Tensor -> add.Tensor, floor_divide_.Tensor
  // -> floor_divide): a node of the kind without '_' on the same inputs, kept only if an operator
  // matches their types exactly (no implicit Tensor -> Scalar conversion, which would pick
  // add.Scalar for a tensor `other` and fail at run time).
  if (!n->maybeSchema()) return nullptr;
  jit::Node* f = g.create(Symbol::fromQualString(k.substr(0, k.size() - 1)), n->inputs(), 1);
  f->replaceInput(0, target);
  f->output()->setType(n->output()->type());
  const c10::FunctionSchema* schema = f->maybeSchema();
  if (!schema || schema->arguments().size() != n->inputs().size()) {
    f->destroy();
    return nullptr;  // no functional overload matches
  }
  f->setSourceRange(n->sourceRange());
  if (n->scope()) f->setScope(n->scope());
  g.insertNode(f);
  return insert(g, "aten::type_as", {f->output(), target});
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
  if (k == "aten::transpose" || k == "aten::swapaxes" || k == "aten::swapdims")
    return insert(g, "aten::transpose", {updated, v->input(1), v->input(2)});
  if (k == "aten::movedim") return insert(g, "aten::movedim", {updated, v->input(2), v->input(1)});
  if (k == "aten::t") return insert(g, "aten::t", {updated});
  if (k == "aten::diagonal")
    return insert(g, "aten::diagonal_scatter", {parent, updated, v->input(1), v->input(2), v->input(3)});
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

// Is node `v` before `after`, in its block or in a block around it (so that `after` can read it)?
bool dominates(jit::Node* v, jit::Node* after) {
  jit::Node* a = ancestorIn(after, v->owningBlock());
  return a && a != v && a->isAfter(v);
}

// Replays the views of `old_parent` made before `after` (aliases of the old value, in its block or
// around it) on `new_parent`, inserted before `at`, for the reads after `after` in its block; and
// the views made from them in turn.
void replayAliases(jit::Graph& g, jit::Value* old_parent, jit::Value* new_parent, jit::Node* after, jit::Node* at,
                   const std::unordered_set<jit::Node*>& skip) {
  std::vector<jit::Use> uses = old_parent->uses();
  for (const auto& use : uses) {
    jit::Node* v = use.user;
    if (skip.count(v) || !isViewOp(v) || use.offset != 0 || !dominates(v, after)) continue;
    jit::Value* alias = v->output();
    jit::Node* copy = g.createClone(v, [&](jit::Value* in) { return in == old_parent ? new_parent : in; });
    copy->insertBefore(at);
    if (usedAfter(alias, after)) replaceUsesAfter(alias, copy->output(), after);
    replayAliases(g, alias, copy->output(), after, at, skip);  // its own views may still be read later
    if (!copy->output()->hasUses()) copy->destroy();
  }
}

// Is `n` nested (at any depth) inside block `b`?
bool inside(jit::Node* n, jit::Block* b) { return ancestorIn(n, b) != nullptr; }

// Inside loop body `body`, the views of `old_parent` made outside it are made again from
// `new_parent` (the loop-carried value) at the start of the body: each iteration reads the view of
// the value the previous one wrote. `at` is where the next one goes.
void rebindViewsInside(jit::Graph& g, jit::Block* body, jit::Value* old_parent, jit::Value* new_parent,
                       jit::Node*& at) {
  std::vector<jit::Use> uses = old_parent->uses();
  for (const auto& use : uses) {
    jit::Node* v = use.user;
    if (!isViewOp(v) || use.offset != 0 || inside(v, body)) continue;
    jit::Node* copy = g.createClone(v, [&](jit::Value* in) { return in == old_parent ? new_parent : in; });
    copy->insertAfter(at);
    at = copy;
    std::vector<jit::Use> vuses = v->output()->uses();
    for (const auto& u : vuses)
      if (inside(u.user, body)) u.user->replaceInput(u.offset, copy->output());
    rebindViewsInside(g, body, v->output(), copy->output(), at);
    if (!copy->output()->hasUses()) {
      if (at == copy) at = copy->prev();
      copy->destroy();
    }
  }
}

// Can a new value made in block `b` be carried out to block `outer` (an If's branches and a
// Loop's body can; other blocks, such as closures, cannot)?
bool carriable(jit::Block* b, jit::Block* outer) {
  for (; b != outer; b = b->owningNode()->owningBlock()) {
    if (!b->owningNode()) return false;
    const jit::Symbol k = b->owningNode()->kind();
    if (k != c10::prim::If && k != c10::prim::Loop) return false;
  }
  return true;
}

// Output index of If/Loop node `e` that already carries a written base, by the base's value seen
// outside `e`.
using Carried = std::unordered_map<jit::Node*, std::unordered_map<jit::Value*, size_t>>;

// `base` (defined in an enclosing block) was written inside block `b`, nested in node e = b's
// owner; `updated` is its value at the end of the write in `b`. Carries the value out through
// every enclosing If (a new output: the written value from `b`, the unchanged base from the other
// branch) and Loop (a new loop-carried value), up to base's block; the reads after each see it.
void carryOut(jit::Graph& g, jit::Block* b, jit::Value* base, jit::Value* updated, Carried& carried) {
  jit::Block* home = base->node()->owningBlock();
  while (b != home) {
    jit::Node* e = b->owningNode();
    auto& slots = carried[e];
    auto found = slots.find(base);
    if (e->kind() == c10::prim::If) {
      if (found != slots.end()) {  // another write into the same base, in the other branch
        b->return_node()->replaceInput(found->second, updated);
        return;
      }
      const size_t idx = e->outputs().size();
      for (jit::Block* sb : e->blocks()) sb->registerOutput(sb == b ? updated : base);
      jit::Value* out = e->addOutput()->setType(base->type());
      slots[base] = idx;
      updated = out;
    } else {  // prim::Loop: (trip count, condition, carried...) -> carried, body (i, carried...)
      if (found != slots.end()) {
        b->return_node()->replaceInput(found->second + 1, updated);
        return;
      }
      const size_t idx = e->outputs().size();
      e->addInput(base);
      jit::Value* p = b->addInput()->setType(base->type());
      b->registerOutput(updated);
      // Every read of the base in the body reads the value carried from the previous iteration,
      // and so do the views of it made before the loop.
      std::vector<jit::Use> uses = base->uses();
      for (const auto& u : uses)
        if (inside(u.user, b) || u.user == b->return_node()) u.user->replaceInput(u.offset, p);
      jit::Node* at = b->param_node();
      rebindViewsInside(g, b, base, p, at);
      // Writes into the base in other branches of an If in the body now find it as `p`.
      for (auto& [node, m] : carried) {
        auto it = m.find(base);
        if (node != e && it != m.end() && inside(node, b)) {
          m[p] = it->second;
          m.erase(base);
        }
      }
      jit::Value* out = e->addOutput()->setType(base->type());
      slots[base] = idx;
      updated = out;
    }
    // After e, in its block: the base and the views of it made before e read the new value.
    replaceUsesAfter(base, updated, e);
    replayAliases(g, base, updated, e, e->next(), {});
    b = e->owningBlock();
  }
}

// Is a view of `v` made before `after` in its block (transitively) read after `after`?
bool aliasReadAfter(jit::Value* v, jit::Node* after) {
  for (const auto& use : v->uses()) {
    jit::Node* u = use.user;
    if (!isViewOp(u) || use.offset != 0 || u->owningBlock() != after->owningBlock() || !after->isAfter(u)) continue;
    if (usedAfter(u->output(), after) || aliasReadAfter(u->output(), after)) return true;
  }
  return false;
}

// "a.b" for module attribute self.a.b read by GetAttr chain `v` from the graph's first input.
std::optional<std::string> attributeKey(jit::Value* v) {
  jit::Node* n = v->node();
  if (n->kind() == c10::prim::Param) return n->owningBlock()->owningNode() || v->offset() != 0 ? std::nullopt
                                                                                                : std::optional<std::string>("");
  if (n->kind() != c10::prim::GetAttr) return std::nullopt;
  auto parent = attributeKey(n->input());
  if (!parent) return std::nullopt;
  return parent->empty() ? n->s(c10::attr::name) : *parent + "." + n->s(c10::attr::name);
}

void collectReads(jit::Block* b, const std::string& key, jit::Node* skip, std::vector<jit::Node*>& out) {
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* sb : n->blocks()) collectReads(sb, key, skip, out);
    if (n != skip && n->kind() == c10::prim::GetAttr && attributeKey(n->output()) == key) out.push_back(n);
  }
}

// A write into a view of a module's tensor (self.cache[:, :n] += x): a scripted forward reads the
// attribute again with a new GetAttr each time. The reads the attribute's first read `base`
// reaches (after it, in its block or nested in a later node) become reads of `base`, so that the
// rewrite's new value reaches them as it reaches any later read of a local tensor. Returns the
// attribute's key, or nothing when `base` is not a module attribute; `merged` counts the reads.
std::optional<std::string> mergeAttributeReads(jit::Graph& g, jit::Value* base, size_t& merged) {
  if (base->node()->kind() != c10::prim::GetAttr || !base->type()->cast<c10::TensorType>()) return std::nullopt;
  auto key = attributeKey(base);
  if (!key) return std::nullopt;
  std::vector<jit::Node*> reads;
  collectReads(g.block(), *key, base->node(), reads);
  for (jit::Node* r : reads) {
    if (!dominates(base->node(), r)) continue;
    r->output()->replaceAllUsesWith(base);  // left for dead-code elimination: the callers iterate over nodes
    ++merged;
  }
  return key;
}

// The ints of a constant list or of a ListConstruct of constants (a traced split's sizes).
std::optional<std::vector<int64_t>> constInts(jit::Value* v) {
  if (auto iv = jit::toIValue(v)) {
    if (iv->isIntList()) return iv->toIntVector();
    return std::nullopt;
  }
  if (v->node()->kind() != c10::prim::ListConstruct) return std::nullopt;
  std::vector<int64_t> out;
  for (jit::Value* in : v->node()->inputs()) {
    auto iv = jit::toIValue(in);
    if (!iv || !iv->isInt()) return std::nullopt;
    out.push_back(iv->toInt());
  }
  return out;
}

// A piece of unbind/split/split_with_sizes/chunk (by prim::ListUnpack or list[i], also through a list
// slice with constant bounds) aliases the tensor it came from, as a view does: `xy, wh = y.chunk(2, 1);
// xy.sigmoid_()` writes into y. The piece's uses are pointed at the same view made explicitly
// (select, or slice with the piece's bounds, inserted after the piece), which this pass can scatter
// back through; returns it, or nullptr when `v` is no such piece or its bounds are not known.
jit::Value* listPieceAsView(jit::Graph& g, jit::Value* v) {
  jit::Node* u = v->node();
  jit::Value* list = nullptr;
  int64_t idx = 0;
  if (u->kind() == c10::prim::ListUnpack) {
    list = u->input();
    idx = static_cast<int64_t>(v->offset());
  } else if (u->kind() == c10::aten::__getitem__ && u->inputs().size() == 2 && u->input(0)->type()->cast<c10::ListType>()) {
    auto i = jit::toIValue(u->input(1));
    if (!i || !i->isInt() || i->toInt() < 0) return nullptr;
    list = u->input(0);
    idx = i->toInt();
  } else {
    return nullptr;
  }
  while (list->node()->kind() == c10::aten::slice && list->type()->cast<c10::ListType>()) {
    jit::Node* sl = list->node();
    auto start = jit::toIValue(sl->input(1));
    auto step = jit::toIValue(sl->input(3));
    if (!start || !step || !step->isInt() || step->toInt() < 1) return nullptr;
    const int64_t s0 = start->isNone() ? 0 : start->toInt();
    if (s0 < 0) return nullptr;
    idx = s0 + idx * step->toInt();
    list = sl->input(0);
  }
  jit::Node* src = list->node();
  const std::string k = src->kind().toQualString();
  if (src->inputs().empty() || !src->input(0)->type()->cast<c10::TensorType>()) return nullptr;
  jit::Value* self = src->input(0);
  jit::WithInsertPoint guard(u->next());
  jit::Value* view = nullptr;
  auto sliceOf = [&](jit::Value* dim, jit::Value* start, jit::Value* end) {
    return insert(g, "aten::slice", {self, dim, start, end, g.insertConstant(int64_t(1))});
  };
  if (k == "aten::unbind" && src->inputs().size() == 2) {
    view = insert(g, "aten::select", {self, src->input(1), g.insertConstant(idx)});
  } else if ((k == "aten::split" || k == "aten::split_with_sizes" || k == "aten::chunk") && src->inputs().size() == 3) {
    jit::Value* dim = src->input(2);
    auto sizes = constInts(src->input(1));
    if (k != "aten::chunk" && sizes) {  // split sizes: the piece's bounds are constants
      const std::vector<int64_t>& sz = *sizes;
      if (idx >= static_cast<int64_t>(sz.size())) return nullptr;
      int64_t start = 0;
      for (int64_t i = 0; i < idx; ++i) start += sz[static_cast<size_t>(i)];
      view = sliceOf(dim, g.insertConstant(start), g.insertConstant(start + sz[static_cast<size_t>(idx)]));
    } else if (src->input(1)->type()->kind() == c10::TypeKind::IntType) {
      // split(size) pieces are `size` long; chunk(n)'s are ceil(dim_size / n); the last one ends at
      // the axis' end, which slice's clamping gives.
      jit::Value* len = src->input(1);
      if (k == "aten::chunk") {
        jit::Value* n_minus_1 = insert(g, "aten::sub", {len, g.insertConstant(int64_t(1))});
        jit::Value* dim_size = insert(g, "aten::size", {self, dim});
        len = insert(g, "aten::floordiv", {insert(g, "aten::add", {dim_size, n_minus_1}), len});
      }
      view = sliceOf(dim, insert(g, "aten::mul", {len, g.insertConstant(idx)}),
                     insert(g, "aten::mul", {len, g.insertConstant(idx + 1)}));
    }
  }
  if (!view) return nullptr;
  view->setType(v->type());
  v->replaceAllUsesWith(view);
  return view;
}

// Before any rewrite: every piece of a list that an in-place op writes into (through views) becomes
// its explicit view, its siblings too, so that a write into one piece is seen by the others, which
// the rewrite then reads from the new base as it does any alias made before the write.
void piecesAsViews(jit::Graph& g, jit::Block* b) {
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* sb : n->blocks()) piecesAsViews(g, sb);
    if (!isInplace(n) || n->inputs().empty()) continue;
    for (jit::Value* v = n->input(0);; v = v->node()->input(0)) {
      jit::Node* u = v->node();
      if (u->kind() == c10::prim::ListUnpack) {
        std::vector<jit::Value*> pieces(u->outputs().begin(), u->outputs().end());
        for (jit::Value* p : pieces)
          if (p->hasUses()) {
            jit::Value* view = listPieceAsView(g, p);
            if (p == v && view) v = view;
          }
      } else if (jit::Value* view = listPieceAsView(g, v)) {
        v = view;
      }
      if (!isViewOp(v->node())) break;
    }
  }
}

// Rewrites the write `n` if it can; returns whether it did.
// The warning about each module tensor written through a view, by its key (one per tensor).
using WriteWarnings = std::map<std::string, Diagnostic>;

bool rewrite(jit::Graph& g, jit::Node* n, Carried& carried, WriteWarnings& warnings) {
  jit::Value* target = n->input(0);
  std::vector<jit::Node*> chain;  // innermost (producing target) first
  jit::Value* base = target;
  for (;;) {
    if (jit::Value* piece = listPieceAsView(g, base)) base = piece;
    if (!isViewOp(base->node())) break;
    jit::Node* v = base->node();
    if (!isInvertibleView(v)) return false;
    chain.push_back(v);
    base = v->input(0);
  }
  target = n->input(0);  // a list piece it was is now its explicit view
  jit::Block* home = base->node()->owningBlock();
  // A base from an outer block (a tensor a loop body or a branch writes into) gets its new value
  // carried out through the If and Loop nodes in between; other blocks keep the refusal.
  if (!carriable(n->owningBlock(), home)) return false;
  // A write into a whole tensor of this block, with no view of it read afterwards, is left to
  // TorchScript's RemoveTensorMutation.
  // fill_diagonal_ has no out-of-place op: it is always rewritten (or refused).
  if (chain.empty() && home == n->owningBlock() && !aliasReadAfter(base, n) && !changesDtype(n) &&
      n->kind().toQualString() != std::string("aten::fill_diagonal_"))
    return false;

  // Does the call read the tensor other than through this write (a later call would see the write)?
  bool read_elsewhere = false;
  for (const jit::Use& u : base->uses())
    read_elsewhere = read_elsewhere || (u.user != n && std::find(chain.begin(), chain.end(), u.user) == chain.end());
  jit::WithInsertPoint guard(n);
  jit::Value* updated = functionalForm(g, n, target);
  if (!updated) return false;
  size_t merged = 0;
  auto key = mergeAttributeReads(g, base, merged);
  if (key && (read_elsewhere || merged > 0)) {
    if (!warnings.count(*key)) {
      Diagnostic w = makeWarning(
          "attribute-write-dropped",
          "forward() writes into self." + *key + " in place (" + n->kind().toQualString() +
              " on a view of it): a later call of the model would read the new value, but an ONNX graph keeps no "
              "state between runs, so the file computes the first call from the model's saved state",
          "keep state out of forward (pass it as an input and return the new value), or accept that the "
          "exported graph is the first call's");
      warnings.emplace(*key, atNode(w, n));
    }
  }
  jit::Value* cur = updated;
  for (jit::Node* v : chain) {
    cur = scatterBack(g, v, cur);
    if (!cur) return false;
  }
  // Reads after the write see the new values: the base, every view in the chain, the op's own
  // result, and aliases of any of them made before the write. The views in the chain are made
  // again from the new base (not bound to the scattered values), so that they stay views of it:
  // a later write into the base or through another view of it reaches them too.
  std::unordered_map<jit::Value*, jit::Value*> new_value{{base, cur}};
  std::vector<jit::Node*> remade;
  jit::Value* parent = cur;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    jit::Node* v = *it;
    jit::Value* old_parent = v->input(0);
    jit::Node* copy = g.createClone(v, [&](jit::Value* in) { return in == old_parent ? parent : in; });
    g.insertNode(copy);
    remade.push_back(copy);
    new_value[v->output()] = copy->output();
    parent = copy->output();
  }
  std::unordered_set<jit::Node*> skip(chain.begin(), chain.end());
  skip.insert(n);
  for (auto& [old_v, new_v] : new_value) replaceUsesAfter(old_v, new_v, n);
  for (auto& [old_v, new_v] : new_value) replayAliases(g, old_v, new_v, n, n, skip);
  n->output()->replaceAllUsesWith(parent);
  for (auto it = remade.rbegin(); it != remade.rend(); ++it)  // innermost first: the unread ones go
    if (!(*it)->output()->hasUses()) (*it)->destroy();
  jit::Block* b = n->owningBlock();
  n->destroy();
  if (b != home) carryOut(g, b, base, cur, carried);
  return true;
}

int rewriteBlock(jit::Graph& g, jit::Block* b, Carried& carried, WriteWarnings& warnings) {
  int count = 0;
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;  // n may be destroyed; what the rewrite inserts goes before it
    for (jit::Block* sb : n->blocks()) count += rewriteBlock(g, sb, carried, warnings);
    if (isInplace(n) && n->inputs().size() >= 1 && n->outputs().size() == 1 && rewrite(g, n, carried, warnings))
      ++count;
  }
  return count;
}

}  // namespace

int functionalizeViewWrites(jit::Graph& g, std::vector<Diagnostic>* warnings) {
  Carried carried;
  WriteWarnings found;
  piecesAsViews(g, g.block());
  const int count = rewriteBlock(g, g.block(), carried, found);
  if (warnings)
    for (auto& [key, w] : found) warnings->push_back(std::move(w));
  return count;
}

}  // namespace oxport
