// Indexing: gather/scatter and their index_*/masked_* relatives, advanced indexing (index,
// index_put), nonzero, take, one_hot, embedding(_bag), unique.
#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/scatter_accumulate.h"
#include "convert/number_list.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

std::string toInt64(Context& ctx, const std::string& x, DType have) {
  return have == DType::Int64 ? x : ctx.cast(x, DType::Int64);
}

// Index values made non-negative against the size of axis `dim` of `data` (Gather, Scatter* and
// GatherND take negative indices from opset 11 or 13; before that their meaning is undefined).
std::string wrapNegative(Context& ctx, const std::string& idx, const std::string& data, int64_t dim) {
  std::string size = dimSize(ctx, data, dim, true);
  std::string neg = ctx.emit1("Less", {idx, ctx.constInt64s({0}, true)});
  return ctx.emit1("Where", {neg, ctx.emit1("Add", {idx, size}), idx});
}

std::vector<int64_t> iota(int n, int64_t from = 0) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

std::vector<int64_t> inversePerm(const std::vector<int64_t>& p) {
  std::vector<int64_t> inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return inv;
}

bool isIdentityPerm(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

std::string transpose(Context& ctx, const std::string& x, const std::vector<int64_t>& perm) {
  if (isIdentityPerm(perm)) return x;
  return ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
}

// A ScatterElements (opset 11+) or its older name Scatter (opset 9-10).
std::string scatterElements(Context& ctx, const std::string& data, const std::string& idx, const std::string& upd,
                            int64_t axis, const std::string& reduction = "") {
  std::vector<Attribute> attrs{attrInt("axis", axis)};
  if (!reduction.empty()) attrs.push_back(attrString("reduction", reduction));
  return ctx.emit1(ctx.opset() >= 11 ? "ScatterElements" : "Scatter", {data, idx, upd}, std::move(attrs));
}

// ---- gather / scatter

// gather(self, dim, index, sparse_grad)
Status convertGather(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 11) return ctx.needsOpset(11, "gather (GatherElements)");
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  dim = ctx.normDim(dim, ctx.rank(args.in("self", 0)));
  OXPORT_ASSIGN(std::string idx, ctx.tensor(args.in("index", 2)));
  return bindOut(ctx, n, ctx.emit1("GatherElements", {x, idx}, {attrInt("axis", dim)}));
}

// Updates for a scatter: a value broadcast to the index's shape, or src cut to the index's shape
// (PyTorch lets src be larger than index).
Result<std::string> scatterUpdates(Context& ctx, const Value* src, const Value* index, const std::string& idx, DType dt) {
  if (!src->isTensor() || ctx.rank(src) == 0) {
    OXPORT_ASSIGN(std::string v, ctx.tensorOfType(src, dt));
    if (src->isTensor()) v = ctx.reshape(v, {});
    return ctx.emit1("Expand", {v, ctx.shapeOf(idx)});
  }
  OXPORT_ASSIGN(std::string s, ctx.tensorOfType(src, dt));
  if (ctx.meta(src).shape == ctx.meta(index).shape) return s;
  if (ctx.opset() < 10) return ctx.error("unsupported-form", "scatter with src larger than index needs opset 10");
  const int r = ctx.rank(index);
  return ctx.emit1("Slice", {s, ctx.constInt64s(std::vector<int64_t>(static_cast<size_t>(r), 0)), ctx.shapeOf(idx),
                             ctx.constInt64s(iota(r))});
}

// scatter(self, dim, index, src|value [, reduce]) and scatter_add(self, dim, index, src)
ConvertFn scatterOp(bool add) {
  return [add](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    const DType dt = ctx.dtype(args.in("self", 0));
    OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
    dim = ctx.normDim(dim, ctx.rank(args.in("self", 0)));
    OXPORT_ASSIGN(std::string idx, ctx.tensor(args.in("index", 2)));
    std::string reduction = add ? "add" : "";
    if (!add && args.has("reduce", 4)) {
      OXPORT_ASSIGN(std::string r, ctx.constString(args.in("reduce", 4)));
      if (r == "add") reduction = "add";
      else if (r == "multiply") reduction = "mul";
      else return ctx.error("unsupported-form", "scatter reduce='" + r + "'");
    }
    const bool exact_add = reduction == "add" && ctx.opset() < 16;  // scatter_accumulate.h
    if (!reduction.empty() && ctx.opset() < 16 && !exact_add)
      return ctx.needsOpset(16, "scatter with reduction '" + reduction + "' (ScatterElements reduction)");
    OXPORT_ASSIGN(std::string upd, scatterUpdates(ctx, args.in({"src", "value"}, 3), args.in("index", 2), idx, dt));
    if (exact_add) {
      OXPORT_ASSIGN(std::string sum, scatterAddExact(ctx, args.in("self", 0), args.in("index", 2), x, idx, upd, dim));
      return bindOut(ctx, n, sum);
    }
    if (ctx.opset() < 11) idx = wrapNegative(ctx, idx, x, dim);
    return bindOut(ctx, n, scatterElements(ctx, x, idx, upd, dim, reduction));
  };
}

