// Small helpers shared by converter files.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "convert/args.h"
#include "convert/registry.h"

namespace oxport::convert {

// "To the end" for Slice's ends.
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Expands a 1-element int list to n elements (PyTorch's int-or-tuple arguments).
std::vector<int64_t> expandInts(const std::vector<int64_t>& v, size_t n);

// ONNX pads from PyTorch's symmetric padding: begins then ends.
std::vector<int64_t> symmetricPads(const std::vector<int64_t>& pad);

// Host-side transpose of a 2-D constant (for folding weight transposes).
HostTensor transpose2D(const HostTensor& t);

// Binds a single-output converter result.
inline Status bindOut(Context& ctx, const Node& n, const std::string& name) {
  ctx.bind(n.output(0), name);
  return okStatus();
}

// Arguments of an elementwise op, cast to the dtype the example run produced at n's output.
Result<std::vector<std::string>> promotedInputs(Context& ctx, const Node& n, const std::vector<const Value*>& values);

// promotedInputs of the arguments `names`, read by schema name (the i-th at position i on nodes
// without names).
Result<std::vector<std::string>> promotedArgs(Context& ctx, const Node& n, const std::vector<ArgName>& names);

// The ONNX dtype of a value of type Tensor (its example dtype), int, float or bool (0-d tensors);
// nullopt for other types (a Scalar, a list).
std::optional<DType> typeDType(const Value* v);

// Registers the same converter under several kinds (e.g. aten::relu and aten::relu_).
void addAll(Registry& r, const std::vector<std::string>& kinds, const ConvertFn& fn, int min_opset = kMinOpset,
            int max_opset = kMaxOpset);

// A Reduce* node over `axes` (empty: every axis) in the opset's form: ReduceSum takes its axes as
// an input from opset 13, the other reductions take an attribute up to opset 17.
std::string reduceOver(Context& ctx, const std::string& op, const std::string& x, const std::vector<int64_t>& axes,
                       bool keepdims);

// A loss's `reduction` argument (none 0, mean 1, sum 2; mean when the overload lacks it), read by
// name or at `fallback_index` on nodes without schema names; another value is `bad-argument`.
Result<int64_t> reductionArg(Context& ctx, const Node& n, size_t fallback_index);

// A loss's elementwise result `x` reduced as `reduction` says (reductionArg).
std::string applyReduction(Context& ctx, const std::string& x, int64_t reduction);

// 0, 1, ..., n-1 as int64, for a 0-d or 1-element int64 tensor n that may be dynamic: Range from
// opset 11, NonZero over a tensor of ones before.
std::string arangeOf(Context& ctx, const std::string& n);

// The size of axis `dim` of x, from Shape: a 1-element 1-D int64 tensor (scalar=true: 0-d).
std::string dimSize(Context& ctx, const std::string& x, int64_t dim, bool scalar = false);

// nonzero_numpy(self) and where(condition): one int64 index tensor per dim (ops_index.cpp).
Status convertNonzeroNumpy(Context& ctx, const Node& n);

// Where(c, a, b) with a and b of dtype dt. ONNX Runtime (1.20) has no Where kernel for bool, int8
// or int16 values: those go through int32 and back (exact).
std::string whereTyped(Context& ctx, const std::string& c, const std::string& a, const std::string& b, DType dt);

// The dtype a reduction (or a product, a cumulative op) runs in: ONNX Runtime reduces float,
// double, int32 and int64; float16 and bfloat16 go through float32, bool and the small integers
// through int64.
DType reduceWorkType(DType dt);

// x as `want` (a Cast unless it has that dtype already).
std::string castIf(Context& ctx, const std::string& x, DType have, DType want);

}  // namespace oxport::convert
