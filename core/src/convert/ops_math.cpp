// Math beyond the basic elementwise ops: fused arithmetic (addcmul, lerp, baddbmm ...), rounding
// division and modulo, logs and exps, float classification, shifts; distances (cosine,
// pairwise, cdist, kl_div), small linear algebra (cross, det, weight norm, layer norm with
// statistics, conv_tbc).
#include <cmath>
#include <limits>
#include <optional>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {


// The dtype elementwise integer arithmetic runs in for ONNX Runtime (int32/int64 kernels).
DType arithType(DType dt) {
  if (dt == DType::Int64 || dt == DType::Int32 || dt == DType::Float32 || dt == DType::Float64) return dt;
  if (dt == DType::Float16 || dt == DType::BFloat16) return DType::Float32;
  return DType::Int64;
}

// x == 0 for a float tensor at every opset (Equal takes floats from opset 11).
std::string isZero(Context& ctx, const std::string& x, DType dt) {
  std::string zero = ctx.constScalar(0, dt);
  if (ctx.opset() >= 11 || !isFloating(dt)) return ctx.emit1("Equal", {x, zero});
  return ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {x, zero}), ctx.emit1("Greater", {x, zero})})});
}

std::string truncF(Context& ctx, const std::string& x) {
  return ctx.emit1("Mul", {ctx.emit1("Sign", {x}), ctx.emit1("Floor", {ctx.emit1("Abs", {x})})});
}

// addcmul/addcdiv(self, tensor1, tensor2, *, value=1)
ConvertFn convertAddc(const std::string& op) {
  return [op](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("tensor1", 1), args.in("tensor2", 2)}));
    const DType dt = n.output(0)->meta.dtype;
    std::string t = ctx.emit1(op, {ins[1], ins[2]});
    if (args.has("value", 3)) {
      OXPORT_ASSIGN(std::string v, ctx.tensorOfType(args.in("value", 3), dt));
      t = ctx.emit1("Mul", {t, v});
    }
    return bindOut(ctx, n, ctx.emit1("Add", {ins[0], t}));
  };
}

// baddbmm(self, batch1, batch2, *, beta=1, alpha=1): beta * self + alpha * (batch1 @ batch2).
Status convertBaddbmm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("batch1", 1), args.in("batch2", 2)}));
  double beta = 1.0, alpha = 1.0;
  if (const Value* b = args.optIn("beta")) { OXPORT_ASSIGN(beta, ctx.constDouble(b)); }
  if (const Value* a = args.optIn("alpha")) { OXPORT_ASSIGN(alpha, ctx.constDouble(a)); }
  std::string mm = ctx.emit1("MatMul", {ins[1], ins[2]});
  if (alpha != 1.0) mm = ctx.emit1("Mul", {mm, ctx.constScalar(alpha, dt)});
  if (beta == 0.0) return bindOut(ctx, n, mm);  // self is ignored (NaN in it does not propagate)
  std::string s = beta == 1.0 ? ins[0] : ctx.emit1("Mul", {ins[0], ctx.constScalar(beta, dt)});
  return bindOut(ctx, n, ctx.emit1("Add", {s, mm}));
}

// dot(a, b) of 1-D tensors, any dtype: sum of the products.
Status convertDot(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  const DType work = arithType(dt);
  OXPORT_ASSIGN(std::string a, ctx.tensorOfType(args.in("self", 0), work));
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("tensor", 1), work));
  std::string r = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {a, b}), {}, false);
  return bindOut(ctx, n, castIf(ctx, r, work, dt));
}

Status convertMv(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("vec", 1)}));
  return bindOut(ctx, n, ctx.emit1("MatMul", ins));
}

// floor_divide(self, other): floor rounding (PyTorch 1.13+). Integers divide in float64.
Status convertFloorDivide(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType out = n.output(0)->meta.dtype;
  if (isFloating(out)) {
    OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in({"self", "a"}, 0), args.in({"other", "b"}, 1)}));
    return bindOut(ctx, n, ctx.emit1("Floor", {ctx.emit1("Div", ins)}));
  }
  OXPORT_ASSIGN(std::string a, ctx.tensorOfType(args.in({"self", "a"}, 0), DType::Float64));
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in({"other", "b"}, 1), DType::Float64));
  return bindOut(ctx, n, ctx.cast(ctx.emit1("Floor", {ctx.emit1("Div", {a, b})}), out));
}

