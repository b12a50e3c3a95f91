// Spectral ops: torch.fft (fft, ifft, rfft, irfft, hfft, ihfft and their 2-D / n-D forms, fftshift,
// fftfreq/rfftfreq of a size known at run time) and stft,
// exact at every opset as products with constant DFT matrices: along each transformed axis the
// signal (moved last) is multiplied by cos/sin matrices of its length, the norm ("backward",
// "forward", "ortho") and n/s trimming (zero rows) or padding (rows past the input are never read)
// folded into them. stft frames with a Conv1d whose weights are the windowed DFT basis (stride hop)
// after the center pad (ONNX STFT from opset 17). Complex results are (real, imag) pairs (complex_pair.h). Along an
// axis a dynamic axis reaches, or with a length computed from the inputs' sizes, the matrices are
// built at run time from the lengths (dft1Runtime). From opset 17 the complex-valued
// transforms are ONNX DFT nodes; a complex-to-real one (irfft) stays a product, which DFT cannot say.
#include <algorithm>
#include <optional>
#include <cmath>
#include <vector>

#include "convert/args.h"
#include "convert/complex_pair.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

constexpr double kPi = 3.14159265358979323846;

enum class Kind { R2C, C2C, C2R };

// A signal being transformed: its ONNX name, whether it is a pair, PyTorch's shape (the example
// run's), and which axes may have another length at run time (dynamic axes reach them).
struct Signal {
  std::string x;
  bool cplx = false;
  std::vector<int64_t> shape;
  std::vector<bool> varies;
  DType dt = DType::Float32;
  bool axisVaries(int axis) const { return static_cast<size_t>(axis) < varies.size() && varies[static_cast<size_t>(axis)]; }
};

// A DFT length: a constant, or a 0-d int64 tensor computed at run time (`example` its value in the
// example run).
struct Length {
  int64_t example = 0;
  std::string runtime;
  bool dynamic() const { return !runtime.empty(); }
};

std::string matrix(Context& ctx, const std::vector<double>& m, int64_t rows, int64_t cols, DType dt) {
  if (dt == DType::Float64) return ctx.constant(HostTensor::fromVector(dt, {rows, cols}, m), "dft");
  std::vector<float> f(m.begin(), m.end());
  return ctx.constant(HostTensor::fromVector(DType::Float32, {rows, cols}, f), "dft");
}

// Moves `axis` to the last place (and back: a swap is its own inverse).
std::string swapLast(Context& ctx, const std::string& x, int rank, int axis) {
  if (axis == rank - 1) return x;
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(axis)], perm.back());
  return ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
}

double normScale(const std::string& norm, bool inverse, int64_t n) {
  const double nn = static_cast<double>(n);
  if (norm == "ortho") return 1.0 / std::sqrt(nn);
  if (norm == "forward") return inverse ? 1.0 : 1.0 / nn;
  return inverse ? 1.0 / nn : 1.0;  // "backward" (None)
}

// s becomes (re + i im) (mr + i mi) along `axis`: re and im the signal's parts with that axis
// moved last (im empty for a real signal), mr and mi the DFT matrix's parts.
void complexProduct(Context& ctx, Signal& s, const std::string& re, const std::string& im, const std::string& mr,
                    const std::string& mi, int axis) {
  const int rank = static_cast<int>(s.shape.size());
  std::string yr = ctx.emit1("MatMul", {re, mr});
  std::string yi = ctx.emit1("MatMul", {re, mi});
  if (!im.empty()) {
    yr = ctx.emit1("Sub", {yr, ctx.emit1("MatMul", {im, mi})});
    yi = ctx.emit1("Add", {yi, ctx.emit1("MatMul", {im, mr})});
  }
  s.x = makePair(ctx, swapLast(ctx, yr, rank, axis), swapLast(ctx, yi, rank, axis), rank);
  s.cplx = true;
}

// The norm's factor for a length n known at run time (n as a 0-d tensor of the signal's dtype), or
// "" for 1. `onnx_inverse`: after ONNX DFT's inverse, which already divides by n.
std::string runtimeNormScale(Context& ctx, const std::string& nf, const std::string& norm, bool inverse,
                             bool onnx_inverse) {
  // the exponent of n: ortho -1/2; forward -1 (forward) or 0; backward 0 or -1 (inverse)
  double e = norm == "ortho" ? -0.5 : norm == "forward" ? (inverse ? 0.0 : -1.0) : (inverse ? -1.0 : 0.0);
  if (onnx_inverse) e += 1.0;
  if (e == 0.0) return {};
  std::string f = std::abs(e) == 0.5 ? ctx.emit1("Sqrt", {nf}) : nf;
  return e < 0 ? ctx.emit1("Reciprocal", {f}) : f;
}

