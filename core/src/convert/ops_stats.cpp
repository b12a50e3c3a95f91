// Statistics over observations that ONNX has no operator for: cov (correction, fweights,
// aweights), corrcoef, and segment_reduce over segments of constant lengths. Each follows
// libtorch's own formula step by step, so the rounding matches as closely as float arithmetic in
// another order allows.
#include <cmath>
#include <limits>
#include <optional>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// cov of x [vars, obs] (a 1-D x is one variable) in dtype dt, as torch.cov computes it:
// w = fweights * aweights (either, or none), avg = sum(x w) / sum(w) per variable, the normaliser
// sum(w) - correction * sum(w aweights) / sum(w) (sum(w) - correction without aweights), set to 0
// when not positive (libtorch warns and divides by it), and (x - avg) (x - avg)^T w / norm. The
// result keeps [vars, vars]; the caller squeezes.
struct CovArgs {
  const Value* x = nullptr;
  int64_t correction = 1;
  const Value* fweights = nullptr;
  const Value* aweights = nullptr;
};

Result<std::string> covOf(Context& ctx, const CovArgs& a, DType dt) {
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(a.x, dt));
  const int rank = ctx.rank(a.x);
  if (rank > 2) return ctx.error("bad-argument", "cov of a tensor of more than 2 dimensions", "give [variables, observations]");
  if (rank < 2) x = ctx.reshape(x, {1, -1});
  std::string w;
  for (const Value* wv : {a.fweights, a.aweights}) {
    if (!wv || ctx.isNone(wv)) continue;
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(wv, dt));
    w = w.empty() ? t : ctx.emit1("Mul", {w, t});
  }
  std::string wsum, avg;
  if (w.empty()) {
    wsum = ctx.cast(dimSize(ctx, x, 1, true), dt);
    avg = reduceOver(ctx, "ReduceMean", x, {1}, true);
  } else {
    wsum = reduceOver(ctx, "ReduceSum", w, {0}, false);
    avg = ctx.emit1("Div", {reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {x, w}), {1}, true), wsum});
  }
  const std::string corr = ctx.constScalar(static_cast<double>(a.correction), dt);
  std::string norm;
  if (!w.empty() && a.correction != 0 && a.aweights && !ctx.isNone(a.aweights)) {
    OXPORT_ASSIGN(std::string aw, ctx.tensorOfType(a.aweights, dt));
    std::string waw = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {w, aw}), {0}, false);
    norm = ctx.emit1("Sub", {wsum, ctx.emit1("Div", {ctx.emit1("Mul", {corr, waw}), wsum})});
  } else {
    norm = ctx.emit1("Sub", {wsum, corr});
  }
  const std::string zero = ctx.constScalar(0, dt);
  norm = ctx.emit1("Where", {ctx.emit1("Greater", {norm, zero}), norm, zero});
  std::string xc = ctx.emit1("Sub", {x, avg});
  std::string right = w.empty() ? xc : ctx.emit1("Mul", {xc, w});
  std::string c = ctx.emit1("MatMul", {xc, ctx.emit1("Transpose", {right}, {attrInts("perm", {1, 0})})});
  return ctx.emit1("Div", {c, norm});
}

// [vars, vars] as torch's squeeze() leaves it: 0-d for one variable (the example's count).
std::string squeezeOne(Context& ctx, const Node& n, const std::string& c) {
  return ctx.rank(n.output(0)) == 0 ? ctx.squeeze(c, {0, 1}) : c;
}

// cov(self, *, correction=1, fweights=None, aweights=None)
Status convertCov(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  CovArgs a;
  a.x = args.in("self", 0);
  if (const Value* v = args.optIn("correction", 1)) { OXPORT_ASSIGN(a.correction, ctx.constInt(v)); }
  a.fweights = args.optIn("fweights", 2);
  a.aweights = args.optIn("aweights", 3);
  OXPORT_ASSIGN(std::string c, covOf(ctx, a, n.output(0)->meta.dtype));
  return bindOut(ctx, n, squeezeOne(ctx, n, c));
}

// corrcoef(self): cov / (stddev_i stddev_j), clipped to [-1, 1] (NaN stays NaN); one variable
// gives c / c, as torch.
Status convertCorrcoef(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  CovArgs a;
  a.x = args.in("self", 0);
  OXPORT_ASSIGN(std::string c, covOf(ctx, a, dt));
  if (ctx.rank(n.output(0)) == 0) {
    std::string s = ctx.squeeze(c, {0, 1});
    return bindOut(ctx, n, ctx.emit1("Div", {s, s}));
  }
  // The diagonal: a Where on the identity's positions and a row sum (exact; no 0 * inf).
  std::string eye = ctx.cast(ctx.emit1("EyeLike", {c}), DType::Bool);
  std::string d = reduceOver(ctx, "ReduceSum", ctx.emit1("Where", {eye, c, ctx.constScalar(0, dt)}), {1}, false);
  std::string sd = ctx.emit1("Sqrt", {d});
  c = ctx.emit1("Div", {c, ctx.unsqueeze(sd, {1})});
  c = ctx.emit1("Div", {c, ctx.unsqueeze(sd, {0})});
  const std::string lo = ctx.constScalar(-1, dt), hi = ctx.constScalar(1, dt);
  c = ctx.emit1("Where", {ctx.emit1("Less", {c, lo}), lo, c});
  return bindOut(ctx, n, ctx.emit1("Where", {ctx.emit1("Greater", {c, hi}), hi, c}));
}