// self and other (a and b in the int/float overloads) as tensors of dtype `work`.
Result<std::vector<std::string>> operandsAs(Context& ctx, const Node& n, DType work) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string a, args.tensorOfType({"self", "a"}, 0, work));
  OXPORT_ASSIGN(std::string b, args.tensorOfType({"other", "b"}, 1, work));
  return std::vector<std::string>{a, b};
}

// fmod(self, other): remainder with the sign of self (C fmod), Mod(fmod=1) from opset 10;
// remainder(self, other) (python=true): Python modulo, the sign of other.
ConvertFn modulo(bool python) {
  return [python](Context& ctx, const Node& n) -> Status {
    const DType out = n.output(0)->meta.dtype;
    const DType work = arithType(out);
    OXPORT_ASSIGN(auto ab, operandsAs(ctx, n, work));
    const std::string &a = ab[0], &b = ab[1];
    std::string r;
    if (ctx.opset() >= 10 && !(python && isFloating(work))) {
      r = ctx.emit1("Mod", {a, b}, {attrInt("fmod", python ? 0 : 1)});
    } else if (ctx.opset() >= 10) {
      // As PyTorch: m = fmod(a, b); m += b where m != 0 and sign(m) != sign(b).
      std::string m = ctx.emit1("Mod", {a, b}, {attrInt("fmod", 1)});
      std::string zero = ctx.constScalar(0, work);
      std::string differ = ctx.emit1("Xor", {ctx.emit1("Less", {m, zero}), ctx.emit1("Less", {b, zero})});
      std::string fix = ctx.emit1("And", {differ, ctx.emit1("Not", {isZero(ctx, m, work)})});
      r = ctx.emit1("Where", {fix, ctx.emit1("Add", {m, b}), m});
    } else {
      // a - round(a / b) * b in floating point, rounded toward zero (fmod) or down (remainder).
      const DType f = isFloating(work) ? work : DType::Float64;
      std::string af = castIf(ctx, a, work, f), bf = castIf(ctx, b, work, f);
      std::string div = ctx.emit1("Div", {af, bf});
      std::string q = python ? ctx.emit1("Floor", {div}) : truncF(ctx, div);
      r = castIf(ctx, ctx.emit1("Sub", {af, ctx.emit1("Mul", {q, bf})}), f, work);
    }
    return bindOut(ctx, n, castIf(ctx, r, work, out));
  };
}

// lerp(self, end, weight): self + weight * (end - self).
Status convertLerp(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("end", 1), args.in("weight", 2)}));
  std::string diff = ctx.emit1("Sub", {ins[1], ins[0]});
  return bindOut(ctx, n, ctx.emit1("Add", {ins[0], ctx.emit1("Mul", {ins[2], diff})}));
}

Status convertSquare(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  const DType work = arithType(dt);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), work));
  return bindOut(ctx, n, castIf(ctx, ctx.emit1("Mul", {x, x}), work, dt));
}

// log10/log2 (a scaled Log), log1p, expm1.
ConvertFn logBase(double base) {
  return [base](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = n.output(0)->meta.dtype;
    OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in({"self", "a"}, 0), dt));
    return bindOut(ctx, n, ctx.emit1("Div", {ctx.emit1("Log", {x}), ctx.constScalar(std::log(base), dt)}));
  };
}

Status convertLog1p(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in({"self", "a"}, 0), dt));
  return bindOut(ctx, n, ctx.emit1("Log", {ctx.emit1("Add", {x, ctx.constScalar(1, dt)})}));
}

Status convertExpm1(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in({"self", "a"}, 0), dt));
  return bindOut(ctx, n, ctx.emit1("Sub", {ctx.emit1("Exp", {x}), ctx.constScalar(1, dt)}));
}

Status convertTrunc(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  if (!isFloating(ctx.dtype(args.in("self", 0)))) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  return bindOut(ctx, n, truncF(ctx, x));
}

