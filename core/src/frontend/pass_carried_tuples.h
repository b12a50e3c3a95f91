// Private: tuples carried by a scripted loop or leaving an if, split into their elements on the
// TorchScript graph before the example run.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

namespace oxport {

// A `return (a, b)` inside a loop (TorchScript lowers it into a tuple carried by the loop, first
// prim::Uninitialized, and an If that picks it after the loop), or a tuple assigned in both
// branches of an if: each loop-carried value and If output of tuple type becomes one value per
// element (nested tuples too), with a prim::TupleConstruct where the tuple is read, which
// LowerSimpleTuples then resolves. ONNX Loop and If carry tensors, not tuples. Returns the
// number of tuples split.
int splitCarriedTuples(torch::jit::Graph& g);

// A list of tuples of tensors made by a list literal (`pairs: List[Tuple[Tensor, Tensor]] = []`)
// and used only by append, len and indexing (a greedy matcher appending `(row, col)` in a loop that
// breaks on the data, then `for j, (r, c) in enumerate(pairs)`): one list per element, each read
// back into a tuple where the list is indexed, so that lists of tensors carry them (ONNX sequences
// inside loops). Returns the number of lists split.
int splitTupleLists(torch::jit::Graph& g);

}  // namespace oxport
