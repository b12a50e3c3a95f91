// Small dense linear algebra ONNX has no operator for: linalg_inv (inverse), linalg_inv_ex,
// linalg_solve, linalg_cholesky (cholesky), and det/logdet/slogdet below opset 11 (ONNX Det is 11+).
// Camera intrinsics and poses (3x3, 4x4), Kalman filters and normalising flows invert small
// matrices. For a matrix size n known at export time (n <= kMaxSmallN) the algorithm is unrolled
// into elementwise ops over the whole batch: Gauss-Jordan elimination with partial pivoting (the
// pivot of each column is the largest magnitude at or below the diagonal, chosen per matrix by
// ArgMax, as LAPACK's getrf chooses it), row swaps and row scalings as exact 0/1 blends. Batch
// axes stay dynamic; n is part of the unrolled graph.
#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// The largest matrix the unrolled forms accept: n steps of about 20 nodes each.
constexpr int64_t kMaxSmallN = 8;

// A [rows, cols] constant of dtype dt (float32 or float64) with the given values.
std::string denseConstant(Context& ctx, const std::vector<double>& v, std::vector<int64_t> shape, DType dt) {
  if (dt == DType::Float64) return ctx.constant(HostTensor::fromVector(dt, std::move(shape), v));
  return ctx.constant(HostTensor::fromVector(dt, std::move(shape), std::vector<float>(v.begin(), v.end())));
}

// A column [n, 1] holding `on` at rows where pred(row) holds and `off` elsewhere.
template <class Pred>
std::string rowColumn(Context& ctx, int64_t n, DType dt, Pred pred, double on = 1.0, double off = 0.0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = pred(i) ? on : off;
  return denseConstant(ctx, v, {n, 1}, dt);
}

// The square matrix argument of a linalg op: its ONNX tensor, rank, size n and dtype, checked.
struct SquareArg {
  std::string x;
  int rank = 0;
  int64_t n = 0;
  DType dt = DType::Float32;
};

Result<SquareArg> squareArg(Context& ctx, const Value* v, const std::string& what) {
  SquareArg a;
  a.rank = ctx.rank(v);
  a.dt = ctx.dtype(v);
  const auto& s = ctx.meta(v).shape;
  if (a.rank < 2 || s[s.size() - 1] != s[s.size() - 2])
    return ctx.error("bad-argument", what + " of a tensor that is not a batch of square matrices (" +
                                         ctx.meta(v).toString() + ")");
  a.n = s.back();
  if (a.dt != DType::Float32 && a.dt != DType::Float64)
    return ctx.error("unsupported-form", what + " of a " + ctx.meta(v).toString() + " tensor",
                     "PyTorch computes it in float32 or float64 only: convert the input first");
  if (a.n > kMaxSmallN)
    return ctx.error("unsupported-form",
                     what + " of " + std::to_string(a.n) + "x" + std::to_string(a.n) +
                         " matrices: ONNX has no such operator and oxport unrolls it only up to " +
                         std::to_string(kMaxSmallN) + "x" + std::to_string(kMaxSmallN),
                     "compute it outside the exported model, or as a fixed weight when the matrix is static");
  OXPORT_ASSIGN(a.x, ctx.tensor(v));
  return a;
}

// 1 where p is zero (or NaN), 0 elsewhere, in p's dtype: Equal takes no floats before opset 11.
std::string isZero(Context& ctx, const std::string& p, DType dt) {
  std::string zero = ctx.constScalar(0.0, dt);
  std::string nz = ctx.emit1("Or", {ctx.emit1("Less", {p, zero}), ctx.emit1("Greater", {p, zero})});
  return ctx.cast(ctx.emit1("Not", {nz}), dt);
}

// What the elimination yields besides the reduced matrix.
struct Elimination {
  std::string m;        // [..., n, w]: the first n columns reduced to the identity
  std::string pivots;   // [..., 1, 1]: the product of the pivots
  std::string sign;     // [..., 1, 1]: (-1)^(row swaps)
  std::string info;     // [..., 1, 1]: 1 + the first step whose pivot was zero, 0 when none (LAPACK's info)
};

