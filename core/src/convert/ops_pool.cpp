// Pooling: max/avg pooling 1-3d, adaptive average/max pooling.
#include <algorithm>
#include <limits>

#include "convert/args.h"
#include "convert/pool_runtime.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// ceil_mode. PyTorch drops a last window that would start in the right padding (or past the
// input); ONNX Runtime keeps it (a window of -FLT_MAX for MaxPool). That happens only where
// stride + padding >= dilation * (kernel - 1) + 2; elsewhere ceil mode is the same in both for
// every size. Where it can happen, it depends on the size, which may be dynamic: the pooling runs
// in ceil mode and its output is cut to PyTorch's count, ceil((L + p) / s), computed from the
// input's shape (`ceilEnds`). Below opset 10 there is no ceil_mode: the example run's sizes decide
// (`ceilAtExampleSize`), as a static Pad would.
bool windowMayDrop(int64_t k, int64_t s, int64_t p, int64_t d) { return s + p >= d * (k - 1) + 2; }

bool anyWindowMayDrop(size_t nd, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                      const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
  for (size_t i = 0; i < nd; ++i)
    if (windowMayDrop(kernel[i], stride[i], padding[i], dilation.empty() ? 1 : dilation[i])) return true;
  return false;
}

// Pad-2 (attribute form, opset < 11) or Pad-11 (inputs) of x with a constant.
std::string padConstant(Context& ctx, const std::string& x, const std::vector<int64_t>& pads, double value, DType dt) {
  if (ctx.opset() >= 11) return ctx.emit1("Pad", {x, ctx.constInt64s(pads), ctx.constScalar(value, dt)});
  return ctx.emit1("Pad", {x}, {attrInts("pads", pads), attrString("mode", "constant"),
                                attrFloat("value", static_cast<float>(value))});
}

Status checkCeilWindows(Context& ctx, const std::vector<int64_t>& shape, size_t nd, const std::vector<int64_t>& kernel,
                        const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
  for (size_t i = 0; i < nd && shape.size() >= nd; ++i) {
    const int64_t d = dilation.empty() ? 1 : dilation[i];
    if (shape[shape.size() - nd + i] + 2 * padding[i] - d * (kernel[i] - 1) - 1 < 0)
      // only ceil_mode makes a window here; ONNX Runtime makes none
      return ctx.error("unsupported-form", "ceil_mode pooling with a kernel larger than the padded input",
                       "pad the input to at least the kernel's extent");
  }
  return okStatus();
}

// Below opset 10: whether ceil mode's windows are floor mode's at the example size (then the
// pooling is exported in floor mode) or not (no form without ceil_mode).
bool ceilIsFloorAtExampleSize(const std::vector<int64_t>& shape, size_t nd, const std::vector<int64_t>& kernel,
                              const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                              const std::vector<int64_t>& dilation) {
  if (shape.size() < nd) return false;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t L = shape[shape.size() - nd + i], k = kernel[i], s = stride[i], p = padding[i];
    const int64_t d = dilation.empty() ? 1 : dilation[i];
    const int64_t span = L + 2 * p - d * (k - 1) - 1;
    int64_t torch_out = (span + s - 1) / s + 1;
    if ((torch_out - 1) * s >= L + p) --torch_out;
    if (torch_out != span / s + 1) return false;
  }
  return true;
}

