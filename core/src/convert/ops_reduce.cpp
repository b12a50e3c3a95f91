// Reductions: sum/mean/prod, amax/amin/aminmax, max/min (every overload), argmax/argmin,
// all/any/count_nonzero, std/var (+ _mean), the norms, logsumexp and cumsum.
// Every reduction reads its dims at export time (they shape the graph); sizes of the reduced axes
// are always computed from Shape, never baked.
#include <algorithm>
#include <cmath>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/number_list.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {



// The reduced axes of an `int[1]? dim` / `int? dim` argument, normalized and sorted; empty means
// every axis (None, [] or a missing argument).
Result<std::vector<int64_t>> reducedAxes(Context& ctx, const Value* dim, int rank) {
  std::vector<int64_t> axes;
  if (!dim || ctx.isNone(dim)) return axes;
  OXPORT_ASSIGN(auto dims, ctx.constInts(dim));
  for (int64_t d : dims) {
    if (rank == 0 && (d == 0 || d == -1)) continue;  // a 0-d tensor reduces over "dim 0" to itself
    const int64_t a = ctx.normDim(d, rank);
    if (a < 0 || a >= rank) return ctx.error("bad-argument", "dim " + std::to_string(d) + " is out of range for rank " + std::to_string(rank));
    axes.push_back(a);
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

Result<bool> keepdimArg(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* k = args.optIn("keepdim");
  if (!k || ctx.isNone(k)) return false;
  return ctx.constBool(k);
}

// The reduction of x (of dtype `have`) over axes, in the work dtype, cast to `out`.
std::string reduceTyped(Context& ctx, const std::string& op, const std::string& x, DType have, DType out,
                        const std::vector<int64_t>& axes, bool keepdim) {
  const DType work = reduceWorkType(out);
  std::string y = reduceOver(ctx, op, castIf(ctx, x, have, work), axes, keepdim);
  return castIf(ctx, y, work, out);
}

// The number of elements over `axes` of x (all when empty), as a 0-d tensor of dtype dt.
std::string reducedCount(Context& ctx, const std::string& x, const std::vector<int64_t>& axes, DType dt) {
  std::string shape = ctx.emit1("Cast", {ctx.shapeOf(x)}, {attrInt("to", onnxDataType(dt))});
  if (!axes.empty()) shape = ctx.emit1("Gather", {shape, ctx.constInt64s(axes)}, {attrInt("axis", 0)});
  return reduceOver(ctx, "ReduceProd", shape, {}, false);
}

// True when the example run reduces over no elements (a size-0 dim among the axes).
bool reducesNothing(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 0 && (axes.empty() || std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end()))
      return true;
  return false;
}

// ReduceMean of a floating x, except over no elements: ONNX Runtime's ReduceMean of nothing is 0
// where PyTorch's mean is NaN, so there it is ReduceSum / count (0 / 0). `shape` is x's example shape.
std::string meanOver(Context& ctx, const std::string& x, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& axes, bool keepdim, DType dt) {
  if (!reducesNothing(shape, axes)) return reduceOver(ctx, "ReduceMean", x, axes, keepdim);
  return ctx.emit1("Div", {reduceOver(ctx, "ReduceSum", x, axes, keepdim), reducedCount(ctx, x, axes, dt)});
}

// A reduction of a 0-d tensor is the tensor itself (in the output dtype).
bool scalarInput(Context& ctx, const Node& n) { return ctx.rank(Args(ctx, n).in("self", 0)) == 0; }

// sum(list) of numbers in a scripted forward (aten::sum.int / .float / .bool: the sizes of a list
// of images summed): the list as a 1-D tensor, reduced.
Status sumOfList(Context& ctx, const Node& n) {
  const Value* list = n.input(0);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string all, numberListTensor(ctx, list, dt));
  if (all.empty()) return bindOut(ctx, n, ctx.constScalar(0.0, dt));
  return bindOut(ctx, n, reduceOver(ctx, "ReduceSum", all, {0}, false));
}