// index_select(self, dim, index)
Status convertIndexSelect(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  dim = ctx.normDim(dim, ctx.rank(args.in("self", 0)));
  OXPORT_ASSIGN(std::string idx, ctx.tensor(args.in("index", 2)));
  idx = toInt64(ctx, idx, ctx.dtype(args.in("index", 2)));
  if (ctx.rank(args.in("index", 2)) == 0) idx = ctx.reshape(idx, {1});
  if (ctx.opset() < 11) idx = wrapNegative(ctx, idx, x, dim);
  return bindOut(ctx, n, ctx.emit1("Gather", {x, idx}, {attrInt("axis", dim)}));
}

// take(self, index): indices into the flattened tensor.
Status convertTake(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string idx, ctx.tensor(args.in("index", 1)));
  std::string flat = ctx.reshape(x, {-1});
  if (ctx.opset() < 11) idx = wrapNegative(ctx, idx, flat, 0);
  return bindOut(ctx, n, ctx.emit1("Gather", {flat, idx}, {attrInt("axis", 0)}));
}

// An index (0-d or 1-D) along `dim` as a tensor of shape [1, .., K, .., 1] (K at dim).
std::string indexAlong(Context& ctx, const std::string& idx, int64_t dim, int rank) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(dim)] = -1;
  return ctx.reshape(idx, shape);
}

// The arguments index_fill, index_copy and index_add share: self, a static dim, index.
struct IndexAlongArgs {
  std::string x;
  int rank = 0;
  DType dt = DType::Float32;
  int64_t dim = 0;
  std::string idx;
};

Result<IndexAlongArgs> readIndexAlong(Context& ctx, const Args& args) {
  IndexAlongArgs a;
  const Value* self = args.in("self", 0);
  OXPORT_ASSIGN(a.x, ctx.tensor(self));
  a.rank = ctx.rank(self);
  a.dt = ctx.dtype(self);
  OXPORT_ASSIGN(int64_t dim, args.constInt("dim", 1));
  a.dim = ctx.normDim(dim, a.rank);
  OXPORT_ASSIGN(a.idx, args.tensor("index", 2));
  return a;
}

// index_fill(self, dim, index, value): a mask along dim from the index, then Where.
Status convertIndexFill(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(IndexAlongArgs a, readIndexAlong(ctx, args));
  std::string idx = wrapNegative(ctx, ctx.reshape(a.idx, {1, -1}), a.x, a.dim);
  std::string positions = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, a.x, a.dim, true)), {1});  // [D, 1]
  std::string hit = ctx.cast(ctx.emit1("Equal", {positions, idx}), DType::Int32);          // [D, K]
  std::string mask = ctx.cast(reduceOver(ctx, "ReduceMax", hit, {1}, false), DType::Bool);
  mask = indexAlong(ctx, mask, a.dim, a.rank);
  OXPORT_ASSIGN(std::string v, ctx.tensorOfType(args.in("value", 3), a.dt));
  if (args.in("value", 3)->isTensor() && ctx.rank(args.in("value", 3)) > 0) v = ctx.reshape(v, {});
  return bindOut(ctx, n, ctx.emit1("Where", {mask, v, a.x}));
}

// index_copy(self, dim, index, source) / index_add(self, dim, index, source, alpha)
ConvertFn indexScatter(bool add) {
  return [add](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(IndexAlongArgs a, readIndexAlong(ctx, args));
    const std::string& x = a.x;
    const int rank = a.rank;
    const DType dt = a.dt;
    const int64_t dim = a.dim;
    std::string idx = a.idx;
    OXPORT_ASSIGN(std::string src, ctx.tensorOfType(args.in("source", 3), dt));
    if (ctx.rank(args.in("source", 3)) != rank) src = ctx.reshape(src, std::vector<int64_t>(static_cast<size_t>(rank), 1));
    if (add && args.has("alpha", 4)) {
      OXPORT_ASSIGN(double alpha, args.constDouble("alpha", 4));
      if (alpha != 1.0) src = ctx.emit1("Mul", {src, ctx.constScalar(alpha, dt)});
    }
    if (add && ctx.opset() < 16)  // exact without ScatterElements reduction: scatter_accumulate.h
      return bindOut(ctx, n, addRowsAlong(ctx, x, idx, ctx.dtype(args.in("index", 2)), src, dim, rank, dt));
    if (ctx.opset() < 11) idx = wrapNegative(ctx, idx, x, dim);
    idx = ctx.emit1("Expand", {indexAlong(ctx, idx, dim, rank), ctx.shapeOf(src)});
    return bindOut(ctx, n, scatterElements(ctx, x, idx, src, dim, add ? "add" : ""));
  };
}

// ---- masks

// masked_fill(self, mask, value)
Status convertMaskedFill(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  OXPORT_ASSIGN(std::string mask, ctx.tensorOfType(args.in("mask", 1), DType::Bool));
  OXPORT_ASSIGN(std::string v, ctx.tensorOfType(args.in("value", 2), dt));
  if (args.in("value", 2)->isTensor() && ctx.rank(args.in("value", 2)) > 0) v = ctx.reshape(v, {});
  std::string out = whereTyped(ctx, mask, v, x, dt);
  // A mask with more dims than self broadcasts in PyTorch too; a smaller one keeps self's shape.
  return bindOut(ctx, n, out);
}

