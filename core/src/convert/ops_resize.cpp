// Padding (constant_pad_nd/pad, reflection/replication pads, circular) and resizing
// (upsample_* as traced from F.interpolate): Pad/Resize from opset 11, their attribute forms
// (Pad-2, Upsample-9, Resize-10) before, where those mean the same.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "convert/args.h"
#include "convert/resize_aa.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {


// ---- padding

// PyTorch's pad list (last dim first, begin/end pairs) as ONNX pads (every dim's begin, then
// every dim's end). A dynamic list is reordered with Gathers (opset 11+).
Result<std::string> onnxPads(Context& ctx, const Value* pad_v, int rank, std::vector<int64_t>* static_pads) {
  if (auto p = ctx.constInts(pad_v); p.ok()) {
    const auto& pad = *p;
    if (pad.size() % 2 || static_cast<int>(pad.size() / 2) > rank)
      return ctx.error("bad-argument", "pad list of length " + std::to_string(pad.size()) + " for rank " + std::to_string(rank));
    std::vector<int64_t> out(static_cast<size_t>(2 * rank), 0);
    for (size_t i = 0; i < pad.size() / 2; ++i) {
      const size_t d = static_cast<size_t>(rank) - 1 - i;
      out[d] = pad[2 * i];
      out[d + static_cast<size_t>(rank)] = pad[2 * i + 1];
    }
    *static_pads = out;
    return ctx.constInt64s(out);
  }
  if (ctx.opset() < 11) return ctx.needsOpset(11, "padding by amounts computed from the inputs (Pad with a pads input)");
  size_t len = pad_v->producer && pad_v->producer->kind == "prim::ListConstruct" ? pad_v->producer->inputs.size() : 0;
  if (len == 0 || len % 2) return ctx.error("unsupported-form", "a pad list of unknown length");
  OXPORT_ASSIGN(std::string p, ctx.intsTensor(pad_v));
  const int k = static_cast<int>(len / 2);
  std::vector<int64_t> begins, ends;
  for (int d = rank - k; d < rank; ++d) {
    begins.push_back(2 * (rank - 1 - d));
    ends.push_back(2 * (rank - 1 - d) + 1);
  }
  std::vector<std::string> parts;
  std::string zeros = rank > k ? ctx.constInt64s(std::vector<int64_t>(static_cast<size_t>(rank - k), 0)) : "";
  if (!zeros.empty()) parts.push_back(zeros);
  parts.push_back(ctx.emit1("Gather", {p, ctx.constInt64s(begins)}, {attrInt("axis", 0)}));
  if (!zeros.empty()) parts.push_back(zeros);
  parts.push_back(ctx.emit1("Gather", {p, ctx.constInt64s(ends)}, {attrInt("axis", 0)}));
  return ctx.emit1("Concat", parts, {attrInt("axis", 0)});
}

// A Pad in the opset's form; mode "constant", "reflect" or "edge".
Result<std::string> emitPad(Context& ctx, const Node& n, const std::string& mode, double value) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  // PyTorch fills an integer tensor with the value converted to its dtype (1.5 -> 1, bool: != 0).
  if (ctx.dtype(args.in("self", 0)) == DType::Bool) value = value != 0 ? 1 : 0;
  else if (!isFloating(ctx.dtype(args.in("self", 0)))) value = std::trunc(value);
  const int rank = ctx.rank(args.in("self", 0));
  std::vector<int64_t> static_pads;
  OXPORT_ASSIGN(std::string pads, onnxPads(ctx, args.in({"pad", "padding"}, 1), rank, &static_pads));
  // Negative amounts crop. ONNX Runtime's Pad gets a dim cropped at one end and padded at the
  // other wrong, so a static crop is a Slice first and the Pad then only adds.
  bool negative = false;
  for (auto p : static_pads) negative = negative || p < 0;
  if (negative && mode == "constant") {
    std::vector<int64_t> starts, ends, axes;
    for (int d = 0; d < rank; ++d) {
      int64_t& b = static_pads[static_cast<size_t>(d)];
      int64_t& e = static_pads[static_cast<size_t>(d + rank)];
      if (b >= 0 && e >= 0) continue;
      starts.push_back(b < 0 ? -b : 0);
      ends.push_back(e < 0 ? e : kInt64Max);
      axes.push_back(d);
      b = std::max<int64_t>(b, 0);
      e = std::max<int64_t>(e, 0);
    }
    x = ctx.slice(x, starts, ends, axes);
    if (ctx.opset() >= 11) pads = ctx.constInt64s(static_pads);
  }
  if (ctx.opset() < 11) {
    for (auto p : static_pads)
      if (p < 0 && mode != "constant") return ctx.needsOpset(11, "negative reflect/replicate padding");
    // Pad-2 takes only floating tensors: others go through float64, which holds every value of
    // the narrower integer types; int64 might not round-trip, so it needs Pad-11.
    const DType dt = ctx.dtype(args.in("self", 0));
    const bool via_double = !isFloating(dt);
    if (dt == DType::Int64) return ctx.needsOpset(11, "padding an int64 tensor (Pad-2 takes only floating types)");
    std::vector<Attribute> attrs{attrInts("pads", static_pads), attrString("mode", mode)};
    if (mode == "constant") attrs.push_back(attrFloat("value", static_cast<float>(value)));
    if (!via_double) return ctx.emit1("Pad", {x}, std::move(attrs));
    return ctx.cast(ctx.emit1("Pad", {ctx.cast(x, DType::Float64)}, std::move(attrs)), dt);
  }
  std::vector<std::string> in{x, pads};
  if (mode == "constant") in.push_back(ctx.constScalar(value, ctx.dtype(args.in("self", 0))));
  return ctx.emit1("Pad", in, {attrString("mode", mode)});
}

