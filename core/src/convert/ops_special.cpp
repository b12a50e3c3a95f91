// Special and NaN-aware elementwise functions that have no single ONNX op, written as the formula
// PyTorch documents: xlogy, logaddexp, logit, sinc, hypot, deg2rad/rad2deg, signbit, sgn,
// copysign, fmax/fmin, heaviside, isclose, erfc, exp2, float_power, special_entr; the NaN-aware
// reductions nansum/nanmean; isin; diff, ldexp, dist, renorm, trapezoid,
// cumulative_trapezoid.
#include <cmath>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

constexpr double kPi = 3.14159265358979323846;

// x == v elementwise for floats: Equal takes floats from opset 11; below it, x neither below nor
// above v (NaN is never equal).
std::string equalsScalar(Context& ctx, const std::string& x, double v, DType dt) {
  std::string c = ctx.constScalar(v, dt);
  if (ctx.opset() >= 11 || !isFloating(dt)) return ctx.emit1("Equal", {x, c});
  std::string neither = ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {x, c}), ctx.emit1("Greater", {x, c})})});
  return ctx.emit1("And", {neither, ctx.emit1("Not", {ctx.emit1("IsNaN", {x})})});
}

// signbit(x) of a float: x < 0, or 1/x < 0 for -0.0.
std::string signBit(Context& ctx, const std::string& x, DType dt) {
  std::string zero = ctx.constScalar(0, dt);
  return ctx.emit1("Or", {ctx.emit1("Less", {x, zero}), ctx.emit1("Less", {ctx.emit1("Reciprocal", {x}), zero})});
}

// xlogy(self, other): self * log(other), 0 where self == 0 (unless other is NaN).
Status convertXlogy(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "other"}));
  std::string y = ctx.emit1("Mul", {in[0], ctx.emit1("Log", {in[1]})});
  std::string zero_x = ctx.emit1("And", {equalsScalar(ctx, in[0], 0, dt), ctx.emit1("Not", {ctx.emit1("IsNaN", {in[1]})})});
  return bindOut(ctx, n, ctx.emit1("Where", {zero_x, ctx.constScalar(0, dt), y}));
}

// logaddexp(a, b) = m + log(exp(a - m) + exp(b - m)), m = max(a, b).
Status convertLogaddexp(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "other"}));
  std::string m = ctx.emit1("Max", {in[0], in[1]});
  std::string s = ctx.emit1("Add", {ctx.emit1("Exp", {ctx.emit1("Sub", {in[0], m})}),
                                    ctx.emit1("Exp", {ctx.emit1("Sub", {in[1], m})})});
  return bindOut(ctx, n, ctx.emit1("Add", {m, ctx.emit1("Log", {s})}));
}

// logit(self, eps=None) = log(z / (1 - z)), z = clamp(self, eps, 1 - eps) when eps is given.
Status convertLogit(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self"}));
  std::string z = in[0];
  if (args.has("eps", 1)) {
    OXPORT_ASSIGN(double eps, ctx.constDouble(args.in("eps", 1)));
    z = ctx.emit1("Max", {z, ctx.constScalar(eps, dt)});
    z = ctx.emit1("Min", {z, ctx.constScalar(1.0 - eps, dt)});
  }
  std::string one = ctx.constScalar(1, dt);
  return bindOut(ctx, n, ctx.emit1("Log", {ctx.emit1("Div", {z, ctx.emit1("Sub", {one, z})})}));
}

// sinc(x) = sin(pi x) / (pi x), 1 at 0.
Status convertSinc(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self"}));
  std::string px = ctx.emit1("Mul", {in[0], ctx.constScalar(kPi, dt)});
  std::string y = ctx.emit1("Div", {ctx.emit1("Sin", {px}), px});
  return bindOut(ctx, n, ctx.emit1("Where", {equalsScalar(ctx, in[0], 0, dt), ctx.constScalar(1, dt), y}));
}

Status convertHypot(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "other"}));
  return bindOut(ctx, n, ctx.emit1("Sqrt", {ctx.emit1("Add", {ctx.emit1("Mul", {in[0], in[0]}), ctx.emit1("Mul", {in[1], in[1]})})}));
}

ConvertFn scaleBy(double factor) {
  return [factor](Context& ctx, const Node& n) -> Status {
    OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self"}));
    return bindOut(ctx, n, ctx.emit1("Mul", {in[0], ctx.constScalar(factor, n.output(0)->meta.dtype)}));
  };
}

