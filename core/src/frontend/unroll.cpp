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

// Does `loop`'s body read a list of tuples or lists made outside it at the iteration number (`for h
// in [(0, H - ws), (H - ws, H - s), (H - s, H)]` in SwinIR-style calculate_mask, its sizes from the
// input)? No ONNX value holds such a list, so a loop of a static count over one is unrolled at every
// opset, each copy reading its element by a constant index.
static bool readsOuterListAtIteration(jit::Node* loop) {
  jit::Block* body = loop->blocks()[0];
  for (const jit::Use& u : body->inputs()[0]->uses()) {
    jit::Node* r = u.user;
    if (r->kind() != c10::aten::__getitem__ || u.offset != 1) continue;
    auto list = r->input(0)->type()->cast<c10::ListType>();
    const c10::TypeKind elem = list ? list->getElementType()->kind() : c10::TypeKind::TensorType;
    if (elem != c10::TypeKind::TupleType && elem != c10::TypeKind::ListType) continue;
    for (jit::Block* b = r->input(0)->node()->owningBlock(); b; b = b->owningNode() ? b->owningNode()->owningBlock() : nullptr) {
      if (b->owningNode() == loop) break;
      if (!b->owningNode()) return true;  // made outside the loop
    }
  }
  return false;
}

// A loop at the top of forward whose count the run finds static though no constant says it before
// the run (len() of a list of fixed length: `for i, s in enumerate(self.strides)`, `[f(x) for x in
// outs]`), below opset 13: there ONNX Loop cannot carry a sequence, so the list would have to be
// packed into one tensor (its elements of one shape: not YOLO's grids of each level) or refused.
// Counts that are constants before the run were unrolled by the pass (unrollListBuildingLoops, at
// every opset); this is the same unrolling (unrollFixedLoop), each copy run as it is made. A loop
// reading a list of tuples or lists at its iteration number unrolls at every opset.
bool Frontend::unrollsStaticLoop(jit::Node* n) const {
  if (run_.shadow_depth > 0 || n->owningBlock() != graph_->block()) return false;
  if (!run_.statics.count(n->input(0)) || !run_.statics.count(n->input(1))) return false;
  const int64_t trips = run_.env.at(n->input(0)).toInt();
  if (trips < 0 || trips > kMaxUnrolledTrips || !run_.env.at(n->input(1)).toBool()) return false;
  if (readsOuterListAtIteration(n)) return true;
  return options_.opset_version < 13 && buildsList(n);
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