// Circular padding: per padded dim, the tail slice in front and the head slice behind.
Result<std::string> circularPad(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(auto pad, ctx.constInts(args.in({"pad", "padding"}, 1)));
  std::string y = x;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = rank - 1 - static_cast<int64_t>(i);
    const int64_t b = pad[2 * i], e = pad[2 * i + 1];
    if (b < 0 || e < 0) return ctx.error("unsupported-form", "negative circular padding");
    std::vector<std::string> parts;
    if (b > 0) parts.push_back(ctx.slice(y, {-b}, {kInt64Max}, {d}));
    parts.push_back(y);
    if (e > 0) parts.push_back(ctx.slice(y, {0}, {e}, {d}));
    if (parts.size() > 1) y = ctx.emit1("Concat", parts, {attrInt("axis", d)});
  }
  return y;
}

// constant_pad_nd(self, pad, value)
Status convertConstantPad(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  double value = 0;
  if (args.has("value", 2)) { OXPORT_ASSIGN(value, ctx.constDouble(args.in("value", 2))); }
  OXPORT_ASSIGN(std::string out, emitPad(ctx, n, "constant", value));
  return bindOut(ctx, n, out);
}

// pad(self, pad, mode, value)
Status convertPad(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  std::string mode = "constant";
  if (args.has("mode", 2)) { OXPORT_ASSIGN(mode, ctx.constString(args.in("mode", 2))); }
  double value = 0;
  if (args.has("value", 3)) { OXPORT_ASSIGN(value, ctx.constDouble(args.in("value", 3))); }
  std::string out;
  if (mode == "constant") { OXPORT_ASSIGN(out, emitPad(ctx, n, "constant", value)); }
  else if (mode == "reflect") { OXPORT_ASSIGN(out, emitPad(ctx, n, "reflect", 0)); }
  else if (mode == "replicate") { OXPORT_ASSIGN(out, emitPad(ctx, n, "edge", 0)); }
  else if (mode == "circular") { OXPORT_ASSIGN(out, circularPad(ctx, n)); }
  else return ctx.error("unsupported-form", "pad mode '" + mode + "'");
  return bindOut(ctx, n, out);
}

ConvertFn padMode(const std::string& mode) {
  return [mode](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    std::string out;
    if (mode == "circular") { OXPORT_ASSIGN(out, circularPad(ctx, n)); }
    else { OXPORT_ASSIGN(out, emitPad(ctx, n, mode, 0)); }
    return bindOut(ctx, n, out);
  };
}

// ---- resizing

// NearestExact is PyTorch's 'nearest-exact': source index floor((dst + 0.5) * in / out), the
// pixel whose centre is nearest, which is ONNX's half_pixel with round_prefer_ceil.
enum class Interp { Nearest, NearestExact, Linear, Cubic };

