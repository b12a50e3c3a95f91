// Number functions past torch.onnx: i0, i0e, i1, i1e (the modified Bessel functions of order 0 and 1,
// Cephes' Chebyshev expansions evaluated in float64), ndtri, erfcx and log_ndtr (libtorch's
// approximations, in float64) and gcd/lcm of integer tensors (Euclid's algorithm
// unrolled to its bound for the dtype, so no Loop is needed: 93 steps for int64).
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "convert/args.h"
#include "convert/erfcx_table.h"
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

// x == v for a float64 x (Equal takes floats from opset 11; before, neither less nor greater, and
// not NaN).
std::string equalsScalar64(Context& ctx, const std::string& x, double v) {
  const std::string c = ctx.constScalar(v, DType::Float64);
  if (ctx.opset() >= 11) return ctx.emit1("Equal", {x, c});
  const std::string ordered = ctx.emit1("Not", {ctx.emit1("IsNaN", {x})});
  return ctx.emit1("And", {ordered, ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {x, c}), ctx.emit1("Greater", {x, c})})})});
}

// log(y) of a float64 y >= 0, also for subnormal y: ONNX Runtime's double Log is off there
// (log(1e-320) by 1.5), so y below 2^-1000 is scaled by 2^64 first and 64 log 2 taken off.
std::string log64(Context& ctx, const std::string& y) {
  const std::string tiny = ctx.emit1("Less", {y, ctx.constScalar(std::ldexp(1.0, -1000), DType::Float64)});
  const std::string scaled = ctx.emit1("Where", {tiny, ctx.emit1("Mul", {y, ctx.constScalar(std::ldexp(1.0, 64), DType::Float64)}), y});
  const std::string shift = ctx.emit1("Where", {tiny, ctx.constScalar(64 * 0.69314718055994530942, DType::Float64),
                                                ctx.constScalar(0, DType::Float64)});
  return ctx.emit1("Sub", {ctx.emit1("Log", {scaled}), shift});
}
// ---- i0e, i1, i1e: Cephes' Chebyshev expansions as libtorch evaluates them (calc_i0e, calc_i1,
// calc_i1e), in float64. libtorch's float32 kernels sum shorter tables for i1/i1e (17 and 7
// terms); the terms they leave out are below float32's rounding of the result.
const std::vector<double> kI1A = {
    2.7779141127610464e-18, -2.111421214358166e-17, 1.5536319577362005e-16, -1.1055969477353862e-15,
    7.600684294735408e-15, -5.042185504727912e-14, 3.223793365945575e-13, -1.9839743977649436e-12,
    1.1736186298890901e-11, -6.663489723502027e-11, 3.625590281552117e-10, -1.8872497517228294e-09,
    9.381537386495773e-09, -4.445059128796328e-08, 2.0032947535521353e-07, -8.568720264695455e-07,
    3.4702513081376785e-06, -1.3273163656039436e-05, 4.781565107550054e-05, -0.00016176081582589674,
    0.0005122859561685758, -0.0015135724506312532, 0.004156422944312888, -0.010564084894626197,
    0.024726449030626516, -0.05294598120809499, 0.1026436586898471, -0.17641651835783406, 0.25258718644363365};
const std::vector<double> kI1B = {
    7.517296310842105e-18, 4.414348323071708e-18, -4.6503053684893586e-17, -3.209525921993424e-17,
    2.96262899764595e-16, 3.3082023109209285e-16, -1.8803547755107825e-15, -3.8144030724370075e-15,
    1.0420276984128802e-14, 4.272440016711951e-14, -2.1015418427726643e-14, -4.0835511110921974e-13,
    -7.198551776245908e-13, 2.0356285441470896e-12, 1.4125807436613782e-11, 3.2526035830154884e-11,
    -1.8974958123505413e-11, -5.589743462196584e-10, -3.835380385964237e-09, -2.6314688468895196e-08,
    -2.512236237870209e-07, -3.882564808877691e-06, -0.00011058893876262371, -0.009761097491361469,
    0.7785762350182801};


std::string f64(Context& ctx, double v) { return ctx.constScalar(v, DType::Float64); }

