// Tensor products and the matrices built from them, past torch.onnx: kron, block_diag,
// cartesian_prod, combinations, linalg_vander and vander, inner and linalg_vecdot. Every size comes from Shape (dynamic axes stay dynamic).
#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// x with `lead` axes of size 1 in front.
std::string padRank(Context& ctx, const std::string& x, int lead) {
  if (lead <= 0) return x;
  std::vector<int64_t> axes;
  for (int i = 0; i < lead; ++i) axes.push_back(i);
  return ctx.unsqueeze(x, axes);
}

// kron(self, other): the ranks padded to r = max of both with leading 1s; a as [a0, 1, a1, 1, ...]
// times b as [1, b0, 1, b1, ...], reshaped to [a0 b0, a1 b1, ...].
Status convertKron(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType out = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string a, ctx.tensorOfType(args.in("self", 0), out));
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("other", 1), out));
  const int ra = ctx.rank(args.in("self", 0)), rb = ctx.rank(args.in("other", 1));
  const int r = std::max(ra, rb);
  if (r == 0) return bindOut(ctx, n, ctx.emit1("Mul", {a, b}));
  a = padRank(ctx, a, r - ra);
  b = padRank(ctx, b, r - rb);
  std::vector<int64_t> odd, even;
  for (int i = 0; i < r; ++i) {
    odd.push_back(2 * i + 1);
    even.push_back(2 * i);
  }
  std::string prod = ctx.emit1("Mul", {ctx.unsqueeze(a, odd), ctx.unsqueeze(b, even)});
  std::string shape = ctx.emit1("Mul", {ctx.shapeOf(a), ctx.shapeOf(b)});
  return bindOut(ctx, n, ctx.emit1("Reshape", {prod, shape}));
}

// block_diag(tensors): each tensor as a matrix (0-d: [1, 1], 1-D: [1, n]) placed on the diagonal;
// each row band is the matrix between zero blocks as wide as the columns before and after it.
Status convertBlockDiag(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType out = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::vector<const Value*> elems, ctx.listElements(args.in("tensors", 0)));
  if (elems.empty()) return bindOut(ctx, n, ctx.constant(scalarHostTensor(0, out, {1, 0})));
  std::vector<std::string> mats, rows, cols;
  for (const Value* e : elems) {
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(e, out));
    const int rank = ctx.rank(e);
    if (rank > 2) return ctx.error("bad-argument", "block_diag of a tensor with more than 2 dimensions");
    if (rank == 0) t = ctx.reshape(t, {1, 1});
    if (rank == 1) t = ctx.unsqueeze(t, {0});
    mats.push_back(t);
    rows.push_back(dimSize(ctx, t, 0));
    cols.push_back(dimSize(ctx, t, 1));
  }
  auto sumOf = [&](size_t from, size_t to) {  // columns of mats [from, to), a [1] int64
    std::string s = ctx.constInt64s({0});
    for (size_t j = from; j < to; ++j) s = ctx.emit1("Add", {s, cols[j]});
    return s;
  };
  const HostTensor zero = scalarHostTensor(0, out, {1});
  std::vector<std::string> bands;
  for (size_t i = 0; i < mats.size(); ++i) {
    auto zeros = [&](const std::string& width) {
      return ctx.emit1("ConstantOfShape", {ctx.emit1("Concat", {rows[i], width}, {attrInt("axis", 0)})},
                       {attrTensor("value", zero)});
    };
    bands.push_back(ctx.emit1("Concat", {zeros(sumOf(0, i)), mats[i], zeros(sumOf(i + 1, mats.size()))},
                              {attrInt("axis", 1)}));
  }
  return bindOut(ctx, n, bands.size() == 1 ? bands[0] : ctx.emit1("Concat", bands, {attrInt("axis", 0)}));
}

