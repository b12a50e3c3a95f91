// Order statistics past torch.onnx: msort, nanmedian, quantile/nanquantile (every interpolation),
// mode, histc and histogram. The sorted ones run a full TopK of the smallest (opset 11) along the axis, its
// length read from Shape (dynamic); NaN sorts last, as in PyTorch, by sorting a key with NaN as
// +inf and gathering the values from the input.
#include <cmath>
#include <limits>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// The dtype the sort and the arithmetic run in: ONNX Runtime's TopK sorts float, double, int32
// and int64; half types go through float32, the small integers and bool through int64.
DType orderType(DType dt) {
  if (dt == DType::Float32 || dt == DType::Float64 || dt == DType::Int32 || dt == DType::Int64) return dt;
  return isFloating(dt) ? DType::Float32 : DType::Int64;
}

// a == b elementwise; Equal takes floats from opset 11, before that not (a < b or a > b).
std::string equalAny(Context& ctx, const std::string& a, const std::string& b) {
  if (ctx.opset() >= 11) return ctx.emit1("Equal", {a, b});
  return ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {a, b}), ctx.emit1("Greater", {a, b})})});
}

struct Sorted {
  std::string values, indices;
};

// x (of dtype `work`, an orderType) sorted ascending along `axis`, NaN last; the indices into x.
Sorted sortNanLast(Context& ctx, const std::string& x, DType work, int64_t axis) {
  std::string key = x;
  if (isFloating(work))
    key = ctx.emit1("Where", {ctx.emit1("IsNaN", {x}), ctx.constScalar(std::numeric_limits<double>::infinity(), work), x});
  std::string k = ctx.slice(ctx.shapeOf(x), {axis}, {axis + 1}, {0});
  auto r = ctx.emit("TopK", {key, k}, 2, {attrInt("axis", axis), attrInt("largest", 0), attrInt("sorted", 1)});
  return {ctx.emit1("GatherElements", {x, r[1]}, {attrInt("axis", axis)}), r[1]};
}

bool emptyExample(Context& ctx, const Value* v) {
  for (int64_t d : ctx.meta(v).shape)
    if (d == 0) return true;
  return false;
}

// msort(self): sort along the first axis, values only.
Status convertMsort(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 11) return ctx.needsOpset(11, "msort (TopK of the smallest)");
  const Value* self = args.in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  // ONNX Runtime's TopK fails on an empty input; there is nothing to order then.
  if (ctx.rank(self) == 0 || emptyExample(ctx, self)) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  const DType dt = ctx.dtype(self), work = orderType(dt);
  Sorted s = sortNanLast(ctx, castIf(ctx, x, dt, work), work, 0);
  return bindOut(ctx, n, castIf(ctx, s.values, work, dt));
}

// nanmedian(self) / nanmedian.dim(self, dim, keepdim) -> (values, indices): the lower median of
// the values that are not NaN, the ((m - 1) / 2 + 1)-th smallest of the m there are; NaN when a row
// has none (its index is then 0).
Status convertNanmedian(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 11) return ctx.needsOpset(11, "nanmedian (TopK of the smallest)");
  const Value* self = args.in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  const DType dt = ctx.dtype(self), work = orderType(dt);
  const int rank = ctx.rank(self);
  const bool all = n.outputs.size() == 1;
  int64_t axis = 0;
  bool keep = false;
  if (all) {
    x = ctx.reshape(x, {-1});
  } else {
    OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
    OXPORT_ASSIGN(keep, ctx.constBool(args.in("keepdim", 2)));
    axis = ctx.normDim(dim, std::max(rank, 1));
    if (rank == 0) x = ctx.reshape(x, {1});
  }
  x = castIf(ctx, x, dt, work);
  Sorted s = sortNanLast(ctx, x, work, axis);
  std::string valid = ctx.cast(equalAny(ctx, x, x), DType::Int64);  // NaN != NaN
  std::string m = reduceOver(ctx, "ReduceSum", valid, {axis}, true);
  std::string k = ctx.emit1("Div", {ctx.emit1("Sub", {m, ctx.constInt64s({1})}), ctx.constInt64s({2})});
  k = ctx.emit1("Max", {ctx.cast(k, DType::Float32), ctx.constScalar(0, DType::Float32)});  // Max on int64: opset 12
  k = ctx.cast(k, DType::Int64);
  std::string index = ctx.emit1("GatherElements", {s.indices, k}, {attrInt("axis", axis)});
  std::string value = ctx.emit1("GatherElements", {x, index}, {attrInt("axis", axis)});
  if (all || !keep) {
    value = all ? ctx.reshape(value, {}) : ctx.squeeze(value, {axis});
    index = all ? index : ctx.squeeze(index, {axis});
  }
  if (!all && rank == 0) {
    value = ctx.reshape(value, {});
    index = ctx.reshape(index, {});
  }
  ctx.bind(n.output(0), castIf(ctx, value, work, dt));
  if (!all) ctx.bind(n.output(1), index);
  return okStatus();
}