// Gauss-Jordan elimination with partial pivoting of the first n columns of m [..., n, w] (rank r).
Elimination gaussJordan(Context& ctx, std::string m, int r, int64_t n, DType dt) {
  const int64_t row_axis = r - 2, col_axis = r - 1;
  std::vector<int64_t> iota(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) iota[static_cast<size_t>(i)] = i;
  const std::string rows = ctx.constant(HostTensor::fromVector(DType::Int64, {n, 1}, iota));
  const std::string one = ctx.constScalar(1.0, dt);
  Elimination e;
  for (int64_t k = 0; k < n; ++k) {
    // The pivot row: the largest |m[i, k]| for i >= k (rows above score -1, below any magnitude).
    std::string col = ctx.slice(m, {k}, {k + 1}, {col_axis});
    std::string score = ctx.emit1("Add", {ctx.emit1("Mul", {ctx.emit1("Abs", {col}), rowColumn(ctx, n, dt, [k](int64_t i) { return i >= k; })}),
                                          rowColumn(ctx, n, dt, [k](int64_t i) { return i < k; }, -1.0)});
    std::string piv = ctx.emit1("ArgMax", {score}, {attrInt("axis", row_axis), attrInt("keepdims", 1)});  // [..., 1, 1]
    std::string at_piv = ctx.cast(ctx.emit1("Equal", {rows, piv}), dt);                                       // [..., n, 1]
    std::string ek = rowColumn(ctx, n, dt, [k](int64_t i) { return i == k; });
    std::string not_k = rowColumn(ctx, n, dt, [k](int64_t i) { return i != k; });
    std::string swap_row = ctx.emit1("Mul", {at_piv, not_k});  // the pivot row when it is not row k
    std::string row_k = ctx.slice(m, {k}, {k + 1}, {row_axis});
    std::string row_p = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {at_piv, m}), {row_axis}, true);
    // Swap rows k and p exactly: every other row is kept (times 1), the two are moved (times 1).
    std::string keep = ctx.emit1("Sub", {not_k, swap_row});
    m = ctx.emit1("Add", {ctx.emit1("Add", {ctx.emit1("Mul", {m, keep}), ctx.emit1("Mul", {ek, row_p})}),
                          ctx.emit1("Mul", {swap_row, row_k})});
    std::string swapped = reduceOver(ctx, "ReduceSum", swap_row, {row_axis}, true);  // [..., 1, 1], 0 or 1
    std::string flip = ctx.emit1("Sub", {one, ctx.emit1("Add", {swapped, swapped})});
    std::string pivot = ctx.slice(row_p, {k}, {k + 1}, {col_axis});  // [..., 1, 1]
    std::string zero_pivot = isZero(ctx, pivot, dt);
    if (k == 0) {
      e.sign = flip;
      e.pivots = pivot;
      e.info = zero_pivot;
    } else {
      e.sign = ctx.emit1("Mul", {e.sign, flip});
      e.pivots = ctx.emit1("Mul", {e.pivots, pivot});
      // The first zero pivot sets info to k + 1; later ones leave it.
      std::string first = ctx.emit1("Mul", {zero_pivot, isZero(ctx, e.info, dt)});
      e.info = ctx.emit1("Add", {e.info, ctx.emit1("Mul", {first, ctx.constScalar(static_cast<double>(k + 1), dt)})});
    }
    // Scale the pivot row by 1/pivot (1 for a zero pivot) and clear column k in the other rows.
    std::string scaled = ctx.emit1("Div", {row_p, ctx.emit1("Add", {pivot, zero_pivot})});
    std::string others = ctx.emit1("Mul", {ctx.slice(m, {k}, {k + 1}, {col_axis}), not_k});
    m = ctx.emit1("Sub", {m, ctx.emit1("Mul", {others, scaled})});
    m = ctx.emit1("Add", {ctx.emit1("Mul", {m, not_k}), ctx.emit1("Mul", {ek, scaled})});
  }
  e.m = m;
  return e;
}