// A Resize of the input (rank spatial + 2) to `out_sizes` (a 1-D int64 tensor of the spatial
// sizes) or, when that is empty, by `scales` (one per spatial dim), in the opset's form.
// The spatial scale factors of an interpolate whose scale_factor depends on the input's size, as a
// 1-D float64 tensor of `spatial` elements (one number repeated, or a list of numbers).
Result<std::string> dynamicScales(Context& ctx, const Value* scale_v, int spatial) {
  std::vector<const Value*> elems{scale_v};
  if (scale_v->type == ts::ValueType::List) { OXPORT_ASSIGN(elems, ctx.listElements(scale_v)); }
  std::vector<std::string> parts;
  for (const Value* e : elems) {
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(e, DType::Float64));
    parts.push_back(ctx.reshape(t, {1}));
  }
  if (parts.size() == 1) parts.assign(static_cast<size_t>(spatial), parts[0]);
  if (static_cast<int>(parts.size()) != spatial)
    return ctx.error("bad-argument", "interpolate with " + std::to_string(parts.size()) + " scale factors for " +
                                         std::to_string(spatial) + " spatial dims");
  return parts.size() == 1 ? parts[0] : ctx.emit1("Concat", parts, {attrInt("axis", 0)});
}

// `dyn_scales`: the spatial scale factors as a 1-D float32 tensor computed in the graph (a scale
// factor that depends on the input's size), used when `out_sizes` and `scales` are both empty.
Status emitResize(Context& ctx, const Node& n, Interp interp, int spatial, bool align, std::string out_sizes,
                  std::vector<double> scales, const std::string& dyn_scales = "") {
  const Value* input = Args(ctx, n).in({"input", "self"}, 0);  // .vec overloads and __interpolate: input
  OXPORT_ASSIGN(std::string x, ctx.tensor(input));
  const int rank = ctx.rank(input);
  if (rank != spatial + 2) return ctx.error("unsupported-form", "upsampling a tensor of rank " + std::to_string(rank));
  if (interp == Interp::NearestExact && ctx.opset() < 11) {
    // Below 11 only whole scale factors agree: floor((dst + 0.5) / k) is floor(dst / k), the
    // truncation Upsample-9 and Resize-10 do.
    bool whole = out_sizes.empty() && !scales.empty() && dyn_scales.empty();
    for (double s : scales) whole = whole && s >= 1 && s == std::floor(s);
    if (!whole) return ctx.needsOpset(11, "nearest-exact resizing other than by whole scale factors (Resize half_pixel)");
  }
  if (interp != Interp::Nearest && interp != Interp::NearestExact && ctx.opset() < 11)
    return ctx.needsOpset(11, std::string(interp == Interp::Cubic ? "bicubic" : "linear") +
                                  " resizing with PyTorch's coordinates (Resize coordinate_transformation_mode)");
  // Linear 1-D runs as 2-D over a unit height (ONNX Runtime's linear Resize wants 2-D or 3-D spatial).
  const bool lift = interp == Interp::Linear && spatial == 1;
  std::string xin = lift ? ctx.unsqueeze(x, {2}) : x;
  // Bicubic of a permuted tensor (DINO's interpolate_pos_encoding: permute(0, 3, 1, 2), bicubic,
  // permute back): ONNX Runtime's transpose optimizer (CPU, 1.20) pushes an NHWC<->NCHW Transpose
  // that feeds a Resize through it, and its cubic kernel then refuses the NHWC scales [1, a, b, 1]
  // at load ("'Cubic' mode only support ... outermost 2 scale values being 1"). The Resize runs on
  // [N*C, 1, H, W] instead (cubic resizes each plane alone: the same numbers), reshaped back after,
  // so no Transpose feeds it.
  const std::string& from = input->producer ? input->producer->kind : std::string();
  const bool fold = interp == Interp::Cubic && spatial == 2 && ctx.opset() >= 11 &&
                    (from == "aten::permute" || from == "aten::transpose" || from == "aten::movedim" ||
                     from == "aten::swapaxes" || from == "aten::swapdims");
  std::string nc;  // (N, C) of the input, to unfold with
  if (fold) {
    std::string shape = ctx.shapeOf(x);
    nc = ctx.emit1("Gather", {shape, ctx.constInt64s({0, 1})}, {attrInt("axis", 0)});
    std::string hw = ctx.emit1("Gather", {shape, ctx.constInt64s({2, 3})}, {attrInt("axis", 0)});
    xin = ctx.emit1("Reshape", {x, ctx.emit1("Concat", {ctx.constInt64s({-1, 1}), hw}, {attrInt("axis", 0)})});
  }
  const int r = lift ? rank + 1 : rank;
  std::string sizes, scale_t;
  if (!out_sizes.empty()) {
    // The leading (N, C) sizes by Gather: ONNX Runtime's shape inference reads a Slice of a
    // Shape feeding Resize's sizes as empty and rejects the model.
    std::vector<int64_t> lead;
    for (int i = 0; i < r - spatial; ++i) lead.push_back(i);
    std::vector<std::string> parts{ctx.emit1("Gather", {ctx.shapeOf(xin), ctx.constInt64s(lead)}, {attrInt("axis", 0)}),
                                   out_sizes};
    sizes = ctx.emit1("Concat", parts, {attrInt("axis", 0)});
  } else if (!dyn_scales.empty()) {
    std::vector<float> lead(static_cast<size_t>(r - spatial), 1.0f);
    std::string ones = ctx.constant(HostTensor::fromVector<float>(DType::Float32, {static_cast<int64_t>(lead.size())}, lead));
    scale_t = ctx.emit1("Concat", {ones, dyn_scales}, {attrInt("axis", 0)});
  } else {
    std::vector<float> sv(static_cast<size_t>(r - spatial), 1.0f);
    for (double v : scales) sv.push_back(static_cast<float>(v));
    scale_t = ctx.constant(HostTensor::fromVector<float>(DType::Float32, {static_cast<int64_t>(sv.size())}, sv));
  }
  std::string out;
  if (ctx.opset() < 11) {
    // Upsample-9 and Resize-10 pick the nearest source pixel by truncating x / scale, except
    // that ONNX Runtime rounds up when shrinking; PyTorch takes the floor: only growing agrees.
    const auto& in_shape = ctx.meta(input).shape;
    const auto& out_shape = n.output(0)->meta.shape;
    for (size_t d = 2; d < in_shape.size() && d < out_shape.size(); ++d)
      if (out_shape[d] < in_shape[d]) return ctx.needsOpset(11, "nearest downsampling (Resize nearest_mode floor)");
    if (!sizes.empty()) {
      scale_t = ctx.emit1("Div", {ctx.cast(sizes, DType::Float32), ctx.cast(ctx.shapeOf(xin), DType::Float32)});
    }
    out = ctx.emit1(ctx.opset() >= 10 ? "Resize" : "Upsample", {xin, scale_t}, {attrString("mode", "nearest")});
  } else {
    std::vector<Attribute> attrs;
    if (interp == Interp::Nearest) {
      attrs = {attrString("mode", "nearest"), attrString("coordinate_transformation_mode", "asymmetric"),
               attrString("nearest_mode", "floor")};
    } else if (interp == Interp::NearestExact) {
      attrs = {attrString("mode", "nearest"), attrString("coordinate_transformation_mode", "half_pixel"),
               attrString("nearest_mode", "round_prefer_ceil")};
    } else {
      // PyTorch's half-pixel formula is ONNX's half_pixel at every output size. pytorch_half_pixel
      // is the same except that it maps an output of size 1 to source 0 (PyTorch: the window's
      // centre), and a size can become 1 only at run time (a size computed from the data, such as
      // keypoint R-CNN's per-box heatmap resize): half_pixel always.
      const char* mode = align ? "align_corners" : "half_pixel";
      attrs = {attrString("mode", interp == Interp::Cubic ? "cubic" : "linear"),
               attrString("coordinate_transformation_mode", mode)};
      if (interp == Interp::Cubic) attrs.push_back(attrFloat("cubic_coeff_a", -0.75f));
    }
    // Resize-11 requires roi and scales: empty constants when unused. From 13 on both are
    // optional and left out when unused (as torch.onnx writes them): an empty tensor there is
    // read by newer shape rules as a present input of the wrong length.
    const bool omit = ctx.opset() >= 13;
    std::string empty = omit ? std::string() : ctx.constant(HostTensor::fromVector<float>(DType::Float32, {0}, {}));
    std::vector<std::string> in{xin, empty, scale_t.empty() ? empty : scale_t};
    if (!sizes.empty()) in.push_back(sizes);
    out = ctx.emit1("Resize", in, std::move(attrs));
  }
  if (lift) out = ctx.squeeze(out, {2});
  if (fold) {
    std::string hw = ctx.emit1("Gather", {ctx.shapeOf(out), ctx.constInt64s({2, 3})}, {attrInt("axis", 0)});
    out = ctx.emit1("Reshape", {out, ctx.emit1("Concat", {nc, hw}, {attrInt("axis", 0)})});
  }
  return bindOut(ctx, n, out);
}