// The DFT along the last axis of `re` (and `im`), with the matrices built at run time from the
// signal's length there and n: for inputs whose length along the axis, or n, changes with the
// dynamic axes (LaMa's Fourier unit, FNO's spectral layers at another resolution). The same
// products as dft1's constant matrices: rows past n (a crop) are zero, frequencies are taken
// mod n, and the norm's factor is computed from n.
Status dft1Runtime(Context& ctx, Signal& s, const std::string& re, const std::string& im, int axis, const Length& n,
                   Kind kind, bool inverse, bool onesided, const std::string& norm) {
  const int rank = static_cast<int>(s.shape.size());
  const DType dt = s.dt;
  const std::string one = ctx.constInt64s({1}, true), two = ctx.constInt64s({2}, true);
  const std::string len = dimSize(ctx, re, rank - 1, true);  // rows: the signal's length
  const std::string nn = n.dynamic() ? ctx.reshape(n.runtime, {}) : ctx.constInt64s({n.example}, true);
  const std::string nf = ctx.cast(nn, dt);
  const std::string half = ctx.emit1("Add", {ctx.emit1("Div", {nn, two}), one});  // n / 2 + 1
  const std::string cols = kind == Kind::C2R ? nn : (kind == Kind::R2C && onesided ? half : nn);
  const std::string rows_i = arangeOf(ctx, len);
  const std::string j = ctx.unsqueeze(rows_i, {1});               // [len, 1]
  const std::string k = ctx.unsqueeze(arangeOf(ctx, cols), {0});  // [1, cols]
  // (j k) mod n in integers (exact for any length a DFT matrix can have), then the angle.
  std::string jk = ctx.emit1("Mul", {j, k});
  jk = ctx.emit1("Sub", {jk, ctx.emit1("Mul", {ctx.emit1("Div", {jk, nn}), nn})});
  const std::string theta =
      ctx.emit1("Div", {ctx.emit1("Mul", {ctx.cast(jk, dt), ctx.constScalar(2 * kPi, dt)}), nf});
  std::string c = ctx.emit1("Cos", {theta}), sn = ctx.emit1("Sin", {theta});
  // Per-row weights: a crop (rows past n, or for C2R past n / 2 + 1, are zero) and, for C2R, the
  // Hermitian doubling of every bin but 0 and n / 2 (n even).
  std::string w;
  if (kind == Kind::C2R) {
    const std::string used = ctx.cast(ctx.emit1("Less", {j, half}), dt);
    const std::string is0 = ctx.cast(ctx.emit1("Equal", {j, ctx.constInt64s({0}, true)}), dt);
    const std::string nyquist = ctx.cast(ctx.emit1("Equal", {ctx.emit1("Mul", {j, two}), nn}), dt);  // n even
    w = ctx.emit1("Mul", {used, ctx.emit1("Sub", {ctx.emit1("Sub", {ctx.constScalar(2.0, dt), is0}), nyquist})});
  } else {
    w = ctx.cast(ctx.emit1("Less", {j, nn}), dt);
  }
  const std::string scale = runtimeNormScale(ctx, nf, norm, inverse, false);
  if (!scale.empty()) w = ctx.emit1("Mul", {w, scale});
  c = ctx.emit1("Mul", {c, w});
  sn = ctx.emit1("Mul", {sn, w});
  if (kind == Kind::C2R) {
    // x_t = sum_k w_k (re_k cos - im_k sin)
    std::string y = ctx.emit1("MatMul", {re, c});
    if (!im.empty()) y = ctx.emit1("Sub", {y, ctx.emit1("MatMul", {im, sn})});
    s.x = swapLast(ctx, y, rank, axis);
    s.cplx = false;
    s.shape[static_cast<size_t>(axis)] = n.example;
    return okStatus();
  }
  // X_k = sum_j x_j (cos + i sign sin)
  complexProduct(ctx, s, re, im, c, inverse ? sn : ctx.emit1("Neg", {sn}), axis);
  s.shape[static_cast<size_t>(axis)] = kind == Kind::R2C && onesided ? n.example / 2 + 1 : n.example;
  return okStatus();
}

