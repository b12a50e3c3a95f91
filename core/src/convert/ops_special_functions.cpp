// Special functions ONNX has no operator for: lgamma, digamma (psi) and erfinv, at every opset
// from 9. Each is evaluated in float64 whatever the input's dtype (then cast back), so the
// series below are well inside float32's precision:
// - lgamma: the recurrence lgamma(x) = lgamma(x + 8) - sum_k log|x + k| and Stirling's series at
//   x + 8; below 0.5 the reflection log(pi / |sin(pi x)|) - lgamma(1 - x); +inf at 0 and the
//   negative integers (the poles), as libtorch. mvlgamma (special.multigammaln) sums it.
// - digamma: the recurrence psi(x) = psi(x + 8) - sum_k 1 / (x + k) and the asymptotic series;
//   below 0.5 the reflection psi(1 - x) - pi / tan(pi x); -inf at 0, NaN at negative integers.
// - erfinv: M. Giles' two-branch polynomial ("Approximating the erfinv function", 2010), in
//   float64; +-inf at +-1 and NaN beyond.
#include <cmath>
#include <limits>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

constexpr DType kF64 = DType::Float64;

std::string c64(Context& ctx, double v) { return ctx.constScalar(v, kF64); }

// x == v for floats at every opset (Equal takes floats from 11 only); false where x is NaN.
std::string equalsConst(Context& ctx, const std::string& x, const std::string& v) {
  std::string differ = ctx.emit1("Or", {ctx.emit1("Or", {ctx.emit1("Less", {x, v}), ctx.emit1("Greater", {x, v})}),
                                        ctx.emit1("IsNaN", {x})});
  return ctx.emit1("Not", {differ});
}

// Horner: c[0] x^(n-1) + ... + c[n-1].
std::string horner(Context& ctx, const std::string& x, const std::vector<double>& c) {
  std::string p = c64(ctx, c[0]);
  for (size_t i = 1; i < c.size(); ++i) p = ctx.emit1("Add", {ctx.emit1("Mul", {p, x}), c64(ctx, c[i])});
  return p;
}

// A non-positive integer (a pole of gamma and digamma).
std::string isPole(Context& ctx, const std::string& x) {
  std::string whole = equalsConst(ctx, x, ctx.emit1("Floor", {x}));
  return ctx.emit1("And", {whole, ctx.emit1("Not", {ctx.emit1("Greater", {x, c64(ctx, 0)})})});
}

// lgamma and digamma move x (>= 0.5, float64) up by 8 with their recurrences before the
// asymptotic series: z = x + 8, 1/z, 1/z^2, and the sum of `each` (Log or Reciprocal) of x + k, k < 8.
struct Shifted {
  std::string z, r, r2, sum;
};

Shifted shiftBy8(Context& ctx, const std::string& x, const char* each) {
  Shifted sh;
  for (int k = 0; k < 8; ++k) {
    std::string v = ctx.emit1(each, {k == 0 ? x : ctx.emit1("Add", {x, c64(ctx, k)})});
    sh.sum = sh.sum.empty() ? v : ctx.emit1("Add", {sh.sum, v});
  }
  sh.z = ctx.emit1("Add", {x, c64(ctx, 8)});
  sh.r = ctx.emit1("Reciprocal", {sh.z});
  sh.r2 = ctx.emit1("Mul", {sh.r, sh.r});
  return sh;
}

// lgamma for x >= 0.5 (float64).
std::string lgammaRight(Context& ctx, const std::string& x) {
  const Shifted sh = shiftBy8(ctx, x, "Log");
  const std::string &z = sh.z, &r = sh.r, &r2 = sh.r2, &logs = sh.sum;
  // 1/(12z) - 1/(360z^3) + 1/(1260z^5) - 1/(1680z^7) + 1/(1188z^9)
  std::string series = ctx.emit1("Mul", {r, horner(ctx, r2, {1.0 / 1188, -1.0 / 1680, 1.0 / 1260, -1.0 / 360, 1.0 / 12})});
  std::string main = ctx.emit1("Sub", {ctx.emit1("Mul", {ctx.emit1("Sub", {z, c64(ctx, 0.5)}), ctx.emit1("Log", {z})}), z});
  std::string s = ctx.emit1("Add", {ctx.emit1("Add", {main, c64(ctx, 0.5 * std::log(2 * M_PI))}), series});
  return ctx.emit1("Sub", {s, logs});
}