// upsample_<mode>(input, output_size?, [align_corners,] scale_factors? | scales...): the output
// size when given (it wins in PyTorch), else the scale factors.
ConvertFn upsampleOp(Interp interp, int spatial) {
  return [interp, spatial](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    bool align = false;
    size_t scale_at = 2;
    if (interp != Interp::Nearest && interp != Interp::NearestExact) {
      OXPORT_ASSIGN(align, ctx.constBool(args.in("align_corners", 2)));
      scale_at = 3;
    }
    const Value* size_v = args.in("output_size", 1);
    std::vector<double> scales;
    std::string sizes;
    if (ctx.isNone(size_v)) {
      // The .vec overload: one list of scale factors; the other overload: one optional float per
      // dim (scales in 1-D, scales_d/scales_h/scales_w). Without names, a list in the last place.
      static const char* const kPerDim[3][3] = {{"scales"}, {"scales_h", "scales_w"}, {"scales_d", "scales_h", "scales_w"}};
      const Value* factors = args.optIn("scale_factors", n.inputs.size() == scale_at + 1 ? scale_at : Args::kByName);
      if (factors && !ctx.isNone(factors) && factors->type == ts::ValueType::List) {
        if (auto fixed = ctx.constDoubles(factors); fixed.ok()) {
          scales = *fixed;
        } else {  // computed from the input's size (DINO's interpolate_pos_encoding)
          OXPORT_ASSIGN(std::string f, dynamicScales(ctx, factors, spatial));
          return emitResize(ctx, n, interp, spatial, align, "", {}, ctx.cast(f, DType::Float32));
        }
      } else {
        for (size_t k = 0; k < static_cast<size_t>(spatial); ++k) {
          // factors here is None (.vec) or, without names, the 1-D overload's one float.
          const Value* s = factors ? factors : args.in(kPerDim[spatial - 1][k], scale_at + k);
          if (ctx.isNone(s)) return ctx.error("unsupported-form", "upsampling without a size or a scale");
          OXPORT_ASSIGN(double v, ctx.constDouble(s));
          scales.push_back(v);
        }
      }
      if (scales.size() == 1) scales.assign(static_cast<size_t>(spatial), scales[0]);
    } else {
      OXPORT_ASSIGN(sizes, ctx.intsTensor(size_v));
    }
    return emitResize(ctx, n, interp, spatial, align, sizes, scales);
  };
}