Status convertFrac(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("Sub", {x, truncF(ctx, x)}));
}

// atan2(self, other) = angle of (other, self): atan(y/x) corrected by pi in the left half-plane.
Status convertAtan2(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in({"self", "a"}, 0), args.in({"other", "b"}, 1)}));
  const DType dt = n.output(0)->meta.dtype;
  const std::string& y = ins[0];
  const std::string& x = ins[1];
  std::string zero = ctx.constScalar(0, dt);
  std::string base = ctx.emit1("Atan", {ctx.emit1("Div", {y, x})});
  std::string pi = ctx.constScalar(M_PI, dt);
  std::string y_neg = ctx.emit1("Less", {y, zero});
  std::string shifted = ctx.emit1("Where", {y_neg, ctx.emit1("Sub", {base, pi}), ctx.emit1("Add", {base, pi})});
  std::string r = ctx.emit1("Where", {ctx.emit1("Less", {x, zero}), shifted, base});
  // atan2(0, 0) = 0 (0/0 is NaN above).
  std::string both_zero = ctx.emit1("And", {isZero(ctx, x, dt), isZero(ctx, y, dt)});
  return bindOut(ctx, n, ctx.emit1("Where", {both_zero, zero, r}));
}

// isnan/isinf/isfinite. Integer and bool tensors are always finite.
enum class FloatClass { NaN, Inf, Finite };

ConvertFn convertClassify(FloatClass what) {
  return [what](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in({"self", "a"}, 0)));
    const DType dt = ctx.dtype(args.in({"self", "a"}, 0));
    if (!isFloating(dt)) {
      // An all-false (or all-true) mask of x's shape.
      std::string z = ctx.cast(x, DType::Int32);
      std::string f = ctx.cast(ctx.emit1("Sub", {z, z}), DType::Bool);
      return bindOut(ctx, n, what == FloatClass::Finite ? ctx.emit1("Not", {f}) : f);
    }
    std::string nan = ctx.emit1("IsNaN", {x});
    if (what == FloatClass::NaN) return bindOut(ctx, n, nan);
    // x - x is NaN exactly for NaN and infinities (IsInf only exists from opset 10).
    std::string nonfinite = ctx.emit1("IsNaN", {ctx.emit1("Sub", {x, x})});
    if (what == FloatClass::Finite) return bindOut(ctx, n, ctx.emit1("Not", {nonfinite}));
    if (ctx.opset() >= 10) return bindOut(ctx, n, ctx.emit1("IsInf", {x}));
    return bindOut(ctx, n, ctx.emit1("And", {nonfinite, ctx.emit1("Not", {nan})}));
  };
}

double largestFinite(DType dt) {
  switch (dt) {
    case DType::Float64: return std::numeric_limits<double>::max();
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    default: return std::numeric_limits<float>::max();
  }
}

// nan_to_num(self, nan=0, posinf=max, neginf=lowest)
Status convertNanToNum(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  if (!isFloating(dt)) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  const double big = largestFinite(dt);
  double nan = 0.0, posinf = big, neginf = -big;
  if (args.has("nan", 1)) { OXPORT_ASSIGN(nan, ctx.constDouble(args.in("nan", 1))); }
  if (args.has("posinf", 2)) { OXPORT_ASSIGN(posinf, ctx.constDouble(args.in("posinf", 2))); }
  if (args.has("neginf", 3)) { OXPORT_ASSIGN(neginf, ctx.constDouble(args.in("neginf", 3))); }
  std::string y = ctx.emit1("Where", {ctx.emit1("IsNaN", {x}), ctx.constScalar(nan, dt), x});
  // Beyond the largest finite value is an infinity (works at every opset, unlike IsInf).
  y = ctx.emit1("Where", {ctx.emit1("Greater", {x, ctx.constScalar(big, dt)}), ctx.constScalar(posinf, dt), y});
  y = ctx.emit1("Where", {ctx.emit1("Less", {x, ctx.constScalar(-big, dt)}), ctx.constScalar(neginf, dt), y});
  return bindOut(ctx, n, y);
}