// One DFT along `axis` of length n (the output length for C2R).
Status dft1(Context& ctx, Signal& s, int axis, const Length& length, Kind kind, bool inverse, bool onesided,
            const std::string& norm) {
  const int64_t n = length.example;
  const bool at_run_time = length.dynamic() || s.axisVaries(axis);
  const int rank = static_cast<int>(s.shape.size());
  const int64_t len = s.shape[static_cast<size_t>(axis)];
  if (len < 0 || n < 1) return ctx.error("unsupported-form", "a DFT of length " + std::to_string(n));
  const double scale = normScale(norm, inverse, n);
  const double sign = inverse ? 1.0 : -1.0;
  if (ctx.opset() >= 17 && kind != Kind::C2R) {
    // ONNX DFT (onesided only from a real signal; the length input pads with zeros; the inverse
    // divides by n): ONNX Runtime runs it and matches libtorch (tests/ops/cases_spectral.py at 17).
    std::string x = s.cplx ? s.x : ctx.unsqueeze(s.x, {-1});
    const bool one = kind == Kind::R2C && onesided;
    std::string y;
    if (at_run_time) {
      const std::string nn = length.dynamic() ? ctx.reshape(length.runtime, {}) : ctx.constInt64s({n}, true);
      // A longer signal is cut to n (Slice clamps an end past the length); a shorter one DFT pads.
      x = ctx.emit1("Slice", {x, ctx.constInt64s({0}), ctx.reshape(nn, {1}), ctx.constInt64s({axis})});
      y = ctx.emit1("DFT", {x, nn},
                    {attrInt("axis", axis), attrInt("inverse", inverse ? 1 : 0), attrInt("onesided", one ? 1 : 0)});
      const std::string extra = runtimeNormScale(ctx, ctx.cast(nn, s.dt), norm, inverse, inverse);
      if (!extra.empty()) y = ctx.emit1("Mul", {y, extra});
    } else {
      if (len > n) x = ctx.slice(x, {0}, {n}, {axis});
      y = ctx.emit1("DFT", {x, ctx.constInt64s({n}, true)},
                    {attrInt("axis", axis), attrInt("inverse", inverse ? 1 : 0), attrInt("onesided", one ? 1 : 0)});
      const double extra = scale / (inverse ? 1.0 / static_cast<double>(n) : 1.0);
      if (std::abs(extra - 1.0) > 1e-12) y = ctx.emit1("Mul", {y, ctx.constScalar(extra, s.dt)});
    }
    s.x = y;
    s.cplx = true;
    s.shape[static_cast<size_t>(axis)] = one ? n / 2 + 1 : n;
    return okStatus();
  }
  std::string re = s.cplx ? pairPart(ctx, s.x, rank, 0) : s.x;
  std::string im = s.cplx ? pairPart(ctx, s.x, rank, 1) : std::string();
  re = swapLast(ctx, re, rank, axis);
  if (!im.empty()) im = swapLast(ctx, im, rank, axis);
  if (at_run_time) return dft1Runtime(ctx, s, re, im, axis, length, kind, inverse, onesided, norm);
  if (kind == Kind::C2R) {
    const int64_t used = std::min(len, n / 2 + 1);
    std::vector<double> ar(static_cast<size_t>(len * n), 0.0), ai(ar.size(), 0.0);
    for (int64_t k = 0; k < used; ++k) {
      const double w = (k == 0 || (n % 2 == 0 && k == n / 2)) ? 1.0 : 2.0;
      for (int64_t t = 0; t < n; ++t) {
        const double th = 2 * kPi * static_cast<double>((k * t) % n) / static_cast<double>(n);
        ar[static_cast<size_t>(k * n + t)] = w * std::cos(th) * scale;
        ai[static_cast<size_t>(k * n + t)] = -w * std::sin(th) * scale;
      }
    }
    // A real spectrum (irfft/hfft of a real tensor) has no imaginary part to add.
    std::string y = ctx.emit1("MatMul", {re, matrix(ctx, ar, len, n, s.dt)});
    if (!im.empty()) y = ctx.emit1("Add", {y, ctx.emit1("MatMul", {im, matrix(ctx, ai, len, n, s.dt)})});
    s.x = swapLast(ctx, y, rank, axis);
    s.cplx = false;
    s.shape[static_cast<size_t>(axis)] = n;
    return okStatus();
  }
  const int64_t m = kind == Kind::R2C && onesided ? n / 2 + 1 : n;
  std::vector<double> cr(static_cast<size_t>(len * m), 0.0), ci(cr.size(), 0.0);
  for (int64_t j = 0; j < std::min(len, n); ++j)
    for (int64_t k = 0; k < m; ++k) {
      const double th = 2 * kPi * static_cast<double>((j * k) % n) / static_cast<double>(n);
      cr[static_cast<size_t>(j * m + k)] = std::cos(th) * scale;
      ci[static_cast<size_t>(j * m + k)] = sign * std::sin(th) * scale;
    }
  complexProduct(ctx, s, re, im, matrix(ctx, cr, len, m, s.dt), matrix(ctx, ci, len, m, s.dt), axis);
  s.shape[static_cast<size_t>(axis)] = m;
  return okStatus();
}

