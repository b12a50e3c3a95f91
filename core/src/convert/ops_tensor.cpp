// Tensor creation: zeros/ones/full/empty and their _like/new_ forms, arange, linspace, eye,
// scalar_tensor/tensor, fill_, hann_window, and the random ops (rand, randn, normal, bernoulli,
// multinomial). With constant folding, creation ops whose arguments are all static are computed
// by the frontend and never reach these converters; what arrives here has a dynamic size or value
// (or is random).
#include <cmath>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// The ONNX element type carrying a scalar argument (static or dynamic).
DType scalarDType(const Value* v) {
  // A Scalar (Number, typed Float in the IR) passed on from a tensor keeps that tensor's dtype.
  if (v->producer && v->producer->kind == "aten::ScalarImplicit")
    if (const Value* a = Args::inputOf(*v->producer, "a", 0); a && a->isTensor()) return a->meta.dtype;
  if (auto dt = typeDType(v)) return *dt;
  if (v->example && v->example->isDouble()) return DType::Float32;
  if (v->example && v->example->isBool()) return DType::Bool;
  return DType::Int64;
}

bool isIntegralScalar(const Value* v) {
  if (v->constant) return v->constant->isInt() || v->constant->isBool();
  DType d = scalarDType(v);
  return !isFloating(d);
}

// A scalar argument as a 0-d tensor of `dtype` (static: a constant; dynamic: reshaped and cast).
Result<std::string> scalarAs(Context& ctx, const Value* v, DType dtype) {
  if (v->constant && v->constant->isNumber()) return ctx.constScalar(v->constant->toDouble(), dtype);
  if (v->constant && v->constant->isTensor()) {
    OXPORT_ASSIGN(std::string t, ctx.tensor(v));
    std::string s = ctx.reshape(t, {});
    return v->constant->tensor().dtype == dtype ? s : ctx.cast(s, dtype);
  }
  OXPORT_ASSIGN(std::string t, ctx.tensor(v));
  if (v->isTensor() && ctx.rank(v) != 0) t = ctx.reshape(t, {});
  return scalarDType(v) == dtype ? t : ctx.cast(t, dtype);
}

DType outDType(const Node& n) { return n.output(0)->meta.dtype; }

// A tensor of `shape` (a 1-D int64 tensor) filled with the value argument `fill` (or `value`).
Result<std::string> filled(Context& ctx, const std::string& shape, const Value* fill, double value, DType dt) {
  if (!fill || (fill->constant && fill->constant->isNumber())) {
    double v = fill ? fill->constant->toDouble() : value;
    return ctx.emit1("ConstantOfShape", {shape}, {attrTensor("value", scalarHostTensor(v, dt, {1}))});
  }
  OXPORT_ASSIGN(std::string f, scalarAs(ctx, fill, dt));
  return ctx.emit1("Expand", {f, shape});
}

// Where a creation op takes its shape: zeros/ones/empty(size, ...) and full(size, fill_value, ...);
// zeros_like/ones_like/empty_like(self, ...) and full_like(self, fill_value, ...);
// new_zeros/new_ones/new_empty(self, size, ...) and new_full(self, size, fill_value, ...).
enum class ShapeFrom { Size, Like, New };

ConvertFn constantFill(ShapeFrom from, double value, bool has_fill) {
  return [from, value, has_fill](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    std::string shape;
    if (from == ShapeFrom::Like) {
      OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
      shape = ctx.shapeOf(x);
    } else {
      OXPORT_ASSIGN(shape, ctx.intsTensor(args.in("size", from == ShapeFrom::New ? 1 : 0)));
    }
    const Value* fill = has_fill ? args.in("fill_value", from == ShapeFrom::New ? 2 : 1) : nullptr;
    OXPORT_ASSIGN(std::string out, filled(ctx, shape, fill, value, outDType(n)));
    return bindOut(ctx, n, out);
  };
}

// fill_(self, value) / fill(self, value) / zero_(self)
Status convertFill(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const Value* v = args.optIn("value", 1);
  OXPORT_ASSIGN(std::string out, filled(ctx, ctx.shapeOf(x), v, 0.0, outDType(n)));
  return bindOut(ctx, n, out);
}

