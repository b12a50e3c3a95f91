// scatter_reduce(self, dim, index, src, reduce, include_self) and index_reduce(self, dim, index,
// source, reduce, include_self): every reduction PyTorch has (sum, prod, mean, amax, amin), with
// and without self's own value, at every opset from 9 to 17.
//
// Two forms give the reduced values r and how many sources each position received (count):
// - ScatterElements with reduction 'add'/'mul' (opset 16) for sum, prod and mean, scattered into
//   zeros/ones so that include_self can be decided afterwards;
// - otherwise (amax/amin, which ScatterElements reduces only from opset 18, and every reduction
//   below 16) a one-hot grid: position p of the axis is compared with every index k, the sources
//   that hit p are kept by Where and one Reduce* over k gives r. Its memory is the axis' size
//   times the index's elements; it needs the index as large as self outside `dim`, as the
//   index of a graph-style scatter (index expanded over the features) is.
// Then out = self where nothing was scattered, else r combined with self (include_self) or r.
// libtorch's rules kept: mean divides by the count (self counted once with include_self), with
// floor division for integers; amax/amin propagate NaN.
#include <cmath>
#include <limits>
#include <optional>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

enum class Reduce { Sum, Prod, Mean, Amax, Amin };


bool isFloat(DType dt) { return dt == DType::Float32 || dt == DType::Float64; }


std::string wrapNegative(Context& ctx, const std::string& idx, const std::string& data, int64_t dim) {
  std::string size = dimSize(ctx, data, dim, true);
  std::string neg = ctx.emit1("Less", {idx, ctx.constInt64s({0}, true)});
  return ctx.emit1("Where", {neg, ctx.emit1("Add", {idx, size}), idx});
}

struct Scattered {
  std::string r;      // the sources reduced per position (the reduction's identity where none)
  std::string count;  // how many sources each position received, in the work dtype
  std::string nan;    // amax/amin on floats: bool, a NaN source reached the position
};

// The ScatterElements form (opset 16; sum, prod, mean).
Scattered scatterForm(Context& ctx, Reduce red, const std::string& self, const std::string& idx,
                      const std::string& src, int64_t dim, DType work) {
  Scattered s;
  // Filled from the shapes, not as x * 0: a NaN or inf in self or src must not leak into them.
  std::string self_shape = ctx.shapeOf(self);
  std::string zeros = ctx.emit1("Expand", {ctx.constScalar(0, work), self_shape});
  std::string ones = ctx.emit1("Expand", {ctx.constScalar(1, work), self_shape});
  const std::vector<Attribute> add{attrInt("axis", dim), attrString("reduction", "add")};
  if (red == Reduce::Prod)
    s.r = ctx.emit1("ScatterElements", {ones, idx, src}, {attrInt("axis", dim), attrString("reduction", "mul")});
  else
    s.r = ctx.emit1("ScatterElements", {zeros, idx, src}, add);
  std::string src_ones = ctx.emit1("Expand", {ctx.constScalar(1, work), ctx.shapeOf(idx)});
  s.count = ctx.emit1("ScatterElements", {zeros, idx, src_ones}, add);
  return s;
}