// A DFT length (n, or an element of s): a constant, or a number computed from the inputs' sizes
// (FFT convolution's 2 * L), which the DFT then reads at run time.
Result<Length> dftLength(Context& ctx, const Value* v) {
  if (auto c = ctx.maybeInt(v)) return Length{*c, {}};
  // A size of an axis no dynamic axis reaches (traced `h, w = x.shape[-2:]` without dynamic H, W)
  // is the example's at every run: constant matrices.
  const Node* p = v->producer;
  while (p && (p->kind == "aten::Int" || p->kind == "prim::NumToTensor" || p->kind == "aten::ScalarImplicit") &&
         !p->inputs.empty())  // how a trace records int(size)
    p = p->inputs[0]->producer;
  if (v->example && v->example->isInt() && p && p->kind == "aten::size" && p->inputs.size() == 2)
    if (auto d = ctx.maybeInt(p->inputs[1]); d && !ctx.axisMayVary(p->inputs[0], *d))
      return Length{v->example->toInt(), {}};
  if (v->example && v->example->isInt()) {
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(v, DType::Int64));
    return Length{v->example->toInt(), ctx.reshape(t, {})};
  }
  return ctx.error("dynamic-argument", "a DFT length must be an integer here, but it is not one");
}

Result<std::vector<Length>> dftLengths(Context& ctx, const Value* v) {
  std::vector<Length> out;
  if (v->constant) {
    OXPORT_ASSIGN(auto c, ctx.constInts(v));
    for (int64_t k : c) out.push_back({k, {}});
    return out;
  }
  // Scripted `s=x.shape[-2:]` (LaMa's Fourier unit): a slice of aten::size(t), t's sizes there,
  // read at run time where a dynamic axis reaches them.
  const Node* p = v->producer;
  if (p && p->kind == "aten::slice" && p->inputs.size() == 4 && p->inputs[0]->producer &&
      p->inputs[0]->producer->kind == "aten::size" && p->inputs[0]->producer->inputs.size() == 1) {
    const Value* t = p->inputs[0]->producer->inputs[0];
    const std::vector<int64_t>& shape = ctx.meta(t).shape;
    const int64_t rank = static_cast<int64_t>(shape.size());
    auto norm = [&](const Value* e, int64_t none) -> std::optional<int64_t> {
      if (ctx.isNone(e)) return none;
      auto i = ctx.maybeInt(e);
      if (!i) return std::nullopt;
      return std::clamp(*i < 0 ? *i + rank : *i, int64_t(0), rank);
    };
    const auto b = norm(p->inputs[1], 0), e = norm(p->inputs[2], rank);
    const auto step = ctx.maybeInt(p->inputs[3]);
    if (b && e && step && *step == 1) {
      for (int64_t a = *b; a < *e; ++a) {
        Length l{shape[static_cast<size_t>(a)], {}};
        if (ctx.axisMayVary(t, a)) {
          OXPORT_ASSIGN(std::string tt, ctx.tensor(t));
          l.runtime = dimSize(ctx, tt, a, true);
        }
        out.push_back(l);
      }
      return out;
    }
  }
  OXPORT_ASSIGN(auto elems, ctx.listElements(v));
  for (const Value* e : elems) {
    OXPORT_ASSIGN(Length k, dftLength(ctx, e));
    out.push_back(k);
  }
  return out;
}

struct FftOp {
  bool inverse;
  Kind last;  // the kind of the last transformed axis (R2C for rfft*, C2R for irfft*, C2C else)
  int dims;   // 1, 2 or 0 (n-D)
  // hfft* = irfft*(conj(x)) and ihfft* = conj(rfft*(x)), each with the dual norm (backward <->
  // forward), as torch defines them.
  bool hermitian = false;
};

// The complex conjugate of a pair: the imaginary part negated.
std::string conjPair(Context& ctx, const std::string& x, DType dt) {
  const std::vector<double> sign = {1.0, -1.0};
  if (dt == DType::Float64) return ctx.emit1("Mul", {x, ctx.constant(HostTensor::fromVector(dt, {2}, sign))});
  return ctx.emit1("Mul", {x, ctx.constant(HostTensor::fromVector(dt, {2}, std::vector<float>(sign.begin(), sign.end())))});
}