// masked_select(self, mask): both broadcast, flattened, and the selected elements gathered.
Status convertMaskedSelect(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string mask, ctx.tensorOfType(args.in("mask", 1), DType::Bool));
  std::string xb = ctx.emit1("Expand", {x, ctx.shapeOf(mask)});
  std::string mb = ctx.emit1("Expand", {mask, ctx.shapeOf(xb)});
  std::string where = ctx.squeeze(ctx.emit1("NonZero", {ctx.reshape(mb, {-1})}), {0});
  return bindOut(ctx, n, ctx.emit1("Gather", {ctx.reshape(xb, {-1}), where}, {attrInt("axis", 0)}));
}

// masked_scatter(self, mask, source): the selected positions take source's elements in order.
Status convertMaskedScatter(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 11) return ctx.needsOpset(11, "masked_scatter (ScatterND)");
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string mask, ctx.tensorOfType(args.in("mask", 1), DType::Bool));
  OXPORT_ASSIGN(std::string src, ctx.tensorOfType(args.in("source", 2), ctx.dtype(args.in("self", 0))));
  std::string mb = ctx.emit1("Expand", {mask, ctx.shapeOf(x)});
  std::string idx = ctx.emit1("Transpose", {ctx.emit1("NonZero", {mb})}, {attrInts("perm", {1, 0})});  // [N, r]
  std::string count = dimSize(ctx, idx, 0);
  std::string upd = ctx.emit1("Slice", {ctx.reshape(src, {-1}), ctx.constInt64s({0}), count, ctx.constInt64s({0})});
  return bindOut(ctx, n, ctx.emit1("ScatterND", {x, idx, upd}));
}

// nonzero(self) -> [N, rank]
Status convertNonzero(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("Transpose", {ctx.emit1("NonZero", {x})}, {attrInts("perm", {1, 0})}));
}

}  // namespace

// nonzero_numpy(self) and where(condition) -> one index tensor per dim
Status convertNonzeroNumpy(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in({"self", "condition"}, 0)));
  std::string nz = ctx.emit1("NonZero", {x});
  std::vector<std::string> parts;
  for (int i = 0; i < ctx.rank(args.in({"self", "condition"}, 0)); ++i)
    parts.push_back(ctx.emit1("Gather", {nz, ctx.constInt64s({i}, true)}, {attrInt("axis", 0)}));
  if (n.outputs.size() == 1) {
    ctx.bindList(n.output(0), parts);
  } else {
    for (size_t i = 0; i < n.outputs.size() && i < parts.size(); ++i) ctx.bind(n.output(i), parts[i]);
  }
  return okStatus();
}

namespace {

// ---- advanced indexing

// The index tensors of x[indices]: one per indexed dim, int64, with bool masks expanded to one
// index per masked dim (NonZero), as PyTorch does.
struct Indexing {
  std::vector<int64_t> dims;         // the indexed dims of self, ascending
  std::vector<std::string> indices;  // int64, parallel to dims
  int broadcast_rank = 0;            // rank of the indices' broadcast shape
  bool from_mask = false;            // a single bool mask produced them
  const Value* mask = nullptr;       // that mask
  int64_t mask_dim = 0;
};

Result<Indexing> indexing(Context& ctx, const std::string& x, int rank, const Value* list) {
  OXPORT_ASSIGN(auto elems, ctx.listElements(list));
  Indexing ix;
  int64_t dim = 0;
  int masks = 0;
  for (const Value* e : elems) {
    if (ctx.isNone(e)) {
      ++dim;
      continue;
    }
    if (!e->isTensor()) return ctx.error("unsupported-form", "an index that is not a tensor");
    OXPORT_ASSIGN(std::string t, ctx.tensor(e));
    const DType dt = ctx.dtype(e);
    const int r = ctx.rank(e);
    if (dt == DType::Bool || dt == DType::UInt8) {
      if (r == 0) return ctx.error("unsupported-form", "indexing with a 0-d bool");
      ++masks;
      ix.mask = e;
      ix.mask_dim = dim;
      std::string nz = ctx.emit1("NonZero", {t});  // [r, N]
      for (int k = 0; k < r; ++k) {
        ix.dims.push_back(dim + k);
        ix.indices.push_back(ctx.emit1("Gather", {nz, ctx.constInt64s({k}, true)}, {attrInt("axis", 0)}));
      }
      ix.broadcast_rank = std::max(ix.broadcast_rank, 1);
      dim += r;
      continue;
    }
    ix.dims.push_back(dim);
    std::string i = toInt64(ctx, t, dt);
    ix.indices.push_back(wrapNegative(ctx, i, x, dim));
    ix.broadcast_rank = std::max(ix.broadcast_rank, r);
    ++dim;
  }
  if (ix.dims.empty()) return ctx.error("unsupported-form", "indexing without an index tensor");
  if (dim > rank) return ctx.error("bad-argument", "too many indices for a tensor of rank " + std::to_string(rank));
  ix.from_mask = masks == 1 && ix.indices.size() == static_cast<size_t>(ctx.rank(ix.mask));
  return ix;
}

bool adjacent(const std::vector<int64_t>& dims) {
  for (size_t i = 1; i < dims.size(); ++i)
    if (dims[i] != dims[i - 1] + 1) return false;
  return true;
}

// Permutation putting the indexed dims first (in order), the others after (in order).
std::vector<int64_t> indexedFirst(const std::vector<int64_t>& dims, int rank) {
  std::vector<int64_t> perm(dims);
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  return perm;
}

// Stacks broadcast index tensors into [*B, K] for GatherND/ScatterND.
std::string stackIndices(Context& ctx, const std::vector<std::string>& indices) {
  if (indices.size() == 1) return ctx.unsqueeze(indices[0], {-1});
  std::string shape = ctx.shapeOf(indices[0]);
  for (size_t i = 1; i < indices.size(); ++i) shape = ctx.shapeOf(ctx.emit1("Expand", {indices[i], shape}));
  std::vector<std::string> parts;
  for (const auto& i : indices) parts.push_back(ctx.unsqueeze(ctx.emit1("Expand", {i, shape}), {-1}));
  return ctx.emit1("Concat", parts, {attrInt("axis", -1)});
}

// From GatherND's layout [*B, *rest] to PyTorch's: B stays in front unless the indexed dims are
// adjacent and start after dim 0, then B sits where they were.
std::vector<int64_t> torchLayout(const Indexing& ix, int out_rank) {
  std::vector<int64_t> perm = iota(out_rank);
  const int64_t d1 = ix.dims.front();
  if (!adjacent(ix.dims) || d1 == 0) return perm;
  const int64_t nb = ix.broadcast_rank;
  perm.clear();
  for (int64_t i = nb; i < nb + d1; ++i) perm.push_back(i);
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t i = nb + d1; i < out_rank; ++i) perm.push_back(i);
  return perm;
}

