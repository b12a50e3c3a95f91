// Cumulative ops that ONNX has no single operator for: cumprod, cummax, cummin, logcumsumexp.
//
// One form serves every opset from 9 to 17: along the scanned axis (size N) the input is
// broadcast against itself as an N x N grid (row i, column j), a triangular mask keeps the
// columns j <= i, and one reduction over the columns gives every prefix at once. The mask is made
// from the axis' size read with Shape (arangeOf: Range, or NonZero before opset 11), so the axis
// stays dynamic. Memory grows with N^2 times the other axes, which suits the short axes these ops
// run over in models (sequence positions, a few classes); the result is exact, not a log/exp trick.
#include <cmath>
#include <limits>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {


bool isFloat(DType dt) { return dt == DType::Float32 || dt == DType::Float64; }


// The grid over axis d of a rank-r tensor: x with a new axis inserted at d, so row i (axis d)
// broadcasts and column j (axis d+1) runs over the input's elements.
struct Grid {
  std::string cols;    // x unsqueezed at d: [..., 1, N, ...]
  std::string rows;    // x unsqueezed at d+1: [..., N, 1, ...]
  std::string keep;    // bool [N, N, 1...]: column j <= row i
  std::string col_ix;  // int64 [N, 1...] (r - d axes): j, broadcast over rows and the axes before
  int64_t axis;        // d+1, the axis reduced
};

Grid makeGrid(Context& ctx, const std::string& x, int64_t d, int rank) {
  Grid g;
  g.axis = d + 1;
  g.cols = ctx.unsqueeze(x, {d});
  g.rows = ctx.unsqueeze(x, {d + 1});
  std::string ar = arangeOf(ctx, dimSize(ctx, x, d));
  std::vector<int64_t> trailing;
  for (int64_t k = 0; k < rank - 1 - d; ++k) trailing.push_back(2 + k);
  std::string i = ctx.unsqueeze(ar, {1});
  std::string j = ctx.unsqueeze(ar, {0});
  std::string keep = ctx.emit1("Not", {ctx.emit1("Greater", {j, i})});
  g.keep = trailing.empty() ? keep : ctx.unsqueeze(keep, trailing);
  std::vector<int64_t> col_axes;
  for (int64_t k = 0; k < rank - 1 - d; ++k) col_axes.push_back(1 + k);
  g.col_ix = col_axes.empty() ? ar : ctx.unsqueeze(ar, col_axes);
  return g;
}

// What every scan starts from: self in its work dtype, its rank and, for rank > 0, the grid over
// `dim`. `work` maps self's dtype (out: the output's) to the dtype the scan runs in.
struct Scan {
  std::string x;
  DType in, out, work;
  int rank;
  Grid g;
};

Result<Scan> scanOf(Context& ctx, const Node& n, DType (*work)(DType in, DType out)) {
  const Args args(ctx, n);
  Scan s;
  OXPORT_ASSIGN(std::string x0, args.tensor("self", 0));
  OXPORT_ASSIGN(int64_t dim, args.constInt("dim", 1));
  s.in = ctx.dtype(args.in("self", 0));
  s.out = n.output(0)->meta.dtype;
  s.work = work(s.in, s.out);
  s.rank = ctx.rank(args.in("self", 0));
  s.x = castIf(ctx, x0, s.in, s.work);
  if (s.rank > 0) s.g = makeGrid(ctx, s.x, ctx.normDim(dim, s.rank), s.rank);
  return s;
}

DType outputWork(DType, DType out) { return reduceWorkType(out); }

// cumprod(self, dim, dtype=None)
Status convertCumprod(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(Scan s, scanOf(ctx, n, outputWork));
  if (s.rank == 0) return bindOut(ctx, n, castIf(ctx, ctx.emit1("Identity", {s.x}), s.work, s.out));
  std::string masked = ctx.emit1("Where", {s.g.keep, s.g.cols, ctx.constScalar(1, s.work)});
  std::string y = reduceOver(ctx, "ReduceProd", masked, {s.g.axis}, false);
  return bindOut(ctx, n, castIf(ctx, y, s.work, s.out));
}