// fft_* (self, n | s, dim, norm): the axes in order; for rfft the real axis is the last, done first;
// for irfft the last axis (complex to real) is done last, as torch does.
Status convertFft(Context& ctx, const Node& n, FftOp op) {
  const Args args(ctx, n);
  const Value* self = args.in("self", 0);
  Signal s;
  OXPORT_ASSIGN(s.x, ctx.tensor(self));
  s.cplx = self->meta.complex;
  s.shape = self->meta.shape;
  s.dt = self->meta.dtype;
  if (s.dt != DType::Float32 && s.dt != DType::Float64) {
    OXPORT_ASSIGN(s.x, ctx.tensorOfType(self, DType::Float32));
    s.dt = DType::Float32;
  }
  const int rank = static_cast<int>(s.shape.size());
  for (int a = 0; a < rank; ++a) s.varies.push_back(ctx.axisMayVary(self, a));
  std::vector<int64_t> dims;
  std::vector<Length> sizes;
  if (op.dims == 1) {
    OXPORT_ASSIGN(int64_t d, args.constInt("dim", 2));
    dims = {d};
    if (args.has("n", 1)) {
      OXPORT_ASSIGN(Length nn, dftLength(ctx, args.in("n", 1)));
      sizes = {nn};
    }
  } else {
    if (args.has("s", 1)) {
      OXPORT_ASSIGN(sizes, dftLengths(ctx, args.in("s", 1)));
    }
    if (args.has("dim", 2)) {
      OXPORT_ASSIGN(dims, args.constInts("dim", 2));
    } else {
      const int k = sizes.empty() ? rank : static_cast<int>(sizes.size());
      for (int i = rank - k; i < rank; ++i) dims.push_back(i);
    }
  }
  std::string norm = "backward";
  if (args.has("norm", 3)) {
    OXPORT_ASSIGN(norm, args.constString("norm", 3));
  }
  if (op.hermitian && norm != "ortho") norm = norm == "forward" ? "backward" : "forward";
  if (op.hermitian && s.cplx) s.x = conjPair(ctx, s.x, s.dt);
  for (auto& d : dims) d = ctx.normDim(d, rank);
  if (!sizes.empty() && sizes.size() != dims.size())
    return ctx.error("unsupported-form", n.kind + ": s and dim differ in length");
  // n (or s[i]) when given and not -1, else the signal's own length there (2 (m - 1) for the
  // complex-to-real axis), read at run time where that length may vary.
  auto lenOf = [&](size_t i, Kind k) -> Length {
    if (!sizes.empty() && (sizes[i].dynamic() || sizes[i].example != -1)) return sizes[i];
    const int axis = static_cast<int>(dims[i]);
    const int64_t have = s.shape[static_cast<size_t>(axis)];
    Length l{k == Kind::C2R ? 2 * (have - 1) : have, {}};
    if (s.axisVaries(axis)) {
      std::string m = dimSize(ctx, s.x, axis, true);
      if (k == Kind::C2R)
        m = ctx.emit1("Mul", {ctx.emit1("Sub", {m, ctx.constInt64s({1}, true)}), ctx.constInt64s({2}, true)});
      l.runtime = m;
    }
    return l;
  };
  const size_t last = dims.size() - 1;
  if (op.last == Kind::R2C) {
    OXPORT_TRY(dft1(ctx, s, static_cast<int>(dims[last]), lenOf(last, Kind::R2C), Kind::R2C,
                                              op.inverse, true, norm));
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i == last && op.last != Kind::C2C) continue;
    OXPORT_TRY(dft1(ctx, s, static_cast<int>(dims[i]), lenOf(i, Kind::C2C), s.cplx ? Kind::C2C : Kind::R2C,
                    op.inverse, false, norm));
  }
  if (op.last == Kind::C2R) {
    OXPORT_TRY(dft1(ctx, s, static_cast<int>(dims[last]), lenOf(last, Kind::C2R), Kind::C2R, op.inverse, false, norm));
  }
  return bindOut(ctx, n, op.hermitian && s.cplx ? conjPair(ctx, s.x, s.dt) : s.x);
}

// fft_fftfreq(n, d) / fft_rfftfreq(n, d) with n from the input's sizes (a constant n is folded
// before conversion): arange(n) with the upper half, from (n + 1) / 2, shifted by -n (fftfreq), or
// arange(n / 2 + 1) (rfftfreq), times 1 / (n d), as torch computes them.
Status convertFftFreq(Context& ctx, const Node& n, bool onesided) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string len, ctx.tensorOfType(args.in("n", 0), DType::Int64));
  len = ctx.reshape(len, {});
  double d = 1.0;
  if (args.has("d", 1)) { OXPORT_ASSIGN(d, args.constDouble("d", 1)); }
  const DType dt = n.output(0)->meta.dtype;
  const std::string two = ctx.constInt64s({2}, true), one = ctx.constInt64s({1}, true);
  std::string k = arangeOf(ctx, onesided ? ctx.emit1("Add", {ctx.emit1("Div", {len, two}), one}) : len);
  if (!onesided) {
    std::string half = ctx.emit1("Div", {ctx.emit1("Add", {len, one}), two});
    std::string upper = ctx.cast(ctx.emit1("Not", {ctx.emit1("Less", {k, half})}), DType::Int64);
    k = ctx.emit1("Sub", {k, ctx.emit1("Mul", {upper, len})});
  }
  std::string scale = ctx.emit1("Reciprocal", {ctx.emit1("Mul", {ctx.cast(len, dt), ctx.constScalar(d, dt)})});
  return bindOut(ctx, n, ctx.emit1("Mul", {ctx.cast(k, dt), scale}));
}