// __lshift__/__rshift__: BitShift for uint8 from opset 11; otherwise multiply or floor-divide by
// 2^other (arithmetic shift for signed integers, scaling for floats).
// An integer shifted by a constant 0 <= s < width is exact in integers: x * 2^s wraps as the
// shift does (2^(w-1) is the type's minimum), and x >> s is floor(x / 2^s) = (x - x mod 2^s) / 2^s
// (the sign, -(x < 0), for s = w - 1); the float form loses int64 bits past 2^53.
std::optional<std::string> shiftByConstant(Context& ctx, const std::string& x, int64_t s, DType dt, bool left) {
  const int w = static_cast<int>(8 * dtypeSize(dt));
  if (isFloating(dt) || dt == DType::Bool || s < 0 || s >= w) return std::nullopt;
  const bool top = s == w - 1;
  const double p = top && dt != DType::UInt8 ? -std::ldexp(1.0, w - 1) : std::ldexp(1.0, static_cast<int>(s));
  if (left) return ctx.emit1("Mul", {x, ctx.constScalar(p, dt)});
  if (dt == DType::UInt8) return ctx.emit1("Div", {x, ctx.constScalar(p, dt)});
  if (top) return ctx.emit1("Neg", {ctx.cast(ctx.emit1("Less", {x, ctx.constScalar(0, dt)}), dt)});
  const std::string pc = ctx.constScalar(p, dt);
  std::string mod;
  if (ctx.opset() >= 10) {
    mod = ctx.emit1("Mod", {x, pc});
  } else {
    std::string r = ctx.emit1("Sub", {x, ctx.emit1("Mul", {ctx.emit1("Div", {x, pc}), pc})});
    mod = ctx.emit1("Add", {r, ctx.emit1("Mul", {ctx.cast(ctx.emit1("Less", {r, ctx.constScalar(0, dt)}), dt), pc})});
  }
  return ctx.emit1("Div", {ctx.emit1("Sub", {x, mod}), pc});
}

// An integer shifted by amounts known at run time, in integers: 2^s is exact as a float64 power
// cast to the type for s up to w - 2 (w - 1 for uint8); x << s is x 2^min(s, w-2) 2^min(s - that, 2),
// which wraps as the shift does (0 from s = w on); x >> s is floor(x / 2^s) via Mod, and the sign
// -(x < 0) (0 for uint8) from s = w - 1 (w). A negative s counts as 0.
std::string shiftByTensor(Context& ctx, const std::string& x, const std::string& s, DType dt, bool left) {
  const int w = static_cast<int>(8 * dtypeSize(dt));
  const int top = dt == DType::UInt8 ? w - 1 : w - 2;  // the largest exponent 2^k that dt holds
  auto f64 = [&](double v) { return ctx.constScalar(v, DType::Float64); };
  const std::string sc = ctx.emit1("Min", {ctx.emit1("Max", {s, f64(0)}), f64(top)});
  const std::string p = ctx.cast(ctx.emit1("Pow", {f64(2), sc}), dt);
  if (left) {
    const std::string rest = ctx.emit1("Min", {ctx.emit1("Sub", {ctx.emit1("Max", {s, f64(0)}), sc}), f64(2)});
    return ctx.emit1("Mul", {ctx.emit1("Mul", {x, p}), ctx.cast(ctx.emit1("Pow", {f64(2), rest}), dt)});
  }
  std::string q;
  if (dt == DType::UInt8) {
    q = ctx.emit1("Div", {x, p});
  } else {
    std::string mod;
    if (ctx.opset() >= 10) {
      mod = ctx.emit1("Mod", {x, p});
    } else {
      std::string r = ctx.emit1("Sub", {x, ctx.emit1("Mul", {ctx.emit1("Div", {x, p}), p})});
      mod = ctx.emit1("Add", {r, ctx.emit1("Mul", {ctx.cast(ctx.emit1("Less", {r, ctx.constScalar(0, dt)}), dt), p})});
    }
    q = ctx.emit1("Div", {ctx.emit1("Sub", {x, mod}), p});
  }
  const std::string sign = dt == DType::UInt8 ? ctx.emit1("Sub", {x, x})
                                              : ctx.emit1("Neg", {ctx.cast(ctx.emit1("Less", {x, ctx.constScalar(0, dt)}), dt)});
  const std::string past = ctx.emit1("Greater", {s, f64(top)});
  return whereTyped(ctx, past, sign, q, dt);
}