// sum / mean / prod (all overloads: full, dim list or single dim, keepdim, dtype).
ConvertFn reduceSimple(const std::string& op) {
  return [op](Context& ctx, const Node& n) -> Status {
    if (op == "ReduceSum" && !n.inputs.empty() && n.input(0)->type == ts::ValueType::List) return sumOfList(ctx, n);
    const Args args(ctx, n);
    const DType out = n.output(0)->meta.dtype;
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    const DType in = ctx.dtype(args.in("self", 0));
    if (scalarInput(ctx, n)) return bindOut(ctx, n, ctx.emit1("Identity", {castIf(ctx, x, in, out)}));
    OXPORT_ASSIGN(auto axes, reducedAxes(ctx, args.optIn("dim"), ctx.rank(args.in("self", 0))));
    OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
    // Promote first (sum(int8) is int64, sum(x, dtype=float64) accumulates in float64).
    std::string xin = castIf(ctx, x, in, out);
    if (op == "ReduceMean" && isFloating(out) && reducesNothing(ctx.meta(args.in("self", 0)).shape, axes)) {
      const DType work = reduceWorkType(out);
      std::string m = meanOver(ctx, castIf(ctx, xin, out, work), ctx.meta(args.in("self", 0)).shape, axes, keepdim, work);
      return bindOut(ctx, n, castIf(ctx, m, work, out));
    }
    return bindOut(ctx, n, reduceTyped(ctx, op, xin, out, out, axes, keepdim));
  };
}

// amax / amin (dim=[] is every axis).
ConvertFn reduceExtreme(bool is_max) {
  return [is_max](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = ctx.dtype(args.in("self", 0));
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    if (scalarInput(ctx, n)) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
    OXPORT_ASSIGN(auto axes, reducedAxes(ctx, args.optIn("dim"), ctx.rank(args.in("self", 0))));
    OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
    return bindOut(ctx, n, reduceTyped(ctx, is_max ? "ReduceMax" : "ReduceMin", x, dt, dt, axes, keepdim));
  };
}

// ArgMax/ArgMin along one axis (first index of the extreme, as PyTorch).
std::string argExtreme(Context& ctx, bool is_max, const std::string& x, DType dt, int64_t axis, bool keepdim) {
  // ONNX Runtime's ArgMax takes float/double/int32 (and 8-bit) inputs.
  DType work = dt;
  if (dt == DType::Int64 || dt == DType::Bool || dt == DType::Int16) work = DType::Float64;
  if (dt == DType::Float16 || dt == DType::BFloat16) work = DType::Float32;
  if (dt == DType::Int8 || dt == DType::UInt8) work = DType::Int32;
  return ctx.emit1(is_max ? "ArgMax" : "ArgMin", {castIf(ctx, x, dt, work)},
                   {attrInt("axis", axis), attrInt("keepdims", keepdim ? 1 : 0)});
}

// argmax/argmin(self, dim=None, keepdim=False)
ConvertFn convertArgExtreme(bool is_max) {
  return [is_max](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = ctx.dtype(args.in("self", 0));
    const int rank = ctx.rank(args.in("self", 0));
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
    const Value* dim = args.optIn("dim");
    if (rank == 0 || !dim || ctx.isNone(dim)) {
      // Over the flattened tensor; keepdim gives a shape of ones.
      std::string flat = ctx.reshape(x, {-1});
      std::string idx = argExtreme(ctx, is_max, flat, dt, 0, false);
      if (keepdim && rank > 0) idx = ctx.reshape(idx, std::vector<int64_t>(static_cast<size_t>(rank), 1));
      return bindOut(ctx, n, idx);
    }
    OXPORT_ASSIGN(int64_t d, ctx.constInt(dim));
    return bindOut(ctx, n, argExtreme(ctx, is_max, x, dt, ctx.normDim(d, rank), keepdim));
  };
}

// Max/Min of two tensors in dtype dt (integer Max/Min from opset 12; bool: Or/And).
std::string extremum2(Context& ctx, bool is_max, const std::string& a, const std::string& b, DType dt) {
  if (isFloating(dt) && dt != DType::BFloat16) return ctx.emit1(is_max ? "Max" : "Min", {a, b});
  if (dt == DType::Bool) return ctx.emit1(is_max ? "Or" : "And", {a, b});
  if (ctx.opset() >= 12 && dt != DType::BFloat16) return ctx.emit1(is_max ? "Max" : "Min", {a, b});
  std::string cmp = ctx.emit1(is_max ? "Greater" : "Less", {a, b});
  return ctx.emit1("Where", {cmp, a, b});
}