// y (pooled in ceil mode from x, N and C first) cut to PyTorch's window count in every spatial
// dim where a last window may be dropped.
std::string cutToTorchWindows(Context& ctx, const std::string& x, const std::string& y, size_t nd,
                              const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                              const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation) {
  std::vector<std::string> ends;
  std::vector<int64_t> axes;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t s = stride[i], p = padding[i];
    if (!windowMayDrop(kernel[i], s, p, dilation.empty() ? 1 : dilation[i])) continue;
    // ceil((L + p) / s): the windows that start inside input + left padding (Slice clamps it to
    // ceil mode's count)
    const std::string L = dimSize(ctx, x, static_cast<int64_t>(i + 2));
    ends.push_back(ctx.emit1("Div", {ctx.emit1("Add", {L, ctx.constInt64s({p + s - 1})}), ctx.constInt64s({s})}));
    axes.push_back(static_cast<int64_t>(i + 2));
  }
  if (axes.empty()) return y;
  std::string end = ends.size() == 1 ? ends[0] : ctx.emit1("Concat", ends, {attrInt("axis", 0)});
  return ctx.emit1("Slice", {y, ctx.constInt64s(std::vector<int64_t>(axes.size(), 0)), end, ctx.constInt64s(axes)});
}

// A pooling window: kernel_size, stride (empty: the kernel) and padding, arguments 1 to 3 of
// max_pool and avg_pool, each expanded to nd axes.
struct Window {
  std::vector<int64_t> kernel, stride, padding;
};

Result<Window> windowArgs(Context& ctx, const Args& args, size_t nd) {
  Window w;
  OXPORT_ASSIGN(w.kernel, ctx.constInts(args.in("kernel_size", 1)));
  OXPORT_ASSIGN(w.stride, ctx.constInts(args.in("stride", 2)));
  OXPORT_ASSIGN(w.padding, ctx.constInts(args.in("padding", 3)));
  w.kernel = expandInts(w.kernel, nd);
  w.stride = w.stride.empty() ? w.kernel : expandInts(w.stride, nd);
  w.padding = expandInts(w.padding, nd);
  return w;
}

// The int behind NumToTensor/Int round trips (a trace records `x.size(2)` passed on as an int so).
const Value* throughIntCasts(const Value* v) {
  while (v->producer && (v->producer->kind == "prim::NumToTensor" || v->producer->kind == "aten::Int" ||
                         v->producer->kind == "aten::IntImplicit" || v->producer->kind == "aten::ScalarImplicit") &&
         !v->producer->inputs.empty())
    v = v->producer->inputs[0];
  return v;
}

// Is `list` self's own last nd sizes, read when the graph runs: BiSeNet's
// `F.avg_pool2d(feat, feat.size()[2:])` (traced: a ListConstruct of aten::size(feat, d); scripted:
// aten::slice of aten::size(feat)). Such a window covers the whole map at every size.
bool isOwnSpatialSizes(Context& ctx, const Value* list, const Value* self, size_t nd) {
  const int64_t rank = ctx.rank(self);
  if (rank < static_cast<int64_t>(nd)) return false;
  const Node* p = list->producer;
  if (!p) return false;
  if (p->kind == "aten::slice" && p->inputs.size() == 4) {  // slice.t(l, start, end, step)
    const Node* sz = p->inputs[0]->producer;
    if (!sz || sz->kind != "aten::size" || sz->inputs.size() != 1 || sz->inputs[0] != self) return false;
    const auto start = ctx.maybeInt(p->inputs[1]), step = ctx.maybeInt(p->inputs[3]);
    const auto end = ctx.maybeInt(p->inputs[2]);
    if (!start || !step || *step != 1) return false;
    const int64_t b = *start < 0 ? *start + rank : *start;
    const int64_t e = ctx.isNone(p->inputs[2]) ? rank : (end ? (*end < 0 ? *end + rank : std::min(*end, rank)) : -1);
    return b == rank - static_cast<int64_t>(nd) && e == rank;
  }
  if (p->kind != "prim::ListConstruct" || p->inputs.size() != nd) return false;
  for (size_t i = 0; i < nd; ++i) {
    const Node* sz = throughIntCasts(p->inputs[i])->producer;
    if (!sz || sz->kind != "aten::size" || sz->inputs.size() != 2 || sz->inputs[0] != self) return false;
    const auto d = ctx.maybeInt(sz->inputs[1]);
    if (!d || (*d < 0 ? *d + rank : *d) != rank - static_cast<int64_t>(nd) + static_cast<int64_t>(i)) return false;
  }
  return true;
}

