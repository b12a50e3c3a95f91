// Convolutions: aten::_convolution (traced), aten::conv{1,2,3}d, aten::conv_transpose{1,2,3}d.
#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

struct ConvArgs {
  const Value* input;
  const Value* weight;
  const Value* bias;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
  std::string pad_mode;  // "same"/"valid" for the string overloads
};

Status emitConv(Context& ctx, const Node& n, const ConvArgs& a) {
  const int wrank = ctx.rank(a.weight);
  if (wrank < 3) return ctx.error("bad-argument", "convolution weight must have rank 3 or more");
  const size_t sp = static_cast<size_t>(wrank - 2);
  std::vector<int64_t> kernel(ctx.meta(a.weight).shape.begin() + 2, ctx.meta(a.weight).shape.end());
  std::vector<Attribute> attrs{attrInts("kernel_shape", kernel),
                               attrInts("strides", expandInts(a.stride, sp)),
                               attrInts("dilations", expandInts(a.dilation, sp)),
                               attrInt("group", a.groups)};
  if (a.pad_mode == "same") {
    // PyTorch's "same" puts the extra padding at the end, like SAME_UPPER (stride is 1).
    std::vector<int64_t> pads_begin, pads_end;
    auto dil = expandInts(a.dilation, sp);
    for (size_t i = 0; i < sp; ++i) {
      int64_t total = dil[i] * (kernel[i] - 1);
      pads_begin.push_back(total / 2);
      pads_end.push_back(total - total / 2);
    }
    pads_begin.insert(pads_begin.end(), pads_end.begin(), pads_end.end());
    attrs.push_back(attrInts("pads", pads_begin));
  } else if (a.pad_mode == "valid") {
    attrs.push_back(attrInts("pads", std::vector<int64_t>(2 * sp, 0)));
  } else {
    attrs.push_back(attrInts("pads", symmetricPads(expandInts(a.padding, sp))));
  }
  if (a.transposed) {
    auto op = expandInts(a.output_padding, sp);
    bool any = false;
    for (auto v : op) any = any || v != 0;
    if (any) attrs.push_back(attrInts("output_padding", op));
  }
  OXPORT_ASSIGN(std::string x, ctx.tensor(a.input));
  OXPORT_ASSIGN(std::string w, ctx.tensor(a.weight));
  std::vector<std::string> ins{x, w};
  if (a.bias && !ctx.isNone(a.bias)) {
    OXPORT_ASSIGN(std::string b, ctx.tensor(a.bias));
    ins.push_back(b);
  }
  // A batch-less input (C, L...) gets a batch axis and loses it again.
  const bool unbatched = ctx.rank(a.input) == wrank - 1;
  if (unbatched) ins[0] = ctx.unsqueeze(x, {0});
  std::string y = ctx.emit1(a.transposed ? "ConvTranspose" : "Conv", ins, std::move(attrs));
  if (unbatched) y = ctx.squeeze(y, {0});
  return bindOut(ctx, n, y);
}

// Where a form puts the arguments whose place differs (used only for nodes without schema names).
struct ConvPlaces {
  size_t dilation, groups, output_padding, transposed;
};

// The convolutions read by argument name:
//   _convolution / convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
//   conv{1,2,3}d / _convolution_mode(input, weight, bias, stride, padding (ints, or "same"/"valid"), dilation, groups)
//   conv_transpose{1,2,3}d(input, weight, bias, stride, padding, output_padding, groups, dilation)
// Whether the number `v` is computed from the inputs' sizes alone (n = inst.shape[0]): every path
// back through its producers ends in a constant or in a size, rank or element count of a tensor,
// never in a tensor's elements (int(t), t.item()).
bool fromSizesOnly(const Value* v, int depth = 0) {
  if (v->constant) return true;
  const Node* p = v->producer;
  if (!p || v->isTensor() || depth > 64) return false;
  if (p->kind == "aten::size" || p->kind == "aten::dim" || p->kind == "aten::numel" || p->kind == "aten::len") return true;
  if (p->kind == "aten::Int" || p->kind == "aten::item" || p->kind == "aten::IntImplicit" ||
      p->kind == "aten::ScalarImplicit" || !p->blocks.empty())
    return false;
  for (const Value* in : p->inputs)
    if (!fromSizesOnly(in, depth + 1)) return false;
  return true;
}

// groups: a constant, or a number computed from the inputs' sizes (CondInst's per-instance
// convolution, groups=n with n = inst.shape[0]), which ONNX's `group` attribute takes at its
// example value: exact at the example's sizes (with dynamic axes, diagnose.cpp's
// baked-dynamic-size warning names it).
Result<int64_t> groupCount(Context& ctx, const Value* v) {
  if (!v->constant && v->example && v->example->isInt() && fromSizesOnly(v)) return v->example->toInt();
  return ctx.constInt(v);
}

ConvertFn convOp(ConvPlaces at, bool transposed) {
  return [at, transposed](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    ConvArgs a;
    a.input = args.in("input", 0);
    a.weight = args.in("weight", 1);
    a.bias = args.in("bias", 2);
    a.transposed = transposed;
    OXPORT_ASSIGN(a.stride, args.constInts("stride", 3));
    const Value* padding = args.in("padding", 4);
    if (padding->constant && padding->constant->isString()) {
      a.pad_mode = padding->constant->str();
    } else {
      OXPORT_ASSIGN(a.padding, ctx.constInts(padding));
    }
    OXPORT_ASSIGN(a.dilation, args.constInts("dilation", at.dilation));
    OXPORT_ASSIGN(a.groups, groupCount(ctx, args.in("groups", at.groups)));
    if (const Value* t = args.optIn("transposed", at.transposed)) { OXPORT_ASSIGN(a.transposed, ctx.constBool(t)); }
    if (const Value* op = args.optIn("output_padding", at.output_padding)) {
      OXPORT_ASSIGN(a.output_padding, ctx.constInts(op));
    }
    return emitConv(ctx, n, a);
  };
}

}  // namespace

void registerConvOps(Registry& r) {
  constexpr size_t kNo = Args::kByName;
  addAll(r, {"aten::_convolution", "aten::convolution"}, convOp({5, 8, 7, 6}, false));
  addAll(r, {"aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::_convolution_mode"}, convOp({5, 6, kNo, kNo}, false));
  addAll(r, {"aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d"},
         convOp({7, 6, 5, kNo}, true));
}

}  // namespace oxport::convert