// The one-hot form (every opset, every reduction). `self` and `idx` agree outside `dim`.
Scattered oneHotForm(Context& ctx, Reduce red, const std::string& self, const std::string& idx,
                     const std::string& src, int64_t dim, int rank, DType work) {
  Scattered s;
  // p runs along axis dim, k along dim + 1.
  std::vector<int64_t> p_axes;
  for (int64_t a = 1; a <= rank - dim; ++a) p_axes.push_back(a);
  std::string p = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, self, dim)), p_axes);
  std::string hit = ctx.emit1("Equal", {ctx.unsqueeze(idx, {dim}), p});
  std::string src_u = ctx.unsqueeze(src, {dim});
  const int64_t k = dim + 1;
  s.count = reduceOver(ctx, "ReduceSum", ctx.cast(hit, work), {k}, false);
  const bool fp = isFloat(work);
  std::string keep = hit;
  if (fp && (red == Reduce::Amax || red == Reduce::Amin)) {
    std::string nan_src = ctx.emit1("IsNaN", {src_u});
    std::string nan_hit = ctx.cast(ctx.emit1("And", {hit, nan_src}), DType::Int32);
    s.nan = ctx.cast(reduceOver(ctx, "ReduceMax", nan_hit, {k}, false), DType::Bool);
    keep = ctx.emit1("And", {hit, ctx.emit1("Not", {nan_src})});
  }
  const double inf = std::numeric_limits<double>::infinity();
  std::string fill, op;
  switch (red) {
    case Reduce::Sum:
    case Reduce::Mean: fill = ctx.constScalar(0, work); op = "ReduceSum"; break;
    case Reduce::Prod: fill = ctx.constScalar(1, work); op = "ReduceProd"; break;
    case Reduce::Amax:
    case Reduce::Amin: {
      const bool mx = red == Reduce::Amax;
      // Floats: -inf/+inf. Integers: the smallest (largest) source along the axis, which no
      // position's extreme goes below (above); a position with no source takes self anyway.
      fill = fp ? ctx.constScalar(mx ? -inf : inf, work)
                : ctx.unsqueeze(reduceOver(ctx, mx ? "ReduceMin" : "ReduceMax", src, {dim}, true), {dim});
      op = mx ? "ReduceMax" : "ReduceMin";
      break;
    }
  }
  s.r = reduceOver(ctx, op, ctx.emit1("Where", {keep, src_u, fill}), {k}, false);
  return s;
}

// floor(a / b) for integers, b > 0 (Div truncates toward zero).
std::string floorDiv(Context& ctx, const std::string& a, const std::string& b, DType work) {
  std::string q = ctx.emit1("Div", {a, b});
  std::string rem = ctx.emit1("Sub", {a, ctx.emit1("Mul", {q, b})});
  std::string below = ctx.cast(ctx.emit1("Less", {rem, ctx.constScalar(0, work)}), work);
  return ctx.emit1("Sub", {q, below});
}

std::optional<Reduce> parseReduce(const std::string& s) {
  if (s == "sum") return Reduce::Sum;
  if (s == "prod") return Reduce::Prod;
  if (s == "mean") return Reduce::Mean;
  if (s == "amax") return Reduce::Amax;
  if (s == "amin") return Reduce::Amin;
  return std::nullopt;
}