// lerp(a, b, w) as PyTorch computes it: a + w (b - a) below w = 0.5, b - (b - a)(1 - w) from it.
std::string lerp(Context& ctx, const std::string& a, const std::string& b, const std::string& w, DType work) {
  std::string d = ctx.emit1("Sub", {b, a});
  std::string low = ctx.emit1("Add", {a, ctx.emit1("Mul", {w, d})});
  std::string high = ctx.emit1("Sub", {b, ctx.emit1("Mul", {d, ctx.emit1("Sub", {ctx.constScalar(1, work), w})})});
  return ctx.emit1("Where", {ctx.emit1("Less", {w, ctx.constScalar(0.5, work)}), low, high});
}

// quantile / nanquantile (self, q (float or 0-d/1-D tensor), dim=None, keepdim=False, *,
// interpolation). The row's axis goes last; positions q * (m - 1) with m the row's length (the count
// of non-NaN values for nanquantile) are gathered from the sorted row. A row holding NaN gives NaN
// (quantile), a row of NaN only gives NaN (nanquantile).
ConvertFn convertQuantile(bool ignore_nan) {
  return [ignore_nan](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const std::string op = ignore_nan ? "nanquantile" : "quantile";
    if (ctx.opset() < 11) return ctx.needsOpset(11, op + " (TopK of the smallest)");
    const Value* self = args.in("self", 0);
    const DType dt = ctx.dtype(self);
    const DType work = dt == DType::Float64 ? DType::Float64 : DType::Float32;
    OXPORT_ASSIGN(std::string x, ctx.tensorOfType(self, work));
    const Value* qv = args.in("q", 1);
    OXPORT_ASSIGN(std::string q, ctx.tensorOfType(qv, work));
    const int q_rank = qv->isTensor() ? ctx.rank(qv) : 0;
    const Value* dv = args.in("dim", 2);
    OXPORT_ASSIGN(bool keep, ctx.constBool(args.in("keepdim", 3)));
    OXPORT_ASSIGN(std::string interp, ctx.constString(args.in("interpolation", 4)));
    if (interp != "linear" && interp != "lower" && interp != "higher" && interp != "midpoint" && interp != "nearest")
      return ctx.error("bad-argument", op + " interpolation '" + interp + "'",
                       "use linear, lower, higher, midpoint or nearest");
    const int rank = ctx.rank(self);
    const bool none = ctx.isNone(dv);
    int64_t axis = 0;
    int r1 = 1;
    if (none) {
      x = ctx.reshape(x, {-1});
    } else {
      OXPORT_ASSIGN(int64_t dim, ctx.constInt(dv));
      axis = ctx.normDim(dim, std::max(rank, 1));
      r1 = std::max(rank, 1);
      if (rank == 0) x = ctx.reshape(x, {1});
    }
    const int64_t last = r1 - 1;
    if (axis != last) {
      std::vector<int64_t> perm;
      for (int64_t i = 0; i < r1; ++i)
        if (i != axis) perm.push_back(i);
      perm.push_back(axis);
      x = ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
    }
    Sorted s = sortNanLast(ctx, x, work, last);
    std::string valid = reduceOver(ctx, "ReduceSum", ctx.cast(ctx.emit1("Equal", {x, x}), DType::Int64), {last}, true);
    std::string total = ctx.slice(ctx.shapeOf(x), {last}, {last + 1}, {0});  // [n]
    std::string m = ctx.cast(ignore_nan ? valid : total, work);
    std::string q1 = q_rank == 0 ? ctx.reshape(q, {1}) : q;  // [Q]
    std::string pos = ctx.emit1("Mul", {q1, ctx.emit1("Sub", {m, ctx.constScalar(1, work)})});
    pos = ctx.emit1("Max", {pos, ctx.constScalar(0, work)});  // a row of NaN only: m = 0
    // pos is [Q] (quantile) or [..., Q] (nanquantile); GatherElements wants [..., Q].
    std::string rows = ctx.emit1("Shape", {ctx.slice(s.values, {0}, {1}, {last})});  // [..., 1]
    std::string zeros = ctx.emit1("ConstantOfShape", {rows}, {attrTensor("value", scalarHostTensor(0, work, {1}))});
    pos = ctx.emit1("Add", {pos, zeros});
    auto at = [&](const std::string& p) {
      return ctx.emit1("GatherElements", {s.values, ctx.cast(p, DType::Int64)}, {attrInt("axis", last)});
    };
    std::string lo = ctx.emit1("Floor", {pos}), hi = ctx.emit1("Ceil", {pos});
    std::string res;
    if (interp == "lower") res = at(lo);
    else if (interp == "higher") res = at(hi);
    else if (interp == "nearest") res = at(ctx.emit1("Round", {pos}));
    else if (interp == "midpoint") res = lerp(ctx, at(lo), at(hi), ctx.constScalar(0.5, work), work);
    else res = lerp(ctx, at(lo), at(hi), ctx.emit1("Sub", {pos, lo}), work);
    // NaN rows: any NaN (quantile), no value (nanquantile).
    std::string bad = ignore_nan ? ctx.emit1("Equal", {valid, ctx.constInt64s({0})})
                                 : ctx.emit1("Less", {valid, total});
    res = ctx.emit1("Where", {bad, ctx.constScalar(std::nan(""), work), res});
    if (q_rank == 0) {
      res = ctx.squeeze(res, {last});
    } else {
      std::vector<int64_t> perm{last};
      for (int64_t i = 0; i < last; ++i) perm.push_back(i);
      res = ctx.emit1("Transpose", {res}, {attrInts("perm", perm)});
    }
    if (keep && none && rank > 0) {
      std::vector<int64_t> shape(rank, 1);
      if (q_rank == 1) shape.insert(shape.begin(), -1);
      res = ctx.reshape(res, shape);
    } else if (keep && !none && rank > 0) {
      res = ctx.unsqueeze(res, {axis + q_rank});
    }
    return bindOut(ctx, n, castIf(ctx, res, work, n.output(0)->meta.dtype));
  };
}

