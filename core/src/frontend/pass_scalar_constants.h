// Private: arithmetic with a 0-dim tensor constant as `other`, made a Scalar argument as
// libtorch's graph executor makes it before running a loaded model.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

namespace oxport {

// torch.jit.trace records a Python number in `x.mean() * 0.25` or `int_ids * 0.5` as a 0-dim
// tensor constant (float64 for a float, int64 for an int). Run as written, PyTorch's promotion
// gives float64 when the other operand is 0-dim too or of a lower category (an integer tensor);
// the model as users run it (torch.jit.load + forward, whose optimized executor canonicalizes
// these ops) gives what eager gave, float32. The same rewrite on the export's graph: each
// aten::add/sub (Tensor, Tensor, alpha), aten::mul/div (Tensor, Tensor) whose `other` is a 0-dim
// tensor constant takes the Scalar overload with that value. Returns the number of nodes rewritten.
int scalarizeTensorConstants(torch::jit::Graph& g);

}  // namespace oxport