// [..., n, n] identity of x's batch shape (x itself is [..., n, n]).
std::string identityLike(Context& ctx, const SquareArg& a) {
  std::vector<double> eye(static_cast<size_t>(a.n * a.n), 0.0);
  for (int64_t i = 0; i < a.n; ++i) eye[static_cast<size_t>(i * a.n + i)] = 1.0;
  std::string id = denseConstant(ctx, eye, {a.n, a.n}, a.dt);
  return a.rank == 2 ? id : ctx.emit1("Expand", {id, ctx.shapeOf(a.x)});
}

// The inverse of every matrix of a [..., n, n] and the elimination's info.
Elimination inverseOf(Context& ctx, const SquareArg& a) {
  std::string aug = ctx.emit1("Concat", {a.x, identityLike(ctx, a)}, {attrInt("axis", a.rank - 1)});
  Elimination e = gaussJordan(ctx, aug, a.rank, a.n, a.dt);
  e.m = ctx.slice(e.m, {a.n}, {2 * a.n}, {a.rank - 1});
  return e;
}

// [..., 1, 1] -> [...]
std::string dropMatrixAxes(Context& ctx, const std::string& x, int rank) {
  return ctx.squeeze(x, {rank - 2, rank - 1});
}

// linalg_inv(A) / inverse(self); linalg_inv_ex(A, check_errors) -> (inverse, info int32 [...]).
Status convertInverse(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(SquareArg a, squareArg(ctx, args.in({"A", "self"}, 0), n.kind.substr(6)));
  if (a.n == 0) return bindOut(ctx, n, a.x);
  Elimination e = inverseOf(ctx, a);
  ctx.bind(n.output(0), e.m);
  if (n.outputs.size() > 1) ctx.bind(n.output(1), ctx.cast(dropMatrixAxes(ctx, e.info, a.rank), DType::Int32));
  return okStatus();
}

// linalg_solve(A, B, left): X with A X = B (left) or X A = B, as inverse(A) times B. B is a
// vector (or a batch of vectors) when it has one axis less than A, as PyTorch decides it.
Status convertSolve(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(SquareArg a, squareArg(ctx, args.in("A", 0), "linalg_solve"));
  const Value* bv = args.in("B", 1);
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(bv, a.dt));
  bool left = true;
  if (args.has("left")) { OXPORT_ASSIGN(left, args.constBool("left", 2)); }
  const int rb = ctx.rank(bv);
  const bool vector = rb == 1 || (rb == a.rank - 1 && ctx.meta(bv).shape ==
                                                           std::vector<int64_t>(ctx.meta(args.in("A", 0)).shape.begin(),
                                                                                ctx.meta(args.in("A", 0)).shape.end() - 1));
  std::string inv = inverseOf(ctx, a).m;
  if (vector) {
    std::string x = left ? ctx.emit1("MatMul", {inv, ctx.unsqueeze(b, {rb})}) : ctx.emit1("MatMul", {ctx.unsqueeze(b, {rb - 1}), inv});
    const int rx = std::max(a.rank, rb + 1);
    return bindOut(ctx, n, ctx.squeeze(x, {left ? rx - 1 : rx - 2}));
  }
  return bindOut(ctx, n, left ? ctx.emit1("MatMul", {inv, b}) : ctx.emit1("MatMul", {b, inv}));
}

// det / linalg_det / logdet below opset 11: the signed product of the elimination's pivots.
ConvertFn convertDetUnrolled(bool take_log) {
  return [take_log](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(SquareArg a, squareArg(ctx, args.in({"A", "self"}, 0), n.kind.substr(6)));
    if (a.n == 0) {
      std::string ones = ctx.emit1("ReduceProd", {ctx.emit1("Add", {a.x, ctx.constScalar(1.0, a.dt)})},
                                   {attrInts("axes", {a.rank - 2, a.rank - 1}), attrInt("keepdims", 0)});
      return bindOut(ctx, n, take_log ? ctx.emit1("Log", {ones}) : ones);
    }
    Elimination e = gaussJordan(ctx, a.x, a.rank, a.n, a.dt);
    std::string det = dropMatrixAxes(ctx, ctx.emit1("Mul", {e.pivots, e.sign}), a.rank);
    return bindOut(ctx, n, take_log ? ctx.emit1("Log", {det}) : det);
  };
}