Status convertSignbit(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  if (dt == DType::Bool || dt == DType::UInt8) return bindOut(ctx, n, ctx.emit1("Less", {ctx.cast(x, DType::Int32), ctx.constScalar(0, DType::Int32)}));
  if (!isFloating(dt)) return bindOut(ctx, n, ctx.emit1("Less", {x, ctx.constScalar(0, dt)}));
  return bindOut(ctx, n, signBit(ctx, x, dt));
}

// copysign(a, b) = |a| with b's sign bit.
Status convertCopysign(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {ArgName{"self", "a"}, ArgName{"other", "b"}}));
  std::string mag = ctx.emit1("Abs", {in[0]});
  return bindOut(ctx, n, ctx.emit1("Where", {signBit(ctx, in[1], dt), ctx.emit1("Neg", {mag}), mag}));
}

// fmax/fmin: the other operand where one is NaN.
ConvertFn nanIgnoringExtremum(bool is_max) {
  return [is_max](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(auto in, promotedInputs(ctx, n, {args.in("self", 0), args.in("other", 1)}));
    // Integers: a comparison and Where (Max/Min take integers from opset 12 only).
    if (!isFloating(n.output(0)->meta.dtype))
      return bindOut(ctx, n, whereTyped(ctx, ctx.emit1(is_max ? "Greater" : "Less", {in[0], in[1]}), in[0], in[1],
                                        n.output(0)->meta.dtype));
    std::string m = ctx.emit1(is_max ? "Max" : "Min", {in[0], in[1]});
    m = ctx.emit1("Where", {ctx.emit1("IsNaN", {in[1]}), in[0], m});
    return bindOut(ctx, n, ctx.emit1("Where", {ctx.emit1("IsNaN", {in[0]}), in[1], m}));
  };
}

// heaviside(self, values): values where self == 0, else self > 0.
Status convertHeaviside(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedInputs(ctx, n, {args.in("self", 0), args.in("values", 1)}));
  std::string pos = ctx.cast(ctx.emit1("Greater", {in[0], ctx.constScalar(0, dt)}), dt);
  return bindOut(ctx, n, whereTyped(ctx, equalsScalar(ctx, in[0], 0, dt), in[1], pos, dt));
}

// isclose(a, b, rtol, atol, equal_nan): a == b, or finite and |a - b| <= atol + rtol * |b|.
Status convertIsclose(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  // Compared in the inputs' floating dtype when they share one, else in double.
  DType dt = ctx.dtype(args.in("self", 0));
  if (!isFloating(dt) || ctx.dtype(args.in("other", 1)) != dt) dt = DType::Float64;
  OXPORT_ASSIGN(std::string a, ctx.tensorOfType(args.in("self", 0), dt));
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("other", 1), dt));
  std::vector<std::string> in{a, b};
  double rtol = 1e-5, atol = 1e-8;
  bool equal_nan = false;
  if (n.inputs.size() > 2) { OXPORT_ASSIGN(rtol, ctx.constDouble(args.in("rtol", 2))); }
  if (n.inputs.size() > 3) { OXPORT_ASSIGN(atol, ctx.constDouble(args.in("atol", 3))); }
  if (n.inputs.size() > 4) { OXPORT_ASSIGN(equal_nan, ctx.constBool(args.in("equal_nan", 4))); }
  std::string diff = ctx.emit1("Abs", {ctx.emit1("Sub", {in[0], in[1]})});
  std::string tol = ctx.emit1("Add", {ctx.constScalar(atol, dt), ctx.emit1("Mul", {ctx.constScalar(rtol, dt), ctx.emit1("Abs", {in[1]})})});
  std::string close = ctx.emit1("Not", {ctx.emit1("Greater", {diff, tol})});
  // Only a finite error counts (PyTorch: isfinite(|a - b|)); d - d is NaN for NaN and infinities.
  close = ctx.emit1("And", {close, ctx.emit1("Not", {ctx.emit1("IsNaN", {ctx.emit1("Sub", {diff, diff})})})});
  // Equal infinities: diff is NaN there; Equal of floats needs opset 11 (below: neither < nor >).
  std::string same = ctx.opset() >= 11 ? ctx.emit1("Equal", {in[0], in[1]})
                                       : ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {in[0], in[1]}), ctx.emit1("Greater", {in[0], in[1]})})});
  same = ctx.emit1("And", {same, ctx.emit1("Not", {ctx.emit1("IsNaN", {in[0]})})});
  std::string y = ctx.emit1("Or", {close, same});
  if (equal_nan)
    y = ctx.emit1("Or", {y, ctx.emit1("And", {ctx.emit1("IsNaN", {in[0]}), ctx.emit1("IsNaN", {in[1]})})});
  return bindOut(ctx, n, y);
}