ConvertFn convertShift(bool left) {
  return [left](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = n.output(0)->meta.dtype;
    const Value* amount = args.in({"other", "b"}, 1);
    if (amount->constant && (amount->constant->isInt() || (amount->constant->isTensor() && amount->constant->tensor().shape.empty() &&
                                                          !isFloating(amount->constant->tensor().dtype)))) {
      OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in({"self", "a"}, 0), dt));
      if (auto r = shiftByConstant(ctx, x, amount->constant->toInt(), dt, left)) return bindOut(ctx, n, *r);
    }
    if (dt == DType::UInt8 && ctx.opset() >= 11) {
      OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in({"self", "a"}, 0), args.in({"other", "b"}, 1)}));
      return bindOut(ctx, n, ctx.emit1("BitShift", ins, {attrString("direction", left ? "LEFT" : "RIGHT")}));
    }
    if (!isFloating(dt) && dt != DType::Bool) {
      OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in({"self", "a"}, 0), dt));
      OXPORT_ASSIGN(std::string s, ctx.tensorOfType(amount, DType::Float64));
      return bindOut(ctx, n, shiftByTensor(ctx, x, s, dt, left));
    }
    const DType f = dt == DType::Float32 ? DType::Float32 : DType::Float64;
    OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in({"self", "a"}, 0), f));
    OXPORT_ASSIGN(std::string s, ctx.tensorOfType(args.in({"other", "b"}, 1), f));
    std::string scale = ctx.emit1("Pow", {ctx.constScalar(2, f), s});
    std::string r = left ? ctx.emit1("Mul", {x, scale}) : ctx.emit1("Div", {x, scale});
    if (!isFloating(dt) && !left) r = ctx.emit1("Floor", {r});
    return bindOut(ctx, n, castIf(ctx, r, f, dt));
  };
}

// ---- distances

// The rank x1 and x2 broadcast to.
int broadcastRank(Context& ctx, const Args& args) {
  return std::max(ctx.rank(args.in("x1", 0)), ctx.rank(args.in("x2", 1)));
}

// cosine_similarity(x1, x2, dim=1, eps=1e-8) = sum(x1*x2) / sqrt(max(sum(x1^2) * sum(x2^2), eps^2))
Status convertCosineSimilarity(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedArgs(ctx, n, {"x1", "x2"}));
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(int64_t dim, args.constInt("dim", 2));
  OXPORT_ASSIGN(double eps, args.constDouble("eps", 3));
  const int rank = broadcastRank(ctx, args);
  const int64_t axis = ctx.normDim(dim, rank);
  // Broadcast both to the common shape first so each norm runs over the full dim.
  std::string x1 = ins[0], x2 = ins[1];
  if (ctx.meta(args.in("x1", 0)).shape != ctx.meta(args.in("x2", 1)).shape) {
    x1 = ctx.emit1("Expand", {ins[0], ctx.shapeOf(ins[1])});
    x2 = ctx.emit1("Expand", {ins[1], ctx.shapeOf(ins[0])});
  }
  std::string w12 = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {x1, x2}), {axis}, false);
  std::string w1 = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {x1, x1}), {axis}, false);
  std::string w2 = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {x2, x2}), {axis}, false);
  std::string prod = ctx.emit1("Max", {ctx.emit1("Mul", {w1, w2}), ctx.constScalar(eps * eps, dt)});
  return bindOut(ctx, n, ctx.emit1("Div", {w12, ctx.emit1("Sqrt", {prod})}));
}