// slogdet / linalg_slogdet below opset 11 -> (sign, log|det|) of the elimination's signed pivot
// product, as the Det form from opset 11 takes them (ops_math.cpp).
Status convertSlogdetUnrolled(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(SquareArg a, squareArg(ctx, args.in({"A", "self"}, 0), n.kind.substr(6)));
  std::string det;
  if (a.n == 0) {
    det = ctx.emit1("ReduceProd", {ctx.emit1("Add", {a.x, ctx.constScalar(1.0, a.dt)})},
                    {attrInts("axes", {a.rank - 2, a.rank - 1}), attrInt("keepdims", 0)});
  } else {
    Elimination e = gaussJordan(ctx, a.x, a.rank, a.n, a.dt);
    det = dropMatrixAxes(ctx, ctx.emit1("Mul", {e.pivots, e.sign}), a.rank);
  }
  ctx.bind(n.output(0), ctx.emit1("Sign", {det}));
  ctx.bind(n.output(1), ctx.emit1("Log", {ctx.emit1("Abs", {det})}));
  return okStatus();
}

// linalg_cholesky(self, upper) / cholesky(self, upper): L column by column (Cholesky-Banachiewicz),
// col_j = (A[:, j] - L[:, :j] L[j, :j]^T) / sqrt(that at row j), zero above the diagonal.
Status convertCholesky(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(SquareArg a, squareArg(ctx, args.in("self", 0), n.kind.substr(6)));
  bool upper = false;
  if (args.has("upper", 1)) { OXPORT_ASSIGN(upper, args.constBool("upper", 1)); }
  if (a.n == 0) return bindOut(ctx, n, a.x);
  const int r = a.rank;
  std::vector<int64_t> perm;
  for (int i = 0; i < r; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(r - 1)], perm[static_cast<size_t>(r - 2)]);
  std::vector<std::string> cols;
  std::string lower;
  for (int64_t j = 0; j < a.n; ++j) {
    std::string v = ctx.slice(a.x, {j}, {j + 1}, {r - 1});  // [..., n, 1]
    if (j > 0) {
      // L[:, :j] L[j, :j]^T as a product and a sum over the last axis (a MatMul by a transposed
      // row becomes ONNX Runtime's FusedMatMul, which has no float64 kernel).
      std::string row_j = ctx.slice(lower, {j}, {j + 1}, {r - 2});  // [..., 1, j]
      v = ctx.emit1("Sub", {v, reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {lower, row_j}), {r - 1}, true)});
    }
    std::string d = ctx.emit1("Sqrt", {ctx.slice(v, {j}, {j + 1}, {r - 2})});
    cols.push_back(ctx.emit1("Mul", {ctx.emit1("Div", {v, d}), rowColumn(ctx, a.n, a.dt, [j](int64_t i) { return i >= j; })}));
    lower = cols.size() == 1 ? cols[0] : ctx.emit1("Concat", cols, {attrInt("axis", r - 1)});
  }
  return bindOut(ctx, n, upper ? ctx.emit1("Transpose", {lower}, {attrInts("perm", perm)}) : lower);
}

}  // namespace

void registerSmallLinalgOps(Registry& r) {
  addAll(r, {"aten::linalg_inv", "aten::inverse", "aten::linalg_inv_ex"}, convertInverse);
  r.add("aten::linalg_solve", convertSolve);
  addAll(r, {"aten::linalg_cholesky", "aten::cholesky"}, convertCholesky);
  addAll(r, {"aten::linalg_det", "aten::det"}, convertDetUnrolled(false), kMinOpset, 10);
  r.add("aten::logdet", convertDetUnrolled(true), kMinOpset, 10);
  addAll(r, {"aten::slogdet", "aten::linalg_slogdet"}, convertSlogdetUnrolled, kMinOpset, 10);
}

}  // namespace oxport::convert
