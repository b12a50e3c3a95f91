// Antialiased resizing (F.interpolate(..., antialias=True): _upsample_bilinear2d_aa and
// _upsample_bicubic2d_aa). ONNX Resize's antialias attribute is opset 18; below it the resize is
// what PyTorch computes: separable, one weight matrix per spatial axis, each output pixel a
// normalised sum of the input pixels within the filter's support (stretched by the scale when
// downsampling). y = Wh x Ww^T, two MatMuls. The matrices are computed in the graph from the
// input's size (and the output's: given, or floor(input size * scale factor)), in the input's
// dtype with PyTorch's arithmetic (_compute_weights_aa), so every size stays dynamic.
#include "convert/resize_aa.h"

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// PyTorch's aa filters of x (a tensor of dtype dt): the triangle (bilinear) or Keys' cubic with
// a = -0.5 (bicubic, as PIL), zero outside their support.
std::string aaFilter(Context& ctx, const std::string& x, bool cubic, DType dt) {
  auto c = [&](double v) { return ctx.constScalar(v, dt); };
  std::string ax = ctx.emit1("Abs", {x});
  if (!cubic) return ctx.emit1("Relu", {ctx.emit1("Sub", {c(1.0), ax})});
  constexpr double a = -0.5;
  std::string x2 = ctx.emit1("Mul", {ax, ax});
  // |x| < 1: ((a + 2) |x| - (a + 3)) x^2 + 1
  std::string near = ctx.emit1("Add", {ctx.emit1("Mul", {ctx.emit1("Sub", {ctx.emit1("Mul", {ax, c(a + 2.0)}), c(a + 3.0)}), x2}), c(1.0)});
  // 1 <= |x| < 2: (((|x| - 5) |x| + 8) |x| - 4) a
  std::string far = ctx.emit1("Sub", {ctx.emit1("Mul", {ctx.emit1("Add", {ctx.emit1("Mul", {ctx.emit1("Sub", {ax, c(5.0)}), ax}), c(8.0)}), ax}), c(4.0)});
  far = ctx.emit1("Mul", {far, c(a)});
  std::string zero = c(0.0);
  return ctx.emit1("Where", {ctx.emit1("Less", {ax, c(1.0)}), near,
                             ctx.emit1("Where", {ctx.emit1("Less", {ax, c(2.0)}), far, zero})});
}

// 0, 1, ..., n-1 in dtype dt for a [1] int64 size n.
std::string arangeAs(Context& ctx, const std::string& n, DType dt) { return ctx.cast(arangeOf(ctx, n), dt); }

// The [out, in] weight matrix of one axis (PyTorch's _compute_weights_aa) for [1] int64 sizes `in`
// and `out`. `scale_factor` <= 0: none given (the scale is in / out).
std::string aaWeights(Context& ctx, const std::string& in, const std::string& out, bool align_corners,
                      double scale_factor, bool cubic, DType dt) {
  auto c = [&](double v) { return ctx.constScalar(v, dt); };
  std::string in_f = ctx.cast(in, dt), out_f = ctx.cast(out, dt);
  std::string scale;
  if (align_corners) {
    // (in - 1) / (out - 1), 0 when out is 1: the Max keeps the division finite, the Min(out - 1, 1) zeroes it.
    std::string om1 = ctx.emit1("Sub", {out_f, c(1.0)});
    scale = ctx.emit1("Mul", {ctx.emit1("Div", {ctx.emit1("Sub", {in_f, c(1.0)}), ctx.emit1("Max", {om1, c(1.0)})}),
                              ctx.emit1("Min", {om1, c(1.0)})});
  } else if (scale_factor > 0) {
    scale = c(1.0 / scale_factor);
  } else {
    scale = ctx.emit1("Div", {in_f, out_f});
  }
  const double interp = cubic ? 2.0 : 1.0;  // half the filter's width
  std::string stretch = ctx.emit1("Max", {scale, c(1.0)});
  std::string support = ctx.emit1("Mul", {stretch, c(interp)});
  std::string invscale = ctx.emit1("Div", {c(1.0), stretch});
  std::string i = ctx.unsqueeze(arangeAs(ctx, out, dt), {1});  // [out, 1]
  std::string j = ctx.unsqueeze(arangeAs(ctx, in, dt), {0});   // [1, in]
  std::string center = ctx.emit1("Mul", {scale, ctx.emit1("Add", {i, c(0.5)})});
  std::string xmin = ctx.emit1("Max", {ctx.emit1("Floor", {ctx.emit1("Add", {ctx.emit1("Sub", {center, support}), c(0.5)})}), c(0.0)});
  std::string xmax = ctx.emit1("Min", {ctx.emit1("Floor", {ctx.emit1("Add", {ctx.emit1("Add", {center, support}), c(0.5)})}), in_f});
  std::string inside = ctx.emit1("And", {ctx.emit1("Not", {ctx.emit1("Less", {j, xmin})}), ctx.emit1("Less", {j, xmax})});
  std::string arg = ctx.emit1("Mul", {ctx.emit1("Add", {ctx.emit1("Sub", {j, center}), c(0.5)}), invscale});
  std::string w = ctx.emit1("Mul", {aaFilter(ctx, arg, cubic, dt), ctx.cast(inside, dt)});  // [out, in]
  std::string total = reduceOver(ctx, "ReduceSum", w, {1}, true);
  // A row whose weights sum to zero is left as it is (PyTorch skips the division).
  std::string is_zero = ctx.cast(ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {total, c(0.0)}), ctx.emit1("Greater", {total, c(0.0)})})}), dt);
  return ctx.emit1("Div", {w, ctx.emit1("Add", {total, is_zero})});
}