Status convertErfc(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {ArgName{"self", "a"}}));
  return bindOut(ctx, n, ctx.emit1("Sub", {ctx.constScalar(1, n.output(0)->meta.dtype), ctx.emit1("Erf", {in[0]})}));
}

Status convertExp2(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self"}));
  return bindOut(ctx, n, ctx.emit1("Pow", {ctx.constScalar(2, n.output(0)->meta.dtype), in[0]}));
}

// float_power(self, exponent): both in double.
Status convertFloatPower(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "exponent"}));
  return bindOut(ctx, n, ctx.emit1("Pow", {in[0], in[1]}));
}

// special_entr(x) = -x log x for x > 0, 0 at 0, -inf below (NaN stays NaN).
Status convertEntr(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self"}));
  std::string x = in[0];
  std::string pos = ctx.emit1("Neg", {ctx.emit1("Mul", {x, ctx.emit1("Log", {x})})});
  std::string y = ctx.emit1("Where", {ctx.emit1("Less", {x, ctx.constScalar(0, dt)}), ctx.constScalar(-INFINITY, dt), pos});
  return bindOut(ctx, n, ctx.emit1("Where", {equalsScalar(ctx, x, 0, dt), ctx.constScalar(0, dt), y}));
}

// nansum/nanmean(self, dim=None, keepdim=False, dtype=None): NaN counted as 0 (and, for the
// mean, not counted).
ConvertFn nanReduce(bool mean) {
  return [mean](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = n.output(0)->meta.dtype;
    OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), dt));
    const int rank = ctx.rank(args.in("self", 0));
    std::vector<int64_t> axes;
    if (args.has("dim", 1)) {
      OXPORT_ASSIGN(axes, ctx.constInts(args.in("dim", 1)));
      for (auto& a : axes) a = ctx.normDim(a, rank);
    }
    bool keep = false;
    if (n.inputs.size() > 2) { OXPORT_ASSIGN(keep, ctx.constBool(args.in("keepdim", 2))); }
    if (axes.empty())
      for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    if (!isFloating(dt)) {
      std::string s = reduceOver(ctx, "ReduceSum", x, axes, keep);
      return bindOut(ctx, n, s);
    }
    std::string nan = ctx.emit1("IsNaN", {x});
    std::string clean = ctx.emit1("Where", {nan, ctx.constScalar(0, dt), x});
    std::string s = reduceOver(ctx, "ReduceSum", clean, axes, keep);
    if (!mean) return bindOut(ctx, n, s);
    std::string count = reduceOver(ctx, "ReduceSum", ctx.cast(ctx.emit1("Not", {nan}), dt), axes, keep);
    return bindOut(ctx, n, ctx.emit1("Div", {s, count}));
  };
}

// isin(elements, test_elements, assume_unique=False, invert=False): any equal test element.
Status convertIsin(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string e, ctx.tensor(args.in({"elements", "element"}, 0)));
  OXPORT_ASSIGN(std::string t, ctx.tensor(args.in({"test_elements", "test_element"}, 1)));
  DType de = ctx.dtype(args.in({"elements", "element"}, 0)), dtt = ctx.dtype(args.in({"test_elements", "test_element"}, 1));
  // Compare in a dtype Equal takes at every opset (int64), or double for floats from opset 11.
  DType work = (isFloating(de) || isFloating(dtt)) ? DType::Float64 : DType::Int64;
  if (work == DType::Float64 && ctx.opset() < 11) return ctx.needsOpset(11, "isin of floating-point values (Equal)");
  e = ctx.cast(e, work);
  t = ctx.reshape(ctx.cast(t, work), {-1});
  bool invert = false;
  if (n.inputs.size() > 3) { OXPORT_ASSIGN(invert, ctx.constBool(args.in("invert", 3))); }
  const int rank = ctx.rank(args.in({"elements", "element"}, 0));
  std::string eq = ctx.emit1("Equal", {ctx.unsqueeze(e, {rank}), t});
  std::string any = ctx.cast(reduceOver(ctx, "ReduceMax", ctx.cast(eq, DType::Int32), {rank}, false), DType::Bool);
  return bindOut(ctx, n, invert ? ctx.emit1("Not", {any}) : any);
}

// x[1:] - x[:-1] along axis (logical xor for bool, as PyTorch).
std::string firstDifference(Context& ctx, const std::string& x, int64_t axis, DType dt) {
  std::string hi = ctx.slice(x, {1}, {kInt64Max}, {axis}), lo = ctx.slice(x, {0}, {-1}, {axis});
  return dt == DType::Bool ? ctx.emit1("Xor", {hi, lo}) : ctx.emit1("Sub", {hi, lo});
}