// index(self, indices: Tensor?[])
// list.index(v) on a list of numbers (aten::index.list_int / list_float): the first position
// holding v. (libtorch raises when there is none; the file gives 0 there.)
Status listIndexOf(Context& ctx, const Node& n) {
  const Value* list = n.input(0);
  const DType dt = list->elem_type == ts::ValueType::Int     ? DType::Int64
                   : list->elem_type == ts::ValueType::Float ? DType::Float64
                                                             : DType::Bool;
  OXPORT_ASSIGN(std::string all, numberListTensor(ctx, list, dt));
  if (all.empty()) return ctx.error("bad-argument", "index() of an empty list");
  OXPORT_ASSIGN(std::string v, ctx.tensorOfType(n.input(1), dt));
  std::string hit = ctx.cast(ctx.emit1("Equal", {all, v}), DType::Int32);
  return bindOut(ctx, n, ctx.emit1("ArgMax", {hit}, {attrInt("axis", 0), attrInt("keepdims", 0)}));
}

Status convertIndex(Context& ctx, const Node& n) {
  if (!n.inputs.empty() && n.input(0)->type == ts::ValueType::List) return listIndexOf(ctx, n);
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(Indexing ix, indexing(ctx, x, rank, args.in("indices", 1)));
  if (ix.indices.size() == 1) {
    // One indexed dim: Gather places the index's shape where the dim was, as PyTorch does.
    return bindOut(ctx, n, ctx.emit1("Gather", {x, ix.indices[0]}, {attrInt("axis", ix.dims[0])}));
  }
  if (ctx.opset() < 11) return ctx.needsOpset(11, "indexing with several index tensors or a multi-dim mask (GatherND)");
  std::string xp = transpose(ctx, x, indexedFirst(ix.dims, rank));
  std::string g = ctx.emit1("GatherND", {xp, stackIndices(ctx, ix.indices)});
  const int out_rank = ix.broadcast_rank + rank - static_cast<int>(ix.dims.size());
  return bindOut(ctx, n, transpose(ctx, g, torchLayout(ix, out_rank)));
}