// cartesian_prod(tensors): for 1-D tensors of sizes n1..nk, [n1 ... nk, k]: each tensor broadcast
// over the grid (meshgrid "ij"), flattened, stacked as columns. One tensor: itself.
Status convertCartesianProd(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType out = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::vector<const Value*> elems, ctx.listElements(args.in("tensors", 0)));
  std::vector<std::string> ts, sizes;
  for (const Value* e : elems) {
    if (ctx.rank(e) != 1) return ctx.error("bad-argument", "cartesian_prod of a tensor that is not 1-D");
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(e, out));
    ts.push_back(t);
    sizes.push_back(ctx.shapeOf(t));
  }
  if (ts.empty()) return ctx.error("bad-argument", "cartesian_prod of no tensors");
  if (ts.size() == 1) return bindOut(ctx, n, ctx.emit1("Identity", {ts[0]}));
  const int64_t k = static_cast<int64_t>(ts.size());
  std::string grid = ctx.emit1("Concat", sizes, {attrInt("axis", 0)});
  // Broadcast by a Where over a grid of trues, not Expand: ONNX Runtime's Expand of a 1 against a
  // 0 keeps the 1 when the sizes are known at load time (an empty tensor then leaves its partners'
  // rows in the product, at every opset), and a Slice to the row count needs opset 10.
  std::string everywhere = ctx.emit1("ConstantOfShape", {grid}, {attrTensor("value", scalarHostTensor(1, DType::Bool, {1}))});
  std::vector<std::string> columns;
  for (int64_t i = 0; i < k; ++i) {
    std::vector<int64_t> shape(k, 1);
    shape[i] = -1;
    std::string r = ctx.reshape(ts[i], shape);
    std::string g = ctx.emit1("Where", {everywhere, r, r});
    columns.push_back(ctx.emit1("Flatten", {g}, {attrInt("axis", k)}));  // [N, 1]: no -1 to infer from 0 elements
  }
  return bindOut(ctx, n, ctx.emit1("Concat", columns, {attrInt("axis", 1)}));
}

// Columns x^p for the powers p in `powers` (int64 [N]) of x [..., n]: [..., n, N]. Pow with integer
// exponents, in float64 for integer x (exact up to 2^53).
std::string powerColumns(Context& ctx, const std::string& x, int rank, const std::string& powers, DType work) {
  return ctx.emit1("Pow", {ctx.unsqueeze(x, {rank}), ctx.cast(powers, work)});
}

DType vanderWork(DType out) { return out == DType::Float32 || out == DType::Float64 ? out : DType::Float64; }

// linalg_vander(x, *, N=None): [..., n] -> [..., n, N] with columns x^0 ... x^(N-1) (N defaults
// to n).
Status convertLinalgVander(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* xv = args.in("x", 0);
  const DType out = n.output(0)->meta.dtype, work = vanderWork(out);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(xv, work));
  const int rank = ctx.rank(xv);
  if (rank == 0) return ctx.error("bad-argument", "linalg_vander of a 0-d tensor", "give a tensor of at least one dimension");
  std::string count;
  const Value* nv = args.optIn("N");
  if (nv && !ctx.isNone(nv)) {
    OXPORT_ASSIGN(int64_t cols, ctx.constInt(nv));
    if (cols <= 1) return ctx.error("bad-argument", "linalg_vander with N = " + std::to_string(cols), "N must be greater than 1");
    count = ctx.constInt64s({cols});
  } else {
    count = dimSize(ctx, x, rank - 1);
  }
  return bindOut(ctx, n, castIf(ctx, powerColumns(ctx, x, rank, arangeOf(ctx, count), work), work, out));
}

// vander(x, N=None, increasing=False): 1-D x -> [n, N], columns x^(N-1) ... x^0 (increasing: the
// other way); N = 0 gives [n, 0].
Status convertVander(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* xv = args.in("x", 0);
  const DType out = n.output(0)->meta.dtype, work = vanderWork(out);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(xv, work));
  if (ctx.rank(xv) != 1) return ctx.error("bad-argument", "vander of a tensor that is not 1-D", "give a 1-D tensor");
  std::string count = dimSize(ctx, x, 0);
  const Value* nv = args.optIn("N", 1);
  if (nv && !ctx.isNone(nv)) {
    OXPORT_ASSIGN(int64_t cols, ctx.constInt(nv));
    if (cols < 0) return ctx.error("bad-argument", "vander with N = " + std::to_string(cols), "N must be non-negative");
    count = ctx.constInt64s({cols});
  }
  bool increasing = false;
  if (const Value* iv = args.optIn("increasing", 2)) { OXPORT_ASSIGN(increasing, ctx.constBool(iv)); }
  std::string powers = arangeOf(ctx, count);
  if (!increasing)
    powers = ctx.emit1("Sub", {ctx.emit1("Sub", {count, ctx.constInt64s({1})}), powers});
  return bindOut(ctx, n, castIf(ctx, powerColumns(ctx, x, 1, powers, work), work, out));
}