// max/min: max(x) full reduction, max(x, dim, keepdim) -> (values, indices), max(x, other).
ConvertFn convertMaxMin(bool is_max) {
  return [is_max](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = ctx.dtype(args.in("self", 0));
    const std::string reduce_op = is_max ? "ReduceMax" : "ReduceMin";
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    if (n.inputs.size() == 1) {
      if (scalarInput(ctx, n)) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
      return bindOut(ctx, n, reduceTyped(ctx, reduce_op, x, dt, dt, {}, false));
    }
    // max.other(self, other); without names, two inputs are that form
    const Value* other = args.optIn("other", n.inputs.size() == 2 ? 1 : Args::kByName);
    if (other && other->isTensor()) {
      OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), other}));
      return bindOut(ctx, n, extremum2(ctx, is_max, ins[0], ins[1], n.output(0)->meta.dtype));
    }
    // max.dim(self, dim, keepdim)
    OXPORT_ASSIGN(int64_t d, args.constInt("dim", 1));
    OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
    const int rank = ctx.rank(args.in("self", 0));
    if (rank == 0) {
      ctx.bind(n.output(0), ctx.emit1("Identity", {x}));
      ctx.bind(n.output(1), ctx.constScalar(0, DType::Int64));
      return okStatus();
    }
    const int64_t axis = ctx.normDim(d, rank);
    ctx.bind(n.output(0), reduceTyped(ctx, reduce_op, x, dt, dt, {axis}, keepdim));
    if (n.outputs.size() > 1) ctx.bind(n.output(1), argExtreme(ctx, is_max, x, dt, axis, keepdim));
    return okStatus();
  };
}

// aminmax(self, *, dim=None, keepdim=False) -> (min, max)
Status convertAminmax(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = ctx.dtype(args.in("self", 0));
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(auto axes, reducedAxes(ctx, args.optIn("dim"), ctx.rank(args.in("self", 0))));
  OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
  if (scalarInput(ctx, n)) {
    ctx.bind(n.output(0), ctx.emit1("Identity", {x}));
    ctx.bind(n.output(1), ctx.emit1("Identity", {x}));
    return okStatus();
  }
  ctx.bind(n.output(0), reduceTyped(ctx, "ReduceMin", x, dt, dt, axes, keepdim));
  ctx.bind(n.output(1), reduceTyped(ctx, "ReduceMax", x, dt, dt, axes, keepdim));
  return okStatus();
}

// all/any(self [, dim, keepdim]): count the (non)zero elements, so empty tensors give
// all = true, any = false as in PyTorch. The output dtype is bool (uint8 for uint8 inputs).
ConvertFn convertAllAny(bool is_all) {
  return [is_all](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    const DType out = n.output(0)->meta.dtype;
    std::string b = castIf(ctx, x, ctx.dtype(args.in("self", 0)), DType::Bool);
    if (is_all) b = ctx.emit1("Not", {b});
    std::vector<int64_t> axes;
    bool keepdim = false;
    if (n.inputs.size() > 1) {
      OXPORT_ASSIGN(axes, reducedAxes(ctx, args.optIn("dim"), ctx.rank(args.in("self", 0))));
      OXPORT_ASSIGN(keepdim, keepdimArg(ctx, n));
    }
    std::string count = reduceOver(ctx, "ReduceSum", ctx.cast(b, DType::Int64), axes, keepdim);
    std::string r = ctx.emit1("Greater", {count, ctx.constScalar(0, DType::Int64)});
    if (is_all) r = ctx.emit1("Not", {r});
    return bindOut(ctx, n, castIf(ctx, r, DType::Bool, out));
  };
}

// count_nonzero(self, dim=None | int | int[])
Status convertCountNonzero(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(auto axes, reducedAxes(ctx, args.optIn("dim"), ctx.rank(args.in("self", 0))));
  std::string b = castIf(ctx, x, ctx.dtype(args.in("self", 0)), DType::Bool);
  return bindOut(ctx, n, reduceOver(ctx, "ReduceSum", ctx.cast(b, DType::Int64), axes, false));
}