// diff(self, n=1, dim=-1, prepend=None, append=None)
Status convertDiff(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), dt));
  const int rank = ctx.rank(args.in("self", 0));
  int64_t times = 1, dim = -1;
  if (n.inputs.size() > 1) { OXPORT_ASSIGN(times, ctx.constInt(args.in("n", 1))); }
  if (n.inputs.size() > 2) { OXPORT_ASSIGN(dim, ctx.constInt(args.in("dim", 2))); }
  dim = ctx.normDim(dim, rank);
  std::vector<std::string> parts;
  if (args.has("prepend", 3)) { OXPORT_ASSIGN(std::string pre, ctx.tensorOfType(args.in("prepend", 3), dt)); parts.push_back(pre); }
  parts.push_back(x);
  if (args.has("append", 4)) { OXPORT_ASSIGN(std::string app, ctx.tensorOfType(args.in("append", 4), dt)); parts.push_back(app); }
  if (parts.size() > 1) x = ctx.emit1("Concat", parts, {attrInt("axis", dim)});
  for (int64_t i = 0; i < times; ++i) x = firstDifference(ctx, x, dim, dt);
  return bindOut(ctx, n, times == 0 && parts.size() == 1 ? ctx.emit1("Identity", {x}) : x);
}

// ldexp(self, other) = self * 2^other
Status convertLdexp(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "other"}));
  const DType dt = n.output(0)->meta.dtype;
  return bindOut(ctx, n, ctx.emit1("Mul", {in[0], ctx.emit1("Pow", {ctx.constScalar(2, dt), in[1]})}));
}

// The p-norm of x over `axes` (p = inf: max |x|, p = 0: count of nonzeros).
std::string pNorm(Context& ctx, const std::string& x, double p, const std::vector<int64_t>& axes, bool keep, DType dt) {
  std::string a = ctx.emit1("Abs", {x});
  if (std::isinf(p)) return reduceOver(ctx, p > 0 ? "ReduceMax" : "ReduceMin", a, axes, keep);
  if (p == 0) {
    std::string nz = ctx.emit1("Greater", {a, ctx.constScalar(0, dt)});
    return reduceOver(ctx, "ReduceSum", ctx.cast(nz, dt), axes, keep);
  }
  if (p == 1) return reduceOver(ctx, "ReduceSum", a, axes, keep);
  if (p == 2) return ctx.emit1("Sqrt", {reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {a, a}), axes, keep)});
  std::string s = reduceOver(ctx, "ReduceSum", ctx.emit1("Pow", {a, ctx.constScalar(p, dt)}), axes, keep);
  return ctx.emit1("Pow", {s, ctx.constScalar(1.0 / p, dt)});
}

// dist(self, other, p=2) = ||self - other||_p over every element.
Status convertDist(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "other"}));
  double p = 2;
  if (n.inputs.size() > 2) { OXPORT_ASSIGN(p, ctx.constDouble(args.in("p", 2))); }
  std::string d = ctx.reshape(ctx.emit1("Sub", {in[0], in[1]}), {-1});
  return bindOut(ctx, n, pNorm(ctx, d, p, {0}, false, dt));
}

// renorm(self, p, dim, maxnorm): each slice along dim scaled to a p-norm of at most maxnorm
// (by maxnorm / (norm + 1e-7), as PyTorch).
Status convertRenorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self"}));
  OXPORT_ASSIGN(double p, ctx.constDouble(args.in("p", 1)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 2)));
  OXPORT_ASSIGN(double maxnorm, ctx.constDouble(args.in("maxnorm", 3)));
  const int rank = ctx.rank(args.in("self", 0));
  dim = ctx.normDim(dim, rank);
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != dim) axes.push_back(i);
  std::string norm = axes.empty() ? ctx.emit1("Abs", {in[0]}) : pNorm(ctx, in[0], p, axes, true, dt);
  std::string mx = ctx.constScalar(maxnorm, dt);
  std::string scale = ctx.emit1("Div", {mx, ctx.emit1("Add", {norm, ctx.constScalar(1e-7, dt)})});
  scale = ctx.emit1("Where", {ctx.emit1("Greater", {norm, mx}), scale, ctx.constScalar(1, dt)});
  return bindOut(ctx, n, ctx.emit1("Mul", {in[0], scale}));
}

// The trapezoids of trapezoid and cumulative_trapezoid along `dim`: (y[i+1] + y[i]) / 2, times
// the steps of x when x is a tensor; a constant dx is returned in `scale` (1 when absent).
struct Trapezoids {
  std::string areas;
  double scale = 1;
  int64_t dim = 0;
};

