// Private: unrolling loops of a count known at export time that build lists of tensors, the one
// mechanism for it. Two callers decide the count: the pass before the example run, for counts that
// are constants once the export-time constants are folded (torchvision's RAFT builds its
// correlation pyramid with `for _ in range(self.num_levels - 1): pyramid.append(..)`), and the
// example run, for counts only the run finds static (`for i, s in enumerate(self.strides)` in
// YOLOv8's make_anchors, `[f(x) for x in feats]`: len() of a list of fixed length). The body is
// copied the same way for both, and for graph_mode "trace" (unroll.cpp).
#pragma once

#include <functional>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "oxport/diagnostic.h"

namespace oxport {

// The most copies of a loop's body an unrolled loop makes.
constexpr int64_t kMaxUnrolledTrips = 64;

// Copies the nodes of block `b` before `before`, with `inputs` standing for b's inputs; returns the
// copies of b's outputs. A copy keeps its original's source range, module scope, inlined call stack
// and debug name (made unique), so diagnostics about it point at the model's line and module.
std::vector<torch::jit::Value*> copyBlockBefore(torch::jit::Block* b, torch::jit::Node* before,
                                                const std::vector<torch::jit::Value*>& inputs);

// Whether `loop` builds a list and can be unrolled once its count is known: it never breaks (its
// body's condition is the constant true) and it changes a list made before it in place
// (`outs.append(t)`; before pass_list_mutation) or carries a list of tensors (after it). Its elements
// may differ in shape, which an ONNX sequence carried by a Loop cannot hold before opset 13, and a
// later `for x in outs` or len() then reads a static length.
bool buildsList(torch::jit::Node* loop);

// Whether `loop` never breaks and changes in place a list made before it (at run time, after
// pass_list_mutation: a list of numbers, `[size for _ in range(dim)]` in F.interpolate, or a list
// stored elsewhere too), which has no form inside an ONNX Loop at any opset.
bool changesListInPlace(torch::jit::Node* loop);

// Replaces `loop` (which runs `trips` times: the caller knows the count, and that its condition
// starts true) by `trips` copies of its body before it, the iteration number a constant in each and
// the carried values threaded from one copy to the next; the loop's outputs are replaced by the last
// copy's values. `each(first, end)`, when given, is called after each copy with its nodes [first,
// end) (the example run runs them as they are made). The loop node is left in place, without uses:
// the caller destroys it.
Status unrollFixedLoop(torch::jit::Node* loop, int64_t trips,
                       const std::function<Status(torch::jit::Node*, torch::jit::Node*)>& each = nullptr);

// The pass: each prim::Loop (at any depth) whose trip count is a constant of at most
// kMaxUnrolledTrips, whose condition is the constant true and which buildsList is unrolled.
// Returns the number of loops unrolled.
int unrollListBuildingLoops(torch::jit::Graph& g);

}  // namespace oxport