// _upsample_{bilinear,bicubic}2d_aa(self, output_size, align_corners, scales_h, scales_w) and the
// .vec overloads (input, output_size?, align_corners, scale_factors?).
ConvertFn convertResizeAa(bool cubic) {
  return [cubic](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const Value* xv = args.in({"self", "input"}, 0);
    if (ctx.rank(xv) != 4)
      return ctx.error("bad-argument", "antialiased resize of a " + ctx.meta(xv).toString() + " tensor: expected N, C, H, W");
    OXPORT_ASSIGN(std::string x, ctx.tensor(xv));
    OXPORT_ASSIGN(bool align, args.constBool("align_corners", 2));
    std::vector<double> scales{0.0, 0.0};
    std::string sizes;
    if (args.has("scale_factors")) {
      OXPORT_ASSIGN(scales, ctx.constDoubles(args.in("scale_factors", 3)));
      if (scales.size() == 1) scales.assign(2, scales[0]);
      if (scales.size() != 2)
        return ctx.error("bad-argument", "antialiased resize with " + std::to_string(scales.size()) + " scale factors");
    } else {
      if (args.has("scales_h")) { OXPORT_ASSIGN(scales[0], args.constDouble("scales_h", 3)); }
      if (args.has("scales_w")) { OXPORT_ASSIGN(scales[1], args.constDouble("scales_w", 4)); }
    }
    if (args.has("output_size", 1)) { OXPORT_ASSIGN(sizes, ctx.intsTensor(args.in("output_size", 1))); }
    OXPORT_ASSIGN(std::string y, resizeAntialiased(ctx, x, ctx.dtype(xv), cubic, align, sizes, scales));
    return bindOut(ctx, n, y);
  };
}

}  // namespace

Result<std::string> resizeAntialiased(Context& ctx, const std::string& x, DType dt, bool cubic, bool align,
                                      const std::string& sizes, const std::vector<double>& scales) {
  if (dt != DType::Float32 && dt != DType::Float64)
    return ctx.error("unsupported-form", "antialiased resize of a " + std::string(dtypeName(dt)) + " tensor",
                     "resize a float32 or float64 tensor");
  std::string shape = ctx.shapeOf(x);
  std::string out_h, out_w;
  if (sizes.empty()) {
    // PyTorch's output size: floor(input size * scale factor), in double.
    auto scaled = [&](int64_t axis, double f) {
      std::string sz = ctx.cast(ctx.slice(shape, {axis}, {axis + 1}, {0}), DType::Float64);
      return ctx.cast(ctx.emit1("Floor", {ctx.emit1("Mul", {sz, ctx.constScalar(f, DType::Float64)})}), DType::Int64);
    };
    out_h = scaled(2, scales[0]);
    out_w = scaled(3, scales[1]);
  } else {
    out_h = ctx.slice(sizes, {0}, {1}, {0});
    out_w = ctx.slice(sizes, {1}, {2}, {0});
  }
  const double sh = scales.empty() ? 0.0 : scales[0], sw = scales.size() < 2 ? 0.0 : scales[1];
  std::string in_h = ctx.slice(shape, {2}, {3}, {0}), in_w = ctx.slice(shape, {3}, {4}, {0});
  std::string wh = aaWeights(ctx, in_h, out_h, align, sh, cubic, dt);
  std::string wwt = ctx.emit1("Transpose", {aaWeights(ctx, in_w, out_w, align, sw, cubic, dt)}, {attrInts("perm", {1, 0})});
  std::string rows = ctx.emit1("MatMul", {wh, x});  // [N, C, oh, W]
  return ctx.emit1("MatMul", {rows, wwt});
}

void registerResizeAaOps(Registry& r) {
  r.add("aten::_upsample_bilinear2d_aa", convertResizeAa(false));
  r.add("aten::_upsample_bicubic2d_aa", convertResizeAa(true));
}

}  // namespace oxport::convert