// arange(end) / arange(start, end) / arange(start, end, step), each followed by dtype, layout,
// device, pin_memory. Computed in int64 when every bound is an integer, else in double, then cast.
Status convertArange(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const size_t count = n.inputs.size();
  if (count < 5 || count > 7) return ctx.error("unsupported-form", "unknown arange overload: " + n.schema);
  const Value* start = args.optIn("start", count >= 6 ? 0 : Args::kByName);
  const Value* end = args.in("end", count >= 6 ? 1 : 0);
  const Value* step = args.optIn("step", count == 7 ? 2 : Args::kByName);
  const DType out = outDType(n);
  bool integral = !isFloating(out) && isIntegralScalar(end) && (!start || isIntegralScalar(start)) &&
                  (!step || isIntegralScalar(step));
  const DType work = integral ? DType::Int64 : DType::Float64;
  std::string s, e, d;
  if (start) { OXPORT_ASSIGN(s, scalarAs(ctx, start, work)); } else s = ctx.constScalar(0, work);
  OXPORT_ASSIGN(e, scalarAs(ctx, end, work));
  if (step) { OXPORT_ASSIGN(d, scalarAs(ctx, step, work)); } else d = ctx.constScalar(1, work);
  std::string r;
  if (ctx.opset() >= 11) {
    r = ctx.emit1("Range", {s, e, d});
  } else {
    // count = ceil((end - start) / step), then start + i * step.
    std::string span = ctx.emit1("Div", {ctx.cast(ctx.emit1("Sub", {e, s}), DType::Float64), ctx.cast(d, DType::Float64)});
    std::string num = ctx.cast(ctx.emit1("Ceil", {span}), DType::Int64);
    std::string i = arangeOf(ctx, num);
    if (work != DType::Int64) i = ctx.cast(i, work);
    r = ctx.emit1("Add", {ctx.emit1("Mul", {i, d}), s});
  }
  return bindOut(ctx, n, work == out ? r : ctx.cast(r, out));
}

// linspace(start, end, steps, dtype, layout, device, pin_memory): start + i * (end - start) / (steps - 1).
Status convertLinspace(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType out = outDType(n);
  OXPORT_ASSIGN(std::string s, scalarAs(ctx, args.in("start", 0), DType::Float64));
  OXPORT_ASSIGN(std::string e, scalarAs(ctx, args.in("end", 1), DType::Float64));
  OXPORT_ASSIGN(std::string steps, scalarAs(ctx, args.in("steps", 2), DType::Int64));
  std::string i = ctx.cast(arangeOf(ctx, steps), DType::Float64);
  std::string denom = ctx.emit1("Max", {ctx.cast(ctx.emit1("Sub", {steps, ctx.constScalar(1, DType::Int64)}), DType::Float64),
                                        ctx.constScalar(1, DType::Float64)});
  std::string delta = ctx.emit1("Div", {ctx.emit1("Sub", {e, s}), denom});
  std::string r = ctx.emit1("Add", {s, ctx.emit1("Mul", {i, delta})});
  if (!isFloating(out)) r = ctx.emit1("Floor", {r});
  return bindOut(ctx, n, ctx.cast(r, out));
}

// eye(n, ...) / eye(n, m, ...)
// triu_indices / tril_indices(row, col, offset=0, dtype, ...): the [2, N] coordinates of the
// upper/lower triangle in row-major order, a constant computed here (sizes must be static).
ConvertFn triIndices(bool upper) {
  return [upper](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(int64_t rows, ctx.constInt(args.in("row", 0)));
    OXPORT_ASSIGN(int64_t cols, ctx.constInt(args.in("col", 1)));
    int64_t offset = 0;
    if (n.inputs.size() > 2) { OXPORT_ASSIGN(offset, ctx.constInt(args.in("offset", 2))); }
    std::vector<int64_t> rs, cs;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        if (upper ? c - r >= offset : c - r <= offset) { rs.push_back(r); cs.push_back(c); }
    const int64_t count = static_cast<int64_t>(rs.size());
    rs.insert(rs.end(), cs.begin(), cs.end());
    std::string y = ctx.constant(HostTensor::fromVector<int64_t>(DType::Int64, {2, count}, rs), upper ? "triu_indices" : "tril_indices");
    const DType out = n.output(0)->meta.dtype;
    return bindOut(ctx, n, out == DType::Int64 ? ctx.emit1("Identity", {y}) : ctx.cast(y, out));
  };
}