// avg/max pooling whose kernel is the input's own spatial sizes read at run time, stride the kernel
// (or left out) and no padding: one window over the whole map at every size, a global pool.
// Returns false (nothing emitted) for any other window.
Result<bool> globalWindowPool(Context& ctx, const Node& n, const Args& args, size_t nd, bool is_max) {
  const Value* self = args.in("self", 0);
  const Value* kernel = args.in("kernel_size", 1);
  if (kernel->isConstant() || !isOwnSpatialSizes(ctx, kernel, self, nd)) return false;
  const Value* stride = args.in("stride", 2);
  if (stride != kernel) {
    auto s = ctx.constInts(stride);
    if (!(s.ok() && s.value().empty()) && !isOwnSpatialSizes(ctx, stride, self, nd)) return false;
  }
  auto pad = ctx.constInts(args.in("padding", 3));
  if (!pad.ok()) return false;
  for (auto p : pad.value())
    if (p != 0) return false;
  if (is_max) {
    auto dil = ctx.constInts(args.in("dilation", 4));
    if (!dil.ok()) return false;
  } else if (args.has("divisor_override", 6)) {
    return false;
  }
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  const bool unbatched = static_cast<size_t>(ctx.rank(self)) == nd + 1;
  if (unbatched) x = ctx.unsqueeze(x, {0});
  std::string y = ctx.emit1(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {x});
  if (unbatched) y = ctx.squeeze(y, {0});
  ctx.bind(n.output(0), y);
  return true;
}