// fftshift / ifftshift of a real tensor (a complex one goes through ops_complex's per-part form):
// a roll by half of each axis as two slices and a Concat.
Status convertFftShift(Context& ctx, const Node& n, bool inverse) {
  const Args args(ctx, n);
  const Value* self = args.in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  const int rank = ctx.rank(self);
  std::vector<int64_t> dims;
  if (args.has("dim", 1)) {
    OXPORT_ASSIGN(dims, args.constInts("dim", 1));
  } else {
    for (int i = 0; i < rank; ++i) dims.push_back(i);
  }
  for (int64_t d : dims) {
    d = ctx.normDim(d, rank);
    const int64_t size = self->meta.shape[static_cast<size_t>(d)];
    const int64_t shift = inverse ? -(size / 2) : size / 2;
    const int64_t cut = ((size - shift) % std::max<int64_t>(size, 1) + size) % std::max<int64_t>(size, 1);
    if (cut == 0) continue;
    x = ctx.emit1("Concat", {ctx.slice(x, {cut}, {kInt64Max}, {d}), ctx.slice(x, {0}, {cut}, {d})},
                  {attrInt("axis", d)});
  }
  return bindOut(ctx, n, x);
}

// n_fft, hop_length, win_length and the window (a constant, centred in n_fft; ones when None) of
// stft and istft.
struct FrameArgs {
  int64_t nfft = 0, hop = 0;
  std::vector<double> window;
};

Result<FrameArgs> frameArgs(Context& ctx, const Args& args) {
  FrameArgs fa;
  OXPORT_ASSIGN(fa.nfft, args.constInt("n_fft", 1));
  fa.hop = fa.nfft / 4;
  int64_t win = fa.nfft;
  if (args.has("hop_length", 2)) {
    OXPORT_ASSIGN(fa.hop, args.constInt("hop_length", 2));
  }
  if (args.has("win_length", 3)) {
    OXPORT_ASSIGN(win, args.constInt("win_length", 3));
  }
  fa.window.assign(static_cast<size_t>(fa.nfft), 0.0);
  const int64_t left = (fa.nfft - win) / 2;
  const Value* w = args.optIn("window");
  if (w && !ctx.isNone(w)) {
    if (!w->constant || !w->constant->isTensor() || w->meta.complex || w->constant->tensor().numel() != win)
      return ctx.error("unsupported-form", args.node().kind + " with a window that is not a constant of win_length",
                       "make the window a constant or a buffer (torch.hann_window(n_fft))");
    for (int64_t i = 0; i < win; ++i) fa.window[static_cast<size_t>(left + i)] = w->constant->tensor().at(i);
  } else {
    for (int64_t i = 0; i < win; ++i) fa.window[static_cast<size_t>(left + i)] = 1.0;
  }
  return fa;
}

// stft(self, n_fft, hop_length, win_length, window, [center, pad_mode,] normalized, onesided,
// return_complex): below opset 17 a Conv1d of the (center-padded) signal with the windowed DFT
// basis, stride hop; [B, 2F, T] -> [B, F, T, 2], the pair layout and return_complex=False's result
// alike. From opset 17 ONNX's STFT.
Status convertStft(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* self = args.in("self", 0);
  if (self->meta.complex) return ctx.error("complex-value", "complex values reach aten::stft: a complex signal");
  OXPORT_ASSIGN(const FrameArgs fa, frameArgs(ctx, args));
  const int64_t nfft = fa.nfft, hop = fa.hop;
  const std::vector<double>& window = fa.window;
  bool center = false, normalized = false, onesided = true;
  std::string pad_mode = "reflect";
  if (args.has("center")) {
    OXPORT_ASSIGN(center, args.constBool("center", 5));
  }
  if (args.has("pad_mode")) {
    OXPORT_ASSIGN(pad_mode, args.constString("pad_mode", 6));
  }
  if (args.has("normalized")) {
    OXPORT_ASSIGN(normalized, args.constBool("normalized", 5));
  }
  if (args.has("onesided")) {
    OXPORT_ASSIGN(onesided, args.constBool("onesided", 6));
  }
  const DType dt = self->meta.dtype == DType::Float64 ? DType::Float64 : DType::Float32;
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(self, dt));
  const bool batched = ctx.rank(self) == 2;
  x = ctx.unsqueeze(x, batched ? std::vector<int64_t>{1} : std::vector<int64_t>{0, 1});  // [B, 1, L]
  if (center) {
    const int64_t p = nfft / 2;
    if (pad_mode != "reflect" && pad_mode != "constant" && pad_mode != "replicate")
      return ctx.error("unsupported-form", "aten::stft with pad_mode '" + pad_mode + "'");
    const std::string mode = pad_mode == "replicate" ? "edge" : pad_mode;
    const std::vector<int64_t> pads = {0, 0, p, 0, 0, p};
    x = ctx.opset() >= 11
            ? ctx.emit1("Pad", {x, ctx.constInt64s(pads)}, {attrString("mode", mode)})
            : ctx.emit1("Pad", {x}, {attrString("mode", mode), attrInts("pads", pads)});
  }
  const double scale = normalized ? 1.0 / std::sqrt(static_cast<double>(nfft)) : 1.0;
  if (ctx.opset() >= 17) {
    // ONNX STFT over frames of n_fft with the window (the norm's scale folded in): ONNX Runtime
    // runs it and matches libtorch; [B, L, 1] -> [B, T, F, 2] -> [B, F, T, 2].
    std::vector<double> w(window);
    for (double& v : w) v *= scale;
    std::string win = ctx.reshape(matrix(ctx, w, 1, nfft, dt), {nfft});
    std::string sig = ctx.emit1("Transpose", {x}, {attrInts("perm", {0, 2, 1})});
    std::string y = ctx.emit1("STFT", {sig, ctx.constInt64s({hop}, true), win, ctx.constInt64s({nfft}, true)},
                              {attrInt("onesided", onesided ? 1 : 0)});
    y = ctx.emit1("Transpose", {y}, {attrInts("perm", {0, 2, 1, 3})});
    return bindOut(ctx, n, batched ? y : ctx.squeeze(y, {0}));
  }
  const int64_t f = onesided ? nfft / 2 + 1 : nfft;
  std::vector<double> basis(static_cast<size_t>(2 * f * nfft));
  for (int64_t k = 0; k < f; ++k)
    for (int64_t j = 0; j < nfft; ++j) {
      const double th = 2 * kPi * static_cast<double>((k * j) % nfft) / static_cast<double>(nfft);
      const double w = window[static_cast<size_t>(j)] * scale;
      basis[static_cast<size_t>(k * nfft + j)] = w * std::cos(th);
      basis[static_cast<size_t>((f + k) * nfft + j)] = -w * std::sin(th);
    }
  std::string weight = matrix(ctx, basis, 2 * f, nfft, dt);
  weight = ctx.reshape(weight, {2 * f, 1, nfft});
  std::string y = ctx.emit1("Conv", {x, weight}, {attrInts("kernel_shape", {nfft}), attrInts("strides", {hop})});
  y = ctx.reshape(y, {0, 2, f, -1});
  y = ctx.emit1("Transpose", {y}, {attrInts("perm", {0, 2, 3, 1})});  // [B, F, T, 2]
  if (!batched) y = ctx.squeeze(y, {0});
  return bindOut(ctx, n, y);
}