// digamma for x >= 0.5 (float64).
std::string digammaRight(Context& ctx, const std::string& x) {
  const Shifted sh = shiftBy8(ctx, x, "Reciprocal");
  const std::string &z = sh.z, &r = sh.r, &r2 = sh.r2, &inv = sh.sum;
  // log z - 1/(2z) - 1/(12z^2) + 1/(120z^4) - 1/(252z^6) + 1/(240z^8) - 1/(132z^10)
  std::string series = ctx.emit1("Mul", {r2, horner(ctx, r2, {-1.0 / 132, 1.0 / 240, -1.0 / 252, 1.0 / 120, -1.0 / 12})});
  std::string s = ctx.emit1("Sub", {ctx.emit1("Log", {z}), ctx.emit1("Mul", {r, c64(ctx, 0.5)})});
  return ctx.emit1("Sub", {ctx.emit1("Add", {s, series}), inv});
}

// +inf stays +inf (the series would give inf - inf).
std::string plusInfStays(Context& ctx, const std::string& x, const std::string& y) {
  const std::string inf = c64(ctx, std::numeric_limits<double>::infinity());
  return ctx.emit1("Where", {equalsConst(ctx, x, inf), inf, y});
}

// Reflection below 0.5: where x < 0.5 (left), the right-hand forms run at xr = 1 - x; pix = pi x.
struct Reflection {
  std::string left, xr, pix;
};

Reflection reflect(Context& ctx, const std::string& x) {
  Reflection f;
  f.left = ctx.emit1("Less", {x, c64(ctx, 0.5)});
  f.xr = ctx.emit1("Where", {f.left, ctx.emit1("Sub", {c64(ctx, 1), x}), x});
  f.pix = ctx.emit1("Mul", {x, c64(ctx, M_PI)});
  return f;
}

// lgamma of float64 x at every x: lgammaRight, the reflection below 0.5, +inf at the poles.
std::string lgamma64(Context& ctx, const std::string& x) {
  const Reflection f = reflect(ctx, x);
  const std::string &left = f.left, &xr = f.xr, &pix = f.pix;
  std::string right = lgammaRight(ctx, xr);
  std::string refl = ctx.emit1("Sub", {ctx.emit1("Sub", {c64(ctx, std::log(M_PI)),
                                                         ctx.emit1("Log", {ctx.emit1("Abs", {ctx.emit1("Sin", {pix})})})}),
                                       right});
  std::string y = ctx.emit1("Where", {left, refl, right});
  y = ctx.emit1("Where", {isPole(ctx, x), c64(ctx, std::numeric_limits<double>::infinity()), y});
  return plusInfStays(ctx, x, y);
}

// mvlgamma(self, p): the multivariate log-gamma, p(p-1)/4 log(pi) + sum_{i<p} lgamma(x - i/2)
// (libtorch's own definition; it rejects x <= (p-1)/2 at run time, the file gives lgamma's value).
Status convertMvlgamma(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType out = n.output(0)->meta.dtype;
  const Value* self = args.in("self", 0);
  OXPORT_ASSIGN(int64_t p, args.constInt("p", 1));
  if (p < 1) return ctx.error("bad-argument", "mvlgamma with p = " + std::to_string(p), "p must be at least 1");
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(self, kF64));
  std::vector<double> shifts;
  for (int64_t i = 0; i < p; ++i) shifts.push_back(-0.5 * static_cast<double>(i));
  const int rank = ctx.rank(self);
  std::string terms = lgamma64(ctx, ctx.emit1("Add", {ctx.unsqueeze(x, {rank}), ctx.constant(HostTensor::fromVector(kF64, {p}, shifts), "mvlgamma_shifts")}));
  std::string y = reduceOver(ctx, "ReduceSum", terms, {rank}, false);
  y = ctx.emit1("Add", {y, c64(ctx, static_cast<double>(p * (p - 1)) / 4 * std::log(M_PI))});
  return bindOut(ctx, n, castIf(ctx, y, kF64, out));
}