// ||d||_p over axis (d already the difference).
std::string pNorm(Context& ctx, const std::string& d, DType dt, double p, int64_t axis, bool keepdim) {
  if (p == 2.0) return reduceOver(ctx, "ReduceL2", d, {axis}, keepdim);
  if (p == 1.0) return reduceOver(ctx, "ReduceL1", d, {axis}, keepdim);
  if (std::isinf(p)) return reduceOver(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ctx.emit1("Abs", {d}), {axis}, keepdim);
  if (p == 0.0) return reduceOver(ctx, "ReduceSum", ctx.cast(ctx.cast(d, DType::Bool), dt), {axis}, keepdim);
  std::string s = reduceOver(ctx, "ReduceSum", ctx.emit1("Pow", {ctx.emit1("Abs", {d}), ctx.constScalar(p, dt)}), {axis},
                             keepdim);
  return ctx.emit1("Pow", {s, ctx.constScalar(1.0 / p, dt)});
}

// pairwise_distance(x1, x2, p=2, eps=1e-6, keepdim=False) = ||x1 - x2 + eps||_p over the last dim.
Status convertPairwiseDistance(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedArgs(ctx, n, {"x1", "x2"}));
  OXPORT_ASSIGN(double p, args.constDouble("p", 2));
  OXPORT_ASSIGN(double eps, args.constDouble("eps", 3));
  OXPORT_ASSIGN(bool keepdim, args.constBool("keepdim", 4));
  const DType dt = n.output(0)->meta.dtype;
  const int rank = broadcastRank(ctx, args);
  std::string d = ctx.emit1("Add", {ctx.emit1("Sub", {ins[0], ins[1]}), ctx.constScalar(eps, dt)});
  if (rank == 0) return bindOut(ctx, n, ctx.emit1("Abs", {d}));
  return bindOut(ctx, n, pNorm(ctx, d, dt, p, rank - 1, keepdim));
}

// cdist(x1 [.., P, M], x2 [.., R, M], p=2, compute_mode) -> [.., P, R], by expansion.
Status convertCdist(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("x1", 0), args.in("x2", 1)}));
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(double p, ctx.constDouble(args.in("p", 2)));
  const int r1 = ctx.rank(args.in("x1", 0)), r2 = ctx.rank(args.in("x2", 1));
  std::string a = ctx.unsqueeze(ins[0], {r1 - 1});  // [.., P, 1, M]
  std::string b = ctx.unsqueeze(ins[1], {r2 - 2});  // [.., 1, R, M]
  std::string d = ctx.emit1("Sub", {a, b});
  return bindOut(ctx, n, pNorm(ctx, d, dt, p, std::max(r1, r2), false));
}

// cross(self, other, dim=None) / linalg_cross(self, other, dim=-1), along a dim of size 3.
Status convertCross(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("other", 1)}));
  const auto& shape = ctx.meta(n.output(0)).shape;
  const int rank = static_cast<int>(shape.size());
  int64_t axis = -1;
  if (args.has("dim", 2)) {
    OXPORT_ASSIGN(int64_t d, ctx.constInt(args.in("dim", 2)));
    axis = ctx.normDim(d, rank);
  } else if (n.kind == "aten::linalg_cross") {
    axis = rank - 1;
  } else {
    // The first dim of size 3 (the deprecated default of torch.cross).
    for (int i = 0; i < rank && axis < 0; ++i)
      if (shape[static_cast<size_t>(i)] == 3) axis = i;
    if (axis < 0) return ctx.error("bad-argument", "cross needs a dim of size 3");
  }
  auto rot = [&](const std::string& x, std::vector<int64_t> idx) {
    return ctx.emit1("Gather", {x, ctx.constInt64s(idx)}, {attrInt("axis", axis)});
  };
  std::string l = ctx.emit1("Mul", {rot(ins[0], {1, 2, 0}), rot(ins[1], {2, 0, 1})});
  std::string r = ctx.emit1("Mul", {rot(ins[0], {2, 0, 1}), rot(ins[1], {1, 2, 0})});
  return bindOut(ctx, n, ctx.emit1("Sub", {l, r}));
}