// istft(self [B, F, T] complex, n_fft, hop, win_length, window, center, normalized, onesided, length):
// one ConvTranspose1d (stride hop) whose weights are the windowed inverse DFT basis does the inverse
// DFT of each frame and the overlap-add; the sum of the shifted squared windows (a constant: the
// frame count is the example's) divides it, then the center padding and `length` are trimmed.
Status convertIstft(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* self = args.in("self", 0);
  if (!self->meta.complex) return ctx.error("unsupported-form", "aten::istft of a real tensor");
  if (args.has("return_complex")) {
    OXPORT_ASSIGN(bool rc, args.constBool("return_complex", 9));
    if (rc) return ctx.error("complex-value", "complex values reach aten::istft: return_complex=True");
  }
  OXPORT_ASSIGN(const FrameArgs fa, frameArgs(ctx, args));
  const int64_t nfft = fa.nfft, hop = fa.hop;
  const std::vector<double>& window = fa.window;
  bool center = true, normalized = false, onesided = true;
  if (args.has("center", 5)) {
    OXPORT_ASSIGN(center, args.constBool("center", 5));
  }
  if (args.has("normalized", 6)) {
    OXPORT_ASSIGN(normalized, args.constBool("normalized", 6));
  }
  if (args.has("onesided", 7)) {
    OXPORT_ASSIGN(onesided, args.constBool("onesided", 7));
  }
  const int rank = self->meta.rank();
  const int64_t f = self->meta.shape[static_cast<size_t>(rank - 2)];
  const int64_t frames = self->meta.shape[static_cast<size_t>(rank - 1)];
  if (f != (onesided ? nfft / 2 + 1 : nfft)) return ctx.error("unsupported-form", "aten::istft: the frequency axis is not n_fft's");
  const double scale = (normalized ? std::sqrt(static_cast<double>(nfft)) : 1.0) / static_cast<double>(nfft);
  std::vector<double> basis(static_cast<size_t>(2 * f * nfft));
  for (int64_t k = 0; k < f; ++k) {
    const double wk = !onesided || k == 0 || (nfft % 2 == 0 && k == nfft / 2) ? 1.0 : 2.0;
    for (int64_t t = 0; t < nfft; ++t) {
      const double th = 2 * kPi * static_cast<double>((k * t) % nfft) / static_cast<double>(nfft);
      const double w = window[static_cast<size_t>(t)] * wk * scale;
      basis[static_cast<size_t>(k * nfft + t)] = w * std::cos(th);
      basis[static_cast<size_t>((f + k) * nfft + t)] = -w * std::sin(th);
    }
  }
  const DType dt = self->meta.dtype;
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  if (rank == 2) x = ctx.unsqueeze(x, {0});
  x = ctx.emit1("Transpose", {x}, {attrInts("perm", {0, 3, 1, 2})});  // [B, 2, F, T]
  x = ctx.reshape(x, {0, 2 * f, frames});
  std::string weight = ctx.reshape(matrix(ctx, basis, 2 * f, nfft, dt), {2 * f, 1, nfft});
  std::string y = ctx.emit1("ConvTranspose", {x, weight}, {attrInts("kernel_shape", {nfft}), attrInts("strides", {hop})});
  const int64_t total = (frames - 1) * hop + nfft;
  std::vector<double> env(static_cast<size_t>(total), 0.0);
  for (int64_t t = 0; t < frames; ++t)
    for (int64_t j = 0; j < nfft; ++j) env[static_cast<size_t>(t * hop + j)] += window[static_cast<size_t>(j)] * window[static_cast<size_t>(j)];
  const int64_t start = center ? nfft / 2 : 0;
  int64_t end = center ? total - nfft / 2 : total;
  if (const Value* len = args.optIn("length"); len && !ctx.isNone(len)) {
    OXPORT_ASSIGN(int64_t l, ctx.constInt(len));
    end = start + l;
  }
  if (end > total) return ctx.error("unsupported-form", "aten::istft with length past the signal (zero padding)");
  std::vector<double> inv;
  for (int64_t i = start; i < end; ++i) {
    if (env[static_cast<size_t>(i)] < 1e-11)
      return ctx.error("unsupported-form", "aten::istft: the window overlap-add is zero somewhere (torch refuses it too)");
    inv.push_back(1.0 / env[static_cast<size_t>(i)]);
  }
  y = ctx.slice(ctx.squeeze(y, {1}), {start}, {end}, {1});
  y = ctx.emit1("Mul", {y, ctx.reshape(matrix(ctx, inv, 1, end - start, dt), {end - start})});
  if (rank == 2) y = ctx.squeeze(y, {0});
  return bindOut(ctx, n, y);
}

}  // namespace