// x (float64) as libtorch's float32 kernel has it after one rounding step: a float32 (or half)
// result is computed in float, so an intermediate that overflows float (exp(89)) or is rounded
// to it (x * x) is rounded here too; float64 results are left alone.
std::string roundedAsKernel(Context& ctx, const std::string& x, DType out) {
  if (out == DType::Float64) return x;
  return ctx.cast(ctx.cast(x, DType::Float32), DType::Float64);
}

// The input as float64 and its absolute value.
Result<std::pair<std::string, std::string>> float64Input(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), DType::Float64));
  return std::make_pair(x, ctx.emit1("Abs", {x}));
}

// i0e(x) = exp(-|x|) I0(x): chbevl(|x| / 2 - 2, A) up to 8, chbevl(32 / |x| - 2, B) / sqrt(|x|) beyond.
Status convertI0e(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto in, float64Input(ctx, n));
  const std::string ax = in.second;
  std::string small = chebyshev(ctx, ctx.emit1("Sub", {ctx.emit1("Div", {ax, f64(ctx, 2)}), f64(ctx, 2)}), kI0A);
  std::string big = ctx.emit1("Div", {chebyshev(ctx, ctx.emit1("Sub", {ctx.emit1("Div", {f64(ctx, 32), ax}), f64(ctx, 2)}), kI0B),
                                      ctx.emit1("Sqrt", {ax})});
  std::string r = ctx.emit1("Where", {ctx.emit1("Greater", {ax, f64(ctx, 8)}), big, small});
  return bindOut(ctx, n, castIf(ctx, r, DType::Float64, n.output(0)->meta.dtype));
}

// i1(x) = sign(x) exp(|x|) |x| chbevl(|x| / 2 - 2, A) up to 8, sign(x) exp(|x|) chbevl(32 / |x| - 2, B) /
// sqrt(|x|) beyond; i1e the same without exp(|x|). i1(+-inf) is NaN (inf / inf) as in libtorch, and
// a float32 i1 is inf from |x| = 88.72..., where float's exp overflows, although I1 is finite there.
ConvertFn convertI1(bool scaled) {
  return [scaled](Context& ctx, const Node& n) -> Status {
    const DType out = n.output(0)->meta.dtype;
    OXPORT_ASSIGN(auto in, float64Input(ctx, n));
    const auto& [x, ax] = in;
    std::string small = chebyshev(ctx, ctx.emit1("Sub", {ctx.emit1("Div", {ax, f64(ctx, 2)}), f64(ctx, 2)}), kI1A);
    std::string big = chebyshev(ctx, ctx.emit1("Sub", {ctx.emit1("Div", {f64(ctx, 32), ax}), f64(ctx, 2)}), kI1B);
    if (scaled) {
      small = ctx.emit1("Mul", {small, ax});
    } else {
      const std::string e = roundedAsKernel(ctx, ctx.emit1("Exp", {ax}), out);
      small = ctx.emit1("Mul", {ctx.emit1("Mul", {e, ax}), small});
      big = ctx.emit1("Mul", {e, big});
    }
    big = ctx.emit1("Div", {big, ctx.emit1("Sqrt", {ax})});
    std::string r = ctx.emit1("Where", {ctx.emit1("Greater", {ax, f64(ctx, 8)}), big, small});
    r = ctx.emit1("Where", {ctx.emit1("Less", {x, f64(ctx, 0)}), ctx.emit1("Neg", {r}), r});
    return bindOut(ctx, n, castIf(ctx, r, DType::Float64, out));
  };
}

// ---- ndtri: Cephes' rational approximations (calc_ndtri), in float64.
const std::vector<double> kNdtriP0 = {
    -59.96335010141079, 98.00107541859997, -56.67628574690703, 13.931260938727968, -1.2391658386738125};
const std::vector<double> kNdtriQ0 = {
    1.0, 1.9544885833814176, 4.676279128988815, 86.36024213908905, -225.46268785411937, 200.26021238006066,
    -82.03722561683334, 15.90562251262117, -1.1833162112133};
const std::vector<double> kNdtriP1 = {
    4.0554489230596245, 31.525109459989388, 57.16281922464213, 44.08050738932008, 14.684956192885803,
    2.1866330685079025, -0.1402560791713545, -0.03504246268278482, -0.0008574567851546854};
const std::vector<double> kNdtriQ1 = {
    1.0, 15.779988325646675, 45.39076351288792, 41.3172038254672, 15.04253856929075, 2.504649462083094,
    -0.14218292285478779, -0.03808064076915783, -0.0009332594808954574};