// std/var/std_mean/var_mean (unbiased or correction, dim lists, keepdim).
ConvertFn convertVariance(bool take_sqrt, bool with_mean) {
  return [take_sqrt, with_mean](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType out = n.output(0)->meta.dtype;
    OXPORT_ASSIGN(std::string x0, ctx.tensor(args.in("self", 0)));
    const DType work = reduceWorkType(out);
    std::string x = castIf(ctx, x0, ctx.dtype(args.in("self", 0)), work);
    const int rank = ctx.rank(args.in("self", 0));
    OXPORT_ASSIGN(auto axes, reducedAxes(ctx, args.optIn("dim"), rank));
    OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
    double correction = 1.0;
    if (const Value* u = args.optIn("unbiased"); u && !ctx.isNone(u)) {
      OXPORT_ASSIGN(bool unbiased, ctx.constBool(u));
      correction = unbiased ? 1.0 : 0.0;
    } else if (const Value* c = args.optIn("correction"); c && !ctx.isNone(c)) {
      OXPORT_ASSIGN(correction, ctx.constDouble(c));
    }
    std::vector<int64_t> shape = ctx.meta(args.in("self", 0)).shape;
    if (rank == 0) x = ctx.unsqueeze(x, {0});
    if (rank == 0) shape = {1};
    std::string mean_k = meanOver(ctx, x, shape, axes, true, work);
    std::string d = ctx.emit1("Sub", {x, mean_k});
    std::string sq = ctx.emit1("Mul", {d, d});
    std::string var;
    if (correction == 0.0) {
      var = meanOver(ctx, sq, shape, axes, keepdim, work);
    } else {
      std::string count = reducedCount(ctx, x, axes, work);
      std::string denom = ctx.emit1("Sub", {count, ctx.constScalar(correction, work)});
      // PyTorch divides by max(N - correction, 0): over no elements that is 0 / 0 = NaN.
      if (reducesNothing(shape, axes)) denom = ctx.emit1("Max", {denom, ctx.constScalar(0, work)});
      var = ctx.emit1("Div", {reduceOver(ctx, "ReduceSum", sq, axes, keepdim), denom});
    }
    if (rank == 0) var = ctx.reshape(var, {});
    std::string r = take_sqrt ? ctx.emit1("Sqrt", {var}) : var;
    ctx.bind(n.output(0), castIf(ctx, r, work, out));
    if (with_mean) {
      std::string m = keepdim ? mean_k : meanOver(ctx, x, shape, axes, false, work);
      if (rank == 0) m = ctx.reshape(m, {});
      ctx.bind(n.output(1), castIf(ctx, m, work, out));
    }
    return okStatus();
  };
}

// ||x||_p over axes (all when empty), computed in x's dtype.
std::string vectorNorm(Context& ctx, const std::string& x, DType dt, double p, const std::vector<int64_t>& axes,
                       bool keepdim) {
  if (p == 2.0) return reduceOver(ctx, "ReduceL2", x, axes, keepdim);
  if (p == 1.0) return reduceOver(ctx, "ReduceL1", x, axes, keepdim);
  if (std::isinf(p)) return reduceOver(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ctx.emit1("Abs", {x}), axes, keepdim);
  if (p == 0.0) return reduceOver(ctx, "ReduceSum", ctx.cast(ctx.cast(x, DType::Bool), dt), axes, keepdim);
  std::string powed = ctx.emit1("Pow", {ctx.emit1("Abs", {x}), ctx.constScalar(p, dt)});
  std::string s = reduceOver(ctx, "ReduceSum", powed, axes, keepdim);
  return ctx.emit1("Pow", {s, ctx.constScalar(1.0 / p, dt)});
}

// The matrix norms ONNX can express over dims (d0, d1): fro, 1, -1, inf, -inf.
Result<std::string> matrixNorm(Context& ctx, const std::string& x, DType dt, const std::string& ord_str, double ord,
                               std::vector<int64_t> dims, int rank, bool keepdim) {
  if (dims.size() != 2) return ctx.error("bad-argument", "a matrix norm needs exactly two dims");
  for (auto& d : dims) d = ctx.normDim(d, rank);
  if (dims[0] == dims[1]) return ctx.error("bad-argument", "a matrix norm needs two different dims");
  if (ord_str == "fro") {
    std::vector<int64_t> axes{std::min(dims[0], dims[1]), std::max(dims[0], dims[1])};
    return reduceOver(ctx, "ReduceL2", x, axes, keepdim);
  }
  if (!ord_str.empty() || !(std::fabs(ord) == 1.0 || std::isinf(ord)))
    return ctx.error("unsupported-form",
                     "the matrix norm ord=" + (ord_str.empty() ? std::to_string(ord) : "'" + ord_str + "'") +
                         " needs singular values, which ONNX cannot compute",
                     "use ord='fro', 1, -1, inf or -inf");
  // ord 1: max over d1 of the column sums (over d0); ord inf: max over d0 of the row sums (over d1).
  const int64_t sum_axis = std::fabs(ord) == 1.0 ? dims[0] : dims[1];
  const int64_t ext_axis = std::fabs(ord) == 1.0 ? dims[1] : dims[0];
  std::string s = reduceOver(ctx, "ReduceSum", ctx.emit1("Abs", {x}), {sum_axis}, true);
  std::string r = reduceOver(ctx, ord > 0 ? "ReduceMax" : "ReduceMin", s, {ext_axis}, true);
  if (!keepdim) r = ctx.squeeze(r, {std::min(dims[0], dims[1]), std::max(dims[0], dims[1])});
  (void)dt;
  return r;
}