void registerSpectralOps(Registry& r) {
  const std::vector<std::pair<std::string, FftOp>> ffts = {
      {"aten::fft_fft", {false, Kind::C2C, 1}},    {"aten::fft_ifft", {true, Kind::C2C, 1}},
      {"aten::fft_rfft", {false, Kind::R2C, 1}},   {"aten::fft_irfft", {true, Kind::C2R, 1}},
      {"aten::fft_fft2", {false, Kind::C2C, 2}},   {"aten::fft_ifft2", {true, Kind::C2C, 2}},
      {"aten::fft_rfft2", {false, Kind::R2C, 2}},  {"aten::fft_irfft2", {true, Kind::C2R, 2}},
      {"aten::fft_fftn", {false, Kind::C2C, 0}},   {"aten::fft_ifftn", {true, Kind::C2C, 0}},
      {"aten::fft_rfftn", {false, Kind::R2C, 0}},  {"aten::fft_irfftn", {true, Kind::C2R, 0}},
      {"aten::fft_hfft", {true, Kind::C2R, 1, true}},   {"aten::fft_ihfft", {false, Kind::R2C, 1, true}},
      {"aten::fft_hfft2", {true, Kind::C2R, 2, true}},  {"aten::fft_ihfft2", {false, Kind::R2C, 2, true}},
      {"aten::fft_hfftn", {true, Kind::C2R, 0, true}},  {"aten::fft_ihfftn", {false, Kind::R2C, 0, true}},
  };
  for (const auto& [kind, op] : ffts) {
    const FftOp o = op;
    r.addComplex(kind, [o](Context& ctx, const Node& n) { return convertFft(ctx, n, o); });
    // irfft*/hfft* of a real tensor (a spectrum with no imaginary part) reads no complex value.
    if (o.last == Kind::C2R) r.add(kind, [o](Context& ctx, const Node& n) { return convertFft(ctx, n, o); });
  }
  r.add("aten::fft_fftshift", [](Context& ctx, const Node& n) { return convertFftShift(ctx, n, false); });
  r.add("aten::fft_ifftshift", [](Context& ctx, const Node& n) { return convertFftShift(ctx, n, true); });
  r.add("aten::fft_fftfreq", [](Context& ctx, const Node& n) { return convertFftFreq(ctx, n, false); });
  r.add("aten::fft_rfftfreq", [](Context& ctx, const Node& n) { return convertFftFreq(ctx, n, true); });
  r.add("aten::stft", convertStft);         // return_complex=False: a real [.., F, T, 2] result
  r.addComplex("aten::stft", convertStft);  // return_complex=True: the same tensor, as a pair
  r.addComplex("aten::istft", convertIstft);
}

}  // namespace oxport::convert