// index_put(self, indices, values, accumulate)
Status convertIndexPut(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  const DType dt = ctx.dtype(args.in("self", 0));
  bool accumulate = false;
  if (n.inputs.size() >= 4) { OXPORT_ASSIGN(accumulate, ctx.constBool(args.in("accumulate", 3))); }
  const Value* values = args.in("values", 2);
  OXPORT_ASSIGN(std::string v, ctx.tensorOfType(values, dt));
  const auto& vshape = ctx.meta(values).shape;
  int64_t vnumel = 1;
  for (auto s : vshape) vnumel *= s;

  // x[mask] = scalar (or += scalar): a Where over the mask, in every opset.
  OXPORT_ASSIGN(auto elems, ctx.listElements(args.in("indices", 1)));
  const Value* mask = nullptr;
  int64_t mask_dim = 0, tensors = 0;
  for (const Value* e : elems) {
    if (ctx.isNone(e)) { if (!tensors) ++mask_dim; continue; }
    ++tensors;
    if (e->isTensor() && (ctx.dtype(e) == DType::Bool || ctx.dtype(e) == DType::UInt8)) mask = e;
  }
  if (tensors == 1 && mask && vnumel == 1 && (!values->isTensor() || vshape.size() <= 1)) {
    OXPORT_ASSIGN(std::string m, ctx.tensorOfType(mask, DType::Bool));
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < mask_dim; ++d) axes.push_back(d);
    for (int64_t d = mask_dim + ctx.rank(mask); d < rank; ++d) axes.push_back(d);
    if (!axes.empty()) m = ctx.unsqueeze(m, axes);
    std::string s = values->isTensor() && !vshape.empty() ? ctx.reshape(v, {}) : v;
    if (accumulate)
      return bindOut(ctx, n, ctx.emit1("Add", {x, ctx.emit1("Where", {m, s, ctx.constScalar(0, dt)})}));
    return bindOut(ctx, n, ctx.emit1("Where", {m, s, x}));
  }

  if (ctx.opset() < 11) return ctx.needsOpset(11, "index_put with index tensors (ScatterND)");
  OXPORT_ASSIGN(Indexing ix, indexing(ctx, x, rank, args.in("indices", 1)));
  const std::vector<int64_t> perm = indexedFirst(ix.dims, rank);
  std::string xp = transpose(ctx, x, perm);
  std::string stacked = stackIndices(ctx, ix.indices);
  // The updates in GatherND's layout [*B, *rest]: values broadcast to the indexing result's
  // shape in PyTorch's layout, then moved.
  std::string g = ctx.emit1("GatherND", {xp, stacked});
  const int out_rank = ix.broadcast_rank + rank - static_cast<int>(ix.dims.size());
  const std::vector<int64_t> layout = torchLayout(ix, out_rank);
  std::string torch_shape = isIdentityPerm(layout) ? ctx.shapeOf(g)
                                                    : ctx.emit1("Gather", {ctx.shapeOf(g), ctx.constInt64s(layout)},
                                                                {attrInt("axis", 0)});
  std::string upd = ctx.emit1("Expand", {v, torch_shape});
  upd = transpose(ctx, upd, inversePerm(layout));
  if (accumulate && ctx.opset() < 16) {  // exact without ScatterND reduction: scatter_accumulate.h
    std::string sum = addAtStackedIndices(ctx, xp, stacked, static_cast<int>(ix.dims.size()), upd, ix.broadcast_rank, dt);
    return bindOut(ctx, n, transpose(ctx, sum, inversePerm(perm)));
  }
  std::vector<Attribute> attrs;
  if (accumulate) attrs.push_back(attrString("reduction", "add"));
  std::string out = ctx.emit1("ScatterND", {xp, stacked, upd}, std::move(attrs));
  return bindOut(ctx, n, transpose(ctx, out, inversePerm(perm)));
}

// ---- embeddings, one_hot

// one_hot(self, num_classes=-1): -1 takes max(self) + 1.
Status convertOneHot(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const Value* classes_v = args.in("num_classes", 1);
  auto classes = ctx.maybeInt(classes_v);
  std::string depth;
  if (!classes) {
    // A class count read from a size at run time (F.one_hot(idx, x.shape[1]), traced): OneHot
    // takes its depth as a tensor. Negative (-1, "max + 1") is a Python int in every model seen.
    OXPORT_ASSIGN(std::string d, ctx.tensorOfType(classes_v, DType::Int64));
    depth = ctx.reshape(d, {1});
  } else if (*classes >= 0) {
    depth = ctx.constInt64s({*classes});
  } else {
    std::string mx = reduceOver(ctx, "ReduceMax", x, {}, false);
    depth = ctx.reshape(ctx.emit1("Add", {mx, ctx.constInt64s({1}, true)}), {1});
  }
  std::string values = ctx.constInt64s({0, 1});
  return bindOut(ctx, n, ctx.emit1("OneHot", {x, depth, values}, {attrInt("axis", -1)}));
}

// embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse): padding_idx only matters
// for gradients.
Status convertEmbedding(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string w, ctx.tensor(args.in("weight", 0)));
  OXPORT_ASSIGN(std::string idx, ctx.tensor(args.in("indices", 1)));
  idx = toInt64(ctx, idx, ctx.dtype(args.in("indices", 1)));
  if (ctx.opset() < 11) idx = wrapNegative(ctx, idx, w, 0);
  return bindOut(ctx, n, ctx.emit1("Gather", {w, idx}, {attrInt("axis", 0)}));
}

// embedding_renorm_(weight, indices, max_norm, norm_type) -> weight whose rows looked up by
// `indices` are scaled to a norm of at most max_norm (by max_norm / (norm + 1e-7), as PyTorch).
// Every row's norm and a [V] membership mask from comparing indices with 0..V-1: no scatter, so
// every opset takes it.
Status convertEmbeddingRenorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string w, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  if (!isFloating(dt) || ctx.rank(args.in("self", 0)) != 2)
    return ctx.error("bad-argument", "embedding_renorm needs a 2-D floating-point weight");
  OXPORT_ASSIGN(std::string idx, ctx.tensor(args.in("indices", 1)));
  idx = ctx.reshape(toInt64(ctx, idx, ctx.dtype(args.in("indices", 1))), {1, -1});        // [1, N]
  OXPORT_ASSIGN(double max_norm, ctx.constDouble(args.in("max_norm", 2)));
  OXPORT_ASSIGN(double p, ctx.constDouble(args.in("norm_type", 3)));
  std::string rows = dimSize(ctx, w, 0);
  if (ctx.opset() < 11) idx = wrapNegative(ctx, idx, w, 0);
  std::string hit = ctx.emit1("Equal", {ctx.unsqueeze(arangeOf(ctx, rows), {1}), idx});    // [V, N]
  std::string member = ctx.cast(reduceOver(ctx, "ReduceMax", ctx.cast(hit, DType::Int32), {1}, true), DType::Bool);
  std::string norm;
  if (p == 2.0) norm = reduceOver(ctx, "ReduceL2", w, {1}, true);
  else if (p == 1.0) norm = reduceOver(ctx, "ReduceL1", w, {1}, true);
  else {
    std::string a = ctx.emit1("Pow", {ctx.emit1("Abs", {w}), ctx.constScalar(p, dt)});
    norm = ctx.emit1("Pow", {reduceOver(ctx, "ReduceSum", a, {1}, true), ctx.constScalar(1.0 / p, dt)});
  }
  std::string maxn = ctx.constScalar(max_norm, dt);
  std::string scale = ctx.emit1("Div", {maxn, ctx.emit1("Add", {norm, ctx.constScalar(1e-7, dt)})});
  std::string apply = ctx.emit1("And", {member, ctx.emit1("Greater", {norm, maxn})});
  return bindOut(ctx, n, ctx.emit1("Where", {apply, ctx.emit1("Mul", {w, scale}), w}));
}

// embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
// include_last_offset, padding_idx): the bags as a [B, N] membership matrix over the looked-up
// rows (sum/mean: a MatMul; max: a masked ReduceMax). Empty bags give zeros, as in PyTorch.
Status convertEmbeddingBag(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string w, ctx.tensor(args.in("weight", 0)));
  const DType dt = ctx.dtype(args.in("weight", 0));
  OXPORT_ASSIGN(std::string idx, ctx.tensor(args.in("indices", 1)));
  idx = toInt64(ctx, idx, ctx.dtype(args.in("indices", 1)));
  OXPORT_ASSIGN(int64_t mode, ctx.constInt(args.in("mode", 4)));
  const Value* psw = args.has("per_sample_weights", 6) ? args.in("per_sample_weights", 6) : nullptr;
  bool include_last = false;
  if (n.inputs.size() > 7) { OXPORT_ASSIGN(include_last, ctx.constBool(args.in("include_last_offset", 7))); }
  std::optional<int64_t> padding_idx;
  if (args.has("padding_idx", 8)) {
    OXPORT_ASSIGN(int64_t p, ctx.constInt(args.in("padding_idx", 8)));
    if (p >= 0) padding_idx = p;
  }
  std::string rows = ctx.emit1("Gather", {w, idx}, {attrInt("axis", 0)});
  std::string bags;  // [B, N] bool
  if (ctx.rank(args.in("indices", 1)) == 2) {
    // Fixed-size bags: one per row of indices.
    rows = ctx.reshape(rows, {0, 0, -1});
    std::string ones = ctx.emit1("ConstantOfShape", {ctx.shapeOf(idx)},
                                 {attrTensor("value", scalarHostTensor(1, DType::Bool, {1}))});
    bags = ones;  // [B, L]
  } else {
    OXPORT_ASSIGN(std::string off, ctx.tensor(args.in("offsets", 2)));
    off = toInt64(ctx, off, ctx.dtype(args.in("offsets", 2)));
    std::string positions = arangeOf(ctx, dimSize(ctx, idx, 0, true));                  // [N]
    std::string started = ctx.emit1("Not", {ctx.emit1("Less", {ctx.unsqueeze(positions, {0}), ctx.unsqueeze(off, {1})})});
    std::string bag_of = ctx.emit1("Sub", {reduceOver(ctx, "ReduceSum", ctx.cast(started, DType::Int64), {0}, false),
                                           ctx.constInt64s({1}, true)});                 // [N]
    std::string nbags = dimSize(ctx, off, 0, true);
    if (include_last) nbags = ctx.emit1("Sub", {nbags, ctx.constInt64s({1}, true)});
    std::string bag_ids = ctx.unsqueeze(arangeOf(ctx, nbags), {1});                     // [B, 1]
    bags = ctx.emit1("Equal", {bag_ids, ctx.unsqueeze(bag_of, {0})});                   // [B, N]
  }
  const bool fixed = ctx.rank(args.in("indices", 1)) == 2;
  if (padding_idx) {
    std::string keep = ctx.emit1("Not", {ctx.emit1("Equal", {idx, ctx.constInt64s({*padding_idx}, true)})});
    bags = ctx.emit1("And", {bags, fixed ? keep : ctx.unsqueeze(keep, {0})});
  }
  std::string weights = ctx.cast(bags, dt);
  if (psw) {
    OXPORT_ASSIGN(std::string p, ctx.tensorOfType(psw, dt));
    weights = ctx.emit1("Mul", {weights, fixed ? p : ctx.unsqueeze(p, {0})});
  }
  std::string count = reduceOver(ctx, "ReduceSum", ctx.cast(bags, dt), {1}, true);  // [B, 1]
  std::string out;
  if (mode == 0 || mode == 1) {
    if (fixed) out = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {rows, ctx.unsqueeze(weights, {2})}), {1}, false);
    else out = ctx.emit1("MatMul", {weights, rows});
    if (mode == 1) out = ctx.emit1("Div", {out, ctx.emit1("Max", {count, ctx.constScalar(1, dt)})});
  } else if (mode == 2) {
    std::string lowest = ctx.constScalar(-std::numeric_limits<double>::infinity(), dt);
    std::string cand = fixed ? ctx.emit1("Where", {ctx.unsqueeze(bags, {2}), rows, lowest})
                             : ctx.emit1("Where", {ctx.unsqueeze(bags, {2}), ctx.unsqueeze(rows, {0}), lowest});
    out = reduceOver(ctx, "ReduceMax", cand, {1}, false);
    std::string empty = ctx.emit1("Equal", {count, ctx.constScalar(0, dt)});
    out = ctx.emit1("Where", {empty, ctx.constScalar(0, dt), out});
  } else {
    return ctx.error("bad-argument", "embedding_bag mode " + std::to_string(mode));
  }
  ctx.bind(n.output(0), out);
  return okStatus();
}