// The shared body. `index_full` is true when idx already has src's shape (index_reduce's index
// expanded), false for scatter_reduce (src may be larger than index: cut to it).
Status emitScatterReduce(Context& ctx, const Node& n, bool index_reduce) {
  const Args args(ctx, n);
  const Value* self_v = args.in("self", 0);
  const Value* index_v = args.in("index", 2);
  const Value* src_v = args.in({"src", "source"}, 3);
  const int rank = ctx.rank(self_v);
  const DType dt = ctx.dtype(self_v);
  const DType work = reduceWorkType(dt);
  OXPORT_ASSIGN(int64_t dim, args.constInt("dim", 1));
  dim = rank == 0 ? 0 : ctx.normDim(dim, rank);
  OXPORT_ASSIGN(std::string reduce_s, ctx.constString(args.in("reduce", 4)));
  auto red = parseReduce(reduce_s);
  if (!red) return ctx.error("unsupported-form", (index_reduce ? "index_reduce" : "scatter_reduce") + std::string(" reduce='") + reduce_s + "'",
                             "PyTorch's reductions are sum, prod, mean, amax and amin");
  if (index_reduce && *red == Reduce::Sum)
    return ctx.error("unsupported-form", "index_reduce reduce='sum'", "use index_add");
  bool include_self = true;
  if (const Value* inc = args.optIn("include_self"); inc && !ctx.isNone(inc)) { OXPORT_ASSIGN(include_self, ctx.constBool(inc)); }
  OXPORT_ASSIGN(std::string self0, ctx.tensor(self_v));
  OXPORT_ASSIGN(std::string idx, ctx.tensor(index_v));
  OXPORT_ASSIGN(std::string src0, ctx.tensorOfType(src_v, dt));
  std::string self = castIf(ctx, self0, dt, work);
  std::string src = castIf(ctx, src0, dt, work);
  if (rank == 0) {
    // A 0-d self: the index is 0-d or one element, every source lands on the one position.
    self = ctx.reshape(self, {1});
    src = ctx.reshape(src, {-1});
    idx = ctx.reshape(idx, {-1});
  }
  const int r = std::max(rank, 1);
  const auto& self_shape = ctx.meta(self_v).shape;
  if (index_reduce) {
    // index (1-D, K) along dim of source: expanded to source's shape.
    std::vector<int64_t> shape(static_cast<size_t>(r), 1);
    shape[static_cast<size_t>(dim)] = -1;
    idx = ctx.emit1("Expand", {ctx.reshape(idx, shape), ctx.shapeOf(src)});
  } else if (rank > 0 && ctx.meta(src_v).shape != ctx.meta(index_v).shape) {
    if (ctx.opset() < 10) return ctx.needsOpset(10, "scatter_reduce with src larger than index (Slice with inputs)");
    std::vector<int64_t> axes;
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
    src = ctx.emit1("Slice", {src, ctx.constInt64s(std::vector<int64_t>(static_cast<size_t>(r), 0)), ctx.shapeOf(idx),
                              ctx.constInt64s(axes)});
  }
  idx = wrapNegative(ctx, idx, self, dim);
  Scattered s;
  const bool native = ctx.opset() >= 16 && (*red == Reduce::Sum || *red == Reduce::Prod || *red == Reduce::Mean);
  if (native) {
    s = scatterForm(ctx, *red, self, idx, src, dim, work);
  } else {
    const auto& idx_shape = index_reduce ? ctx.meta(src_v).shape : ctx.meta(index_v).shape;
    for (int64_t a = 0; a < rank; ++a)
      if (a != dim && idx_shape[static_cast<size_t>(a)] != self_shape[static_cast<size_t>(a)])
        return ctx.error("unsupported-form",
                         std::string(index_reduce ? "index_reduce" : "scatter_reduce") + " reduce='" + reduce_s +
                             "' with an index smaller than self outside dim " + std::to_string(dim) +
                             (ctx.opset() < 16 ? " below opset 16" : ""),
                         "expand the index over self's other dims (index.expand_as(src)), or export at opset 16 "
                         "or later for sum, prod and mean");
    s = oneHotForm(ctx, *red, self, idx, src, dim, r, work);
  }
  std::string out;
  switch (*red) {
    case Reduce::Sum: out = include_self ? ctx.emit1("Add", {self, s.r}) : s.r; break;
    case Reduce::Prod: out = include_self ? ctx.emit1("Mul", {self, s.r}) : s.r; break;
    case Reduce::Mean: {
      std::string total = include_self ? ctx.emit1("Add", {self, s.r}) : s.r;
      std::string cnt = include_self ? ctx.emit1("Add", {s.count, ctx.constScalar(1, work)}) : s.count;
      // Where nothing landed the count is 0 and the result self: divide by 1 there.
      std::string none = ctx.emit1("Not", {ctx.emit1("Greater", {cnt, ctx.constScalar(0, work)})});
      cnt = ctx.emit1("Where", {none, ctx.constScalar(1, work), cnt});
      out = isFloat(work) ? ctx.emit1("Div", {total, cnt}) : floorDiv(ctx, total, cnt, work);
      break;
    }
    case Reduce::Amax:
    case Reduce::Amin: {
      // Where(self beyond r, self, r): Max/Min take integers only from opset 12.
      const char* beyond = *red == Reduce::Amax ? "Greater" : "Less";
      out = include_self ? ctx.emit1("Where", {ctx.emit1(beyond, {self, s.r}), self, s.r}) : s.r;
      if (isFloat(work)) {
        std::string nan = s.nan;
        if (include_self) nan = ctx.emit1("Or", {nan, ctx.emit1("IsNaN", {self})});
        out = ctx.emit1("Where", {nan, ctx.constScalar(std::nan(""), work), out});
      }
      break;
    }
  }
  std::string landed = ctx.emit1("Greater", {s.count, ctx.constScalar(0, work)});
  out = ctx.emit1("Where", {landed, out, self});
  if (rank == 0) out = ctx.reshape(out, {});
  return bindOut(ctx, n, castIf(ctx, out, work, dt));
}

}  // namespace

void registerScatterReduceOps(Registry& r) {
  addAll(r, {"aten::scatter_reduce", "aten::scatter_reduce_"},
         [](Context& ctx, const Node& n) { return emitScatterReduce(ctx, n, false); });
  addAll(r, {"aten::index_reduce", "aten::index_reduce_"},
         [](Context& ctx, const Node& n) { return emitScatterReduce(ctx, n, true); });
}

}  // namespace oxport::convert