// aten::__interpolate(input, size: int | int[] | None, scale_factor: float | float[] | None, mode,
// align_corners, recompute_scale_factor, antialias): what a scripted F.interpolate can record.
// With recompute_scale_factor (or None) the size is floor(input size * scale), as PyTorch computes it.
Status convertInterpolate(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const int rank = ctx.rank(args.in("input", 0));
  const int spatial = rank - 2;
  if (spatial < 1 || spatial > 3) return ctx.error("unsupported-form", "interpolating a tensor of rank " + std::to_string(rank));
  std::string mode = "nearest";
  if (args.has("mode", 3)) { OXPORT_ASSIGN(mode, ctx.constString(args.in("mode", 3))); }
  // The builtin keeps interpolate's pre-1.5 behaviour: unless recompute_scale_factor is False,
  // a scale factor gives the output size and the coordinates follow from that size.
  bool align = false, recompute = true, antialias = false;
  if (args.has("align_corners", 4)) { OXPORT_ASSIGN(align, ctx.constBool(args.in("align_corners", 4))); }
  if (args.has("recompute_scale_factor", 5)) { OXPORT_ASSIGN(recompute, ctx.constBool(args.in("recompute_scale_factor", 5))); }
  if (args.has("antialias", 6)) { OXPORT_ASSIGN(antialias, ctx.constBool(args.in("antialias", 6))); }
  Interp interp;
  if (mode == "nearest") interp = Interp::Nearest;
  else if (mode == "nearest-exact") interp = Interp::NearestExact;
  else if ((mode == "linear" && spatial == 1) || (mode == "bilinear" && spatial == 2) || (mode == "trilinear" && spatial == 3))
    interp = Interp::Linear;
  else if (mode == "bicubic" && spatial == 2) interp = Interp::Cubic;
  else
    return ctx.error("unsupported-form", "interpolate mode '" + mode + "' for " + std::to_string(spatial) + "-D input",
                     "use nearest, nearest-exact, (bi/tri)linear or bicubic");
  if (antialias && !(spatial == 2 && (mode == "bilinear" || mode == "bicubic")))
    return ctx.error("unsupported-form", "interpolate with antialias=True in mode '" + mode + "'",
                     "PyTorch antialiases 2-D bilinear and bicubic only");
  const Value* size_v = args.in("size", 1);
  const Value* scale_v = args.optIn("scale_factor", 2);
  std::string sizes;
  std::vector<double> scales;
  if (!ctx.isNone(size_v)) {
    if (size_v->type == ts::ValueType::List) {
      OXPORT_ASSIGN(sizes, ctx.intsTensor(size_v));
    } else if (auto s = ctx.maybeInt(size_v)) {
      sizes = ctx.constInt64s(std::vector<int64_t>(static_cast<size_t>(spatial), *s));
    } else {
      OXPORT_ASSIGN(std::string s1, ctx.tensorOfType(size_v, DType::Int64));
      s1 = ctx.reshape(s1, {1});
      sizes = spatial == 1 ? s1 : ctx.emit1("Concat", std::vector<std::string>(static_cast<size_t>(spatial), s1), {attrInt("axis", 0)});
    }
  } else if (scale_v && !ctx.isNone(scale_v)) {
    std::optional<std::vector<double>> fixed;
    if (scale_v->type == ts::ValueType::List) {
      if (auto l = ctx.constDoubles(scale_v); l.ok()) fixed = *l;
    } else if (auto f = ctx.constDouble(scale_v); f.ok()) {
      fixed = std::vector<double>{*f};
    }
    if (!fixed) {
      // Scale factors computed from the input's size (DINO's interpolate_pos_encoding:
      // scale_factor=(w0 / sq, h0 / sq)): Resize takes its scales as a tensor input.
      OXPORT_ASSIGN(std::string f, dynamicScales(ctx, scale_v, spatial));
      if (!recompute && !antialias) return emitResize(ctx, n, interp, spatial, align, "", {}, ctx.cast(f, DType::Float32));
      // floor(size * scale) in float64, as PyTorch computes the output size.
      OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("input", 0)));
      std::string in = ctx.cast(ctx.slice(ctx.shapeOf(x), {2}, {kInt64Max}, {0}), DType::Float64);
      sizes = ctx.cast(ctx.emit1("Floor", {ctx.emit1("Mul", {in, f})}), DType::Int64);
    } else {
      scales = *fixed;
      if (scales.size() == 1) scales.assign(static_cast<size_t>(spatial), scales[0]);
      if (static_cast<int>(scales.size()) != spatial)
        return ctx.error("bad-argument", "interpolate with " + std::to_string(scales.size()) + " scale factors for " +
                                             std::to_string(spatial) + " spatial dims");
      if (recompute) {
        // floor(size * scale) in float64, as PyTorch (its scales then follow from the sizes).
        OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("input", 0)));
        std::string in = ctx.cast(ctx.slice(ctx.shapeOf(x), {2}, {kInt64Max}, {0}), DType::Float64);
        std::string f = ctx.constant(HostTensor::fromVector<double>(DType::Float64, {spatial}, scales));
        sizes = ctx.cast(ctx.emit1("Floor", {ctx.emit1("Mul", {in, f})}), DType::Int64);
        scales.clear();
      }
    }
  } else {
    return ctx.error("bad-argument", "interpolate needs a size or a scale factor");
  }
  if (antialias) {  // Resize's antialias is opset 18: PyTorch's separable weights (ops_resize_aa.cpp)
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("input", 0)));
    OXPORT_ASSIGN(std::string y, resizeAntialiased(ctx, x, ctx.dtype(args.in("input", 0)), interp == Interp::Cubic, align, sizes, scales));
    return bindOut(ctx, n, y);
  }
  return emitResize(ctx, n, interp, spatial, align, sizes, scales);
}

}  // namespace