Status convertEye(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const bool has_m = n.inputs.size() >= 6;
  OXPORT_ASSIGN(std::string rows, scalarAs(ctx, args.in("n", 0), DType::Int64));
  std::string cols = rows;
  if (has_m) { OXPORT_ASSIGN(cols, scalarAs(ctx, args.in("m", 1), DType::Int64)); }
  std::string shape = ctx.emit1("Concat", {ctx.reshape(rows, {1}), ctx.reshape(cols, {1})}, {attrInt("axis", 0)});
  const DType out = outDType(n);
  std::string zeros = ctx.emit1("ConstantOfShape", {shape}, {attrTensor("value", scalarHostTensor(0, out, {1}))});
  return bindOut(ctx, n, ctx.emit1("EyeLike", {zeros}, {attrInt("dtype", onnxDataType(out))}));
}

// scalar_tensor(s, dtype, ...)
Status convertScalarTensor(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string s, scalarAs(ctx, args.in("s", 0), outDType(n)));
  return bindOut(ctx, n, s);
}

// tensor(data, dtype, device, requires_grad) / as_tensor(data, dtype, device): data is a tensor,
// a number or a (nested) list of numbers, any of which may be dynamic.
Result<std::string> dataTensor(Context& ctx, const Value* v, DType dt) {
  if (v->isTensor()) {
    OXPORT_ASSIGN(std::string t, ctx.tensor(v));
    return ctx.dtype(v) == dt ? t : ctx.cast(t, dt);
  }
  if (v->type == ts::ValueType::List && v->elem_type == ts::ValueType::Int && !v->constant) {
    // Sizes: torch.tensor(image.shape[-2:]) (torchvision's GeneralizedRCNNTransform), a slice of
    // a size list that has no ListConstruct to read the elements from.
    auto ints = ctx.intsTensor(v);
    if (ints.ok()) return dt == DType::Int64 ? *ints : ctx.cast(*ints, dt);
  }
  if (v->type == ts::ValueType::List || (v->constant && v->constant->isList())) {
    OXPORT_ASSIGN(auto elems, ctx.listElements(v));
    if (elems.empty()) return ctx.error("unsupported-form", "tensor() of an empty list");
    std::vector<std::string> parts;
    for (const Value* e : elems) {
      OXPORT_ASSIGN(std::string p, dataTensor(ctx, e, dt));
      parts.push_back(ctx.unsqueeze(p, {0}));
    }
    return parts.size() == 1 ? parts[0] : ctx.emit1("Concat", parts, {attrInt("axis", 0)});
  }
  return scalarAs(ctx, v, dt);
}

Status convertTensorData(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string t, dataTensor(ctx, Args(ctx, n).in({"data", "t"}, 0), outDType(n)));
  return bindOut(ctx, n, t);
}

// hann_window(window_length, [periodic,] dtype, ...): HannWindow from opset 17, else
// 0.5 - 0.5 cos(2 pi i / N) with N = length (periodic) or length - 1; a window of length 1 is [1].
Status convertHannWindow(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const bool has_periodic = n.inputs.size() >= 6;
  bool periodic = true;
  if (has_periodic) { OXPORT_ASSIGN(periodic, args.constBool("periodic", 1)); }
  const DType out = outDType(n);
  OXPORT_ASSIGN(std::string len, scalarAs(ctx, args.in("window_length", 0), DType::Int64));
  if (ctx.opset() >= 17 && isFloating(out) && out != DType::BFloat16) {
    return bindOut(ctx, n, ctx.emit1("HannWindow", {len}, {attrInt("periodic", periodic ? 1 : 0),
                                                          attrInt("output_datatype", onnxDataType(out))}));
  }
  // In float32: ONNX Runtime's Cos has no double kernel.
  const DType f = DType::Float32;
  std::string i = ctx.cast(arangeOf(ctx, len), f);
  std::string denom = ctx.cast(periodic ? len : ctx.emit1("Sub", {len, ctx.constScalar(1, DType::Int64)}), f);
  std::string angle = ctx.emit1("Div", {ctx.emit1("Mul", {i, ctx.constScalar(2 * M_PI, f)}), denom});
  std::string w = ctx.emit1("Sub", {ctx.constScalar(0.5, f), ctx.emit1("Mul", {ctx.constScalar(0.5, f), ctx.emit1("Cos", {angle})})});
  std::string is_one = ctx.emit1("Equal", {len, ctx.constScalar(1, DType::Int64)});
  w = ctx.emit1("Where", {is_one, ctx.constScalar(1, f), w});
  return bindOut(ctx, n, out == f ? w : ctx.cast(w, out));
}

