// Ops whose output length depends on the values: unique_consecutive (CTC greedy decoding's
// collapse of repeats), bincount and pdist. The lengths come from NonZero/Compress and from
// ReduceMax over the data, so every size stays dynamic; an empty input gives empty outputs as in
// PyTorch.
#include <cmath>
#include <optional>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// a != b elementwise (a bool tensor), for a and b of dtype dt (already in a comparable dtype).
// Equal takes floats from opset 11; before it, a != b is a < b or a > b or a is NaN.
std::string notEqual(Context& ctx, const std::string& a, const std::string& b, DType dt) {
  const bool floating = dt == DType::Float32 || dt == DType::Float64;
  if (!floating || ctx.opset() >= 11) return ctx.emit1("Not", {ctx.emit1("Equal", {a, b})});
  std::string ordered = ctx.emit1("Or", {ctx.emit1("Less", {a, b}), ctx.emit1("Greater", {a, b})});
  return ctx.emit1("Or", {ordered, ctx.emit1("IsNaN", {a})});
}

// The dtype elements are compared in: Equal runs on int32/int64/float/double/bool in every
// opset; the other dtypes compare exactly after a cast.
DType compareType(DType dt) {
  if (dt == DType::Float16 || dt == DType::BFloat16) return DType::Float32;
  if (dt == DType::Float32 || dt == DType::Float64 || dt == DType::Int64 || dt == DType::Int32) return dt;
  return DType::Int64;
}

// unique_consecutive(self, return_inverse, return_counts, dim?) -> (values, inverse, counts).
// keep[i] = i == 0 or element (or slice along dim) i differs from i - 1; values = Compress(keep);
// inverse = CumSum(keep) - 1; counts = the distances between the kept positions (and the end).
Status convertUniqueConsecutive(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* xv = args.in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(xv));
  OXPORT_ASSIGN(bool want_inverse, args.constBool("return_inverse", 1));
  OXPORT_ASSIGN(bool want_counts, args.constBool("return_counts", 2));
  if (want_inverse && ctx.opset() < 11) return ctx.needsOpset(11, "unique_consecutive with return_inverse (CumSum)");
  const int rank = ctx.rank(xv);
  std::optional<int64_t> dim;
  if (args.has("dim", 3)) {
    OXPORT_ASSIGN(int64_t d, args.constInt("dim", 3));
    if (rank == 0) return ctx.error("bad-argument", "unique_consecutive along a dim of a 0-d tensor");
    dim = ctx.normDim(d, rank);
  }
  const DType dt = ctx.dtype(xv), ct = compareType(dt);
  // The sequence compared: x flattened (no dim), or x along `dim`.
  std::string seq = dim ? x : ctx.reshape(x, {-1});
  const int64_t axis = dim ? *dim : 0;
  std::string cmp = castIf(ctx, seq, dt, ct);
  std::string next = ctx.slice(cmp, {1}, {kInt64Max}, {axis});
  std::string prev = ctx.slice(cmp, {0}, {-1}, {axis});
  std::string differs = notEqual(ctx, next, prev, ct);  // [L - 1, ...]
  if (dim && rank > 1) {
    // A slice differs when any of its elements does.
    std::vector<int64_t> others;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis) others.push_back(i);
    differs = ctx.cast(reduceOver(ctx, "ReduceMax", ctx.cast(differs, DType::Int32), others, false), DType::Bool);
  }
  // keep: true first (when there is a first), then `differs`.
  std::string len = dimSize(ctx, seq, axis);  // [1]
  // min(L, 1) in float: Min takes integers from opset 12 only.
  std::string head_len = ctx.emit1("Min", {ctx.cast(len, DType::Float32), ctx.constant(scalarHostTensor(1.0, DType::Float32, {1}))});
  std::string head = ctx.emit1("Expand", {ctx.constant(scalarHostTensor(1.0, DType::Bool, {1})), ctx.cast(head_len, DType::Int64)});
  std::string keep = ctx.emit1("Concat", {head, differs}, {attrInt("axis", 0)});
  ctx.bind(n.output(0), ctx.emit1("Compress", {seq, keep}, {attrInt("axis", axis)}));
  if (want_inverse) {
    std::string pos = ctx.emit1("CumSum", {ctx.cast(keep, DType::Int64), ctx.constInt64s({0}, true)});
    std::string inv = ctx.emit1("Sub", {pos, ctx.constInt64s({1}, true)});
    ctx.bind(n.output(1), dim ? inv : ctx.emit1("Reshape", {inv, ctx.shapeOf(x)}));
  } else {
    ctx.bind(n.output(1), ctx.constInt64s({}));
  }
  if (want_counts) {
    std::string starts = ctx.reshape(ctx.emit1("NonZero", {keep}), {-1});
    std::string ends = ctx.emit1("Concat", {ctx.slice(starts, {1}, {kInt64Max}, {0}), len}, {attrInt("axis", 0)});
    ctx.bind(n.output(2), ctx.emit1("Sub", {ends, starts}));
  } else {
    ctx.bind(n.output(2), ctx.constInt64s({}));
  }
  return okStatus();
}