// max_poolNd(input, kernel_size, stride, padding, dilation, ceil_mode)
ConvertFn maxPool(size_t nd, bool with_indices) {
  return [nd, with_indices](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    if (!with_indices) {
      OXPORT_ASSIGN(bool global, globalWindowPool(ctx, n, args, nd, true));
      if (global) return okStatus();
    }
    OXPORT_ASSIGN(Window w, windowArgs(ctx, args, nd));
    std::vector<int64_t>&kernel = w.kernel, &stride = w.stride, &padding = w.padding;
    OXPORT_ASSIGN(auto dilation, ctx.constInts(args.in("dilation", 4)));
    OXPORT_ASSIGN(bool ceil, ctx.constBool(args.in("ceil_mode", 5)));
    dilation = expandInts(dilation, nd);
    bool dilated = false;
    for (auto d : dilation) dilated = dilated || d != 1;
    if (ceil) OXPORT_TRY(checkCeilWindows(ctx, ctx.meta(args.in("self", 0)).shape, nd, kernel, padding, dilation));
    // Below opset 10 (no ceil_mode), where no last window can be dropped: x padded with -inf by
    // the padding on the left and by padding + stride - 1 on the right, pooled in floor mode,
    // makes ceil mode's windows at every size (each holds an input element).
    if (ceil && ctx.opset() < 10 && !dilated && !with_indices && !anyWindowMayDrop(nd, kernel, stride, padding, dilation) &&
        isFloating(ctx.dtype(args.in("self", 0)))) {
      OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
      const bool unbatched = static_cast<size_t>(ctx.rank(args.in("self", 0))) == nd + 1;
      if (unbatched) x = ctx.unsqueeze(x, {0});
      const size_t rank = nd + 2;
      std::vector<int64_t> pads(2 * rank, 0);
      for (size_t i = 0; i < nd; ++i) {
        pads[2 + i] = padding[i];
        pads[rank + 2 + i] = padding[i] + stride[i] - 1;
      }
      x = padConstant(ctx, x, pads, -std::numeric_limits<double>::infinity(), ctx.dtype(args.in("self", 0)));
      std::string y = ctx.emit1("MaxPool", {x}, {attrInts("kernel_shape", kernel), attrInts("strides", stride),
                                                  attrInts("pads", std::vector<int64_t>(2 * nd, 0))});
      return bindOut(ctx, n, unbatched ? ctx.squeeze(y, {0}) : y);
    }
    // Otherwise the example run's sizes decide, as a static Pad would.
    if (ceil && ctx.opset() < 10 &&
        ceilIsFloorAtExampleSize(ctx.meta(args.in("self", 0)).shape, nd, kernel, stride, padding, dilation))
      ceil = false;
    if ((ceil || dilated) && ctx.opset() < 10) return ctx.needsOpset(10, "max pooling with ceil_mode or dilation");
    auto cut = [&](const std::string& x, const std::string& y) {
      return ceil ? cutToTorchWindows(ctx, x, y, nd, kernel, stride, padding, dilation) : y;
    };
    std::vector<Attribute> attrs{attrInts("kernel_shape", kernel), attrInts("strides", stride),
                                 attrInts("pads", symmetricPads(padding))};
    if (ctx.opset() >= 10) {
      attrs.push_back(attrInt("ceil_mode", ceil ? 1 : 0));
      if (dilated) attrs.push_back(attrInts("dilations", dilation));
    }
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    const bool unbatched = static_cast<size_t>(ctx.rank(args.in("self", 0))) == nd + 1;
    if (unbatched) x = ctx.unsqueeze(x, {0});
    // A dilated window may step over the input and see only padding: PyTorch gives -inf there,
    // ONNX Runtime the lowest finite float (undilated windows always hold an input element).
    // Where a pooling of ones padded with zeros finds no one, the result becomes -inf.
    bool pad_only_window = false;
    for (size_t i = 0; i < nd; ++i) pad_only_window = pad_only_window || (dilation[i] > 1 && padding[i] > 0);
    if (pad_only_window && !with_indices && ctx.opset() >= 11 && isFloating(ctx.dtype(args.in("self", 0)))) {
      const DType dt = ctx.dtype(args.in("self", 0));
      const int rank = static_cast<int>(nd) + 2;
      std::vector<int64_t> pads(static_cast<size_t>(2 * rank), 0);
      for (size_t i = 0; i < nd; ++i) pads[2 + i] = pads[static_cast<size_t>(rank) + 2 + i] = padding[i];
      std::string ones = ctx.emit1("ConstantOfShape", {ctx.shapeOf(x)}, {attrTensor("value", scalarHostTensor(1, dt, {1}))});
      ones = ctx.emit1("Pad", {ones, ctx.constInt64s(pads), ctx.constScalar(0, dt)});
      std::vector<Attribute> unpadded = attrs;
      unpadded[2] = attrInts("pads", std::vector<int64_t>(2 * nd, 0));
      std::string seen = ctx.emit1("Greater", {ctx.emit1("MaxPool", {ones}, std::move(unpadded)), ctx.constScalar(0, dt)});
      std::string y = ctx.emit1("MaxPool", {x}, std::move(attrs));
      y = ctx.emit1("Where", {cut(x, seen), cut(x, y), ctx.constScalar(-std::numeric_limits<double>::infinity(), dt)});
      return bindOut(ctx, n, unbatched ? ctx.squeeze(y, {0}) : y);
    }
    if (!with_indices) {
      std::string y = cut(x, ctx.emit1("MaxPool", {x}, std::move(attrs)));
      return bindOut(ctx, n, unbatched ? ctx.squeeze(y, {0}) : y);
    }
    auto outs = ctx.emit("MaxPool", {x}, 2, std::move(attrs));
    outs[0] = cut(x, outs[0]);
    outs[1] = cut(x, outs[1]);
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
    const Args args(ctx, n);
    OXPORT_ASSIGN(bool global, globalWindowPool(ctx, n, args, nd, false));
    if (global) return okStatus();
    OXPORT_ASSIGN(Window w, windowArgs(ctx, args, nd));
    std::vector<int64_t>&kernel = w.kernel, &stride = w.stride, &padding = w.padding;
    OXPORT_ASSIGN(bool ceil, ctx.constBool(args.in("ceil_mode", 4)));
    OXPORT_ASSIGN(bool count_include_pad, ctx.constBool(args.in("count_include_pad", 5)));
    // divisor_override: every window's sum (zeros for padding) over one fixed divisor, which is
    // the average over the whole kernel (count_include_pad) times kernel size / divisor.
    double sum_scale = 0;
    if (args.has("divisor_override", 6)) {
      OXPORT_ASSIGN(int64_t divisor, args.constInt("divisor_override", 6));
      if (divisor == 0) return ctx.error("bad-argument", "avg_pool's divisor_override must not be zero");
      int64_t window = 1;
      for (auto k : kernel) window *= k;
      sum_scale = static_cast<double>(window) / static_cast<double>(divisor);
      count_include_pad = true;
    }
    if (ceil) OXPORT_TRY(checkCeilWindows(ctx, ctx.meta(args.in("self", 0)).shape, nd, kernel, padding, {}));
    // Below opset 10 the emulation below (a static Pad, floor mode) is exact at every size where no
    // last window can be dropped; elsewhere the example run's sizes decide.
    if (ceil && ctx.opset() < 10 && anyWindowMayDrop(nd, kernel, stride, padding, {}) &&
        ceilIsFloorAtExampleSize(ctx.meta(args.in("self", 0)).shape, nd, kernel, stride, padding, {}))
      ceil = false;
    if (ceil && ctx.opset() < 10 && anyWindowMayDrop(nd, kernel, stride, padding, {}))
      return ctx.needsOpset(10, "average pooling with ceil_mode");
    std::vector<Attribute> attrs{attrInts("kernel_shape", kernel), attrInts("strides", stride),
                                 attrInts("pads", symmetricPads(padding)),
                                 attrInt("count_include_pad", count_include_pad ? 1 : 0)};
    if (ctx.opset() >= 10) attrs.push_back(attrInt("ceil_mode", ceil ? 1 : 0));
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    const bool unbatched = static_cast<size_t>(ctx.rank(args.in("self", 0))) == nd + 1;
    if (unbatched) x = ctx.unsqueeze(x, {0});
    // With ceil_mode the last window may run past the padding. PyTorch then divides by the part
    // inside input + padding (count_include_pad) or inside the input; ONNX Runtime's ceil_mode
    // AveragePool divides otherwise. So ceil_mode is written out: x padded with zeros (the padding,
    // then room for ceil mode's last window on the right), averaged in floor mode, and divided by
    // the same average of a mask that is 1 where PyTorch counts an element.
    if (ceil) {
      const DType dt = ctx.dtype(args.in("self", 0));
      const int rank = static_cast<int>(nd) + 2;
      std::vector<int64_t> pad_x(static_cast<size_t>(2 * rank), 0), pad_in(pad_x), pad_out(pad_x);
      for (size_t i = 0; i < nd; ++i) {
        // The right side is padded to R = min(p + s - 1, k - 1): floor mode then makes every window
        // PyTorch makes at every size (ceil mode's count when no last window can be dropped, else
        // the windows that start inside input + padding, which the cut after bounds). R < k also
        // keeps ONNX Runtime's fusion of Pad into AveragePool valid (it needs pads < kernel).
        const int64_t st = stride[i], p = padding[i];
        const int64_t right = std::min(p + st - 1, kernel[i] - 1);
        const size_t b = 2 + i, e = static_cast<size_t>(rank) + 2 + i;
        pad_x[b] = p;
        pad_x[e] = right;
        pad_in[b] = count_include_pad ? p : 0;    // ones over what PyTorch counts ...
        pad_in[e] = count_include_pad ? p : 0;
        pad_out[b] = count_include_pad ? 0 : p;   // ... zeros around it
        pad_out[e] = right - pad_in[e];
      }
      auto padded = [&](const std::string& t, const std::vector<int64_t>& pads, double value) {
        return padConstant(ctx, t, pads, value, dt);
      };
      std::string mask = ctx.emit1("ConstantOfShape", {ctx.shapeOf(x)}, {attrTensor("value", scalarHostTensor(1, dt, {1}))});
      mask = padded(padded(mask, pad_in, 1), pad_out, 0);
      std::vector<Attribute> plain{attrInts("kernel_shape", kernel), attrInts("strides", stride),
                                   attrInts("pads", std::vector<int64_t>(2 * nd, 0)), attrInt("count_include_pad", 1)};
      std::string sum = ctx.emit1("AveragePool", {padded(x, pad_x, 0)}, plain);
      std::string count = ctx.emit1("AveragePool", {mask}, plain);
      std::string avg = sum_scale != 0 ? ctx.emit1("Mul", {sum, ctx.constScalar(sum_scale, dt)})
                                       : ctx.emit1("Div", {sum, count});
      std::string y = cutToTorchWindows(ctx, x, avg, nd, kernel, stride, padding, {});
      return bindOut(ctx, n, unbatched ? ctx.squeeze(y, {0}) : y);
    }
    std::string y = ctx.emit1("AveragePool", {x}, std::move(attrs));
    if (sum_scale != 0) y = ctx.emit1("Mul", {y, ctx.constScalar(sum_scale, ctx.dtype(args.in("self", 0)))});
    return bindOut(ctx, n, unbatched ? ctx.squeeze(y, {0}) : y);
  };
}

