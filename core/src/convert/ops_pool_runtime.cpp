// Adaptive average pooling to output sizes computed at run time: F.interpolate(x, scale_factor=s,
// mode='area') is adaptive_avg_pool to floor(in * s), a size traced (and scripted) as arithmetic on
// the input's shape. Along each pooled axis the averaging matrix P[O, L] of PyTorch's windows
// [floor(o L / O), ceil((o + 1) L / O)) (1/window size inside, 0 outside) is built from the sizes
// at run time (Range, or NonZero before opset 11) and applied with MatMul on that axis moved last:
// exact at every input size and every opset from 9. Shapes the export knows fold to constants.
#include "convert/args.h"
#include "convert/pool_runtime.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// P[O, L] for a 0-d output size o and input size len (int64), in dtype dt.
std::string windowMatrix(Context& ctx, const std::string& o, const std::string& len, DType dt) {
  std::string outs = ctx.unsqueeze(arangeOf(ctx, o), {1});  // [O, 1]
  std::string start = ctx.emit1("Div", {ctx.emit1("Mul", {outs, len}), o});
  std::string next = ctx.emit1("Add", {outs, ctx.constInt64s({1}, true)});
  std::string stop = ctx.emit1("Div", {ctx.emit1("Add", {ctx.emit1("Mul", {next, len}), ctx.emit1("Sub", {o, ctx.constInt64s({1}, true)})}), o});
  std::string at = ctx.unsqueeze(arangeOf(ctx, len), {0});  // [1, L]
  std::string in_window = ctx.emit1("And", {ctx.emit1("Not", {ctx.emit1("Less", {at, start})}), ctx.emit1("Less", {at, stop})});
  return ctx.emit1("Div", {ctx.cast(in_window, dt), ctx.cast(ctx.emit1("Sub", {stop, start}), dt)});
}

}  // namespace

Status adaptiveAvgRuntimeSize(Context& ctx, const Node& n, size_t nd) {
  const Args args(ctx, n);
  const Value* self = args.in("self", 0);
  const DType dt = ctx.dtype(self);
  if (dt != DType::Float32 && dt != DType::Float64)
    return ctx.error("unsupported-form", "adaptive average pooling of " + std::string(dtypeName(dt)) + " to a size computed at run time",
                     "pool a float32 or float64 tensor");
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  OXPORT_ASSIGN(std::string sizes, ctx.intsTensor(args.in("output_size", 1)));
  sizes = ctx.reshape(ctx.cast(sizes, DType::Int64), {-1});
  const int rank = ctx.rank(self);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t axis = rank - static_cast<int64_t>(nd) + static_cast<int64_t>(i);
    std::string o = ctx.emit1("Gather", {sizes, ctx.constInt64s({static_cast<int64_t>(i)}, true)}, {attrInt("axis", 0)});
    std::string p_t = ctx.emit1("Transpose", {windowMatrix(ctx, o, dimSize(ctx, x, axis, true), dt)}, {attrInts("perm", {1, 0})});
    if (axis == rank - 1) {
      x = ctx.emit1("MatMul", {x, p_t});
      continue;
    }
    std::vector<int64_t> perm;  // swap axis and the last
    for (int64_t k = 0; k < rank; ++k) perm.push_back(k == axis ? rank - 1 : k == rank - 1 ? axis : k);
    x = ctx.emit1("Transpose", {ctx.emit1("MatMul", {ctx.emit1("Transpose", {x}, {attrInts("perm", perm)}), p_t})},
                  {attrInts("perm", perm)});
  }
  return bindOut(ctx, n, x);
}

}  // namespace oxport::convert
