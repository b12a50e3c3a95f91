#include "convert/util.h"

#include <cstring>

#include "convert/args.h"
#include "convert/registry.h"

namespace oxport::convert {

std::vector<int64_t> expandInts(const std::vector<int64_t>& v, size_t n) {
  if (v.size() == 1 && n > 1) return std::vector<int64_t>(n, v[0]);
  return v;
}

std::vector<int64_t> symmetricPads(const std::vector<int64_t>& pad) {
  std::vector<int64_t> out(pad);
  out.insert(out.end(), pad.begin(), pad.end());
  return out;
}

HostTensor transpose2D(const HostTensor& t) {
  const int64_t r = t.shape.at(0), c = t.shape.at(1);
  const size_t es = dtypeSize(t.dtype);
  std::vector<unsigned char> out(t.nbytes);
  const auto* src = static_cast<const unsigned char*>(t.data);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) std::memcpy(&out[(j * r + i) * es], &src[(i * c + j) * es], es);
  return HostTensor::fromBytes(t.dtype, {c, r}, std::move(out));
}

Result<std::vector<std::string>> promotedInputs(Context& ctx, const Node& n, const std::vector<const Value*>& values) {
  const DType out = n.output(0)->meta.dtype;
  std::vector<std::string> names;
  for (const Value* v : values) {
    OXPORT_ASSIGN(std::string s, ctx.tensorOfType(v, out));
    names.push_back(s);
  }
  return names;
}

Result<std::vector<std::string>> promotedArgs(Context& ctx, const Node& n, const std::vector<ArgName>& names) {
  const Args args(ctx, n);
  std::vector<const Value*> values;
  for (size_t i = 0; i < names.size(); ++i) values.push_back(args.in(names[i], i));
  return promotedInputs(ctx, n, values);
}

std::optional<DType> typeDType(const Value* v) {
  switch (v->type) {
    case ts::ValueType::Tensor: return v->meta.dtype;
    case ts::ValueType::Int: return DType::Int64;
    case ts::ValueType::Float: return DType::Float32;
    case ts::ValueType::Bool: return DType::Bool;
    default: return std::nullopt;
  }
}

void addAll(Registry& r, const std::vector<std::string>& kinds, const ConvertFn& fn, int min_opset, int max_opset) {
  for (const auto& k : kinds) r.add(k, fn, min_opset, max_opset);
}

std::string reduceOver(Context& ctx, const std::string& op, const std::string& x, const std::vector<int64_t>& axes,
                       bool keepdims) {
  std::vector<Attribute> attrs{attrInt("keepdims", keepdims ? 1 : 0)};
  if (axes.empty()) return ctx.emit1(op, {x}, std::move(attrs));
  if (op == "ReduceSum" && ctx.opset() >= 13) return ctx.emit1(op, {x, ctx.constInt64s(axes)}, std::move(attrs));
  attrs.push_back(attrInts("axes", axes));
  return ctx.emit1(op, {x}, std::move(attrs));
}

Result<int64_t> reductionArg(Context& ctx, const Node& n, size_t fallback_index) {
  const Value* r = Args(ctx, n).optIn("reduction", fallback_index);
  if (!r) return int64_t(1);
  OXPORT_ASSIGN(int64_t v, ctx.constInt(r));
  if (v < 0 || v > 2)
    return Error(ctx.error("bad-argument", "reduction " + std::to_string(v) + " is not none (0), mean (1) or sum (2)"));
  return v;
}

std::string applyReduction(Context& ctx, const std::string& x, int64_t reduction) {
  if (reduction == 0) return x;
  return reduceOver(ctx, reduction == 1 ? "ReduceMean" : "ReduceSum", x, {}, false);
}

std::string arangeOf(Context& ctx, const std::string& n) {
  if (ctx.opset() >= 11)
    return ctx.emit1("Range", {ctx.constInt64s({0}, true), ctx.reshape(n, {}), ctx.constInt64s({1}, true)});
  std::string ones = ctx.emit1("ConstantOfShape", {ctx.reshape(n, {1})},
                               {attrTensor("value", scalarHostTensor(1, DType::Int64, {1}))});
  return ctx.squeeze(ctx.emit1("NonZero", {ones}), {0});
}

std::string dimSize(Context& ctx, const std::string& x, int64_t dim, bool scalar) {
  std::string shape = ctx.shapeOf(x);
  if (scalar) return ctx.emit1("Gather", {shape, ctx.constInt64s({dim}, true)}, {attrInt("axis", 0)});
  return ctx.slice(shape, {dim}, {dim + 1}, {0});
}

std::string whereTyped(Context& ctx, const std::string& c, const std::string& a, const std::string& b, DType dt) {
  const bool narrow = dt == DType::Bool || dt == DType::Int8 || dt == DType::Int16;
  if (!narrow) return ctx.emit1("Where", {c, a, b});
  std::string w = ctx.emit1("Where", {c, ctx.cast(a, DType::Int32), ctx.cast(b, DType::Int32)});
  return ctx.cast(w, dt);
}

DType reduceWorkType(DType dt) {
  switch (dt) {
    case DType::Float32:
    case DType::Float64:
    case DType::Int32:
    case DType::Int64: return dt;
    case DType::Float16:
    case DType::BFloat16: return DType::Float32;
    default: return DType::Int64;
  }
}

std::string castIf(Context& ctx, const std::string& x, DType have, DType want) {
  return have == want ? x : ctx.cast(x, want);
}

}  // namespace oxport::convert