const std::vector<double> kNdtriP2 = {
    3.2377489177694603, 6.915228890689842, 3.9388102529247444, 1.3330346081580755, 0.20148538954917908,
    0.012371663481782003, 0.00030158155350823543, 2.6580697468673755e-06, 6.239745391849833e-09};
const std::vector<double> kNdtriQ2 = {
    1.0, 6.02427039364742, 3.6798356385616087, 1.3770209948908132, 0.21623699359449663, 0.013420400608854318,
    0.00032801446468212774, 2.8924786474538068e-06, 6.790194080099813e-09};

// c[0] x^(n-1) + ... + c[n-1], Cephes' polevl.
std::string polevl(Context& ctx, const std::string& x, const std::vector<double>& c) {
  std::string r = f64(ctx, c[0]);
  for (size_t i = 1; i < c.size(); ++i) r = ctx.emit1("Add", {ctx.emit1("Mul", {r, x}), f64(ctx, c[i])});
  return r;
}

// ndtri(y), the inverse of the normal CDF: -inf at 0, inf at 1, NaN outside [0, 1]. With y folded
// to the lower tail (1 - y above 1 - exp(-2), the sign flipped), y > exp(-2) is a rational function
// of (y - 1/2)^2, and below it x = sqrt(-2 log y) corrected by z P(z) / Q(z), z = 1 / x, with one
// pair of polynomials below x = 8 and another beyond.
Status convertNdtri(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto in, float64Input(ctx, n));
  const std::string y0 = in.first;
  const double exp_m2 = 0.13533528323661269189;
  const std::string upper = ctx.emit1("Greater", {y0, f64(ctx, 1 - exp_m2)});
  const std::string y = ctx.emit1("Where", {upper, ctx.emit1("Sub", {f64(ctx, 1), y0}), y0});
  // The centre.
  const std::string yc = ctx.emit1("Sub", {y, f64(ctx, 0.5)});
  const std::string y2 = ctx.emit1("Mul", {yc, yc});
  std::string centre = ctx.emit1("Div", {ctx.emit1("Mul", {y2, polevl(ctx, y2, kNdtriP0)}), polevl(ctx, y2, kNdtriQ0)});
  centre = ctx.emit1("Mul", {ctx.emit1("Add", {yc, ctx.emit1("Mul", {yc, centre})}), f64(ctx, 2.50662827463100050242)});
  // The tails (y <= exp(-2); where y is not, its values are not taken).
  const std::string x = ctx.emit1("Sqrt", {ctx.emit1("Mul", {f64(ctx, -2), log64(ctx, y)})});
  const std::string x0 = ctx.emit1("Sub", {x, ctx.emit1("Div", {ctx.emit1("Log", {x}), x})});
  const std::string z = ctx.emit1("Div", {f64(ctx, 1), x});
  auto correction = [&](const std::vector<double>& p, const std::vector<double>& q) {
    return ctx.emit1("Div", {ctx.emit1("Mul", {z, polevl(ctx, z, p)}), polevl(ctx, z, q)});
  };
  const std::string x1 = ctx.emit1("Where", {ctx.emit1("Less", {x, f64(ctx, 8)}), correction(kNdtriP1, kNdtriQ1),
                                             correction(kNdtriP2, kNdtriQ2)});
  std::string tail = ctx.emit1("Sub", {x0, x1});
  tail = ctx.emit1("Where", {upper, tail, ctx.emit1("Neg", {tail})});
  std::string r = ctx.emit1("Where", {ctx.emit1("Greater", {y, f64(ctx, exp_m2)}), centre, tail});
  // The ends and outside [0, 1] (NaN stays NaN through every branch).
  const double inf = std::numeric_limits<double>::infinity();
  r = ctx.emit1("Where", {ctx.emit1("Or", {ctx.emit1("Less", {y0, f64(ctx, 0)}), ctx.emit1("Greater", {y0, f64(ctx, 1)})}),
                          f64(ctx, std::numeric_limits<double>::quiet_NaN()), r});
  r = ctx.emit1("Where", {equalsScalar64(ctx, y0, 0), f64(ctx, -inf), r});
  r = ctx.emit1("Where", {equalsScalar64(ctx, y0, 1), f64(ctx, inf), r});
  return bindOut(ctx, n, castIf(ctx, r, DType::Float64, n.output(0)->meta.dtype));
}