// The segment lengths of segment_reduce: `lengths`, or the differences of `offsets`; constants.
Result<std::vector<int64_t>> segmentLengths(Context& ctx, const Args& args) {
  const Value* lv = args.optIn("lengths", 2);
  const Value* ov = args.optIn("offsets", 4);
  const Value* iv = args.optIn("indices", 3);
  if (iv && !ctx.isNone(iv))
    return ctx.error("unsupported-form", "segment_reduce with indices", "PyTorch does not implement indices either; give lengths");
  const bool by_lengths = lv && !ctx.isNone(lv);
  const Value* v = by_lengths ? lv : ov;
  if (!v || ctx.isNone(v)) return ctx.error("bad-argument", "segment_reduce without lengths or offsets");
  if (!ctx.isStatic(v) || ctx.rank(v) != 1)
    return ctx.error("unsupported-form", "segment_reduce with lengths or offsets computed from the inputs or not 1-D",
                     "give the segment lengths as a constant 1-D tensor (the segments are cut at export)");
  OXPORT_ASSIGN(auto vals, ctx.constInts(v));
  if (by_lengths) return vals;
  std::vector<int64_t> lens;
  for (size_t i = 1; i < vals.size(); ++i) lens.push_back(vals[i] - vals[i - 1]);
  return lens;
}

// segment_reduce(data, reduce, *, lengths, indices, offsets, axis=0, unsafe=False, initial=None):
// one Slice and Reduce per segment, concatenated along axis. With `initial`, it joins every
// segment's reduction (mean: (initial + sum) / length) and fills the empty ones; without, empty
// segments are 0 (sum), 1 (prod), NaN (mean), -inf (max), +inf (min), as libtorch.
Status convertSegmentReduce(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* dv = args.in("data", 0);
  const DType dt = n.output(0)->meta.dtype, work = reduceWorkType(dt);
  OXPORT_ASSIGN(std::string data, ctx.tensorOfType(dv, work));
  OXPORT_ASSIGN(std::string reduce, args.constString("reduce", 1));
  OXPORT_ASSIGN(auto lens, segmentLengths(ctx, args));
  const int rank = ctx.rank(dv);
  int64_t axis = 0;
  if (const Value* v = args.optIn("axis", 5)) { OXPORT_ASSIGN(axis, ctx.constInt(v)); }
  axis = ctx.normDim(axis, rank);
  if (axis != 0)
    return ctx.error("unsupported-form", "segment_reduce along axis " + std::to_string(axis),
                     "its lengths then have the leading axes of data too; reduce along axis 0");
  std::optional<double> initial;
  if (const Value* v = args.optIn("initial", 7); v && !ctx.isNone(v)) {
    OXPORT_ASSIGN(double iv, ctx.constDouble(v));
    initial = iv;
  }
  const double inf = std::numeric_limits<double>::infinity();
  struct Kind {
    const char* name;
    const char* reduce;
    const char* join;  // how `initial` joins the reduction
    double empty;
  };
  static const Kind kinds[] = {{"sum", "ReduceSum", "Add", 0},      {"prod", "ReduceProd", "Mul", 1},
                               {"mean", "ReduceSum", "Add", std::nan("")}, {"max", "ReduceMax", "Max", -inf},
                               {"min", "ReduceMin", "Min", inf}};
  const Kind* kind = nullptr;
  for (const auto& k : kinds)
    if (reduce == k.name) kind = &k;
  if (!kind) return ctx.error("bad-argument", "segment_reduce with reduce = '" + reduce + "'", "use sum, prod, mean, max or min");
  // The shape of one segment's result: data's with axis 0 of size 1.
  std::string one_shape = ctx.emit1("Concat", {ctx.constInt64s({1}), ctx.slice(ctx.shapeOf(data), {1}, {kInt64Max}, {0})},
                                    {attrInt("axis", 0)});
  std::string empty = ctx.emit1("Expand", {ctx.constScalar(initial ? *initial : kind->empty, work), one_shape});
  std::vector<std::string> parts;
  int64_t start = 0;
  for (int64_t len : lens) {
    if (len < 0) return ctx.error("bad-argument", "segment_reduce with a negative length");
    if (len == 0) {
      parts.push_back(empty);
      continue;
    }
    std::string seg = ctx.slice(data, {start}, {start + len}, {0});
    std::string r = reduceOver(ctx, kind->reduce, seg, {0}, true);
    if (initial) r = ctx.emit1(kind->join, {r, ctx.constScalar(*initial, work)});
    if (reduce == "mean") r = ctx.emit1("Div", {r, ctx.constScalar(static_cast<double>(len), work)});
    parts.push_back(r);
    start += len;
  }
  if (parts.empty()) return ctx.error("bad-argument", "segment_reduce with no segments");
  std::string y = parts.size() == 1 ? parts[0] : ctx.emit1("Concat", parts, {attrInt("axis", 0)});
  return bindOut(ctx, n, castIf(ctx, y, work, dt));
}

}  // namespace

void registerStatsOps(Registry& r) {
  r.add("aten::cov", convertCov);
  r.add("aten::corrcoef", convertCorrcoef);
  r.add("aten::segment_reduce", convertSegmentReduce);
}

}  // namespace oxport::convert