// combinations(self, r=2, with_replacement=False): the r-tuples of a 1-D tensor's elements in
// itertools' order, as torch builds them: an r-axis grid of positions, a mask i1 < i2 < ... < ir
// (<= with replacement), NonZero (row-major, so lexicographic) for the index tuples, a Gather. The
// length stays dynamic; the grid holds n^r booleans.
Status convertCombinations(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* xv = args.in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(xv));
  if (ctx.rank(xv) != 1) return ctx.error("bad-argument", "combinations of a tensor that is not 1-D", "give a 1-D tensor");
  int64_t r = 2;
  bool repl = false;
  if (const Value* rv = args.optIn("r", 1)) { OXPORT_ASSIGN(r, ctx.constInt(rv)); }
  if (const Value* wv = args.optIn("with_replacement", 2)) { OXPORT_ASSIGN(repl, ctx.constBool(wv)); }
  if (r < 0) return ctx.error("bad-argument", "combinations with r = " + std::to_string(r), "r must be non-negative");
  if (r == 0) return bindOut(ctx, n, ctx.slice(x, {0}, {0}, {0}));  // torch gives an empty 1-D tensor
  if (r > 6)
    return ctx.error("unsupported-form", "combinations with r = " + std::to_string(r),
                     "the index grid has n^r elements; r up to 6 converts");
  std::string ar = arangeOf(ctx, dimSize(ctx, x, 0));
  auto axisOf = [&](int64_t k) {  // positions along axis k of an r-axis grid
    std::vector<int64_t> axes;
    for (int64_t a = 0; a < r; ++a)
      if (a != k) axes.push_back(a);
    return axes.empty() ? ar : ctx.unsqueeze(ar, axes);
  };
  std::string keep;
  std::string prev = axisOf(0);
  for (int64_t k = 1; k < r; ++k) {
    std::string cur = axisOf(k);
    std::string ok = repl ? ctx.emit1("Not", {ctx.emit1("Less", {cur, prev})}) : ctx.emit1("Greater", {cur, prev});
    keep = keep.empty() ? ok : ctx.emit1("And", {keep, ok});
    prev = cur;
  }
  if (keep.empty()) keep = ctx.emit1("Greater", {ar, ctx.constInt64s({-1})});  // r = 1: every element
  std::string idx = ctx.emit1("Transpose", {ctx.emit1("NonZero", {keep})}, {attrInts("perm", {1, 0})});  // [M, r]
  return bindOut(ctx, n, ctx.emit1("Gather", {x, idx}, {attrInt("axis", 0)}));
}

// x [..., K] and y [..., K] broadcast against each other as Mul does, summed over axis `axis` of
// the broadcast rank, in the output's reduction dtype.
std::string mulSum(Context& ctx, const Node& n, const std::string& x, const std::string& y, int64_t axis) {
  const DType out = n.output(0)->meta.dtype, work = reduceWorkType(out);
  std::string s = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {x, y}), {axis}, false);
  return castIf(ctx, s, work, out);
}

// inner(self, other): [A..., K] . [B..., K] -> [A..., B...]: self with rank(other) - 1 axes of size
// 1 before its last, so the product broadcasts to [A..., B..., K], summed over K.
Status convertInner(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType work = reduceWorkType(n.output(0)->meta.dtype);
  OXPORT_ASSIGN(std::string a, ctx.tensorOfType(args.in("self", 0), work));
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("other", 1), work));
  const int ra = ctx.rank(args.in("self", 0)), rb = ctx.rank(args.in("other", 1));
  if (ra == 0 || rb == 0)
    return bindOut(ctx, n, castIf(ctx, ctx.emit1("Mul", {a, b}), work, n.output(0)->meta.dtype));
  std::vector<int64_t> axes;
  for (int k = 0; k < rb - 1; ++k) axes.push_back(ra - 1 + k);
  if (!axes.empty()) a = ctx.unsqueeze(a, axes);
  return bindOut(ctx, n, mulSum(ctx, n, a, b, ra + rb - 2));
}

// linalg_vecdot(x, y, *, dim=-1): sum(x * y, dim) over the broadcast shape (real tensors).
Status convertLinalgVecdot(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType work = reduceWorkType(n.output(0)->meta.dtype);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("x", 0), work));
  OXPORT_ASSIGN(std::string y, ctx.tensorOfType(args.in({"y", "other"}, 1), work));
  const int r = std::max(ctx.rank(args.in("x", 0)), ctx.rank(args.in({"y", "other"}, 1)));
  int64_t dim = -1;
  if (const Value* dv = args.optIn("dim", 2)) { OXPORT_ASSIGN(dim, ctx.constInt(dv)); }
  if (r == 0) return ctx.error("bad-argument", "linalg_vecdot of 0-d tensors", "give tensors of at least one dimension");
  return bindOut(ctx, n, mulSum(ctx, n, x, y, ctx.normDim(dim, r)));
}

}  // namespace

void registerProductOps(Registry& r) {
  r.add("aten::kron", convertKron);
  r.add("aten::block_diag", convertBlockDiag);
  r.add("aten::cartesian_prod", convertCartesianProd);
  r.add("aten::linalg_vander", convertLinalgVander);
  r.add("aten::vander", convertVander);
  r.add("aten::combinations", convertCombinations);
  r.add("aten::inner", convertInner);
  r.add("aten::linalg_vecdot", convertLinalgVecdot);
}

}  // namespace oxport::convert