// mode(self, dim=-1, keepdim=False) -> (values, indices): the most frequent value of each row, the
// smallest of those tied, and the last index where it occurs (PyTorch's CPU kernel). Each element's
// count is a row of an n x n equality: O(n^2) along dim.
Status convertMode(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* self = args.in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  const int rank = ctx.rank(self);
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  OXPORT_ASSIGN(bool keep, ctx.constBool(args.in("keepdim", 2)));
  if (rank == 0) {
    ctx.bind(n.output(0), ctx.emit1("Identity", {x}));
    ctx.bind(n.output(1), ctx.constScalar(0, DType::Int64));
    return okStatus();
  }
  const int64_t axis = ctx.normDim(dim, rank);
  const DType dt = ctx.dtype(self), work = reduceWorkType(dt);
  std::string xw = castIf(ctx, x, dt, work);
  std::string same = equalAny(ctx, ctx.unsqueeze(xw, {axis + 1}), ctx.unsqueeze(xw, {axis}));
  std::string counts = reduceOver(ctx, "ReduceSum", ctx.cast(same, DType::Int64), {axis + 1}, false);
  std::string best = reduceOver(ctx, "ReduceMax", counts, {axis}, true);
  std::string top = reduceOver(ctx, "ReduceMax", xw, {axis}, true);
  std::string cand = ctx.emit1("Where", {equalAny(ctx, counts, best), xw, top});
  std::string value = reduceOver(ctx, "ReduceMin", cand, {axis}, true);
  // The last index holding the value: positions shaped [n, 1, ...] against the row.
  std::vector<int64_t> pshape(rank - axis, 1);
  pshape[0] = -1;
  std::string positions = ctx.reshape(arangeOf(ctx, dimSize(ctx, x, axis)), pshape);
  std::string hits = ctx.emit1("Where", {equalAny(ctx, xw, value), positions, ctx.constScalar(-1, DType::Int64)});
  std::string index = reduceOver(ctx, "ReduceMax", hits, {axis}, keep);
  if (!keep) value = ctx.squeeze(value, {axis});
  ctx.bind(n.output(0), castIf(ctx, value, work, dt));
  ctx.bind(n.output(1), index);
  return okStatus();
}