// logcumsumexp(self, dim): log of the running sum of exp, shifted by the running max so that
// large inputs do not overflow; an all -inf prefix gives -inf and a +inf gives +inf, as libtorch.
Status convertLogcumsumexp(Context& ctx, const Node& n) {
  const DType out = n.output(0)->meta.dtype;
  if (!isFloat(reduceWorkType(out)))
    return ctx.error("unsupported-form", std::string("logcumsumexp of a ") + dtypeName(out) + " tensor",
                     "libtorch computes it for floating-point tensors only");
  OXPORT_ASSIGN(Scan sc, scanOf(ctx, n, outputWork));
  const DType work = sc.work;
  if (sc.rank == 0) return bindOut(ctx, n, castIf(ctx, ctx.emit1("Identity", {sc.x}), work, out));
  const Grid& g = sc.g;
  const double inf = std::numeric_limits<double>::infinity();
  std::string masked = ctx.emit1("Where", {g.keep, g.cols, ctx.constScalar(-inf, work)});
  std::string m = reduceOver(ctx, "ReduceMax", masked, {g.axis}, true);
  // An infinite (or NaN) running max shifts by 0 instead: inf - inf would be NaN.
  std::string not_finite = ctx.emit1("IsNaN", {ctx.emit1("Mul", {m, ctx.constScalar(0, work)})});
  std::string shift = ctx.emit1("Where", {not_finite, ctx.constScalar(0, work), m});
  std::string e = ctx.emit1("Exp", {ctx.emit1("Sub", {masked, shift})});
  std::string s = ctx.emit1("Log", {reduceOver(ctx, "ReduceSum", e, {g.axis}, true)});
  std::string y = ctx.squeeze(ctx.emit1("Add", {s, shift}), {g.axis});
  return bindOut(ctx, n, castIf(ctx, y, work, out));
}

// cummax(self, dim) / cummin(self, dim) -> (values, indices). libtorch's rule: the index is the
// last position of the running extreme (ties move it forward), and once a NaN is seen the value
// is NaN and the index the last NaN so far.
Status convertCumExtreme(Context& ctx, const Node& n, bool is_max) {
  auto work_of = [](DType in, DType) { return in == DType::Bool ? DType::Int32 : reduceWorkType(in); };
  OXPORT_ASSIGN(Scan s, scanOf(ctx, n, work_of));
  const DType out = s.out, work = s.work;
  if (s.rank == 0) {
    ctx.bind(n.output(0), castIf(ctx, ctx.emit1("Identity", {s.x}), work, out));
    ctx.bind(n.output(1), ctx.constInt64s({0}, true));
    return okStatus();
  }
  const Grid& g = s.g;
  const std::string reduce = is_max ? "ReduceMax" : "ReduceMin";
  const bool fp = isFloat(work);
  std::string keep = g.keep;
  std::string last_nan;
  if (fp) {
    std::string nan_cols = ctx.emit1("IsNaN", {g.cols});
    keep = ctx.emit1("And", {g.keep, ctx.emit1("Not", {nan_cols})});
    std::string nan_at = ctx.emit1("Where", {ctx.emit1("And", {g.keep, nan_cols}), g.col_ix, ctx.constInt64s({-1}, true)});
    last_nan = reduceOver(ctx, "ReduceMax", nan_at, {g.axis}, false);
  }
  // A masked-out column takes a value that cannot change the extreme: +-inf for floats, the
  // row's own element (always in its prefix) otherwise.
  const double inf = std::numeric_limits<double>::infinity();
  std::string fill = fp ? ctx.constScalar(is_max ? -inf : inf, work) : g.rows;
  std::string masked = ctx.emit1("Where", {keep, g.cols, fill});
  std::string ext = reduceOver(ctx, reduce, masked, {g.axis}, true);
  // Equal takes floats only from opset 11: neither less nor greater is equal (NaN columns are
  // already masked out).
  std::string differ = ctx.emit1("Or", {ctx.emit1("Less", {g.cols, ext}), ctx.emit1("Greater", {g.cols, ext})});
  std::string hit = ctx.emit1("And", {keep, ctx.emit1("Not", {differ})});
  std::string at = ctx.emit1("Where", {hit, g.col_ix, ctx.constInt64s({-1}, true)});
  std::string idx = reduceOver(ctx, "ReduceMax", at, {g.axis}, false);
  std::string values = ctx.squeeze(ext, {g.axis});
  if (fp) {
    std::string has_nan = ctx.emit1("Not", {ctx.emit1("Less", {last_nan, ctx.constInt64s({0}, true)})});
    values = ctx.emit1("Where", {has_nan, ctx.constScalar(std::nan(""), work), values});
    idx = ctx.emit1("Where", {has_nan, last_nan, idx});
  }
  ctx.bind(n.output(0), castIf(ctx, values, work, out));
  ctx.bind(n.output(1), idx);
  return okStatus();
}

}  // namespace

void registerCumulativeOps(Registry& r) {
  addAll(r, {"aten::cumprod", "aten::cumprod_"}, convertCumprod);
  addAll(r, {"aten::logcumsumexp"}, convertLogcumsumexp);
  addAll(r, {"aten::cummax"}, [](Context& ctx, const Node& n) { return convertCumExtreme(ctx, n, true); });
  addAll(r, {"aten::cummin"}, [](Context& ctx, const Node& n) { return convertCumExtreme(ctx, n, false); });
}

}  // namespace oxport::convert
