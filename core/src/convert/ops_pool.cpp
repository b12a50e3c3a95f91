// Pooling: max/avg pooling 1-3d, adaptive average/max pooling.
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {


// max_poolNd(input, kernel_size, stride, padding, dilation, ceil_mode)
ConvertFn maxPool(size_t nd, bool with_indices) {
  return [nd, with_indices](Context& ctx, const Node& n) -> Status {
    OXPORT_ASSIGN(auto kernel, ctx.constInts(n.input(1)));
    OXPORT_ASSIGN(auto stride, ctx.constInts(n.input(2)));
    OXPORT_ASSIGN(auto padding, ctx.constInts(n.input(3)));
    OXPORT_ASSIGN(auto dilation, ctx.constInts(n.input(4)));
    OXPORT_ASSIGN(bool ceil, ctx.constBool(n.input(5)));
    kernel = expandInts(kernel, nd);
    stride = stride.empty() ? kernel : expandInts(stride, nd);
    padding = expandInts(padding, nd);
    dilation = expandInts(dilation, nd);
    bool dilated = false;
    for (auto d : dilation) dilated = dilated || d != 1;
    if ((ceil || dilated) && ctx.opset() < 10) return ctx.needsOpset(10, "max pooling with ceil_mode or dilation");
    std::vector<Attribute> attrs{attrInts("kernel_shape", kernel), attrInts("strides", stride),
                                 attrInts("pads", symmetricPads(padding))};
    if (ctx.opset() >= 10) {
      attrs.push_back(attrInt("ceil_mode", ceil ? 1 : 0));
      if (dilated) attrs.push_back(attrInts("dilations", dilation));
    }
    OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
    const bool unbatched = static_cast<size_t>(ctx.rank(n.input(0))) == nd + 1;
    if (unbatched) x = ctx.unsqueeze(x, {0});
    if (!with_indices) {
      std::string y = ctx.emit1("MaxPool", {x}, std::move(attrs));
      return bindOut(ctx, n, unbatched ? ctx.squeeze(y, {0}) : y);
    }
    auto outs = ctx.emit("MaxPool", {x}, 2, std::move(attrs));
    if (unbatched) {
      outs[0] = ctx.squeeze(outs[0], {0});
      outs[1] = ctx.squeeze(outs[1], {0});
    }
    // ONNX indices are flat over N*C*spatial; PyTorch's are per (N, C) plane.
    std::vector<int64_t> ones(nd, 1);
    std::vector<int64_t> starts(nd, 0), ends(nd, 1), axes;
    for (size_t i = 0; i < nd; ++i) axes.push_back(static_cast<int64_t>(i + 2));
    auto flat = ctx.emit("MaxPool", {x}, 2, {attrInts("kernel_shape", ones), attrInts("strides", ones)});
    std::string base = ctx.slice(flat[1], starts, ends, axes);
    ctx.bind(n.output(0), outs[0]);
    ctx.bind(n.output(1), ctx.emit1("Sub", {outs[1], base}));
    return okStatus();
  };
}

// avg_poolNd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
ConvertFn avgPool(size_t nd) {
  return [nd](Context& ctx, const Node& n) -> Status {
    OXPORT_ASSIGN(auto kernel, ctx.constInts(n.input(1)));
    OXPORT_ASSIGN(auto stride, ctx.constInts(n.input(2)));
    OXPORT_ASSIGN(auto padding, ctx.constInts(n.input(3)));
    OXPORT_ASSIGN(bool ceil, ctx.constBool(n.input(4)));
    OXPORT_ASSIGN(bool count_include_pad, ctx.constBool(n.input(5)));
    if (n.inputs.size() > 6 && !ctx.isNone(n.input(6)))
      return ctx.error("unsupported-form", "avg_pool with divisor_override has no ONNX form");
    kernel = expandInts(kernel, nd);
    stride = stride.empty() ? kernel : expandInts(stride, nd);
    padding = expandInts(padding, nd);
    if (ceil && ctx.opset() < 10) return ctx.needsOpset(10, "average pooling with ceil_mode");
    std::vector<Attribute> attrs{attrInts("kernel_shape", kernel), attrInts("strides", stride),
                                 attrInts("pads", symmetricPads(padding)),
                                 attrInt("count_include_pad", count_include_pad ? 1 : 0)};
    if (ctx.opset() >= 10) attrs.push_back(attrInt("ceil_mode", ceil ? 1 : 0));
    OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
    const bool unbatched = static_cast<size_t>(ctx.rank(n.input(0))) == nd + 1;
    if (unbatched) x = ctx.unsqueeze(x, {0});
    std::string y = ctx.emit1("AveragePool", {x}, std::move(attrs));
    return bindOut(ctx, n, unbatched ? ctx.squeeze(y, {0}) : y);
  };
}

// adaptive_{avg,max}_poolNd(input, output_size): global pooling, or a plain pooling when the
// input size is a multiple of the output size.
ConvertFn adaptivePool(size_t nd, bool is_max) {
  return [nd, is_max](Context& ctx, const Node& n) -> Status {
    OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
    const auto& shape = ctx.meta(n.input(0)).shape;
    const size_t rank = shape.size();
    std::vector<int64_t> out_size;
    if (n.input(1)->constant && n.input(1)->constant->isList()) {
      // Elements may be None (keep the input size).
      size_t i = 0;
      for (const auto& e : n.input(1)->constant->list()) {
        out_size.push_back(e.isNone() ? shape[rank - nd + i] : e.toInt());
        ++i;
      }
    } else {
      OXPORT_ASSIGN(out_size, ctx.constInts(n.input(1)));
    }
    out_size = expandInts(out_size, nd);
    const bool unbatched = rank == nd + 1;
    if (unbatched) x = ctx.unsqueeze(x, {0});
    bool global = true;
    for (auto s : out_size) global = global && s == 1;
    std::string y;
    if (global) {
      y = ctx.emit1(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {x});
    } else {
      std::vector<int64_t> kernel;
      for (size_t i = 0; i < nd; ++i) {
        int64_t in = shape[rank - nd + i];
        if (out_size[i] <= 0 || in % out_size[i] != 0)
          return ctx.error("unsupported-form",
                           "adaptive pooling from size " + std::to_string(in) + " to " + std::to_string(out_size[i]) +
                               " has uneven windows, which ONNX pooling cannot express",
                           "use an output size that divides the input size, or 1");
        kernel.push_back(in / out_size[i]);
      }
      y = ctx.emit1(is_max ? "MaxPool" : "AveragePool", {x},
                    {attrInts("kernel_shape", kernel), attrInts("strides", kernel)});
    }
    if (unbatched) y = ctx.squeeze(y, {0});
    ctx.bind(n.output(0), y);
    if (n.outputs.size() > 1 && !n.output(1)->users.empty())
      return ctx.error("unsupported-form", "the indices of adaptive max pooling have no ONNX form");
    return okStatus();
  };
}

}  // namespace

void registerPoolOps(Registry& r) {
  for (size_t nd = 1; nd <= 3; ++nd) {
    std::string d = std::to_string(nd) + "d";
    r.add("aten::max_pool" + d, maxPool(nd, false));
    r.add("aten::max_pool" + d + "_with_indices", maxPool(nd, true));
    r.add("aten::avg_pool" + d, avgPool(nd));
    r.add("aten::adaptive_avg_pool" + d, adaptivePool(nd, false));
    r.add("aten::adaptive_max_pool" + d, adaptivePool(nd, true));
  }
}

}  // namespace oxport::convert