// Whether any of the last `nd` axes of `v` may have another size when the file runs.
bool pooledAxesMayVary(Context& ctx, const Value* v, size_t nd) {
  for (size_t i = 1; i <= nd; ++i)
    if (ctx.axisMayVary(v, -static_cast<int64_t>(i))) return true;
  return false;
}

// Adaptive average pooling of the last `nd` (1 or 2) axes at sizes known only when the graph runs:
// PyTorch's windows [floor(o*L/O), ceil((o+1)*L/O)) along each axis as an averaging matrix
// P[O, L] (1/window size inside the window, 0 outside), applied with MatMul. Exact at every size,
// where a kernel fixed at the example size is wrong as soon as L changes (PSPNet's pyramid, any
// AdaptiveAvgPool2d(k > 1) behind dynamic H, W).
std::string adaptiveAvgByMatrix(Context& ctx, std::string x, size_t rank, size_t nd,
                                const std::vector<int64_t>& out_size, DType dt) {
  for (size_t i = 0; i < nd; ++i) {
    const int64_t axis = static_cast<int64_t>(rank - nd + i);
    const int64_t o = out_size[i];
    std::string len = dimSize(ctx, x, axis, true);
    std::vector<int64_t> idx(static_cast<size_t>(o));
    for (int64_t k = 0; k < o; ++k) idx[static_cast<size_t>(k)] = k;
    std::string big_o = ctx.constInt64s({o}, true);
    std::string start = ctx.emit1("Div", {ctx.emit1("Mul", {ctx.constInt64s(idx), len}), big_o});
    for (auto& k : idx) k += 1;
    std::string end = ctx.emit1("Div", {ctx.emit1("Add", {ctx.emit1("Mul", {ctx.constInt64s(idx), len}),
                                                         ctx.constInt64s({o - 1}, true)}),
                                        big_o});
    std::string pos = ctx.unsqueeze(arangeOf(ctx, len), {0});  // [1, L]
    std::string inside = ctx.emit1("And", {ctx.emit1("Not", {ctx.emit1("Less", {pos, ctx.unsqueeze(start, {1})})}),
                                           ctx.emit1("Less", {pos, ctx.unsqueeze(end, {1})})});
    std::string count = ctx.cast(ctx.unsqueeze(ctx.emit1("Sub", {end, start}), {1}), dt);
    std::string p = ctx.emit1("Div", {ctx.cast(inside, dt), count});  // [O, L]
    x = axis == static_cast<int64_t>(rank) - 1
            ? ctx.emit1("MatMul", {x, ctx.emit1("Transpose", {p}, {attrInts("perm", {1, 0})})})
            : ctx.emit1("MatMul", {p, x});
  }
  return x;
}

