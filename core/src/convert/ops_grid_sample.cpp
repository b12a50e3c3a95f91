// grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners) (F.grid_sample).
// Modes: 0 bilinear, 1 nearest, 2 bicubic; padding: 0 zeros, 1 border, 2 reflection.
//
// ONNX GridSample (opset 16) samples 4-D inputs only (5-D arrives in opset 20), and ONNX Runtime's
// bicubic differs from PyTorch's; so GridSample serves 4-D bilinear and nearest at 16+, and every
// other case (below 16, bicubic, 5-D volumes) is the sampling composed as PyTorch's CPU kernels
// compute it: pixel coordinates from the normalised grid, border/reflection folding as
// grid_sampler_compute_source_index, then the pixels fetched with one Gather each from the input
// as [N*D*H*W, C] (so opset 9 takes it too), out-of-range taps weighted 0. Bilinear (trilinear in
// 5-D) blends the 2^d corners; nearest rounds half to even (Round, opset 11); bicubic blends 4x4
// taps with PyTorch's cubic convolution (A = -0.75), each tap's coordinate folded by the padding.
#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// Spatial axes innermost first: x (W), y (H)[, z (D)].
struct SampleGrid {
  std::string xflat, n_off;         // input as [N*points, C]; n*points as [N, 1, ..., 1]
  std::vector<std::string> size;    // per axis, int64 [1]
  std::vector<std::string> stride;  // per axis, int64 [1] (x: none)
  DType dt;
  size_t nd;
};

std::string unnormalize(Context& ctx, const std::string& g, const std::string& size_f, bool align, DType dt) {
  std::string one = ctx.constScalar(1, dt), two = ctx.constScalar(2, dt);
  std::string gp1 = ctx.emit1("Add", {g, one});
  if (align) return ctx.emit1("Mul", {ctx.emit1("Div", {gp1, two}), ctx.emit1("Sub", {size_f, one})});
  return ctx.emit1("Div", {ctx.emit1("Sub", {ctx.emit1("Mul", {gp1, size_f}), one}), two});
}

// Reflects c into [lo, hi] (PyTorch's reflect_coordinates with twice_low/high halved).
std::string reflect(Context& ctx, const std::string& c, const std::string& lo, const std::string& hi, DType dt) {
  std::string span = ctx.emit1("Sub", {hi, lo});
  std::string d = ctx.emit1("Abs", {ctx.emit1("Sub", {c, lo})});
  std::string flips = ctx.emit1("Floor", {ctx.emit1("Div", {d, span})});
  std::string extra = ctx.emit1("Sub", {d, ctx.emit1("Mul", {flips, span})});
  std::string two = ctx.constScalar(2, dt);
  std::string odd = ctx.emit1("Greater", {ctx.emit1("Sub", {flips, ctx.emit1("Mul", {two, ctx.emit1("Floor", {ctx.emit1("Div", {flips, two})})})}),
                                          ctx.constScalar(0.5, dt)});
  return ctx.emit1("Where", {odd, ctx.emit1("Sub", {hi, extra}), ctx.emit1("Add", {lo, extra})});
}

// A pixel coordinate folded by the padding mode (compute_coordinates): reflected, then clipped.
std::string padded(Context& ctx, std::string c, const std::string& size_f, int64_t padding, bool align, DType dt) {
  std::string zero = ctx.constScalar(0, dt), last = ctx.emit1("Sub", {size_f, ctx.constScalar(1, dt)});
  if (padding == 2) {
    c = align ? reflect(ctx, c, zero, last, dt)
              : reflect(ctx, c, ctx.constScalar(-0.5, dt), ctx.emit1("Sub", {size_f, ctx.constScalar(0.5, dt)}), dt);
  }
  if (padding >= 1) c = ctx.emit1("Max", {ctx.emit1("Min", {c, last}), zero});
  return c;
}