// kl_div(self, target, reduction=mean, log_target=False)
Status convertKlDiv(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto ins, promotedArgs(ctx, n, {"self", "target"}));
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, 2));
  OXPORT_ASSIGN(bool log_target, Args(ctx, n).constBool("log_target", 3));
  const std::string &x = ins[0], &t = ins[1];
  std::string loss;
  if (log_target) {
    loss = ctx.emit1("Mul", {ctx.emit1("Exp", {t}), ctx.emit1("Sub", {t, x})});
  } else {
    // xlogy(t, t) - t * x, with 0 * log(0) = 0.
    std::string tlogt = ctx.emit1("Mul", {t, ctx.emit1("Log", {t})});
    tlogt = ctx.emit1("Where", {isZero(ctx, t, dt), ctx.constScalar(0, dt), tlogt});
    loss = ctx.emit1("Sub", {tlogt, ctx.emit1("Mul", {t, x})});
  }
  return bindOut(ctx, n, applyReduction(ctx, loss, reduction));
}

// det / logdet: Det from opset 11.
ConvertFn convertDet(bool take_log) {
  return [take_log](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    if (ctx.opset() < 11) return ctx.needsOpset(11, n.kind.substr(6) + " (Det)");
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in({"self", "A"}, 0)));
    std::string d = ctx.emit1("Det", {x});
    return bindOut(ctx, n, take_log ? ctx.emit1("Log", {d}) : d);
  };
}

// slogdet(self) / linalg_slogdet(A) -> (sign, logabsdet): Sign and Log(Abs) of Det; a singular
// matrix gives (0, -inf) as in PyTorch.
Status convertSlogdet(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in({"self", "A"}, 0)));
  const std::string d = ctx.emit1("Det", {x});
  ctx.bind(n.output(0), ctx.emit1("Sign", {d}));
  ctx.bind(n.output(1), ctx.emit1("Log", {ctx.emit1("Abs", {d})}));
  return okStatus();
}

// _weight_norm(v, g, dim=0) = v * g / ||v|| over every dim but `dim` (over all when dim == -1).
Status convertWeightNorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string v, ctx.tensor(args.in("v", 0)));
  OXPORT_ASSIGN(std::string g, ctx.tensor(args.in("g", 1)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 2)));
  const int rank = ctx.rank(args.in("v", 0));
  std::vector<int64_t> axes;
  if (dim != -1) {
    dim = ctx.normDim(dim, rank);
    for (int64_t i = 0; i < rank; ++i)
      if (i != dim) axes.push_back(i);
  }
  std::string norm = axes.empty() && dim != -1 ? ctx.emit1("Abs", {v}) : reduceOver(ctx, "ReduceL2", v, axes, true);
  return bindOut(ctx, n, ctx.emit1("Mul", {v, ctx.emit1("Div", {g, norm})}));
}

// native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd); mean
// and rstd keep the normalized dims as size 1, as in PyTorch.
Status convertNativeLayerNorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("input", 0)));
  OXPORT_ASSIGN(auto normalized, ctx.constInts(args.in("normalized_shape", 1)));
  OXPORT_ASSIGN(double eps, ctx.constDouble(args.in("eps", 4)));
  const DType dt = ctx.dtype(args.in("input", 0));
  const int rank = ctx.rank(args.in("input", 0));
  std::vector<int64_t> axes;
  for (int64_t i = rank - static_cast<int64_t>(normalized.size()); i < rank; ++i) axes.push_back(i);
  std::string mean = reduceOver(ctx, "ReduceMean", x, axes, true);
  std::string d = ctx.emit1("Sub", {x, mean});
  std::string var = reduceOver(ctx, "ReduceMean", ctx.emit1("Mul", {d, d}), axes, true);
  std::string rstd = ctx.emit1("Reciprocal", {ctx.emit1("Sqrt", {ctx.emit1("Add", {var, ctx.constScalar(eps, dt)})})});
  std::string y = ctx.emit1("Mul", {d, rstd});
  if (!ctx.isNone(args.in("weight", 2))) {
    OXPORT_ASSIGN(std::string w, ctx.tensor(args.in("weight", 2)));
    y = ctx.emit1("Mul", {y, w});
  }
  if (!ctx.isNone(args.in("bias", 3))) {
    OXPORT_ASSIGN(std::string b, ctx.tensor(args.in("bias", 3)));
    y = ctx.emit1("Add", {y, b});
  }
  ctx.bind(n.output(0), y);
  ctx.bind(n.output(1), mean);
  ctx.bind(n.output(2), rstd);
  return okStatus();
}