// Adaptive pooling of the last `nd` axes window by window, for any sizes: along each axis the O
// windows [floor(o*L/O), ceil((o+1)*L/O)) are sliced, reduced (ReduceMax/ReduceMean, keepdims) and
// concatenated. Both poolings are separable (every window along an axis has one size for all the
// other axes' windows), so axis by axis equals PyTorch's windows. With dynamic inputs the bounds come
// from the axis' size at run time (Slice with tensor bounds, opset 10).
Result<std::string> adaptiveBySlices(Context& ctx, std::string x, size_t rank, size_t nd,
                                     const std::vector<int64_t>& out_size, const std::vector<int64_t>& in_size,
                                     bool is_max, bool dynamic) {
  if (dynamic && ctx.opset() < 10)
    return ctx.needsOpset(10, "adaptive pooling with uneven windows at dynamic sizes (Slice with tensor bounds)");
  for (size_t i = 0; i < nd; ++i) {
    const int64_t axis = static_cast<int64_t>(rank - nd + i);
    const int64_t o_count = out_size[i], len = in_size[i];
    std::string dyn_len = dynamic ? dimSize(ctx, x, axis) : "";
    std::vector<std::string> parts;
    for (int64_t o = 0; o < o_count; ++o) {
      std::string part;
      if (!dynamic) {
        part = ctx.slice(x, {o * len / o_count}, {((o + 1) * len + o_count - 1) / o_count}, {axis});
      } else {
        std::string big_o = ctx.constInt64s({o_count});
        std::string start = ctx.emit1("Div", {ctx.emit1("Mul", {ctx.constInt64s({o}), dyn_len}), big_o});
        std::string end = ctx.emit1("Div", {ctx.emit1("Add", {ctx.emit1("Mul", {ctx.constInt64s({o + 1}), dyn_len}),
                                                             ctx.constInt64s({o_count - 1})}),
                                            big_o});
        part = ctx.emit1("Slice", {x, start, end, ctx.constInt64s({axis})});
      }
      parts.push_back(ctx.emit1(is_max ? "ReduceMax" : "ReduceMean", {part},
                                {attrInts("axes", {axis}), attrInt("keepdims", 1)}));
    }
    x = parts.size() == 1 ? parts[0] : ctx.emit1("Concat", parts, {attrInt("axis", axis)});
  }
  return x;
}

