// col2im (F.fold, nn.Fold): the overlap-add of sliding blocks back into an image. ONNX Col2Im is
// opset 18; below it fold is exactly a grouped ConvTranspose whose kernel is one-hot: column
// block c*kh*kw + i*kw + j of [N, C*kh*kw, L] viewed as [N, C*kh*kw, oh, ow] is placed at kernel
// offset (i, j) of channel c, strided and dilated as the blocks were taken, and the overlaps add.
// Only additions of zeros and of the values themselves: no rounding beyond the sum's order.
#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// col2im(self [N, C*kh*kw, L] or [C*kh*kw, L], output_size, kernel_size, dilation, padding, stride).
Status convertCol2im(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* self = args.in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  const int rank = ctx.rank(self);
  if (rank != 2 && rank != 3)
    return ctx.error("bad-argument", "fold (col2im) of a " + ctx.meta(self).toString() +
                                         " tensor: expected [N, C*kh*kw, L] or [C*kh*kw, L]");
  OXPORT_ASSIGN(auto k, args.constInts("kernel_size", 2));
  OXPORT_ASSIGN(auto dil, args.constInts("dilation", 3));
  OXPORT_ASSIGN(auto pad, args.constInts("padding", 4));
  OXPORT_ASSIGN(auto stride, args.constInts("stride", 5));
  k = expandInts(k, 2);
  dil = expandInts(dil, 2);
  pad = expandInts(pad, 2);
  stride = expandInts(stride, 2);
  const int64_t kk = k[0] * k[1];
  const int64_t ck = ctx.meta(self).shape[static_cast<size_t>(rank - 2)];
  if (kk <= 0 || ck % kk != 0)
    return ctx.error("bad-argument", "fold (col2im) of " + std::to_string(ck) + " channels with a " + std::to_string(k[0]) +
                                         "x" + std::to_string(k[1]) + " kernel: not a multiple of kh*kw");
  const int64_t c = ck / kk;
  const DType dt = ctx.dtype(self);
  if (dt != DType::Float32 && dt != DType::Float64 && dt != DType::Float16)
    return ctx.error("unsupported-form", "fold (col2im) of a " + ctx.meta(self).toString() + " tensor",
                     "fold a floating-point tensor");
  // Weight [C*kh*kw, 1, kh, kw]: channel c*kk + q is a one at kernel position q.
  std::vector<float> w(static_cast<size_t>(ck * kk), 0.0f);
  for (int64_t ch = 0; ch < ck; ++ch) w[static_cast<size_t>(ch * kk + ch % kk)] = 1.0f;
  HostTensor wt = HostTensor::fromVector(DType::Float32, {ck, 1, k[0], k[1]}, w);
  std::string weight = ctx.constant(wt, "fold_kernel");
  // ONNX Runtime's ConvTranspose runs float32 only: float16 and float64 go through it.
  if (dt != DType::Float32) x = ctx.cast(x, DType::Float32);
  std::string xb = rank == 2 ? ctx.unsqueeze(x, {0}) : x;
  const Value* out_v = args.in("output_size", 1);
  std::vector<Attribute> attrs{attrInt("group", c), attrInts("kernel_shape", k), attrInts("strides", stride),
                               attrInts("dilations", dil), attrInts("pads", {pad[0], pad[1], pad[0], pad[1]})};
  std::string y;
  if (auto out_r = ctx.constInts(out_v)) {
    // The number of blocks along each axis, as PyTorch counts them; output_padding makes up the
    // rows and columns the last block does not reach.
    const auto out = expandInts(*out_r, 2);
    int64_t blocks[2], extra[2];
    for (size_t a = 0; a < 2; ++a) {
      const int64_t span = out[a] + 2 * pad[a] - dil[a] * (k[a] - 1) - 1;
      if (span < 0) return ctx.error("bad-argument", "fold (col2im): the kernel does not fit the padded output size");
      blocks[a] = span / stride[a] + 1;
      extra[a] = span % stride[a];
    }
    xb = ctx.reshape(xb, {0, ck, blocks[0], blocks[1]});
    attrs.push_back(attrInts("output_padding", {extra[0], extra[1]}));
    y = ctx.emit1("ConvTranspose", {xb, weight}, attrs);
  } else {
    // An output size that follows the input (F.fold(..., x.shape[-2:])): the blocks counted in
    // the graph, the blocks placed unpadded, the uncovered edge padded with zeros and the padding
    // cropped (ONNX Runtime misplaces a ConvTranspose with pads and a stride whose output size it
    // infers without output_padding).
    if (ctx.opset() < 11) return ctx.needsOpset(11, "fold with an output size computed from the input (Pad)");
    OXPORT_ASSIGN(std::string out, ctx.intsTensor(out_v));
    std::string span = ctx.emit1("Sub", {out, ctx.constInt64s({dil[0] * (k[0] - 1) + 1 - 2 * pad[0], dil[1] * (k[1] - 1) + 1 - 2 * pad[1]})});
    std::string blocks = ctx.emit1("Add", {ctx.emit1("Div", {span, ctx.constInt64s(stride)}), ctx.constInt64s({1, 1})});
    xb = ctx.emit1("Reshape", {xb, ctx.emit1("Concat", {ctx.constInt64s({0, ck}), blocks}, {attrInt("axis", 0)})});
    attrs.pop_back();  // no pads
    y = ctx.emit1("ConvTranspose", {xb, weight}, attrs);
    std::string padded = ctx.emit1("Add", {out, ctx.constInt64s({2 * pad[0], 2 * pad[1]})});
    std::string missing = ctx.emit1("Sub", {padded, ctx.slice(ctx.shapeOf(y), {2}, {4}, {0})});
    y = ctx.emit1("Pad", {y, ctx.emit1("Concat", {ctx.constInt64s({0, 0, 0, 0, 0, 0}), missing}, {attrInt("axis", 0)})});
    if (pad[0] || pad[1])
      y = ctx.emit1("Slice", {y, ctx.constInt64s({pad[0], pad[1]}), ctx.emit1("Add", {out, ctx.constInt64s({pad[0], pad[1]})}),
                              ctx.constInt64s({2, 3})});
  }
  if (rank == 2) y = ctx.squeeze(y, {0});
  return bindOut(ctx, n, dt == DType::Float32 ? y : ctx.cast(y, dt));
}

}  // namespace

void registerFoldOps(Registry& r) { r.add("aten::col2im", convertCol2im); }

}  // namespace oxport::convert
