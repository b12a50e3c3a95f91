// graph_mode "trace": each If replaced by the branch the example inputs take and each Loop by
// one copy of its body per iteration, run as they are made; in script mode, loops of a count only
// the run knows that build lists, below opset 13 (unrollStaticLoop). The copies are made as
// pass_unroll_list_loops.h makes them (copyBlockBefore, unrollFixedLoop).
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "frontend/frontend_impl.h"
#include "frontend/pass_unroll_list_loops.h"
#include "frontend/shape_asserts.h"

namespace oxport {

// ---- graph_mode "trace": what torch.jit.trace would record on the example inputs

// Runs the nodes from `n` up to `end` (same block), replacing every prim::If by a copy of the
// branch taken and every prim::Loop by one copy of its body per iteration; each copy runs as
// soon as it is made (its own Ifs and Loops are replaced in turn). What remains is straight-line
// code: the path the example inputs take.
Status Frontend::runUnrolling(jit::Node* n, jit::Node* end) {
  while (n != end) {
    if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
    if (n->kind() == c10::prim::If) {
      OXPORT_ASSIGN(n, unrollIf(n));
      continue;
    }
    if (n->kind() == c10::prim::Loop) {
      OXPORT_ASSIGN(n, unrollLoop(n));
      continue;
    }
    OXPORT_TRY(step(n));
    run_.executed.insert(n);
    for (auto* in : n->inputs()) freeIfDead(in);
    n = n->next();
  }
  return okStatus();
}

// Drops the example value of `v` once every node using it has run (activations of big models).
void Frontend::freeIfDead(jit::Value* v) {
  if (run_.statics.count(v)) return;
  for (const jit::Use& u : v->uses())
    if (!run_.executed.count(u.user)) return;  // includes the graph's return and not-yet-run copies
  run_.env.erase(v);
}

Result<jit::Node*> Frontend::unrollIf(jit::Node* n) {
  const bool cond = run_.env.at(n->input(0)).toBool();
  size_t raise_branch = 0;
  if (!run_.statics.count(n->input(0)) && isShapeAssert(n, &raise_branch) && raise_branch != (cond ? 0u : 1u))
    warnDroppedAssert(n);  // a check the example passes, not a path: nothing else is lost
  else if (!run_.statics.count(n->input(0)) && isCheck(n, &raise_branch) && raise_branch != (cond ? 0u : 1u))
    warnDroppedCheck(n);  // the same for a check on values: what script mode leaves out
  else if (!run_.statics.count(n->input(0)))
    warnUnrolled(n, std::string("this data-dependent if took its ") + (cond ? "then" : "else") +
                        " branch on the example inputs, and only that branch is exported: inputs that "
                        "would take the other branch get wrong results");
  jit::Node* before = n->prev();
  std::vector<jit::Value*> outs = copyBlockBefore(n->blocks()[cond ? 0 : 1], n, {});
  for (size_t i = 0; i < outs.size(); ++i) n->outputs()[i]->replaceAllUsesWith(outs[i]);
  jit::Node* first = before->next();
  jit::Node* next = first == n ? n->next() : first;
  jit::Value* condition = n->input(0);
  n->destroy();
  freeIfDead(condition);
  return next;
}

// prim::Loop(max_trip_count, condition, carried...) { body(i, carried...) -> (condition, carried...) }:
// each iteration copies the body before the loop node, then makes the copy's results the loop's
// inputs (so later copies, and replacements of Ifs in this one, follow); at the end the loop's
// results are its current inputs.
Result<jit::Node*> Frontend::unrollLoop(jit::Node* n) {
  jit::Block* body = n->blocks()[0];
  const int64_t max_trip = run_.env.at(n->input(0)).toInt();
  bool dynamic_count = !run_.statics.count(n->input(0)) || !run_.statics.count(n->input(1));
  int64_t i = 0;
  for (; i < max_trip && run_.env.at(n->input(1)).toBool(); ++i) {
    jit::Node* before = n->prev();
    jit::Value* iter;
    {
      jit::WithInsertPoint guard(n);
      iter = graph_->insertConstant(i);
    }
    std::vector<jit::Value*> ins{iter};
    std::vector<jit::Value*> previous(n->inputs().begin() + 1, n->inputs().end());
    for (size_t k = 2; k < n->inputs().size(); ++k) ins.push_back(n->input(k));
    std::vector<jit::Value*> outs = copyBlockBefore(body, n, ins);
    for (size_t k = 0; k < outs.size(); ++k) n->replaceInput(k + 1, outs[k]);
    OXPORT_TRY(runUnrolling(before->next(), n));
    dynamic_count = dynamic_count || !run_.statics.count(n->input(1));
    for (auto* v : previous) freeIfDead(v);
  }
  if (dynamic_count)
    warnUnrolled(n, "this loop ran " + std::to_string(i) + " time" + (i == 1 ? "" : "s") +
                        " on the example inputs and is unrolled that many times: inputs that need another "
                        "count (other sizes of a dynamic axis included) get wrong results");
  for (size_t k = 0; k < n->outputs().size(); ++k) n->outputs()[k]->replaceAllUsesWith(n->input(k + 2));
  jit::Node* next = n->next();
  std::vector<jit::Value*> inputs(n->inputs().begin(), n->inputs().end());
  n->destroy();
  for (auto* v : inputs) freeIfDead(v);
  return next;
}

// ---- graph_mode "script": loops of a count only the example run knows, that build lists

// Whether the nodes of `b` end up as straight-line code of forward: `b` is forward's block, or a
// branch of an If decided at export time (its condition static: the lowering inlines the branch
// taken) in one, at any depth. Not a loop's body, which runs once per iteration.
bool Frontend::inlinedBlock(const jit::Block* b) const {
  for (; b->owningNode(); b = b->owningNode()->owningBlock()) {
    jit::Node* owner = const_cast<jit::Node*>(b->owningNode());
    if (owner->kind() != c10::prim::If || !run_.statics.count(owner->input(0))) return false;
  }
  return true;
}

// Does block `b` (at any depth) index a list of tuples or of lists: deformable DETR's `shapes[lid]`
// of (h, w) sizes, SwinIR-style calculate_mask's `for h in [(0, H - ws), (H - ws, H - s), (H - s, H)]`
// with sizes from the input? No ONNX value holds such a list, so only unrolled code, each copy
// reading its element by a constant index (forwardsElement), can read it.
static bool readsNestedList(const jit::Block* b) {
  for (const jit::Node* n : b->nodes()) {
    for (const jit::Block* sb : n->blocks())
      if (readsNestedList(sb)) return true;
    if (n->kind() != c10::aten::__getitem__ || n->inputs().empty()) continue;
    auto lt = n->input(0)->type()->cast<c10::ListType>();
    const c10::TypeKind elem = lt ? lt->getElementType()->kind() : c10::TypeKind::TensorType;
    if (elem == c10::TypeKind::TupleType || elem == c10::TypeKind::ListType) return true;
  }
  return false;
}

// A loop in forward's straight-line code (inlinedBlock) whose count the run finds static though no
// constant says it before the run (len() of a list of fixed length: `for i, s in
// enumerate(self.strides)`, `[f(x) for x in outs]`; a rank: `[size for _ in range(dim)]` in the
// scripted F.interpolate, under Ifs on the rank). Below opset 13 any loop that builds a list: there
// ONNX Loop cannot carry a sequence, so the list would have to be packed into one tensor (its
// elements of one shape: not YOLO's grids of each level) or refused. At every opset a loop that
// changes a list of numbers in place: no ONNX Loop carries one; and one that reads a list of tuples
// or lists (readsNestedList). Counts that are constants before the run were unrolled by the pass
// (unrollListBuildingLoops); this is the same unrolling (unrollFixedLoop), each copy run as it is
// made.
// Is `v`, in loop body `body`, computed from tensors' ranks and static numbers only: the condition
// of Stable Diffusion's `while len(emb_out.shape) < len(h.shape): emb_out = emb_out[..., None]`.
// Ranks are known at export time, so such a loop runs a count the export knows, while the tensor it
// carries changes rank each time, which no ONNX Loop can carry.
static bool rankOnly(const jit::Value* v, const jit::Block* body, const std::unordered_set<jit::Value*>& statics,
                     int depth = 0) {
  if (depth > 32) return false;
  const jit::Node* p = v->node();
  if (p->kind() == c10::prim::Constant) return true;
  bool inside = false;  // made in the body or in a block nested in it
  for (const jit::Block* b = p->owningBlock(); b && !inside; b = b->owningNode() ? b->owningNode()->owningBlock() : nullptr)
    inside = b == body;
  if (!inside || p->kind() == c10::prim::Param)
    return p->kind() != c10::prim::Param && statics.count(const_cast<jit::Value*>(v));
  if (p->kind() == c10::prim::If) {  // `a and b` scripted: an If on a, b in one branch
    if (!rankOnly(p->input(0), body, statics, depth + 1)) return false;
    for (const jit::Block* b : p->blocks())
      if (!rankOnly(b->outputs()[v->offset()], body, statics, depth + 1)) return false;
    return true;
  }
  const std::string k = p->kind().toQualString();
  if (k == "aten::dim") return true;
  if (k == "aten::len" && p->inputs().size() == 1) {
    const jit::Node* sz = p->input(0)->node();
    return sz->kind() == c10::aten::size && sz->inputs().size() == 1;
  }
  static const std::unordered_set<std::string> arith = {
      "aten::lt", "aten::gt", "aten::le", "aten::ge", "aten::eq", "aten::ne", "aten::add", "aten::sub",
      "aten::__not__", "aten::__and__", "aten::__or__"};
  if (!arith.count(k) || p->outputs().size() != 1) return false;
  for (const jit::Value* in : p->inputs())
    if (!in->type()->cast<c10::IntType>() && !in->type()->cast<c10::BoolType>()) return false;
  for (const jit::Value* in : p->inputs())
    if (!rankOnly(in, body, statics, depth + 1)) return false;
  return true;
}

// A while loop of forward's straight-line code whose condition starts static and is computed from
// ranks (rankOnly): unrolled copy by copy until the condition is false (unrollRankLoop).
bool Frontend::unrollsRankLoop(jit::Node* n) const {
  if (run_.shadow_depth > 0 || !inlinedBlock(n->owningBlock())) return false;
  if (!run_.statics.count(n->input(0)) || !run_.statics.count(n->input(1))) return false;
  jit::Block* body = n->blocks()[0];
  // A for loop (its condition the constant true) keeps its form: only while loops are taken.
  if (body->outputs()[0]->node()->kind() == c10::prim::Constant) return false;
  return rankOnly(body->outputs()[0], body, run_.statics);
}

Status Frontend::unrollRankLoop(jit::Node* n) {
  jit::Block* body = n->blocks()[0];
  const int64_t max_trip = run_.env.at(n->input(0)).toInt();
  std::vector<jit::Value*> carried(n->inputs().begin() + 2, n->inputs().end());
  bool cond = run_.env.at(n->input(1)).toBool();
  for (int64_t i = 0; i < max_trip && cond; ++i) {
    if (i >= kMaxUnrolledTrips)
      return nodeError(n, "unsupported-form", "a while loop on tensors' ranks ran more than " +
                                           std::to_string(kMaxUnrolledTrips) + " times on the example inputs");
    jit::Node* before = n->prev();
    std::vector<jit::Value*> ins;
    {
      jit::WithInsertPoint guard(n);
      ins.push_back(graph_->insertConstant(i));
    }
    ins.insert(ins.end(), carried.begin(), carried.end());
    std::vector<jit::Value*> outs = copyBlockBefore(body, n, ins);
    jit::Node* hold = graph_->create(c10::prim::TupleConstruct, outs);  // see unrollFixedLoop
    hold->insertAfter(n);
    Status st = okStatus();
    for (jit::Node* c = before->next(); c != n && st.ok(); c = c->next()) st = step(c);
    outs.assign(hold->inputs().begin(), hold->inputs().end());
    hold->destroy();
    OXPORT_TRY(st);
    if (!run_.statics.count(outs[0]))
      return nodeError(n, "unsupported-form", "a while loop's condition on tensors' ranks was not known at export time");
    cond = run_.env.at(outs[0]).toBool();
    carried.assign(outs.begin() + 1, outs.end());
  }
  for (size_t k = 0; k < n->outputs().size(); ++k) n->outputs()[k]->replaceAllUsesWith(carried[k]);
  run_.unrolled_loops.push_back(n);
  return okStatus();
}

bool Frontend::unrollsStaticLoop(jit::Node* n) const {
  if (run_.shadow_depth > 0 || !inlinedBlock(n->owningBlock())) return false;
  if (!run_.statics.count(n->input(0)) || !run_.statics.count(n->input(1))) return false;
  const int64_t trips = run_.env.at(n->input(0)).toInt();
  if (trips < 0 || trips > kMaxUnrolledTrips || !run_.env.at(n->input(1)).toBool()) return false;
  if (readsNestedList(n->blocks()[0])) return true;
  return options_.opset_version < 13 ? buildsList(n) : changesListInPlace(n);
}

// In forward's straight-line code (inlinedBlock: unrolled loops and branches decided at export time
// included), `l.append(x)` of a number that depends on the inputs to a list made by a
// prim::ListConstruct (`output_size = [size for _ in range(dim)]` in the scripted F.interpolate,
// once unrolled) becomes a new ListConstruct of l's elements and x, which every later node reads
// instead of l: the list's elements stay values of the graph (sizes follow the dynamic axes)
// rather than the example's numbers folded into a list changed in place. Lists also stored
// elsewhere (a container, a loop's or an if's input) keep the in-place form. Returns whether `n`
// was replaced (it is destroyed after the run).
Result<bool> Frontend::appendAsNewList(jit::Node* n) {
  if (n->kind() != c10::aten::append || n->inputs().size() != 2 || run_.shadow_depth > 0 ||
      run_.statics.count(n->input(1)) || !inlinedBlock(n->owningBlock()))
    return false;
  jit::Value* l = n->input(0);
  auto list_type = l->type()->cast<c10::ListType>();
  if (!list_type || l->node()->kind() != c10::prim::ListConstruct) return false;
  const auto elem = list_type->getElementType()->kind();
  if (elem != c10::TypeKind::IntType && elem != c10::TypeKind::FloatType && elem != c10::TypeKind::BoolType)
    return false;
  for (const jit::Use& u : l->uses()) {
    const auto k = u.user->kind();
    if (k == c10::prim::ListConstruct || k == c10::prim::TupleConstruct || k == c10::prim::DictConstruct ||
        k == c10::prim::Loop || k == c10::prim::If || (u.user->kind() == c10::aten::append && u.offset != 0))
      return false;
  }
  std::vector<jit::Value*> elems(l->node()->inputs().begin(), l->node()->inputs().end());
  elems.push_back(n->input(1));
  jit::Node* grown = graph_->createList(list_type->getElementType(), elems);
  grown->insertBefore(n);
  if (l->hasDebugName()) grown->output()->setDebugName(l->debugName());
  grown->setSourceRange(n->sourceRange());
  grown->setScope(n->scope());
  l->replaceAllUsesAfterNodeWith(n, grown->output());
  n->output()->replaceAllUsesWith(grown->output());
  OXPORT_TRY(step(grown));
  run_.unrolled_loops.push_back(n);
  return true;
}

// In forward's straight-line code, `l[i]` of a list literal of tuples at an index the run knows,
// and `a, b = t` of a tuple literal, let later code read the element itself: deformable DETR's
// `for lid, (h, w) in enumerate(shapes)` over `shapes = [(f0.shape[2], f0.shape[3]), ...]`, once
// unrolled, reads the sizes rather than a list of tuples, which has no ONNX value. Returns whether
// `n` was replaced (destroyed after the run).
Result<bool> Frontend::forwardsElement(jit::Node* n) {
  if (run_.shadow_depth > 0 || !inlinedBlock(n->owningBlock())) return false;
  if (n->kind() == c10::aten::__getitem__ && n->inputs().size() == 2) {
    jit::Value* l = n->input(0);
    auto lt = l->type()->cast<c10::ListType>();
    if (!lt || lt->getElementType()->kind() != c10::TypeKind::TupleType ||
        l->node()->kind() != c10::prim::ListConstruct || !run_.statics.count(n->input(1)) ||
        run_.statics.count(n->output()))
      return false;
    for (const jit::Use& u : l->uses())
      if (u.user->kind() != c10::aten::__getitem__ && u.user->kind() != c10::aten::len) return false;
    const int64_t size = static_cast<int64_t>(l->node()->inputs().size());
    int64_t i = run_.env.at(n->input(1)).toInt();
    if (i < 0) i += size;
    if (i < 0 || i >= size) return false;
    jit::Value* elem = l->node()->input(static_cast<size_t>(i));
    n->output()->replaceAllUsesWith(elem);
    // Its example value may have been freed after its last use before this rewrite: the list's has it.
    if (!run_.env.count(elem)) run_.env[elem] = run_.env.at(l).toListRef()[static_cast<size_t>(i)];
    run_.kept_alive.insert(elem);
  } else if (n->kind() == c10::prim::TupleUnpack && n->input(0)->node()->kind() == c10::prim::TupleConstruct &&
             !run_.statics.count(n->input(0))) {
    jit::Node* t = n->input(0)->node();
    if (t->inputs().size() != n->outputs().size()) return false;
    const auto& elements = run_.env.at(n->input(0)).toTupleRef().elements();
    for (size_t k = 0; k < n->outputs().size(); ++k) {
      n->outputs()[k]->replaceAllUsesWith(t->input(k));
      if (!run_.env.count(t->input(k))) run_.env[t->input(k)] = elements[k];
      run_.kept_alive.insert(t->input(k));
    }
  } else {
    return false;
  }
  run_.unrolled_loops.push_back(n);
  return true;
}

// The loop node itself is destroyed after the run (exampleRun): the caller still holds it.
Status Frontend::unrollStaticLoop(jit::Node* n) {
  OXPORT_TRY(unrollFixedLoop(n, run_.env.at(n->input(0)).toInt(), [&](jit::Node* first, jit::Node* end) -> Status {
    for (jit::Node* c = first; c != end; c = c->next()) OXPORT_TRY(step(c));
    return okStatus();
  }));
  run_.unrolled_loops.push_back(n);
  return okStatus();
}

// One warning per construct of the model's code (a loop body copied N times holds N copies).
void Frontend::warnUnrolled(const jit::Node* n, const std::string& what) {
  const SourceLocation loc = locationOf(n);
  const std::string key = std::string(n->kind().toQualString()) + "@" + loc.file + ":" + std::to_string(loc.line) +
                          ":" + std::to_string(loc.column);
  if (!run_.warned_unrolled.insert(key).second) return;
  Diagnostic w = makeWarning("control-flow-unrolled", "graph_mode trace: " + what,
                             "export with graph_mode \"script\" (--graph-mode script) to keep the control flow "
                             "as ONNX If/Loop, or choose example inputs that take the path every input takes");
  run_.warnings.push_back(atNode(w, n));
}


}  // namespace oxport