// Reads a Scalar? ord/p: a number, a string ('fro', 'nuc'), or None (returns nullopt).
struct Ord {
  bool none = true;
  double p = 2.0;
  std::string str;
};

Result<Ord> ordArg(Context& ctx, const Value* v) {
  Ord o;
  if (!v || ctx.isNone(v)) return o;
  o.none = false;
  if (v->constant && v->constant->isString()) {
    o.str = v->constant->str();
    return o;
  }
  OXPORT_ASSIGN(o.p, ctx.constDouble(v));
  return o;
}

// The input of a norm, cast to the output dtype (norm(x, dtype=...)).
Result<std::string> normInput(Context& ctx, const Node& n) {
  const Value* self = Args(ctx, n).in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  const DType out = n.output(0)->meta.dtype;
  if (!isFloating(out)) return ctx.error("unsupported-form", "norms of non-floating tensors are not defined");
  return castIf(ctx, x, ctx.dtype(self), out);
}

// norm(self, p=2 | 'fro' | 'nuc', dim=None, keepdim=False, dtype=None) and linalg_vector_norm.
Status convertNorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, normInput(ctx, n));
  const int rank = ctx.rank(args.in("self", 0));
  const Value* pv = args.optIn("p");
  if (!pv) pv = args.optIn("ord");
  OXPORT_ASSIGN(Ord ord, ordArg(ctx, pv));
  OXPORT_ASSIGN(auto axes, reducedAxes(ctx, args.optIn("dim"), rank));
  OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
  if (ord.str == "fro") return bindOut(ctx, n, reduceOver(ctx, "ReduceL2", x, axes, keepdim));
  if (!ord.str.empty())
    return ctx.error("unsupported-form", "norm p='" + ord.str + "' needs singular values, which ONNX cannot compute");
  if (rank == 0) x = ctx.unsqueeze(x, {0});
  std::string r = vectorNorm(ctx, x, n.output(0)->meta.dtype, ord.p, axes, keepdim);
  if (rank == 0) r = ctx.reshape(r, {});
  return bindOut(ctx, n, r);
}

// frobenius_norm(self [, dim, keepdim])
Status convertFrobenius(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, normInput(ctx, n));
  OXPORT_ASSIGN(auto axes, reducedAxes(ctx, args.optIn("dim"), ctx.rank(args.in("self", 0))));
  OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
  return bindOut(ctx, n, reduceOver(ctx, "ReduceL2", x, axes, keepdim));
}

// linalg_matrix_norm(self, ord='fro' | number, dim=[-2, -1], keepdim=False, dtype=None)
Status convertMatrixNorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, normInput(ctx, n));
  OXPORT_ASSIGN(Ord ord, ordArg(ctx, args.optIn("ord")));
  if (ord.none) ord.str = "fro";
  std::vector<int64_t> dims{-2, -1};
  if (const Value* d = args.optIn("dim"); d && !ctx.isNone(d)) { OXPORT_ASSIGN(dims, ctx.constInts(d)); }
  OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
  OXPORT_ASSIGN(std::string r, matrixNorm(ctx, x, n.output(0)->meta.dtype, ord.str, ord.p, dims,
                                          ctx.rank(args.in("self", 0)), keepdim));
  return bindOut(ctx, n, r);
}

