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

}  // namespace oxport