// Values at integer pixel coordinates idx (per axis, [N, out...]) as [N, C, out...], 0 where outside.
std::string fetch(Context& ctx, const SampleGrid& sg, const std::vector<std::string>& idx) {
  std::string zero = ctx.constInt64s({0});
  std::string inside, flat = sg.n_off;
  for (size_t k = 0; k < sg.nd; ++k) {
    std::string hi = ctx.emit1("Sub", {sg.size[k], ctx.constInt64s({1})});
    std::string in_k = ctx.emit1("And", {ctx.emit1("Not", {ctx.emit1("Less", {idx[k], zero})}),
                                         ctx.emit1("Not", {ctx.emit1("Greater", {idx[k], hi})})});
    inside = inside.empty() ? in_k : ctx.emit1("And", {inside, in_k});
    std::string low = ctx.emit1("Where", {ctx.emit1("Less", {idx[k], zero}), zero, idx[k]});
    std::string c = ctx.emit1("Where", {ctx.emit1("Greater", {low, hi}), hi, low});
    flat = ctx.emit1("Add", {flat, k == 0 ? c : ctx.emit1("Mul", {c, sg.stride[k]})});
  }
  const auto last = static_cast<int64_t>(sg.nd) + 1;
  std::string v = ctx.emit1("Gather", {sg.xflat, flat}, {attrInt("axis", 0)});  // [N, out..., C]
  v = ctx.emit1("Mul", {v, ctx.unsqueeze(ctx.cast(inside, sg.dt), {last})});
  std::vector<int64_t> perm{0, last};
  for (int64_t k = 1; k < last; ++k) perm.push_back(k);
  return ctx.emit1("Transpose", {v}, {attrInts("perm", perm)});
}

// PyTorch's cubic convolution weights of the 4 taps at offsets -1, 0, 1, 2 from floor, for the
// fraction t: cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t) with A = -0.75.
std::vector<std::string> cubicWeights(Context& ctx, const std::string& t, DType dt) {
  const double a = -0.75;
  auto k = [&](double v) { return ctx.constScalar(v, dt); };
  auto cc1 = [&](const std::string& x) {  // ((A + 2) x - (A + 3)) x x + 1
    std::string p = ctx.emit1("Sub", {ctx.emit1("Mul", {k(a + 2), x}), k(a + 3)});
    return ctx.emit1("Add", {ctx.emit1("Mul", {ctx.emit1("Mul", {p, x}), x}), k(1)});
  };
  auto cc2 = [&](const std::string& x) {  // ((A x - 5A) x + 8A) x - 4A
    std::string p = ctx.emit1("Sub", {ctx.emit1("Mul", {k(a), x}), k(5 * a)});
    p = ctx.emit1("Add", {ctx.emit1("Mul", {p, x}), k(8 * a)});
    return ctx.emit1("Sub", {ctx.emit1("Mul", {p, x}), k(4 * a)});
  };
  std::string u = ctx.emit1("Sub", {k(1), t});
  return {cc2(ctx.emit1("Add", {t, k(1)})), cc1(t), cc1(u), cc2(ctx.emit1("Add", {u, k(1)}))};
}