// ---- unique

// _unique(self, sorted, return_inverse) / _unique2(self, sorted, return_inverse, return_counts) /
// unique_dim(self, dim, sorted, return_inverse, return_counts). Always sorted: PyTorch's CPU
// order without sorting is unspecified, sorted is one valid order.
ConvertFn uniqueOp(bool with_dim) {
  return [with_dim](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    if (ctx.opset() < 11) return ctx.needsOpset(11, "unique (Unique)");
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    std::vector<Attribute> attrs{attrInt("sorted", 1)};
    if (with_dim) {
      OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
      attrs.push_back(attrInt("axis", ctx.normDim(dim, ctx.rank(args.in("self", 0)))));
    }
    auto outs = ctx.emit("Unique", {x}, 4, std::move(attrs));
    ctx.bind(n.output(0), outs[0]);
    if (n.outputs.size() > 1) {
      const auto& shape = n.output(1)->meta.shape;
      const bool empty = shape.size() == 1 && shape[0] == 0 && ctx.meta(args.in("self", 0)).shape != shape;
      if (empty) ctx.bind(n.output(1), ctx.constant(HostTensor::fromVector<int64_t>(DType::Int64, {0}, {})));
      else ctx.bind(n.output(1), with_dim ? outs[2] : ctx.emit1("Reshape", {outs[2], ctx.shapeOf(x)}));
    }
    if (n.outputs.size() > 2) {
      const auto& shape = n.output(2)->meta.shape;
      auto counts = ctx.maybeInt(args.in("return_counts", n.kind == "aten::_unique2" ? 3 : 4));
      if (counts && *counts == 0 && shape.size() == 1 && shape[0] == 0)
        ctx.bind(n.output(2), ctx.constant(HostTensor::fromVector<int64_t>(DType::Int64, {0}, {})));
      else ctx.bind(n.output(2), outs[3]);
    }
    return okStatus();
  };
}

}  // namespace

// slice_scatter(self, src, dim=0, start=None, end=None, step=1): self with src written over
// self[start:end:step] along dim (the functional form of `y[a:b] = v`). Step 1 is a Concat of the
// parts of self around the slice (every opset, any dynamic size); other steps scatter src at the
// slice's indices (ScatterElements, opset 11).
Status convertSliceScatter(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string self, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string src, ctx.tensorOfType(args.in("src", 1), ctx.dtype(args.in("self", 0))));
  const int rank = ctx.rank(args.in("self", 0));
  int64_t dim = 0, step = 1;
  if (n.inputs.size() > 2) { OXPORT_ASSIGN(dim, ctx.constInt(args.in("dim", 2))); }
  if (n.inputs.size() > 5) { OXPORT_ASSIGN(step, ctx.constInt(args.in("step", 5))); }
  dim = ctx.normDim(dim, rank);
  const Value* start_v = args.optIn("start", 3);
  const Value* end_v = args.optIn("end", 4);
  auto bound = [&](const Value* b, int64_t none) -> Result<std::optional<int64_t>> {
    if (!b || ctx.isNone(b)) return std::optional<int64_t>(none);
    auto v = ctx.maybeInt(b);
    return v ? std::optional<int64_t>(*v) : std::nullopt;
  };
  OXPORT_ASSIGN(auto start, bound(start_v, 0));
  OXPORT_ASSIGN(auto end, bound(end_v, kInt64Max));
  if ((!start || !end) && step == 1) {
    // Bounds computed at run time (a loop counter, a size): Slices with inputs, which also take
    // negative bounds as Python does.
    if (ctx.opset() < 10) return ctx.needsOpset(10, "slice_scatter with bounds computed at run time (Slice with inputs)");
    auto bound_t = [&](const Value* b) -> Result<std::string> {
      if (!b || ctx.isNone(b)) return std::string();
      OXPORT_ASSIGN(std::string t, ctx.tensorOfType(b, DType::Int64));
      return ctx.reshape(t, {1});
    };
    OXPORT_ASSIGN(std::string lo, bound_t(start_v));
    OXPORT_ASSIGN(std::string hi, bound_t(end_v));
    const std::string axes = ctx.constInt64s({dim});
    std::vector<std::string> parts;
    if (!lo.empty()) parts.push_back(ctx.emit1("Slice", {self, ctx.constInt64s({0}), lo, axes}));
    parts.push_back(src);
    if (!hi.empty()) parts.push_back(ctx.emit1("Slice", {self, hi, ctx.constInt64s({kInt64Max}), axes}));
    return bindOut(ctx, n, ctx.emit1("Concat", parts, {attrInt("axis", dim)}));
  }
  if (!start || !end)
    return ctx.error("unsupported-form", "slice_scatter (a write into a slice) with a step and bounds computed at run time",
                     "write the slice with constant bounds, or build the tensor with torch.cat");
  if (step == 1) {
    std::vector<std::string> parts;
    if (*start != 0) parts.push_back(ctx.slice(self, {0}, {*start}, {dim}));
    parts.push_back(src);
    if (*end != kInt64Max) parts.push_back(ctx.slice(self, {*end}, {kInt64Max}, {dim}));
    if (parts.size() == 1) return bindOut(ctx, n, ctx.emit1("Identity", {src}));
    return bindOut(ctx, n, ctx.emit1("Concat", parts, {attrInt("axis", dim)}));
  }
  if (ctx.opset() < 11) return ctx.needsOpset(11, "slice_scatter with a step (ScatterElements)");
  // The slice's indices along dim, shaped to broadcast along the other axes, expanded to src.
  std::string idx = ctx.slice(arangeOf(ctx, dimSize(ctx, self, dim, true)), {*start}, {*end}, {0}, {step});
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(dim)] = -1;
  idx = ctx.emit1("Expand", {ctx.reshape(idx, shape), ctx.shapeOf(src)});
  return bindOut(ctx, n, ctx.emit1("ScatterElements", {self, idx, src}, {attrInt("axis", dim)}));
}