// bincount(self, weights?, minlength): out[b] = the number (or the sum of the weights) of the
// elements equal to b, for b < max(max(self) + 1, minlength): a one-hot comparison reduced over
// the elements.
Status convertBincount(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* xv = args.in("self", 0);
  if (ctx.rank(xv) != 1) return ctx.error("bad-argument", "bincount of a " + ctx.meta(xv).toString() + " tensor: expected 1-D");
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(xv, DType::Int64));
  int64_t minlength = 0;
  if (args.has("minlength", 2)) { OXPORT_ASSIGN(minlength, args.constInt("minlength", 2)); }
  std::string floor = ctx.constInt64s({std::max<int64_t>(minlength, 0) - 1});
  std::string top = reduceOver(ctx, "ReduceMax", ctx.emit1("Concat", {x, floor}, {attrInt("axis", 0)}), {0}, true);
  std::string size = ctx.emit1("Add", {top, ctx.constInt64s({1})});  // [1]
  std::string bins = arangeOf(ctx, size);
  std::string hit = ctx.emit1("Equal", {ctx.unsqueeze(x, {1}), ctx.unsqueeze(bins, {0})});  // [L, bins]
  const DType out = n.output(0)->meta.dtype;
  const DType work = reduceWorkType(out);
  std::string terms = ctx.cast(hit, work);
  if (args.has("weights", 1)) {
    OXPORT_ASSIGN(std::string w, args.tensorOfType("weights", 1, work));
    terms = ctx.emit1("Mul", {terms, ctx.unsqueeze(w, {1})});
  }
  return bindOut(ctx, n, castIf(ctx, reduceOver(ctx, "ReduceSum", terms, {0}, false), work, out));
}

// pdist(self [N, M], p): the p-norm distances of the pairs i < j in row-major order: every
// pair's distance [N, N], compressed by the mask i < j.
Status convertPdist(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* xv = args.in("self", 0);
  if (ctx.rank(xv) != 2) return ctx.error("bad-argument", "pdist of a " + ctx.meta(xv).toString() + " tensor: expected N x M");
  OXPORT_ASSIGN(std::string x, ctx.tensor(xv));
  double p = 2.0;
  if (args.has("p", 1)) { OXPORT_ASSIGN(p, args.constDouble("p", 1)); }
  if (p < 0) return ctx.error("bad-argument", "pdist with p < 0");
  const DType dt = ctx.dtype(xv);
  std::string d = ctx.emit1("Sub", {ctx.unsqueeze(x, {1}), ctx.unsqueeze(x, {0})});  // [N, N, M]
  std::string dist;
  if (p == 0) {
    dist = reduceOver(ctx, "ReduceSum", ctx.cast(notEqual(ctx, d, ctx.constScalar(0.0, dt), dt), dt), {2}, false);
  } else if (std::isinf(p)) {
    dist = reduceOver(ctx, "ReduceMax", ctx.emit1("Abs", {d}), {2}, false);
  } else if (p == 1) {
    dist = reduceOver(ctx, "ReduceSum", ctx.emit1("Abs", {d}), {2}, false);
  } else if (p == 2) {
    dist = ctx.emit1("Sqrt", {reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {d, d}), {2}, false)});
  } else {
    std::string powed = ctx.emit1("Pow", {ctx.emit1("Abs", {d}), ctx.constScalar(p, dt)});
    dist = ctx.emit1("Pow", {reduceOver(ctx, "ReduceSum", powed, {2}, false), ctx.constScalar(1.0 / p, dt)});
  }
  std::string idx = arangeOf(ctx, dimSize(ctx, x, 0));
  std::string upper = ctx.emit1("Less", {ctx.unsqueeze(idx, {1}), ctx.unsqueeze(idx, {0})});  // [N, N]
  return bindOut(ctx, n, ctx.emit1("Compress", {ctx.reshape(dist, {-1}), ctx.reshape(upper, {-1})}, {attrInt("axis", 0)}));
}

}  // namespace

void registerUniqueOps(Registry& r) {
  r.add("aten::unique_consecutive", convertUniqueConsecutive);
  r.add("aten::bincount", convertBincount);
  r.add("aten::pdist", convertPdist);
}

}  // namespace oxport::convert
