// Private to the frontend: the example run on meta tensors.
//
// The values that depend on the example inputs ("dynamic") only need their shapes and dtypes,
// so the run first tries them as meta tensors (no data, no compute); static values (parameters,
// constants, what is folded) stay real. Whatever needs a dynamic value's data (a condition or
// trip count computed from a tensor, item(), an op without a Meta kernel in libtorch, an in-place
// write into a real tensor) throws MetaFallback, and the whole run starts again on real tensors
// exactly as before (exampleRun), from a clean state. OXPORT_META_RUN=0 skips the meta try.
#pragma once

#include <stdexcept>
#include <string>

#include <torch/csrc/jit/runtime/operator.h>

namespace oxport {

struct MetaFallback : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool holdsMeta(const c10::IValue& v);
bool holdsRealTensor(const c10::IValue& v);

// The same value with every tensor as a meta tensor of the same sizes, strides and dtype (no
// data is copied; the original stays as it is).
c10::IValue toMeta(const c10::IValue& v);

// Ops libtorch 1.13 has no Meta kernel for in C++ (Python's torch._meta_registrations are not
// there), the hot ones of CNNs: their result computed here from the arguments' shapes, in place
// of the op on `stack` (every tensor meta already). Returns false when it does not apply; any
// argument the real op would reject throws MetaFallback so the real run reports it.
bool metaRule(const std::string& kind, torch::jit::Stack& stack, size_t nout);

// Ops without a Meta kernel whose results' shapes and dtypes follow from their arguments' shapes,
// dtypes and static values alone (roll, 3-D pools, grid_sampler ...; meta_shape_ops.cpp).
bool isShapeOnlyOp(const std::string& kind);
// Runs such an op on `stack` (its arguments as they were before toMeta) with zero-filled CPU
// tensors for the meta ones, and turns its results into meta tensors; what the op rejects throws
// MetaFallback.
void runShapeOnlyOp(const std::string& kind, torch::jit::Operation& op, torch::jit::Stack& stack);

}  // namespace oxport