// The base grid of affine_grid over spatial sizes known only at run time (`sizes`: the 1-D int64
// size list N, C, [D,] H, W): per axis (2i + 1) / s - 1, with align_corners (2i - (s - 1)) /
// max(s - 1, 1) (0 for a single step, as PyTorch), as (x, y[, z], 1) broadcast over the spatial
// sizes and flattened: [1, points, nd + 1] of dtype `work`.
std::string dynamicAffineBase(Context& ctx, const std::string& sizes, size_t nd, bool align, DType work) {
  const auto snd = static_cast<int64_t>(nd);
  std::string spatial = ctx.slice(sizes, {2}, {snd + 2}, {0});
  std::string target = ctx.emit1("Concat", {spatial, ctx.constInt64s({1})}, {attrInt("axis", 0)});
  const std::string one = ctx.constScalar(1.0, work);
  const std::string two = ctx.constScalar(2.0, work);
  std::vector<std::string> parts(nd + 1);
  for (size_t k = 0; k < nd; ++k) {
    std::string s = ctx.emit1("Gather", {sizes, ctx.constInt64s({static_cast<int64_t>(k) + 2}, true)}, {attrInt("axis", 0)});
    std::string i2 = ctx.emit1("Mul", {ctx.cast(arangeOf(ctx, s), work), two});
    std::string sf = ctx.cast(s, work);
    std::string c;
    if (align) {
      std::string sm1 = ctx.emit1("Sub", {sf, one});
      c = ctx.emit1("Div", {ctx.emit1("Sub", {i2, sm1}), ctx.emit1("Max", {sm1, one})});
    } else {
      c = ctx.emit1("Sub", {ctx.emit1("Div", {ctx.emit1("Add", {i2, one}), sf}), one});
    }
    std::vector<int64_t> shape(nd + 1, 1);
    shape[k] = -1;
    parts[nd - 1 - k] = ctx.emit1("Expand", {ctx.reshape(c, shape), target});  // x is the innermost axis
  }
  parts[nd] = ctx.emit1("Expand", {ctx.reshape(one, std::vector<int64_t>(nd + 1, 1)), target});
  return ctx.reshape(ctx.emit1("Concat", parts, {attrInt("axis", snd)}), {1, -1, snd + 1});
}

