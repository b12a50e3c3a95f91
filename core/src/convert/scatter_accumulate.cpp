// Exact scatter-add without ScatterElements/ScatterND reduction="add" (opset < 16).
#include "convert/scatter_accumulate.h"

#include <memory>
#include <vector>

#include "convert/util.h"

namespace oxport::convert {

namespace {

std::vector<int64_t> dimFirst(int64_t dim, int rank) {
  std::vector<int64_t> perm{dim};
  for (int64_t d = 0; d < rank; ++d)
    if (d != dim) perm.push_back(d);
  return perm;
}

std::string transposeIf(Context& ctx, const std::string& x, const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
  return x;
}

// An int64 index made non-negative against `size` (a 0-d int64).
std::string wrapped(Context& ctx, const std::string& idx, const std::string& size) {
  std::string neg = ctx.emit1("Less", {idx, ctx.constInt64s({0}, true)});
  return ctx.emit1("Where", {neg, ctx.emit1("Add", {idx, size}), idx});
}

// base [D, R] + the rows of src [K, R] added at idx [K] (int64, non-negative): base + OneHot^T @ src.
std::string addRows2d(Context& ctx, const std::string& base, const std::string& idx, const std::string& src, DType dt) {
  // MatMul in the values' own dtype where it takes it (float32/64, int32/64: integer sums stay exact
  // and wrap as PyTorch's), float32 for the half types, int64 for the narrow integers and bool
  // (cast back after, which wraps as PyTorch's narrow adds do).
  const DType work = reduceWorkType(dt);
  std::string positions = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, base, 0, true)), {1});        // [D, 1]
  std::string hit = ctx.emit1("Equal", {positions, ctx.unsqueeze(idx, {0})});                     // [D, K]
  std::string sum = ctx.emit1("MatMul", {ctx.cast(hit, work), castIf(ctx, src, dt, work)});        // [D, R]
  return ctx.emit1("Add", {base, castIf(ctx, sum, work, dt)});
}

}  // namespace

std::string addRowsAlong(Context& ctx, const std::string& self, const std::string& idx, DType idx_dt,
                         const std::string& src, int64_t dim, int rank, DType dt) {
  const std::vector<int64_t> perm = dimFirst(dim, rank);
  std::string xt = transposeIf(ctx, self, perm);
  std::string i = ctx.reshape(castIf(ctx, idx, idx_dt, DType::Int64), {-1});
  i = wrapped(ctx, i, dimSize(ctx, self, dim, true));
  std::string base = ctx.emit1("Flatten", {xt}, {attrInt("axis", 1)});
  std::string rows = ctx.emit1("Flatten", {transposeIf(ctx, src, perm)}, {attrInt("axis", 1)});
  std::string out = ctx.emit1("Reshape", {addRows2d(ctx, base, i, rows, dt), ctx.shapeOf(xt)});
  std::vector<int64_t> inv(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) inv[static_cast<size_t>(perm[k])] = static_cast<int64_t>(k);
  return transposeIf(ctx, out, inv);
}

std::string addAtStackedIndices(Context& ctx, const std::string& xp, const std::string& stacked, int n,
                                const std::string& upd, int batch_rank, DType dt) {
  std::string lin;
  for (int j = 0; j < n; ++j) {
    std::string size = dimSize(ctx, xp, j, true);
    std::string ij = ctx.emit1("Gather", {stacked, ctx.constInt64s({j}, true)}, {attrInt("axis", -1)});
    ij = wrapped(ctx, ij, size);
    lin = j == 0 ? ij : ctx.emit1("Add", {ctx.emit1("Mul", {lin, size}), ij});
  }
  std::string base = ctx.emit1("Flatten", {xp}, {attrInt("axis", n)});
  std::string rows = ctx.emit1("Flatten", {upd}, {attrInt("axis", batch_rank)});
  std::string out = addRows2d(ctx, base, ctx.reshape(lin, {-1}), rows, dt);
  return ctx.emit1("Reshape", {out, ctx.shapeOf(xp)});
}

std::string scatterAddLoop(Context& ctx, const std::string& self, const std::string& idx, const std::string& upd,
                           int64_t dim, DType dt) {
  std::string trips = dimSize(ctx, idx, dim, true);
  std::string cond = ctx.cast(ctx.constInt64s({1}, true), DType::Bool);

  auto g = std::make_shared<onnx_ir::Graph>();
  g->name = ctx.uniqueName("scatter_add_body");
  auto input = [&](const std::string& base, DType t, bool scalar) {
    g->inputs.push_back(onnx_ir::ValueInfo{ctx.uniqueName(base), t, false, scalar, {}});  // scalar: shape []
    return g->inputs.back().name;
  };
  ctx.pushGraph(g.get());
  std::string k = input("scatter_add_k", DType::Int64, true);
  std::string cond_in = input("scatter_add_cond", DType::Bool, true);
  std::string acc = input("scatter_add_acc", dt, false);
  std::string start = ctx.unsqueeze(k, {0});
  std::string end = ctx.emit1("Add", {start, ctx.constInt64s({1})});
  std::string axes = ctx.constInt64s({dim});
  std::string ik = ctx.emit1("Slice", {idx, start, end, axes});
  std::string uk = ctx.emit1("Slice", {upd, start, end, axes});
  std::string cur = ctx.emit1("GatherElements", {acc, ik}, {attrInt("axis", dim)});
  std::string next = ctx.emit1("ScatterElements", {acc, ik, ctx.emit1("Add", {cur, uk})}, {attrInt("axis", dim)});
  std::string cond_out = ctx.emit1("Identity", {cond_in});
  ctx.popGraph();
  for (const auto& [name, t] : {std::pair{cond_out, DType::Bool}, std::pair{next, dt}}) {
    onnx_ir::ValueInfo vi;
    vi.name = name;
    vi.dtype = t;
    g->outputs.push_back(vi);
  }
  return ctx.emit("Loop", {trips, cond, self}, 1, {Attribute{"body", g}}).front();
}

namespace {

const Value* broadcastRowIndex(const Value* index, const Value* self, int64_t dim) {
  const Node* p = index->producer;
  if (!p || (p->kind != "aten::expand" && p->kind != "aten::expand_as") || p->inputs.empty()) return nullptr;
  const Value* base = p->inputs[0];
  if (!base->isTensor()) return nullptr;
  const auto& b = base->meta.shape;
  const auto& i = index->meta.shape;
  const auto& s = self->meta.shape;
  if (b.size() != i.size() || i.size() != s.size()) return nullptr;
  const auto d = static_cast<size_t>(dim);
  // A size over 1 along dim cannot have been broadcast: the rows are base's at any size.
  if (b[d] != i[d] || b[d] <= 1) return nullptr;
  for (size_t k = 0; k < b.size(); ++k)
    if (k != d && (b[k] != 1 || i[k] != s[k])) return nullptr;
  return base;
}

}  // namespace

Result<std::string> scatterAddExact(Context& ctx, const Value* self, const Value* index, const std::string& x,
                                    const std::string& idx, const std::string& upd, int64_t dim) {
  const DType dt = ctx.dtype(self);
  if (const Value* rows = broadcastRowIndex(index, self, dim)) {
    if (auto r = ctx.tensor(rows); r.ok()) return addRowsAlong(ctx, x, *r, ctx.dtype(rows), upd, dim, ctx.rank(self), dt);
  }
  if (ctx.opset() < 11) return ctx.needsOpset(11, "scatter_add with an index that is not one row index per slice (ScatterElements)");
  return scatterAddLoop(ctx, x, idx, upd, dim, dt);
}

}  // namespace oxport::convert