// _dim_arange(like, dim): arange(like.size(dim)).
Status convertDimArange(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("like", 0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  dim = ctx.normDim(dim, ctx.rank(args.in("like", 0)));
  std::string r = arangeOf(ctx, dimSize(ctx, x, dim, true));
  return bindOut(ctx, n, outDType(n) == DType::Int64 ? r : ctx.cast(r, outDType(n)));
}

// ---- random ops. ONNX draws from its own generator: only shapes, dtypes and distributions match.

Attribute dtypeAttr(DType d) { return attrInt("dtype", onnxDataType(d)); }

// A random tensor of the shape of `like` (RandomUniformLike / RandomNormalLike).
std::string randomLike(Context& ctx, bool normal, const std::string& like, DType dt) {
  return ctx.emit1(normal ? "RandomNormalLike" : "RandomUniformLike", {like}, {dtypeAttr(dt)});
}

// rand/randn(size, ...): RandomUniform/RandomNormal when the size is static, else the Like form
// over a tensor of that shape.
ConvertFn randomOfSize(bool normal) {
  return [normal](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = outDType(n);
    if (!isFloating(dt)) return ctx.error("unsupported-form", "random values of an integer dtype have no ONNX form");
    const Value* size = args.in("size", 0);
    if (size->constant) {
      OXPORT_ASSIGN(auto shape, ctx.constInts(size));
      return bindOut(ctx, n, ctx.emit1(normal ? "RandomNormal" : "RandomUniform", {},
                                       {attrInts("shape", shape), dtypeAttr(dt)}));
    }
    OXPORT_ASSIGN(std::string shape, ctx.intsTensor(size));
    std::string like = ctx.emit1("ConstantOfShape", {shape}, {attrTensor("value", scalarHostTensor(0, dt, {1}))});
    return bindOut(ctx, n, randomLike(ctx, normal, like, dt));
  };
}

// rand_like/randn_like(self, ...)
ConvertFn randomLikeOp(bool normal) {
  return [normal](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = outDType(n);
    if (!isFloating(dt)) return ctx.error("unsupported-form", "random values of an integer dtype have no ONNX form");
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    return bindOut(ctx, n, randomLike(ctx, normal, x, dt));
  };
}

// normal(mean, std, ...): a standard normal sample scaled and shifted; the overloads differ in
// which of mean and std is a tensor (or neither, with a size).
Status convertNormal(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = outDType(n);
  const Value* mean = args.in("mean", 0);
  const Value* stdv = args.in("std", 1);
  std::string z;
  if (!mean->isTensor() && !stdv->isTensor()) {
    OXPORT_ASSIGN(std::string shape, ctx.intsTensor(args.in("size", 2)));
    std::string like = ctx.emit1("ConstantOfShape", {shape}, {attrTensor("value", scalarHostTensor(0, dt, {1}))});
    z = randomLike(ctx, true, like, dt);
  }
  OXPORT_ASSIGN(std::string m, ctx.tensorOfType(mean, dt));
  OXPORT_ASSIGN(std::string s, ctx.tensorOfType(stdv, dt));
  if (z.empty()) {
    std::string like = mean->isTensor() && stdv->isTensor() ? ctx.emit1("Expand", {m, ctx.shapeOf(s)})
                       : mean->isTensor()                  ? m
                                                           : s;
    z = randomLike(ctx, true, like, dt);
  }
  return bindOut(ctx, n, ctx.emit1("Add", {ctx.emit1("Mul", {z, s}), m}));
}

// bernoulli(self) (self holds the probabilities) / bernoulli(self, p): uniform < p, which is the
// function body ONNX gives Bernoulli-15. Bernoulli itself is not emitted: ONNX Runtime (1.20)
// draws ones with probability 1 - p there (the bernoulli_*_mean cases show it).
Status convertBernoulli(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = outDType(n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType xdt = ctx.dtype(args.in("self", 0));
  std::string p = x;
  // bernoulli(self, generator) has no p; bernoulli.p/.Tensor(self, p, generator) have.
  if (const Value* pv = args.optIn("p", n.inputs.size() >= 3 ? 1 : Args::kByName); pv && !ctx.isNone(pv)) {
    DType pdt = isFloating(xdt) ? xdt : DType::Float32;
    if (pv->isTensor()) {
      OXPORT_ASSIGN(p, ctx.tensorOfType(pv, pdt));
    } else {
      OXPORT_ASSIGN(p, scalarAs(ctx, pv, pdt));
    }
    p = ctx.emit1("Expand", {p, ctx.shapeOf(x)});
  }
  if (!isFloating(xdt) && p == x) return ctx.error("unsupported-form", "bernoulli of integer probabilities");
  std::string u = ctx.emit1("RandomUniformLike", {p});
  return bindOut(ctx, n, ctx.cast(ctx.emit1("Less", {u, p}), dt));
}

// multinomial(self, num_samples, replacement): Multinomial samples with replacement from
// log-probabilities; without replacement only one sample per row has the same meaning.
Status convertMultinomial(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(int64_t samples, ctx.constInt(args.in("num_samples", 1)));
  OXPORT_ASSIGN(bool replacement, ctx.constBool(args.in("replacement", 2)));
  if (!replacement && samples > 1)
    return ctx.error("unsupported-form", "multinomial without replacement has no ONNX form (Multinomial draws with replacement)",
                     "use replacement=True, or num_samples=1");
  const bool one_d = ctx.rank(args.in("self", 0)) == 1;
  if (one_d) x = ctx.unsqueeze(x, {0});
  if (ctx.dtype(args.in("self", 0)) != DType::Float32 && ctx.dtype(args.in("self", 0)) != DType::Float64) x = ctx.cast(x, DType::Float32);
  std::string out = ctx.emit1("Multinomial", {ctx.emit1("Log", {x})},
                              {attrInt("sample_size", samples), dtypeAttr(DType::Int64)});
  if (one_d) out = ctx.squeeze(out, {0});
  return bindOut(ctx, n, out);
}

}  // namespace

void registerTensorOps(Registry& r) {
  addAll(r, {"aten::zeros", "aten::empty"}, constantFill(ShapeFrom::Size, 0, false));
  r.add("aten::ones", constantFill(ShapeFrom::Size, 1, false));
  r.add("aten::full", constantFill(ShapeFrom::Size, 0, true));
  addAll(r, {"aten::zeros_like", "aten::empty_like"}, constantFill(ShapeFrom::Like, 0, false));
  r.add("aten::ones_like", constantFill(ShapeFrom::Like, 1, false));
  r.add("aten::full_like", constantFill(ShapeFrom::Like, 0, true));
  addAll(r, {"aten::new_zeros", "aten::new_empty", "aten::new_empty_strided"}, constantFill(ShapeFrom::New, 0, false));
  r.add("aten::new_ones", constantFill(ShapeFrom::New, 1, false));
  r.add("aten::new_full", constantFill(ShapeFrom::New, 0, true));
  addAll(r, {"aten::fill_", "aten::fill", "aten::zero_"}, convertFill);
  r.add("aten::arange", convertArange);
  r.add("aten::linspace", convertLinspace);
  r.add("aten::eye", convertEye);
  r.add("aten::triu_indices", triIndices(true));
  r.add("aten::tril_indices", triIndices(false));
  r.add("aten::scalar_tensor", convertScalarTensor);
  addAll(r, {"aten::tensor", "aten::as_tensor"}, convertTensorData);
  r.add("aten::hann_window", convertHannWindow);
  r.add("aten::_dim_arange", convertDimArange);
  r.add("aten::rand", randomOfSize(false));
  r.add("aten::randn", randomOfSize(true));
  r.add("aten::rand_like", randomLikeOp(false));
  r.add("aten::randn_like", randomLikeOp(true));
  r.add("aten::normal", convertNormal);
  addAll(r, {"aten::bernoulli", "aten::bernoulli_"}, convertBernoulli);
  r.add("aten::multinomial", convertMultinomial);
}

}  // namespace oxport::convert
