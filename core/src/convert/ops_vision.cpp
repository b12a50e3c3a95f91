// torchvision's detection ops (its op library, loaded for models that use them): nms as
// NonMaxSuppression (opset 10), roi_align as RoiAlign (opset 10; opset 16's
// coordinate_transformation_mode for aligned=True), roi_pool as MaxRoiPool.
#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// nms(dets [N, 4] as (x1, y1, x2, y2), scores [N], iou_threshold) -> kept indices [K] (int64),
// by decreasing score. NonMaxSuppression takes batches and classes: one of each here.
Status convertNms(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string boxes, ctx.tensorOfType(args.in("dets", 0), DType::Float32));
  OXPORT_ASSIGN(std::string scores, ctx.tensorOfType(args.in("scores", 1), DType::Float32));
  OXPORT_ASSIGN(double iou, ctx.constDouble(args.in("iou_threshold", 2)));
  std::string b = ctx.unsqueeze(boxes, {0});          // [1, N, 4]
  std::string s = ctx.unsqueeze(ctx.unsqueeze(scores, {0}), {0});  // [1, 1, N]
  // Every box may be kept: N itself bounds the count (a constant would bake the example's N).
  std::string max_out = dimSize(ctx, boxes, 0);
  std::string sel = ctx.emit1("NonMaxSuppression",
                              {b, s, max_out, ctx.constant(HostTensor::fromVector<float>(DType::Float32, {1},
                                                                                          {static_cast<float>(iou)}))},
                              {attrInt("center_point_box", 0)});
  // selected_indices [K, 3] = (batch, class, box): the boxes.
  std::string idx = ctx.emit1("Gather", {sel, ctx.constInt64s({2}, true)}, {attrInt("axis", 1)});
  return bindOut(ctx, n, idx);
}

// The arguments roi_align and roi_pool share: input, rois, spatial_scale, pooled_height, pooled_width.
struct RoiArgs {
  std::string x, rois;
  double scale = 1;
  int64_t ph = 0, pw = 0;
};

Result<RoiArgs> readRoiArgs(Context& ctx, const Args& args) {
  RoiArgs r;
  const Value* input = args.in("input", 0);
  OXPORT_ASSIGN(r.x, ctx.tensor(input));
  OXPORT_ASSIGN(r.rois, args.tensorOfType("rois", 1, ctx.dtype(input)));
  OXPORT_ASSIGN(r.scale, args.constDouble("spatial_scale", 2));
  OXPORT_ASSIGN(r.ph, args.constInt("pooled_height", 3));
  OXPORT_ASSIGN(r.pw, args.constInt("pooled_width", 4));
  return r;
}

// roi_align(input, rois [K, 5] as (batch, x1, y1, x2, y2), spatial_scale, pooled_height,
// pooled_width, sampling_ratio, aligned)
Status convertRoiAlign(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(RoiArgs roi, readRoiArgs(ctx, args));
  OXPORT_ASSIGN(int64_t ratio, ctx.constInt(args.in("sampling_ratio", 5)));
  OXPORT_ASSIGN(bool aligned, ctx.constBool(args.in("aligned", 6)));
  if (ctx.opset() < 10) return ctx.needsOpset(10, "roi_align (RoiAlign)");
  std::string batch = ctx.cast(ctx.squeeze(ctx.slice(roi.rois, {0}, {1}, {1}), {1}), DType::Int64);
  std::string boxes = ctx.slice(roi.rois, {1}, {5}, {1});
  std::vector<Attribute> attrs{attrString("mode", "avg"), attrInt("output_height", roi.ph), attrInt("output_width", roi.pw),
                               attrInt("sampling_ratio", ratio > 0 ? ratio : 0),
                               attrFloat("spatial_scale", static_cast<float>(roi.scale))};
  if (ctx.opset() >= 16) {
    attrs.push_back(attrString("coordinate_transformation_mode", aligned ? "half_pixel" : "output_half_pixel"));
  } else if (aligned) {
    // RoiAlign-10 has no half-pixel offset: shift the boxes by half a pixel of the feature map
    // (in input coordinates). Boxes under one pixel are still widened to one, as aligned=False does.
    boxes = ctx.emit1("Sub", {boxes, ctx.constScalar(0.5 / roi.scale, ctx.dtype(args.in("input", 0)))});
    ctx.warn("roi-align-aligned-approximated",
             "roi_align(aligned=True) at opset " + std::to_string(ctx.opset()) +
                 " shifts the boxes by half a pixel; boxes narrower than one feature-map pixel are widened to one, "
                 "which aligned=True does not do",
             "export at opset 16 or newer for RoiAlign's half_pixel mode");
  }
  return bindOut(ctx, n, ctx.emit1("RoiAlign", {roi.x, boxes, batch}, std::move(attrs)));
}

// roi_pool(input, rois, spatial_scale, pooled_height, pooled_width) -> (output, argmax)
Status convertRoiPool(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(RoiArgs roi, readRoiArgs(ctx, args));
  if (n.outputs.size() > 1 && !n.output(1)->users.empty())
    return ctx.error("unsupported-form", "roi_pool's argmax output",
                     "use only the pooled values (ONNX's MaxRoiPool gives no argmax)");
  return bindOut(ctx, n, ctx.emit1("MaxRoiPool", {roi.x, roi.rois},
                                   {attrInts("pooled_shape", {roi.ph, roi.pw}),
                                    attrFloat("spatial_scale", static_cast<float>(roi.scale))}));
}

}  // namespace

void registerVisionOps(Registry& r) {
  r.add("torchvision::nms", convertNms, 10);
  r.add("torchvision::roi_align", convertRoiAlign, 10);
  r.add("torchvision::roi_pool", convertRoiPool);
}

}  // namespace oxport::convert