Result<Trapezoids> trapezoidsOf(Context& ctx, const Node& n, DType dt) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string y, ctx.tensorOfType(args.in("y", 0), dt));
  const int rank = ctx.rank(args.in("y", 0));
  Trapezoids t;
  t.dim = -1;
  if (const Value* dv = args.optIn("dim", 2)) { OXPORT_ASSIGN(t.dim, ctx.constInt(dv)); }
  t.dim = ctx.normDim(t.dim, rank);
  std::string hi = ctx.slice(y, {1}, {kInt64Max}, {t.dim}), lo = ctx.slice(y, {0}, {-1}, {t.dim});
  t.areas = ctx.emit1("Div", {ctx.emit1("Add", {hi, lo}), ctx.constScalar(2, dt)});
  const Value* step = args.optIn({"x", "dx"}, 1);
  if (step && step->isTensor()) {
    OXPORT_ASSIGN(std::string xs, ctx.tensorOfType(step, dt));
    const int xr = ctx.rank(step);
    std::string dx = firstDifference(ctx, xs, xr == 1 ? 0 : ctx.normDim(t.dim, xr), dt);
    if (xr == 1 && rank > 1) {
      std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
      shape[static_cast<size_t>(t.dim)] = -1;
      dx = ctx.reshape(dx, shape);
    }
    t.areas = ctx.emit1("Mul", {t.areas, dx});
  } else if (step && !ctx.isNone(step)) {
    OXPORT_ASSIGN(t.scale, ctx.constDouble(step));
  }
  return t;
}

std::string scaled(Context& ctx, const std::string& x, double scale, DType dt) {
  return scale == 1 ? x : ctx.emit1("Mul", {x, ctx.constScalar(scale, dt)});
}

// trapezoid(y, dx=1, dim=-1) / trapezoid(y, x, dim=-1): sum of (y[i+1] + y[i]) / 2 * step.
Status convertTrapezoid(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(Trapezoids t, trapezoidsOf(ctx, n, dt));
  return bindOut(ctx, n, scaled(ctx, reduceOver(ctx, "ReduceSum", t.areas, {t.dim}, false), t.scale, dt));
}

// cumulative_trapezoid(y, x, *, dim=-1) / (y, *, dx=1, dim=-1): the running sums of the same
// trapezoids (CumSum, opset 11); n - 1 of them along dim.
Status convertCumulativeTrapezoid(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(Trapezoids t, trapezoidsOf(ctx, n, dt));
  std::string areas = scaled(ctx, t.areas, t.scale, dt);
  return bindOut(ctx, n, ctx.emit1("CumSum", {areas, ctx.constInt64s({t.dim}, true)}));
}

}  // namespace

void registerSpecialOps(Registry& r) {
  r.add("aten::diff", convertDiff);
  r.add("aten::ldexp", convertLdexp);
  r.add("aten::dist", convertDist);
  r.add("aten::renorm", convertRenorm);
  r.add("aten::trapezoid", convertTrapezoid);
  r.add("aten::trapz", convertTrapezoid);
  r.add("aten::cumulative_trapezoid", convertCumulativeTrapezoid, 11);
  r.add("aten::xlogy", convertXlogy);
  r.add("aten::special_xlogy", convertXlogy);
  r.add("aten::logaddexp", convertLogaddexp);
  r.add("aten::logit", convertLogit);
  r.add("aten::special_logit", convertLogit);
  r.add("aten::sinc", convertSinc);
  r.add("aten::special_sinc", convertSinc);
  r.add("aten::hypot", convertHypot);
  r.add("aten::deg2rad", scaleBy(kPi / 180.0));
  r.add("aten::rad2deg", scaleBy(180.0 / kPi));
  r.add("aten::signbit", convertSignbit);
  r.add("aten::copysign", convertCopysign);
  r.add("aten::fmax", nanIgnoringExtremum(true));
  r.add("aten::fmin", nanIgnoringExtremum(false));
  r.add("aten::heaviside", convertHeaviside);
  r.add("aten::isclose", convertIsclose);
  addAll(r, {"aten::erfc", "aten::special_erfc"}, convertErfc);
  addAll(r, {"aten::exp2", "aten::special_exp2"}, convertExp2);
  r.add("aten::float_power", convertFloatPower);
  r.add("aten::special_entr", convertEntr);
  r.add("aten::nansum", nanReduce(false));
  r.add("aten::nanmean", nanReduce(true));
  r.add("aten::isin", convertIsin);
}

}  // namespace oxport::convert