// adaptive_{avg,max}_poolNd(input, output_size): global pooling, or a plain pooling when the
// input size is a multiple of the output size (averages over 1 or 2 axes of a model with dynamic
// axes: adaptiveAvgByMatrix).
ConvertFn adaptivePool(size_t nd, bool is_max) {
  return [nd, is_max](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    const auto& shape = ctx.meta(args.in("self", 0)).shape;
    const size_t rank = shape.size();
    std::vector<int64_t> out_size;
    if (args.in("output_size", 1)->constant && args.in("output_size", 1)->constant->isList()) {
      // Elements may be None (keep the input size).
      size_t i = 0;
      for (const auto& e : args.in("output_size", 1)->constant->list()) {
        out_size.push_back(e.isNone() ? shape[rank - nd + i] : e.toInt());
        ++i;
      }
    } else if (auto fixed = ctx.constInts(args.in("output_size", 1)); fixed.ok() || is_max) {
      OXPORT_ASSIGN(out_size, std::move(fixed));
    } else {  // computed from the input's shape (mode='area' interpolation): ops_pool_runtime.cpp
      return adaptiveAvgRuntimeSize(ctx, n, nd);
    }
    out_size = expandInts(out_size, nd);
    const bool unbatched = rank == nd + 1;
    if (unbatched) x = ctx.unsqueeze(x, {0});
    bool global = true;
    for (auto s : out_size) global = global && s == 1;
    std::string y;
    const DType dt = ctx.dtype(args.in("self", 0));
    if (global) {
      y = ctx.emit1(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {x});
    } else if (!is_max && nd <= 2 && (dt == DType::Float32 || dt == DType::Float64) &&
               pooledAxesMayVary(ctx, args.in("self", 0), nd)) {
      y = adaptiveAvgByMatrix(ctx, x, unbatched ? rank + 1 : rank, nd, out_size, dt);
    } else {
      std::vector<int64_t> kernel, in_size;
      bool even = true;
      for (size_t i = 0; i < nd; ++i) {
        const int64_t in = shape[rank - nd + i];
        if (out_size[i] <= 0)
          return ctx.error("bad-argument", "adaptive pooling to output size " + std::to_string(out_size[i]));
        even = even && in % out_size[i] == 0;
        in_size.push_back(in);
        kernel.push_back(in / std::max<int64_t>(out_size[i], 1));
      }
      // A kernel fixed at the example size is right only at that size: window by window when the
      // windows are uneven, or the sizes may change.
      const bool dynamic = pooledAxesMayVary(ctx, args.in("self", 0), nd);
      if (even && !dynamic) {
        y = ctx.emit1(is_max ? "MaxPool" : "AveragePool", {x},
                      {attrInts("kernel_shape", kernel), attrInts("strides", kernel)});
      } else {
        OXPORT_ASSIGN(y, adaptiveBySlices(ctx, x, unbatched ? rank + 1 : rank, nd, out_size, in_size, is_max, dynamic));
      }
    }
    if (unbatched) y = ctx.squeeze(y, {0});
    ctx.bind(n.output(0), y);
    if (n.outputs.size() > 1 && !n.output(1)->users.empty())
      return ctx.error("unsupported-form", "the indices of adaptive max pooling have no ONNX form");
    return okStatus();
  };
}