// Adds w [N] into `bins` bins at bin [N] (int64, in range). Opset 16: ScatterElements with
// reduction add; before, a one-hot [N, bins] weighted and summed.
std::string sumIntoBins(Context& ctx, const std::string& bin, const std::string& w, int64_t bins, DType work) {
  if (ctx.opset() >= 16) {
    std::string zeros = ctx.emit1("ConstantOfShape", {ctx.constInt64s({bins})}, {attrTensor("value", scalarHostTensor(0, work, {1}))});
    return ctx.emit1("ScatterElements", {zeros, bin, w}, {attrInt("axis", 0), attrString("reduction", "add")});
  }
  std::string onehot = equalAny(ctx, ctx.unsqueeze(bin, {1}), ctx.unsqueeze(arangeOf(ctx, ctx.constInt64s({bins})), {0}));
  std::string weighted = ctx.emit1("Mul", {ctx.cast(onehot, work), ctx.unsqueeze(w, {1})});
  return reduceOver(ctx, "ReduceSum", weighted, {0}, false);
}

// The dtype histc and histogram count in (float64 stays, every other dtype goes through float32).
DType countWork(DType dt) { return dt == DType::Float64 ? DType::Float64 : DType::Float32; }

// self flattened, in dtype `work`.
Result<std::string> flatOf(Context& ctx, const Args& args, DType work) {
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), work));
  return ctx.reshape(x, {-1});
}