// linalg_norm(self, ord=None, dim=None, keepdim=False, dtype=None): a vector norm for one dim (or a
// 1-D input without dim), a matrix norm for two dims (or a 2-D input without dim).
Status convertLinalgNorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, normInput(ctx, n));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(Ord ord, ordArg(ctx, args.optIn("ord")));
  OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
  const Value* dv = args.optIn("dim");
  const bool no_dim = !dv || ctx.isNone(dv);
  std::vector<int64_t> dims;
  if (!no_dim) { OXPORT_ASSIGN(dims, ctx.constInts(dv)); }
  if (ord.none) {
    // The 2-norm of the flattened dims (Frobenius for two dims).
    OXPORT_ASSIGN(auto axes, reducedAxes(ctx, dv, rank));
    return bindOut(ctx, n, reduceOver(ctx, "ReduceL2", x, axes, keepdim));
  }
  if (no_dim) {
    if (rank == 2 || !ord.str.empty()) dims = {-2, -1};
    else if (rank == 1) dims = {0};
    else return ctx.error("bad-argument", "linalg_norm with ord and no dim needs a 1-D or 2-D input");
  }
  if (dims.size() == 2) {
    OXPORT_ASSIGN(std::string r, matrixNorm(ctx, x, n.output(0)->meta.dtype, ord.str, ord.p, dims, rank, keepdim));
    return bindOut(ctx, n, r);
  }
  if (!ord.str.empty()) return ctx.error("bad-argument", "ord='" + ord.str + "' is a matrix norm and needs two dims");
  OXPORT_ASSIGN(auto axes, reducedAxes(ctx, dv ? dv : nullptr, rank));
  if (no_dim) axes = {0};
  return bindOut(ctx, n, vectorNorm(ctx, x, n.output(0)->meta.dtype, ord.p, axes, keepdim));
}

// logsumexp(self, dim, keepdim)
Status convertLogsumexp(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x0, ctx.tensor(args.in("self", 0)));
  const DType out = n.output(0)->meta.dtype;
  std::string x = castIf(ctx, x0, ctx.dtype(args.in("self", 0)), out);
  if (scalarInput(ctx, n)) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  OXPORT_ASSIGN(auto axes, reducedAxes(ctx, args.optIn("dim"), ctx.rank(args.in("self", 0))));
  OXPORT_ASSIGN(bool keepdim, keepdimArg(ctx, n));
  return bindOut(ctx, n, reduceOver(ctx, "ReduceLogSumExp", x, axes, keepdim));
}

// cumsum(self, dim, dtype=None): CumSum from opset 11.
Status convertCumsum(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 11) return ctx.needsOpset(11, "cumsum (CumSum)");
  OXPORT_ASSIGN(std::string x0, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(int64_t d, ctx.constInt(args.in("dim", 1)));
  const DType out = n.output(0)->meta.dtype;
  const int rank = ctx.rank(args.in("self", 0));
  std::string x = castIf(ctx, x0, ctx.dtype(args.in("self", 0)), reduceWorkType(out));
  if (rank == 0) return bindOut(ctx, n, castIf(ctx, ctx.emit1("Identity", {x}), reduceWorkType(out), out));
  std::string y = ctx.emit1("CumSum", {x, ctx.constInt64s({ctx.normDim(d, rank)}, true)});
  return bindOut(ctx, n, castIf(ctx, y, reduceWorkType(out), out));
}

}  // namespace

void registerReduceOps(Registry& r) {
  addAll(r, {"aten::sum"}, reduceSimple("ReduceSum"));
  addAll(r, {"aten::mean"}, reduceSimple("ReduceMean"));
  addAll(r, {"aten::prod"}, reduceSimple("ReduceProd"));
  r.add("aten::amax", reduceExtreme(true));
  r.add("aten::amin", reduceExtreme(false));
  r.add("aten::aminmax", convertAminmax);
  r.add("aten::max", convertMaxMin(true));
  r.add("aten::min", convertMaxMin(false));
  r.add("aten::argmax", convertArgExtreme(true));
  r.add("aten::argmin", convertArgExtreme(false));
  r.add("aten::all", convertAllAny(true));
  r.add("aten::any", convertAllAny(false));
  r.add("aten::count_nonzero", convertCountNonzero);
  r.add("aten::std", convertVariance(true, false));
  r.add("aten::var", convertVariance(false, false));
  r.add("aten::std_mean", convertVariance(true, true));
  r.add("aten::var_mean", convertVariance(false, true));
  addAll(r, {"aten::norm", "aten::linalg_vector_norm"}, convertNorm);
  r.add("aten::frobenius_norm", convertFrobenius);
  r.add("aten::linalg_matrix_norm", convertMatrixNorm);
  r.add("aten::linalg_norm", convertLinalgNorm);
  r.add("aten::logsumexp", convertLogsumexp);
  addAll(r, {"aten::cumsum", "aten::cumsum_"}, convertCumsum);
}

}  // namespace oxport::convert
