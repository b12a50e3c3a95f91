// Private: TorchScript asserts on shapes (`assert key.shape == value.shape, f"..."`, the checks of
// nn.MultiheadAttention and kin), which ONNX has no form for and which do not depend on data.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

namespace oxport {

// Whether `n` is an assert whose condition is computed from shapes and metadata only: a prim::If
// without outputs, one branch empty and the other only building a message and raising
// (prim::RaiseException), the condition made of sizes, ranks, dtypes, numbers, bools and
// constants without reading any tensor's elements. `raise_branch` gets the raising branch's index.
// A condition computed from tensor data (x.sum() > 0) is not one: such a raise stays refused.
bool isShapeAssert(const torch::jit::Node* n, size_t* raise_branch);

// Whether `n` is a check whatever its condition reads: a prim::If one of whose branches only builds
// a message and raises (prim::RaiseException, then at most prim::Uninitialized for the If's
// outputs). nn.LSTM's check_forward_args on a packed batch (`int(batch_sizes[0])`) is one.
// `raise_branch` gets the raising branch's index.
bool isCheck(const torch::jit::Node* n, size_t* raise_branch);

// Whether `v` (a condition, a number) is computed from sizes and metadata only, as above.
bool decidedByShapes(const torch::jit::Value* v);

}  // namespace oxport