// max_unpool2d(self, indices, output_size) / max_unpool3d(self, indices, output_size, stride,
// padding): each value scattered to its index within its (n, c) plane of the output, zeros
// elsewhere: ScatterElements over the flattened planes (opset 11).
Status convertMaxUnpool(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 11) return ctx.needsOpset(11, n.kind + " (ScatterElements)");
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string idx, ctx.tensorOfType(args.in("indices", 1), DType::Int64));
  // output_size may be computed at run time (the pooled input's size when it is not given).
  OXPORT_ASSIGN(std::string size, ctx.intsTensor(args.in("output_size", 2)));
  const int rank = ctx.rank(args.in("self", 0));
  if (rank != ctx.rank(n.output(0)) || rank < 3)
    return ctx.error("unsupported-form", n.kind + " of a batch-less input", "add the batch axis (unsqueeze(0))");
  const DType dt = ctx.dtype(args.in("self", 0));
  std::string nc = ctx.slice(ctx.shapeOf(x), {0}, {2}, {0});
  std::string flat_shape = ctx.emit1("Concat", {nc, ctx.constInt64s({-1})}, {attrInt("axis", 0)});
  std::string out_shape = ctx.emit1("Concat", {nc, size}, {attrInt("axis", 0)});
  std::string zeros = ctx.emit1("Reshape", {ctx.emit1("Expand", {ctx.constScalar(0, dt), out_shape}), flat_shape});
  std::string out = ctx.emit1("ScatterElements", {zeros, ctx.emit1("Reshape", {idx, flat_shape}), ctx.emit1("Reshape", {x, flat_shape})},
                              {attrInt("axis", 2)});
  return bindOut(ctx, n, ctx.emit1("Reshape", {out, out_shape}));
}

}  // namespace

void registerPoolOps(Registry& r) {
  r.add("aten::max_unpool2d", convertMaxUnpool);
  r.add("aten::max_unpool3d", convertMaxUnpool);
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