// ---- erfcx and log_ndtr (calc_erfcx, calc_log_ndtr)

// erfcx(|x|) for |x| <= 50 (erfcx_table.h): the row j = floor(y100) of y100 = 400 / (4 + |x|), read
// with Gather, evaluated at t = 2 y100 - (2 j + 1); 1 where y100 is 100 (x = 0). NaN is read as 0
// (the caller keeps NaN) so the index stays in the table.
std::string erfcxTable(Context& ctx, const std::string& ax) {
  const std::string safe = ctx.emit1("Where", {ctx.emit1("IsNaN", {ax}), f64(ctx, 0), ax});
  const std::string y100 = ctx.emit1("Div", {f64(ctx, 400), ctx.emit1("Add", {f64(ctx, 4), safe})});
  const std::string jf = ctx.emit1("Min", {ctx.emit1("Floor", {y100}), f64(ctx, kErfcxRows - 1)});
  const std::string j = ctx.cast(jf, DType::Int64);
  const std::string t = ctx.emit1("Sub", {ctx.emit1("Mul", {y100, f64(ctx, 2)}),
                                          ctx.emit1("Add", {ctx.emit1("Mul", {jf, f64(ctx, 2)}), f64(ctx, 1)})});
  std::string r;
  for (int k = kErfcxDegree; k >= 0; --k) {
    std::vector<double> column(kErfcxRows);
    for (int row = 0; row < kErfcxRows; ++row) column[row] = kErfcxTable[row][k];
    const std::string ck = ctx.emit1(
        "Gather", {ctx.constant(HostTensor::fromVector(DType::Float64, {kErfcxRows}, column)), j}, {attrInt("axis", 0)});
    r = k == kErfcxDegree ? ck : ctx.emit1("Add", {ctx.emit1("Mul", {r, t}), ck});
  }
  return ctx.emit1("Where", {ctx.emit1("Less", {y100, f64(ctx, 100)}), r, f64(ctx, 1)});
}

// erfcx(x) = exp(x^2) erfc(x) of a float64 x: the table up to 50, the continued fraction
// (ispi / x beyond 5e7) past it; for x < 0, 2 exp(x^2) - erfcx(-x), 2 exp(x^2) below -6.1 and inf
// below -26.7. `out` is the result's dtype (x^2 rounded as libtorch's float kernel rounds it).
std::string erfcxOf(Context& ctx, const std::string& x, DType out) {
  const double ispi = 0.56418958354775628694807945156;
  const std::string ax = ctx.emit1("Abs", {x});
  const std::string table = erfcxTable(ctx, ax);
  const std::string x2 = roundedAsKernel(ctx, ctx.emit1("Mul", {x, x}), out);
  std::string cf = ctx.emit1(
      "Div", {ctx.emit1("Mul", {f64(ctx, ispi), ctx.emit1("Add", {ctx.emit1("Mul", {x2, ctx.emit1("Add", {x2, f64(ctx, 4.5)})}),
                                                                  f64(ctx, 2)})}),
              ctx.emit1("Mul", {x, ctx.emit1("Add", {ctx.emit1("Mul", {x2, ctx.emit1("Add", {x2, f64(ctx, 5)})}), f64(ctx, 3.75)})})});
  cf = ctx.emit1("Where", {ctx.emit1("Greater", {x, f64(ctx, 5e7)}), ctx.emit1("Div", {f64(ctx, ispi), x}), cf});
  const std::string pos = ctx.emit1("Where", {ctx.emit1("Greater", {x, f64(ctx, 50)}), cf, table});
  const std::string e2 = ctx.emit1("Mul", {f64(ctx, 2), ctx.emit1("Exp", {x2})});
  std::string neg = ctx.emit1("Where", {ctx.emit1("Less", {x, f64(ctx, -6.1)}), e2, ctx.emit1("Sub", {e2, table})});
  neg = ctx.emit1("Where", {ctx.emit1("Less", {x, f64(ctx, -26.7)}), f64(ctx, std::numeric_limits<double>::infinity()), neg});
  const std::string r = ctx.emit1("Where", {ctx.emit1("Less", {x, f64(ctx, 0)}), neg, pos});
  return ctx.emit1("Where", {ctx.emit1("IsNaN", {x}), x, r});
}

