// Number functions past torch.onnx: i0 (the modified Bessel function of order 0, Cephes'
// Chebyshev expansions evaluated in float64) and gcd/lcm of integer tensors (Euclid's algorithm
// unrolled to its bound for the dtype, so no Loop is needed: 93 steps for int64).
#include <cmath>
#include <vector>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// Cephes i0.c: exp(-|x|) I0(|x|) on [0, 8] (Chebyshev in |x| / 2 - 2) and sqrt(|x|) exp(-|x|)
// I0(|x|) on (8, inf) (Chebyshev in 32 / |x| - 2).
const std::vector<double> kI0A = {
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16, 1.715391285555133e-15,
    -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13, 2.95505266312964e-12,
    -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07, 1.1173875391201037e-06,
    -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05, 0.00018850288509584165,
    -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
    -0.3046826723431984, 0.6767952744094761};
const std::vector<double> kI0B = {
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
    -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15, 3.8116806693526224e-15,
    -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11, -3.1499165279632416e-11,
    1.1889147107846439e-11, 4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08,
    2.0489185894690638e-07, 2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
    0.8044904110141088};

// Clenshaw's recurrence for sum c_i T_i(x / 2), as Cephes' chbevl.
std::string chebyshev(Context& ctx, const std::string& x, const std::vector<double>& c) {
  std::string b0 = ctx.constScalar(c[0], DType::Float64), b1 = ctx.constScalar(0, DType::Float64), b2 = b1;
  for (size_t i = 1; i < c.size(); ++i) {
    b2 = b1;
    b1 = b0;
    b0 = ctx.emit1("Add", {ctx.emit1("Sub", {ctx.emit1("Mul", {x, b1}), b2}), ctx.constScalar(c[i], DType::Float64)});
  }
  return ctx.emit1("Mul", {ctx.emit1("Sub", {b0, b2}), ctx.constScalar(0.5, DType::Float64)});
}

// i0(self): exp(|x|) chbevl(|x| / 2 - 2, A) for |x| <= 8, exp(|x|) chbevl(32 / |x| - 2, B) / sqrt(|x|)
// beyond (each branch's NaN and inf where it is not taken are left out by Where).
Status convertI0(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), DType::Float64));
  auto c = [&](double v) { return ctx.constScalar(v, DType::Float64); };
  std::string ax = ctx.emit1("Abs", {x});
  std::string e = ctx.emit1("Exp", {ax});
  std::string small = ctx.emit1("Mul", {e, chebyshev(ctx, ctx.emit1("Sub", {ctx.emit1("Div", {ax, c(2)}), c(2)}), kI0A)});
  std::string big_t = ctx.emit1("Sub", {ctx.emit1("Div", {c(32), ax}), c(2)});
  std::string big = ctx.emit1("Div", {ctx.emit1("Mul", {e, chebyshev(ctx, big_t, kI0B)}), ctx.emit1("Sqrt", {ax})});
  std::string r = ctx.emit1("Where", {ctx.emit1("Greater", {ax, c(8)}), big, small});
  return bindOut(ctx, n, castIf(ctx, r, DType::Float64, n.output(0)->meta.dtype));
}

// Euclid's steps that suffice for |values| of the dtype (consecutive Fibonacci numbers are the
// worst case: F(93) > 2^63).
int euclidSteps(DType dt) {
  switch (dt) {
    case DType::Int8: case DType::UInt8: return 13;
    case DType::Int16: return 24;
    case DType::Int32: return 47;
    default: return 93;
  }
}

// gcd(|a|, |b|) in int64: (a, b) <- (b, a mod b) while b != 0, each step a Where on b == 0.
// The remainder is a - (a / b) b (Div truncates; both are non-negative), at every opset.
std::string gcdOf(Context& ctx, std::string a, std::string b, int steps) {
  a = ctx.emit1("Abs", {a});
  b = ctx.emit1("Abs", {b});
  const std::string zero = ctx.constScalar(0, DType::Int64), one = ctx.constScalar(1, DType::Int64);
  for (int i = 0; i < steps; ++i) {
    std::string done = ctx.emit1("Equal", {b, zero});
    std::string d = ctx.emit1("Where", {done, one, b});
    std::string rem = ctx.emit1("Sub", {a, ctx.emit1("Mul", {ctx.emit1("Div", {a, d}), d})});
    a = ctx.emit1("Where", {done, a, b});
    b = ctx.emit1("Where", {done, zero, rem});
  }
  return a;
}

// gcd(self, other) / lcm(self, other) of integer tensors: lcm = |a / gcd * b| (0 when gcd is 0).
ConvertFn convertGcdLcm(bool lcm) {
  return [lcm](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType out = n.output(0)->meta.dtype;
    if (out == DType::Float32 || out == DType::Float64 || out == DType::Float16 || out == DType::BFloat16 || out == DType::Bool)
      return ctx.error("bad-argument", std::string(lcm ? "lcm" : "gcd") + " of a non-integer tensor");
    OXPORT_ASSIGN(std::string a, ctx.tensorOfType(args.in("self", 0), DType::Int64));
    OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("other", 1), DType::Int64));
    std::string g = gcdOf(ctx, a, b, euclidSteps(out));
    if (lcm) {
      const std::string zero = ctx.constScalar(0, DType::Int64);
      std::string zg = ctx.emit1("Equal", {g, zero});
      std::string safe = ctx.emit1("Where", {zg, ctx.constScalar(1, DType::Int64), g});
      std::string l = ctx.emit1("Abs", {ctx.emit1("Mul", {ctx.emit1("Div", {a, safe}), b})});
      g = ctx.emit1("Where", {zg, zero, l});
    }
    return bindOut(ctx, n, castIf(ctx, g, DType::Int64, out));
  };
}

}  // namespace

void registerNumberFunctionOps(Registry& r) {
  r.add("aten::i0", convertI0);
  r.add("aten::gcd", convertGcdLcm(false));
  r.add("aten::lcm", convertGcdLcm(true));
}

}  // namespace oxport::convert