// select_scatter(self, src, dim, index): src written over self.select(dim, index).
Status convertSelectScatter(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string self, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string src, ctx.tensorOfType(args.in("src", 1), ctx.dtype(args.in("self", 0))));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 2)));
  dim = ctx.normDim(dim, rank);
  auto index = ctx.maybeInt(args.in("index", 3));
  std::string piece = ctx.unsqueeze(src, {dim});
  if (!index) {
    // An index computed at run time (a loop counter): made non-negative, then the parts of self
    // before and after it, sliced with inputs.
    if (ctx.opset() < 10) return ctx.needsOpset(10, "select_scatter at an index computed at run time (Slice with inputs)");
    OXPORT_ASSIGN(std::string i, ctx.tensorOfType(args.in("index", 3), DType::Int64));
    i = ctx.reshape(i, {1});
    std::string negative = ctx.cast(ctx.emit1("Less", {i, ctx.constInt64s({0})}), DType::Int64);
    i = ctx.emit1("Add", {i, ctx.emit1("Mul", {negative, dimSize(ctx, self, dim)})});
    const std::string axes = ctx.constInt64s({dim});
    std::string before = ctx.emit1("Slice", {self, ctx.constInt64s({0}), i, axes});
    std::string next = ctx.emit1("Add", {i, ctx.constInt64s({1})});
    std::string after = ctx.emit1("Slice", {self, next, ctx.constInt64s({kInt64Max}), axes});
    return bindOut(ctx, n, ctx.emit1("Concat", {before, piece, after}, {attrInt("axis", dim)}));
  }
  std::vector<std::string> parts;
  const int64_t i = *index;
  if (i != 0) parts.push_back(ctx.slice(self, {0}, {i}, {dim}));
  parts.push_back(piece);
  if (i != -1) parts.push_back(ctx.slice(self, {i + 1}, {kInt64Max}, {dim}));
  if (parts.size() == 1) return bindOut(ctx, n, ctx.emit1("Identity", {piece}));
  return bindOut(ctx, n, ctx.emit1("Concat", parts, {attrInt("axis", dim)}));
}

void registerIndexOps(Registry& r) {
  r.add("aten::slice_scatter", convertSliceScatter);
  r.add("aten::select_scatter", convertSelectScatter);
  r.add("aten::gather", convertGather);
  addAll(r, {"aten::scatter", "aten::scatter_"}, scatterOp(false));
  addAll(r, {"aten::scatter_add", "aten::scatter_add_"}, scatterOp(true));
  r.add("aten::index_select", convertIndexSelect);
  r.add("aten::take", convertTake);
  addAll(r, {"aten::index_fill", "aten::index_fill_"}, convertIndexFill);
  addAll(r, {"aten::index_copy", "aten::index_copy_"}, indexScatter(false));
  addAll(r, {"aten::index_add", "aten::index_add_"}, indexScatter(true));
  addAll(r, {"aten::masked_fill", "aten::masked_fill_"}, convertMaskedFill);
  r.add("aten::masked_select", convertMaskedSelect);
  addAll(r, {"aten::masked_scatter", "aten::masked_scatter_"}, convertMaskedScatter);
  addAll(r, {"aten::nonzero", "aten::argwhere"}, convertNonzero);  // argwhere is nonzero
  r.add("aten::nonzero_numpy", convertNonzeroNumpy);
  r.add("aten::index", convertIndex);
  addAll(r, {"aten::index_put", "aten::index_put_"}, convertIndexPut);
  r.add("aten::one_hot", convertOneHot);
  r.add("aten::embedding", convertEmbedding);
  r.add("aten::embedding_bag", convertEmbeddingBag);
  addAll(r, {"aten::embedding_renorm", "aten::embedding_renorm_"}, convertEmbeddingRenorm);
  addAll(r, {"aten::_unique", "aten::_unique2"}, uniqueOp(false));
  r.add("aten::unique_dim", uniqueOp(true));
}

}  // namespace oxport::convert