// histc(self, bins=100, min=0, max=0): counts of the elements in `bins` equal bins over [min, max]
// (the data's min and max when min == max, widened by 1 each way if they are equal too); elements
// outside are not counted (NaN is, in the first bin, as PyTorch's CPU kernel does), max falls in
// the last bin. Bin = floor((x - min) * bins / (max - min)), PyTorch's formula. Opset 16:
// ScatterElements adds ones at the bins; before, a one-hot [N, bins] summed.
Status convertHistc(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = ctx.dtype(args.in("self", 0));
  const DType work = countWork(dt);
  OXPORT_ASSIGN(std::string x, flatOf(ctx, args, work));
  OXPORT_ASSIGN(int64_t bins, ctx.constInt(args.in("bins", 1)));
  if (bins <= 0) return ctx.error("bad-argument", "histc with bins = " + std::to_string(bins), "bins must be positive");
  std::string lo, hi;
  const Value* mn = args.in("min", 2);
  const Value* mx = args.in("max", 3);
  auto cmin = mn->isConstant() ? std::optional<double>(*ctx.constDouble(mn)) : std::nullopt;
  auto cmax = mx->isConstant() ? std::optional<double>(*ctx.constDouble(mx)) : std::nullopt;
  if (cmin && cmax && *cmin != *cmax) {
    lo = ctx.constScalar(*cmin, work);
    hi = ctx.constScalar(*cmax, work);
  } else {
    if (!cmin || !cmax)
      return ctx.error("unsupported-form", "histc with a min or max computed from the inputs",
                       "give min and max as numbers, or leave both 0 for the data's range");
    lo = reduceOver(ctx, "ReduceMin", x, {0}, false);
    hi = reduceOver(ctx, "ReduceMax", x, {0}, false);
    std::string same = ctx.emit1("Equal", {lo, hi});
    lo = ctx.emit1("Where", {same, ctx.emit1("Sub", {lo, ctx.constScalar(1, work)}), lo});
    hi = ctx.emit1("Where", {same, ctx.emit1("Add", {hi, ctx.constScalar(1, work)}), hi});
  }
  // NaN passes both comparisons and PyTorch's CPU kernel counts it in the first bin: so does the file.
  std::string outside = ctx.emit1("Or", {ctx.emit1("Less", {x, lo}), ctx.emit1("Greater", {x, hi})});
  std::string valid = ctx.emit1("Not", {outside});
  std::string scaled = ctx.emit1("Div", {ctx.emit1("Mul", {ctx.emit1("Sub", {x, lo}), ctx.constScalar(double(bins), work)}),
                                         ctx.emit1("Sub", {hi, lo})});
  std::string bin = ctx.emit1("Min", {ctx.emit1("Floor", {scaled}), ctx.constScalar(double(bins - 1), work)});
  std::string first = ctx.emit1("Or", {outside, ctx.emit1("IsNaN", {x})});
  bin = ctx.cast(ctx.emit1("Where", {first, ctx.constScalar(0, work), bin}), DType::Int64);
  return bindOut(ctx, n, castIf(ctx, sumIntoBins(ctx, bin, ctx.cast(valid, work), bins, work), work, dt));
}

// The edges of histogram(self, bins: int, range): torch.linspace(lo, hi, bins + 1) in x's dtype,
// computed as libtorch's kernel does (from lo by steps up to half way, from hi down after), lo
// and hi the range or the data's min and max (widened by 0.5 each way when equal).
Result<std::string> linearEdges(Context& ctx, const Args& args, const std::string& x, int64_t bins, DType work) {
  std::string lo, hi;
  const Value* rv = args.optIn("range", 2);
  if (rv && !ctx.isNone(rv)) {
    OXPORT_ASSIGN(auto range, ctx.constDoubles(rv));
    if (range.size() != 2) return ctx.error("bad-argument", "histogram with a range of other than 2 numbers");
    if (!(range[0] <= range[1]))
      return ctx.error("bad-argument", "histogram with range[0] > range[1]", "give the range as (min, max)");
    lo = ctx.constScalar(range[0], work);
    hi = ctx.constScalar(range[1], work);
  } else {
    lo = reduceOver(ctx, "ReduceMin", x, {0}, false);
    hi = reduceOver(ctx, "ReduceMax", x, {0}, false);
  }
  std::string same = ctx.emit1("Equal", {lo, hi});
  lo = ctx.emit1("Where", {same, ctx.emit1("Sub", {lo, ctx.constScalar(0.5, work)}), lo});
  hi = ctx.emit1("Where", {same, ctx.emit1("Add", {hi, ctx.constScalar(0.5, work)}), hi});
  std::string step = ctx.emit1("Div", {ctx.emit1("Sub", {hi, lo}), ctx.constScalar(double(bins), work)});
  std::string ix = arangeOf(ctx, ctx.constInt64s({bins + 1}));
  std::string ixf = ctx.cast(ix, work);
  std::string up = ctx.emit1("Add", {lo, ctx.emit1("Mul", {step, ixf})});
  std::string down = ctx.emit1("Sub", {hi, ctx.emit1("Mul", {step, ctx.emit1("Sub", {ctx.constScalar(double(bins), work), ixf})})});
  return ctx.emit1("Where", {ctx.emit1("Less", {ix, ctx.constInt64s({(bins + 1) / 2})}), up, down});
}