Status gridSampleComposed(Context& ctx, const Node& n, const std::string& x, const std::string& grid, int64_t mode,
                          int64_t padding, bool align) {
  const Args args(ctx, n);
  const DType dt = ctx.dtype(args.in("input", 0));
  if (!isFloating(dt)) return ctx.error("unsupported-form", "grid_sample of a non-floating-point input");
  if (mode == 1 && ctx.opset() < 11) return ctx.needsOpset(11, "grid_sample with mode='nearest' below opset 16 (Round)");
  const int rank = ctx.rank(args.in("input", 0));
  SampleGrid sg;
  sg.dt = dt;
  sg.nd = static_cast<size_t>(rank - 2);
  std::string points;
  for (size_t k = 0; k < sg.nd; ++k) {
    sg.size.push_back(dimSize(ctx, x, rank - 1 - static_cast<int64_t>(k)));
    sg.stride.push_back(points);
    points = points.empty() ? sg.size[k] : ctx.emit1("Mul", {points, sg.size[k]});
  }
  std::vector<int64_t> off_shape(sg.nd + 1, 1);
  off_shape[0] = -1;
  sg.n_off = ctx.reshape(ctx.emit1("Mul", {arangeOf(ctx, dimSize(ctx, x, 0)), points}), off_shape);
  std::vector<int64_t> to_last{0};
  for (int k = 2; k < rank; ++k) to_last.push_back(k);
  to_last.push_back(1);
  sg.xflat = ctx.emit1("Reshape", {ctx.emit1("Transpose", {x}, {attrInts("perm", to_last)}),
                                   ctx.emit1("Concat", {ctx.constInt64s({-1}), dimSize(ctx, x, 1)}, {attrInt("axis", 0)})});
  // Unnormalised coordinates per axis, [N, out...].
  std::vector<std::string> c, size_f;
  for (size_t k = 0; k < sg.nd; ++k) {
    std::string g = ctx.emit1("Gather", {grid, ctx.constInt64s({static_cast<int64_t>(k)}, true)},
                              {attrInt("axis", static_cast<int64_t>(sg.nd) + 1)});
    size_f.push_back(ctx.cast(sg.size[k], dt));
    c.push_back(unnormalize(ctx, g, size_f[k], align, dt));
  }
  auto weight = [&](const std::string& w) { return ctx.unsqueeze(w, {1}); };
  std::string out;
  auto accumulate = [&](const std::string& v) { out = out.empty() ? v : ctx.emit1("Add", {out, v}); };
  if (mode == 2) {  // bicubic (PyTorch: 4-D only): 4x4 taps, each coordinate folded on its own
    std::vector<std::vector<std::string>> w(2), taps(2);
    for (size_t k = 0; k < 2; ++k) {
      std::string f = ctx.emit1("Floor", {c[k]});
      w[k] = cubicWeights(ctx, ctx.emit1("Sub", {c[k], f}), dt);
      for (int i = 0; i < 4; ++i) {
        std::string at = ctx.emit1("Add", {f, ctx.constScalar(i - 1, dt)});
        taps[k].push_back(ctx.cast(padded(ctx, at, size_f[k], padding, align, dt), DType::Int64));
      }
    }
    for (size_t j = 0; j < 4; ++j)
      for (size_t i = 0; i < 4; ++i)
        accumulate(ctx.emit1("Mul", {fetch(ctx, sg, {taps[0][i], taps[1][j]}), weight(ctx.emit1("Mul", {w[0][i], w[1][j]}))}));
    return bindOut(ctx, n, out);
  }
  for (size_t k = 0; k < sg.nd; ++k) c[k] = padded(ctx, c[k], size_f[k], padding, align, dt);
  if (mode == 1) {
    std::vector<std::string> idx;
    for (const auto& ck : c) idx.push_back(ctx.cast(ctx.emit1("Round", {ck}), DType::Int64));
    return bindOut(ctx, n, fetch(ctx, sg, idx));
  }
  // (bi/tri)linear: the 2^d corners around each point.
  std::vector<std::string> lo, hi, w_lo, w_hi;
  for (size_t k = 0; k < sg.nd; ++k) {
    std::string f = ctx.emit1("Floor", {c[k]});
    w_hi.push_back(ctx.emit1("Sub", {c[k], f}));
    w_lo.push_back(ctx.emit1("Sub", {ctx.constScalar(1, dt), w_hi[k]}));
    lo.push_back(ctx.cast(f, DType::Int64));
    hi.push_back(ctx.emit1("Add", {lo[k], ctx.constInt64s({1})}));
  }
  for (size_t corner = 0; corner < (size_t{1} << sg.nd); ++corner) {
    std::vector<std::string> idx;
    std::string wt;
    for (size_t k = 0; k < sg.nd; ++k) {
      const bool up = (corner >> k) & 1;
      idx.push_back(up ? hi[k] : lo[k]);
      wt = wt.empty() ? (up ? w_hi[k] : w_lo[k]) : ctx.emit1("Mul", {wt, up ? w_hi[k] : w_lo[k]});
    }
    accumulate(ctx.emit1("Mul", {fetch(ctx, sg, idx), weight(wt)}));
  }
  return bindOut(ctx, n, out);
}

Status convertGridSampler(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* input = args.in("input", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(input));
  OXPORT_ASSIGN(std::string grid, ctx.tensor(args.in("grid", 1)));
  OXPORT_ASSIGN(int64_t mode, ctx.constInt(args.in("interpolation_mode", 2)));
  OXPORT_ASSIGN(int64_t padding, ctx.constInt(args.in("padding_mode", 3)));
  OXPORT_ASSIGN(bool align, ctx.constBool(args.in("align_corners", 4)));
  const int rank = ctx.rank(input);
  if (rank != 4 && rank != 5)
    return ctx.error("bad-argument", "grid_sample of a " + std::to_string(rank) + "-D input (PyTorch samples 4-D and 5-D)");
  static const char* kModes[] = {"bilinear", "nearest", "bicubic"};
  static const char* kPadding[] = {"zeros", "border", "reflection"};
  if (mode < 0 || mode > 2 || padding < 0 || padding > 2 || (mode == 2 && rank == 5))
    return ctx.error("bad-argument", "grid_sampler mode " + std::to_string(mode) + " / padding " + std::to_string(padding) +
                                         " of a " + std::to_string(rank) + "-D input");
  const DType dt = ctx.dtype(input);
  if (ctx.dtype(args.in("grid", 1)) != dt) grid = ctx.cast(grid, dt);
  if (ctx.opset() < 16 || rank == 5 || mode == 2) return gridSampleComposed(ctx, n, x, grid, mode, padding, align);
  return bindOut(ctx, n, ctx.emit1("GridSample", {x, grid},
                                   {attrString("mode", kModes[mode]), attrString("padding_mode", kPadding[padding]),
                                    attrInt("align_corners", align ? 1 : 0)}));
}

}  // namespace

void registerGridSampleOps(Registry& r) { r.add("aten::grid_sampler", convertGridSampler); }

}  // namespace oxport::convert
