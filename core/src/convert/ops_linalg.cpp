// Triangles and products of several tensors: tril/triu (Trilu from opset 14, a mask below it),
// einsum (Einsum from opset 12), outer products, unflatten.
#include <algorithm>
#include <cctype>

#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// The dtypes ONNX Runtime's Trilu kernel takes; others use the mask form.
bool triluKernel(DType dt) {
  return dt == DType::Float32 || dt == DType::Float64 || dt == DType::Int64 || dt == DType::Bool;
}

// tril/triu(self, diagonal=0): keep the elements with col - row <= k (tril) or >= k (triu) of the
// last two axes, zero the rest.
ConvertFn convertTriangle(bool upper) {
  return [upper](Context& ctx, const Node& n) -> Status {
    OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
    const int rank = ctx.rank(n.input(0));
    if (rank < 2)
      return ctx.error("bad-argument", std::string(upper ? "triu" : "tril") + " needs a tensor of at least 2 dimensions, "
                                       "got rank " + std::to_string(rank));
    int64_t k = 0;
    if (n.inputs.size() > 1) { OXPORT_ASSIGN(k, ctx.constInt(n.input(1))); }
    const DType dt = ctx.dtype(n.input(0));
    if (ctx.opset() >= 14 && triluKernel(dt))
      return bindOut(ctx, n, ctx.emit1("Trilu", {x, ctx.constInt64s({k}, true)}, {attrInt("upper", upper ? 1 : 0)}));
    // col - row, broadcast over [rows, cols]; rows and cols may be dynamic.
    std::string rows = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, x, rank - 2)), {1});
    std::string cols = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, x, rank - 1)), {0});
    std::string diff = ctx.emit1("Sub", {cols, rows});
    std::string kk = ctx.constInt64s({k}, true);
    // Greater/Less take int64 from opset 9; keep = upper ? diff >= k : diff <= k.
    std::string drop = upper ? ctx.emit1("Less", {diff, kk}) : ctx.emit1("Greater", {diff, kk});
    std::string zero = ctx.constScalar(0, dt);
    return bindOut(ctx, n, whereTyped(ctx, drop, zero, x, dt));
  };
}

// einsum(equation, tensors, path=None)
Status convertEinsum(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string eq, ctx.constString(n.input(0)));
  OXPORT_ASSIGN(auto ins, ctx.tensorList(n.input(1)));
  std::string equation;
  for (char c : eq)
    if (!std::isspace(static_cast<unsigned char>(c))) equation += c;
  const DType dt = n.output(0)->meta.dtype;
  // ONNX Runtime's Einsum runs float, double, int32 and int64; others go through float or int64.
  DType run = dt;
  if (dt == DType::Float16 || dt == DType::BFloat16) run = DType::Float32;
  else if (!isFloating(dt) && dt != DType::Int32 && dt != DType::Int64) run = DType::Int64;
  OXPORT_ASSIGN(auto elems, ctx.listElements(n.input(1)));
  for (size_t i = 0; i < ins.size(); ++i) {
    const DType have = i < elems.size() ? ctx.dtype(elems[i]) : run;
    if (have != run) ins[i] = ctx.cast(ins[i], run);
  }
  std::string y = ctx.emit1("Einsum", ins, {attrString("equation", equation)});
  if (run != dt) y = ctx.cast(y, dt);
  return bindOut(ctx, n, y);
}

// outer/ger(self, vec2): self[:, None] * vec2[None, :]
Status convertOuter(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {0, 1}));
  return bindOut(ctx, n, ctx.emit1("Mul", {ctx.unsqueeze(ins[0], {1}), ctx.unsqueeze(ins[1], {0})}));
}

// unflatten(self, dim, sizes): dim becomes `sizes` (one of them may be -1).
Status convertUnflatten(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  const int rank = ctx.rank(n.input(0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  OXPORT_ASSIGN(auto sizes, ctx.constInts(n.input(2)));
  dim = ctx.normDim(dim, rank);
  if (dim < 0 || dim >= rank) return ctx.error("bad-argument", "unflatten: dim is out of range for rank " + std::to_string(rank));
  // A literal 0 in Reshape's shape copies the input's size: only -1 and positive sizes here.
  for (auto s : sizes)
    if (s == 0)
      return ctx.error("unsupported-form", "unflatten into a size of 0",
                       "unflatten to sizes of 1 or more (the tensor would have no elements)");
  std::string s = ctx.shapeOf(x);
  std::vector<std::string> parts;
  if (dim > 0) parts.push_back(ctx.slice(s, {0}, {dim}, {0}));
  parts.push_back(ctx.constInt64s(sizes));
  if (dim + 1 < rank) parts.push_back(ctx.slice(s, {dim + 1}, {kInt64Max}, {0}));
  std::string shape = parts.size() == 1 ? parts[0] : ctx.emit1("Concat", parts, {attrInt("axis", 0)});
  return bindOut(ctx, n, ctx.emit1("Reshape", {x, shape}));
}

}  // namespace

void registerLinalgOps(Registry& r) {
  addAll(r, {"aten::tril", "aten::tril_"}, convertTriangle(false));
  addAll(r, {"aten::triu", "aten::triu_"}, convertTriangle(true));
  r.add("aten::einsum", convertEinsum, 12);
  addAll(r, {"aten::outer", "aten::ger"}, convertOuter);
  r.add("aten::unflatten", convertUnflatten);
}

}  // namespace oxport::convert
