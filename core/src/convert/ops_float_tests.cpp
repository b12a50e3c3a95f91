// Float predicates and special functions the torch.* sweep (tools/op_sweep.py) found kept as
// custom nodes, each with an exact elementwise ONNX form at every opset: isposinf, isneginf,
// isreal (of a real tensor), logaddexp2, special_xlog1py and special_ndtr.
#include <limits>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// isposinf / isneginf: above the largest finite value or below the lowest one (Less/Greater take
// floats at every opset; IsInf's detect_* attributes are opset 10+). Integers are never infinite.
ConvertFn convertIsSignedInf(bool positive) {
  return [positive](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const Value* self = args.in("self", 0);
    const DType dt = ctx.dtype(self);
    OXPORT_ASSIGN(std::string x, ctx.tensor(self));
    if (!isFloating(dt)) return bindOut(ctx, n, ctx.emit1("Less", {x, x}));  // false everywhere
    const DType work = dt == DType::Float64 ? DType::Float64 : DType::Float32;
    x = castIf(ctx, x, dt, work);
    const double big = work == DType::Float64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
    return bindOut(ctx, n, positive ? ctx.emit1("Greater", {x, ctx.constScalar(big, work)})
                                    : ctx.emit1("Less", {x, ctx.constScalar(-big, work)}));
  };
}

// isreal of a real tensor: true everywhere (a complex one never reaches this converter).
Status convertIsReal(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* self = args.in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(self, DType::Float32));
  std::string nan = ctx.emit1("IsNaN", {x});
  return bindOut(ctx, n, ctx.emit1("Or", {nan, ctx.emit1("Not", {nan})}));
}

// logaddexp2(a, b) = m + log2(2^(a - m) + 2^(b - m)), m = max(a, b).
Status convertLogaddexp2(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "other"}));
  const double ln2 = 0.69314718055994530942;
  std::string m = ctx.emit1("Max", {in[0], in[1]});
  auto pow2 = [&](const std::string& d) { return ctx.emit1("Exp", {ctx.emit1("Mul", {d, ctx.constScalar(ln2, dt)})}); };
  std::string s = ctx.emit1("Add", {pow2(ctx.emit1("Sub", {in[0], m})), pow2(ctx.emit1("Sub", {in[1], m}))});
  return bindOut(ctx, n, ctx.emit1("Add", {m, ctx.emit1("Div", {ctx.emit1("Log", {s}), ctx.constScalar(ln2, dt)})}));
}

// special_xlog1py(self, other) = self * log1p(other), 0 where self == 0 unless other is NaN.
Status convertXlog1py(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "other"}));
  std::string y = ctx.emit1("Mul", {in[0], ctx.emit1("Log", {ctx.emit1("Add", {in[1], ctx.constScalar(1.0, dt)})})});
  std::string zero = ctx.constScalar(0.0, dt);
  std::string x_zero = ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {in[0], zero}), ctx.emit1("Greater", {in[0], zero})})});
  std::string keep_zero = ctx.emit1("And", {ctx.emit1("And", {x_zero, ctx.emit1("Not", {ctx.emit1("IsNaN", {in[0]})})}),
                                            ctx.emit1("Not", {ctx.emit1("IsNaN", {in[1]})})});
  return bindOut(ctx, n, ctx.emit1("Where", {keep_zero, zero, y}));
}

// special_ndtr(x) = (1 + erf(x / sqrt(2))) / 2, the standard normal CDF.
Status convertNdtr(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self"}));
  std::string e = ctx.emit1("Erf", {ctx.emit1("Mul", {in[0], ctx.constScalar(0.70710678118654752440, dt)})});
  std::string half = ctx.constScalar(0.5, dt);
  return bindOut(ctx, n, ctx.emit1("Add", {ctx.emit1("Mul", {e, half}), half}));
}

}  // namespace

void registerFloatTestOps(Registry& r) {
  for (bool positive : {true, false}) r.add(positive ? "aten::isposinf" : "aten::isneginf", convertIsSignedInf(positive));
  r.add("aten::isreal", convertIsReal);
  r.add("aten::logaddexp2", convertLogaddexp2);
  r.add("aten::special_xlog1py", convertXlog1py);
  r.add("aten::special_ndtr", convertNdtr);
}

}  // namespace oxport::convert