// affine_grid_generator(theta, size, align_corners): the base grid of normalised coordinates
// (x, y[, z], 1) over the output's spatial size, times theta^T: [N, H, W, 2] or [N, D, H, W, 3].
// N and C are never read (N comes from theta), so they may depend on the inputs; spatial sizes
// that do (STN's `affine_grid(theta, x.size())` with a dynamic image) build the grid at run time.
// Every opset.
Status convertAffineGrid(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string theta, ctx.tensor(args.in("theta", 0)));
  const Value* size_v = args.in("size", 1);
  OXPORT_ASSIGN(bool align, ctx.constBool(args.in("align_corners", 2)));
  const int out_rank = ctx.rank(n.output(0));
  if (out_rank != 4 && out_rank != 5)
    return ctx.error("bad-argument", "affine_grid needs a size of 4 (N, C, H, W) or 5 (N, C, D, H, W)");
  const DType dt = ctx.dtype(args.in("theta", 0));
  std::vector<int64_t> size{0, 0};  // N and C unused
  if (auto elems = ctx.listElements(size_v); elems.ok() && static_cast<int>(elems->size()) == out_rank - 1) {
    for (size_t k = 2; k < elems->size(); ++k)
      if (auto s = ctx.maybeInt((*elems)[k])) size.push_back(*s);
  } else if (auto c = ctx.constInts(size_v); c.ok() && static_cast<int>(c->size()) == out_rank - 1) {
    size = *c;
  }
  if (static_cast<int>(size.size()) != out_rank - 1) {
    const size_t nd = static_cast<size_t>(out_rank - 2);
    OXPORT_ASSIGN(std::string sizes, ctx.intsTensor(size_v));
    const DType work = dt == DType::Float64 ? DType::Float64 : DType::Float32;
    std::string b = dynamicAffineBase(ctx, sizes, nd, align, work);
    if (work != dt) b = ctx.cast(b, dt);
    std::string grid = ctx.emit1("MatMul", {b, ctx.emit1("Transpose", {theta}, {attrInts("perm", {0, 2, 1})})});
    std::string out = ctx.emit1("Concat", {ctx.slice(ctx.shapeOf(theta), {0}, {1}, {0}), ctx.slice(sizes, {2}, {static_cast<int64_t>(nd) + 2}, {0}),
                                           ctx.constInt64s({static_cast<int64_t>(nd)})}, {attrInt("axis", 0)});
    return bindOut(ctx, n, ctx.emit1("Reshape", {grid, out}));
  }
  auto coords = [align](int64_t steps) {
    std::vector<double> v(static_cast<size_t>(steps), 0.0);
    if (steps <= 1) return v;  // PyTorch: a single step sits at 0
    for (int64_t i = 0; i < steps; ++i) {
      double c = -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(steps - 1);
      if (!align) c = c * static_cast<double>(steps - 1) / static_cast<double>(steps);
      v[static_cast<size_t>(i)] = c;
    }
    return v;
  };
  std::vector<int64_t> spatial(size.begin() + 2, size.end());  // D, H, W or H, W
  const size_t nd = spatial.size();
  std::vector<std::vector<double>> axes;  // per spatial axis, outermost first
  for (int64_t s : spatial) axes.push_back(coords(s));
  int64_t points = 1;
  for (int64_t s : spatial) points *= s;
  std::vector<double> base;
  base.reserve(static_cast<size_t>(points) * (nd + 1));
  std::vector<int64_t> at(nd, 0);
  for (int64_t p = 0; p < points; ++p) {
    // (x, y[, z]) = the innermost axis first, then 1.
    for (size_t k = 0; k < nd; ++k) base.push_back(axes[nd - 1 - k][static_cast<size_t>(at[nd - 1 - k])]);
    base.push_back(1.0);
    for (size_t k = nd; k-- > 0;) {
      if (++at[k] < spatial[k]) break;
      at[k] = 0;
    }
  }
  std::vector<int64_t> bshape{1, points, static_cast<int64_t>(nd + 1)};
  std::string b;
  if (dt == DType::Float64) {
    b = ctx.constant(HostTensor::fromVector<double>(DType::Float64, bshape, base), "affine_grid_base");
  } else {
    std::vector<float> f(base.begin(), base.end());
    b = ctx.constant(HostTensor::fromVector<float>(DType::Float32, bshape, f), "affine_grid_base");
    if (dt != DType::Float32) b = ctx.cast(b, dt);
  }
  std::string tt = ctx.emit1("Transpose", {theta}, {attrInts("perm", {0, 2, 1})});
  std::string grid = ctx.emit1("MatMul", {b, tt});  // [N, points, nd]
  std::vector<int64_t> out{-1};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(static_cast<int64_t>(nd));
  return bindOut(ctx, n, ctx.reshape(grid, out));
}