enum class Fn { Lgamma, Digamma, Erfinv };

ConvertFn special(Fn fn) {
  return [fn](Context& ctx, const Node& n) -> Status {
    const DType out = n.output(0)->meta.dtype;
    const Value* self = Args(ctx, n).in({"self", "a"}, 0);
    OXPORT_ASSIGN(std::string x0, ctx.tensor(self));
    std::string x = ctx.dtype(self) == kF64 ? x0 : ctx.cast(x0, kF64);
    const double inf = std::numeric_limits<double>::infinity();
    std::string y;
    if (fn == Fn::Erfinv) {
      std::string w = ctx.emit1("Neg", {ctx.emit1("Log", {ctx.emit1("Mul", {ctx.emit1("Sub", {c64(ctx, 1), x}),
                                                                           ctx.emit1("Add", {c64(ctx, 1), x})})})});
      std::string central = horner(ctx, ctx.emit1("Sub", {w, c64(ctx, 2.5)}),
                                   {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                                    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941});
      std::string tail = horner(ctx, ctx.emit1("Sub", {ctx.emit1("Sqrt", {w}), c64(ctx, 3)}),
                                {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                                 -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
      std::string p = ctx.emit1("Where", {ctx.emit1("Less", {w, c64(ctx, 5)}), central, tail});
      y = ctx.emit1("Mul", {p, x});
      std::string one = equalsConst(ctx, ctx.emit1("Abs", {x}), c64(ctx, 1));
      y = ctx.emit1("Where", {one, ctx.emit1("Mul", {x, c64(ctx, inf)}), y});
    } else {
      if (fn == Fn::Lgamma) {
        y = lgamma64(ctx, x);
      } else {
        const Reflection f = reflect(ctx, x);
        const std::string &left = f.left, &xr = f.xr, &pix = f.pix;
        std::string right = digammaRight(ctx, xr);
        // pi cot(pi x) as sin(pi x + pi/2) / sin(pi x): ONNX Runtime runs Tan and Cos on float only.
        std::string cot = ctx.emit1("Div", {ctx.emit1("Sin", {ctx.emit1("Add", {pix, c64(ctx, M_PI / 2)})}),
                                            ctx.emit1("Sin", {pix})});
        std::string refl = ctx.emit1("Sub", {right, ctx.emit1("Mul", {c64(ctx, M_PI), cot})});
        y = ctx.emit1("Where", {left, refl, right});
        std::string zero = equalsConst(ctx, x, c64(ctx, 0));
        y = ctx.emit1("Where", {isPole(ctx, x), c64(ctx, std::nan("")), y});
        y = ctx.emit1("Where", {zero, c64(ctx, -inf), y});
      }
      y = plusInfStays(ctx, x, y);
    }
    return bindOut(ctx, n, out == kF64 ? y : ctx.cast(y, out));
  };
}

}  // namespace

void registerSpecialFunctionOps(Registry& r) {
  addAll(r, {"aten::lgamma", "aten::lgamma_"}, special(Fn::Lgamma));
  addAll(r, {"aten::mvlgamma", "aten::mvlgamma_", "aten::special_multigammaln"}, convertMvlgamma);
  addAll(r, {"aten::digamma", "aten::digamma_", "aten::special_digamma", "aten::special_psi"}, special(Fn::Digamma));
  addAll(r, {"aten::erfinv", "aten::erfinv_", "aten::special_erfinv"}, special(Fn::Erfinv));
}

}  // namespace oxport::convert