Status convertErfcx(Context& ctx, const Node& n) {
  const DType out = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, float64Input(ctx, n));
  return bindOut(ctx, n, castIf(ctx, erfcxOf(ctx, in.first, out), DType::Float64, out));
}

// log_ndtr(x) = log(Phi(x)), t = x / sqrt(2): below -1, log(erfcx(-t) / 2) - t^2 (no underflow in
// the left tail: log_ndtr(-1e10) is -5e19); from -1 on, log1p(-erfc(t) / 2), with erfc(t) =
// exp(-t^2) erfcx(t) for t >= 0 (accurate where erfc is tiny: log_ndtr(10) is -7.6e-24) and
// 2 - erfc(-t) below; log1p(u) = log(w) u / (w - 1), w = 1 + u (exact where w rounds to 1).
Status convertLogNdtr(Context& ctx, const Node& n) {
  const DType out = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, float64Input(ctx, n));
  const std::string x = in.first;
  const std::string t = roundedAsKernel(ctx, ctx.emit1("Mul", {x, f64(ctx, 0.70710678118654752440)}), out);
  const std::string t2 = roundedAsKernel(ctx, ctx.emit1("Mul", {t, t}), out);
  const std::string neg_t = ctx.emit1("Neg", {t});
  const std::string left = ctx.emit1("Sub", {ctx.emit1("Log", {ctx.emit1("Div", {erfcxOf(ctx, neg_t, out), f64(ctx, 2)})}), t2});
  // erfc(|t|) = exp(-t^2) erfcx(|t|) (libtorch's float erfc squares t without rounding: exact t * t
  // here), and erfc(t) = 2 - erfc(-t) below 0 (ONNX Runtime has no double Erf).
  // exp(-t^2) where it is subnormal (t^2 > 708) is exp(128 log 2 - t^2) 2^-128: ONNX Runtime's
  // double Exp is off there (exp(-800) gave 5.5e-311 for 0).
  const std::string tt = ctx.emit1("Mul", {t, t});
  std::string e = ctx.emit1("Where", {ctx.emit1("Greater", {tt, f64(ctx, 700)}),
                                      ctx.emit1("Mul", {ctx.emit1("Exp", {ctx.emit1("Sub", {f64(ctx, 128 * 0.69314718055994530942), tt})}),
                                                        f64(ctx, std::ldexp(1.0, -128))}),
                                      ctx.emit1("Exp", {ctx.emit1("Neg", {tt})})});
  e = ctx.emit1("Where", {ctx.emit1("Greater", {tt, f64(ctx, 746)}), f64(ctx, 0), e});
  const std::string erfc_abs = ctx.emit1("Mul", {e, erfcxOf(ctx, ctx.emit1("Abs", {t}), out)});
  const std::string erfc = ctx.emit1("Where", {ctx.emit1("Less", {t, f64(ctx, 0)}), ctx.emit1("Sub", {f64(ctx, 2), erfc_abs}), erfc_abs});
  const std::string u = ctx.emit1("Div", {erfc, f64(ctx, -2)});
  const std::string w = ctx.emit1("Add", {u, f64(ctx, 1)});
  const std::string wm1 = ctx.emit1("Sub", {w, f64(ctx, 1)});
  const std::string log1p = ctx.emit1("Where", {equalsScalar64(ctx, wm1, 0), u,
                                                ctx.emit1("Div", {ctx.emit1("Mul", {ctx.emit1("Log", {w}), u}), wm1})});
  const std::string r = ctx.emit1("Where", {ctx.emit1("Less", {x, f64(ctx, -1)}), left, log1p});
  return bindOut(ctx, n, castIf(ctx, r, DType::Float64, out));
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
  r.add("aten::special_i0e", convertI0e);
  r.add("aten::special_i1", convertI1(false));
  r.add("aten::special_i1e", convertI1(true));
  r.add("aten::special_ndtri", convertNdtri);
  r.add("aten::special_erfcx", convertErfcx);
  r.add("aten::special_log_ndtr", convertLogNdtr);
  r.add("aten::gcd", convertGcdLcm(false));
  r.add("aten::lcm", convertGcdLcm(true));
}

}  // namespace oxport::convert