// conv_tbc(input [T, B, Cin], weight [K, Cin, Cout], bias [Cout], pad): a Conv over time.
Status convertConvTbc(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string w, ctx.tensor(args.in("weight", 1)));
  OXPORT_ASSIGN(std::string b, ctx.tensor(args.in("bias", 2)));
  OXPORT_ASSIGN(int64_t pad, ctx.constInt(args.in("pad", 3)));
  std::string xt = ctx.emit1("Transpose", {x}, {attrInts("perm", {1, 2, 0})});  // [B, Cin, T]
  std::string wt = ctx.emit1("Transpose", {w}, {attrInts("perm", {2, 1, 0})});  // [Cout, Cin, K]
  std::string y = ctx.emit1("Conv", {xt, wt, b}, {attrInts("pads", {pad, pad})});
  return bindOut(ctx, n, ctx.emit1("Transpose", {y}, {attrInts("perm", {2, 0, 1})}));
}

}  // namespace

void registerMathOps(Registry& r) {
  addAll(r, {"aten::addcmul", "aten::addcmul_"}, convertAddc("Mul"));
  addAll(r, {"aten::addcdiv", "aten::addcdiv_"}, convertAddc("Div"));
  addAll(r, {"aten::baddbmm", "aten::baddbmm_"}, convertBaddbmm);
  r.add("aten::dot", convertDot);
  r.add("aten::mv", convertMv);
  addAll(r, {"aten::floor_divide", "aten::floor_divide_", "aten::_floor_divide", "aten::floordiv"}, convertFloorDivide);
  addAll(r, {"aten::fmod", "aten::fmod_"}, modulo(false));
  addAll(r, {"aten::remainder", "aten::remainder_"}, modulo(true));
  addAll(r, {"aten::lerp", "aten::lerp_"}, convertLerp);
  addAll(r, {"aten::square", "aten::square_"}, convertSquare);
  addAll(r, {"aten::log10", "aten::log10_"}, logBase(10.0));
  addAll(r, {"aten::log2", "aten::log2_"}, logBase(2.0));
  addAll(r, {"aten::log1p", "aten::log1p_"}, convertLog1p);
  addAll(r, {"aten::expm1", "aten::expm1_"}, convertExpm1);
  addAll(r, {"aten::trunc", "aten::trunc_", "aten::fix"}, convertTrunc);
  addAll(r, {"aten::frac", "aten::frac_"}, convertFrac);
  addAll(r, {"aten::atan2", "aten::atan2_", "aten::arctan2"}, convertAtan2);
  r.add("aten::isnan", convertClassify(FloatClass::NaN));
  r.add("aten::isinf", convertClassify(FloatClass::Inf));
  r.add("aten::isfinite", convertClassify(FloatClass::Finite));
  addAll(r, {"aten::nan_to_num", "aten::nan_to_num_"}, convertNanToNum);
  addAll(r, {"aten::__lshift__", "aten::__ilshift__", "aten::bitwise_left_shift"}, convertShift(true));
  addAll(r, {"aten::__rshift__", "aten::__irshift__", "aten::bitwise_right_shift"}, convertShift(false));
  r.add("aten::cosine_similarity", convertCosineSimilarity);
  r.add("aten::pairwise_distance", convertPairwiseDistance);
  r.add("aten::cdist", convertCdist);
  addAll(r, {"aten::cross", "aten::linalg_cross"}, convertCross);
  r.add("aten::kl_div", convertKlDiv);
  // Below opset 11 det/logdet are unrolled eliminations (ops_linalg_small.cpp).
  addAll(r, {"aten::linalg_det", "aten::det"}, convertDet(false), 11);
  r.add("aten::logdet", convertDet(true), 11);
  addAll(r, {"aten::slogdet", "aten::linalg_slogdet"}, convertSlogdet, 11);
  r.add("aten::_weight_norm", convertWeightNorm);
  r.add("aten::native_layer_norm", convertNativeLayerNorm);
  r.add("aten::conv_tbc", convertConvTbc);
}

}  // namespace oxport::convert