void registerResizeOps(Registry& r) {
  r.add("aten::affine_grid_generator", convertAffineGrid);
  r.add("aten::constant_pad_nd", convertConstantPad);
  r.add("aten::pad", convertPad);
  addAll(r, {"aten::reflection_pad1d", "aten::reflection_pad2d", "aten::reflection_pad3d"}, padMode("reflect"));
  addAll(r, {"aten::replication_pad1d", "aten::replication_pad2d", "aten::replication_pad3d"}, padMode("edge"));
  r.add("aten::_pad_circular", padMode("circular"));
  r.add("aten::upsample_nearest1d", upsampleOp(Interp::Nearest, 1));
  r.add("aten::upsample_nearest2d", upsampleOp(Interp::Nearest, 2));
  r.add("aten::upsample_nearest3d", upsampleOp(Interp::Nearest, 3));
  r.add("aten::_upsample_nearest_exact1d", upsampleOp(Interp::NearestExact, 1));
  r.add("aten::_upsample_nearest_exact2d", upsampleOp(Interp::NearestExact, 2));
  r.add("aten::_upsample_nearest_exact3d", upsampleOp(Interp::NearestExact, 3));
  r.add("aten::upsample_linear1d", upsampleOp(Interp::Linear, 1));
  r.add("aten::upsample_bilinear2d", upsampleOp(Interp::Linear, 2));
  r.add("aten::upsample_trilinear3d", upsampleOp(Interp::Linear, 3));
  r.add("aten::upsample_bicubic2d", upsampleOp(Interp::Cubic, 2));
  r.add("aten::__interpolate", convertInterpolate);
}

}  // namespace oxport::convert