// histogram(self, bins: int | Tensor edges, *, range=None, weight=None, density=False) ->
// (hist, bin_edges): x counts (or adds its weight) in bin i when edges[i] <= x < edges[i + 1], the
// last bin closed; elements outside the edges and NaN are not counted (libtorch's search, here
// as comparisons with every inner edge). density divides by the total and the bin widths.
Status convertHistogram(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = ctx.dtype(args.in("self", 0));
  const DType work = countWork(dt);
  OXPORT_ASSIGN(std::string x, flatOf(ctx, args, work));
  const Value* bv = args.in("bins", 1);
  std::string edges;
  int64_t bins = 0;
  if (bv->isTensor()) {
    OXPORT_ASSIGN(edges, ctx.tensorOfType(bv, work));
    if (ctx.rank(bv) != 1 || bv->meta.shape[0] < 2)
      return ctx.error("bad-argument", "histogram with bin edges that are not a 1-D tensor of 2 or more", "give the edges in increasing order");
    bins = bv->meta.shape[0] - 1;
  } else {
    OXPORT_ASSIGN(bins, ctx.constInt(bv));
    if (bins <= 0) return ctx.error("bad-argument", "histogram with bins = " + std::to_string(bins), "bins must be positive");
    OXPORT_ASSIGN(edges, linearEdges(ctx, args, x, bins, work));
  }
  std::string first = ctx.slice(edges, {0}, {1}, {0}), last = ctx.slice(edges, {-1}, {kInt64Max}, {0});
  std::string valid = ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {x, first}), ctx.emit1("Greater", {x, last})})});
  valid = ctx.emit1("And", {valid, ctx.emit1("Not", {ctx.emit1("IsNaN", {x})})});
  std::string bin = ctx.constInt64s({0});
  if (bins > 1) {
    std::string inner = ctx.unsqueeze(ctx.slice(edges, {1}, {-1}, {0}), {0});  // [1, bins - 1]
    std::string at_or_past = ctx.emit1("Not", {ctx.emit1("Less", {ctx.unsqueeze(x, {1}), inner})});
    bin = reduceOver(ctx, "ReduceSum", ctx.cast(at_or_past, DType::Int64), {1}, false);
  } else {
    bin = ctx.emit1("Expand", {bin, ctx.shapeOf(x)});
  }
  std::string w = ctx.cast(valid, work);
  const Value* wv = args.optIn("weight", 3);
  if (wv && !ctx.isNone(wv)) {
    OXPORT_ASSIGN(std::string wt, ctx.tensorOfType(wv, work));
    w = whereTyped(ctx, valid, ctx.reshape(wt, {-1}), ctx.constScalar(0, work), work);
  }
  std::string hist = sumIntoBins(ctx, bin, w, bins, work);
  bool density = false;
  if (const Value* v = args.optIn("density", 4)) { OXPORT_ASSIGN(density, ctx.constBool(v)); }
  if (density) {
    hist = ctx.emit1("Div", {hist, reduceOver(ctx, "ReduceSum", hist, {0}, false)});
    std::string widths = ctx.emit1("Sub", {ctx.slice(edges, {1}, {kInt64Max}, {0}), ctx.slice(edges, {0}, {-1}, {0})});
    hist = ctx.emit1("Div", {hist, widths});
  }
  ctx.bind(n.output(0), castIf(ctx, hist, work, n.output(0)->meta.dtype));
  ctx.bind(n.output(1), castIf(ctx, edges, work, n.output(1)->meta.dtype));
  return okStatus();
}

}  // namespace

void registerOrderStatsOps(Registry& r) {
  r.add("aten::msort", convertMsort);
  r.add("aten::nanmedian", convertNanmedian);
  r.add("aten::quantile", convertQuantile(false));
  r.add("aten::nanquantile", convertQuantile(true));
  r.add("aten::mode", convertMode);
  r.add("aten::histc", convertHistc);
  r.add("aten::histogram", convertHistogram);
}

}  // namespace oxport::convert
