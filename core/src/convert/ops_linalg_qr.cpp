// QR decomposition (linalg_qr, qr) and the pseudo-inverse through it (linalg_pinv, pinverse) for
// small matrices of sizes known at export time (m, n <= kMaxQrSize; batch axes stay dynamic).
// Orthogonalisation in GNNs and flows, least-squares heads and calibration use them on 3x3 to 8x8
// matrices. QR is unrolled the way LAPACK's geqrf + orgqr compute it (what libtorch calls on the
// CPU): Householder reflectors H_k = I - tau v v^T with beta = -sign(alpha) ||x|| (sign(0) = +), no
// reflection (tau = 0) when the column below the diagonal is exactly zero, so R's diagonal signs
// are libtorch's, not Gram-Schmidt's positive ones; Q = H_0 H_1 ... applied to the identity.
// pinv is R^-1 Q^T by back substitution (of A's QR when m >= n, of A^T's when m < n): exact for
// full-rank inputs. PyTorch's pinv (an SVD) zeroes singular values below rtol * sigma_max
// (rtol = eps * max(m, n) by default); a matrix that is rank deficient at run time cannot be
// refused at export time, and gives non-finite or huge values here where PyTorch's are finite.
// Triangular solves (linalg_solve_triangular, triangular_solve, cholesky_solve, cholesky_inverse)
// are the same substitutions, unrolled row by row in LAPACK's order (trsm, potrs).
#include <algorithm>
#include <functional>
#include <utility>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// The largest matrix side the unrolled forms accept: min(m, n) reflectors of ~25 nodes each.
constexpr int64_t kMaxQrSize = 8;

// A [rows, cols] constant of dtype dt with the values f(i, j).
std::string gridConstant(Context& ctx, DType dt, int64_t rows, int64_t cols, const std::function<double(int64_t, int64_t)>& f) {
  std::vector<double> v;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) v.push_back(f(i, j));
  if (dt == DType::Float64) return ctx.constant(HostTensor::fromVector(dt, {rows, cols}, v));
  return ctx.constant(HostTensor::fromVector(dt, {rows, cols}, std::vector<float>(v.begin(), v.end())));
}

// A batch of matrices [..., m, n]: its ONNX tensor, rank, sizes and dtype, checked.
struct MatrixArg {
  std::string x;
  int rank = 0;
  int64_t m = 0, n = 0;
  DType dt = DType::Float32;
};

Result<MatrixArg> matrixArg(Context& ctx, const Value* v, const std::string& what) {
  MatrixArg a;
  a.rank = ctx.rank(v);
  a.dt = ctx.dtype(v);
  if (a.rank < 2)
    return ctx.error("bad-argument", what + " of a tensor that is not a batch of matrices (" + ctx.meta(v).toString() + ")");
  const auto& s = ctx.meta(v).shape;
  a.m = s[s.size() - 2];
  a.n = s.back();
  if (a.dt != DType::Float32 && a.dt != DType::Float64)
    return ctx.error("unsupported-form", what + " of a " + ctx.meta(v).toString() + " tensor",
                     "PyTorch computes it in float32 or float64 only: convert the input first");
  if (a.m > kMaxQrSize || a.n > kMaxQrSize || a.m == 0 || a.n == 0)
    return ctx.error("unsupported-form",
                     what + " of " + std::to_string(a.m) + "x" + std::to_string(a.n) +
                         " matrices: ONNX has no such operator and oxport unrolls it only for sizes 1 to " +
                         std::to_string(kMaxQrSize),
                     "compute it outside the exported model, or as a fixed weight when the matrix is static");
  OXPORT_ASSIGN(a.x, ctx.tensor(v));
  return a;
}

std::string transposeLast(Context& ctx, const std::string& x, int rank) {
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
  return ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
}

// The [..., m, m] identity over a's batch axes.
std::string batchIdentity(Context& ctx, const MatrixArg& a) {
  std::string eye = gridConstant(ctx, a.dt, a.m, a.m, [](int64_t i, int64_t j) { return i == j ? 1.0 : 0.0; });
  if (a.rank == 2) return eye;
  std::string batch = ctx.slice(ctx.shapeOf(a.x), {0}, {a.rank - 2}, {0});
  std::string shape = ctx.emit1("Concat", {batch, ctx.constInt64s({a.m, a.m})}, {attrInt("axis", 0)});
  return ctx.emit1("Expand", {eye, shape});
}

struct Qr {
  std::string q;  // [..., m, m] (empty when not asked for)
  std::string r;  // [..., m, n], exactly upper triangular
};

// Householder QR of a [..., m, n] as geqrf + orgqr compute it.
Qr householderQr(Context& ctx, const MatrixArg& a, bool want_q) {
  const int64_t ra = a.rank - 2, ca = a.rank - 1, m = a.m, n = a.n;
  const DType dt = a.dt;
  const std::string one = ctx.constScalar(1.0, dt), zero = ctx.constScalar(0.0, dt);
  Qr out;
  out.r = a.x;
  // The reflector of the last row (m <= n) is the identity (LAPACK: tau = 0 for a vector of one).
  for (int64_t k = 0; k < std::min(m - 1, n); ++k) {
    auto column = [&](const std::function<bool(int64_t)>& pred) {
      return gridConstant(ctx, dt, m, 1, [&](int64_t i, int64_t) { return pred(i) ? 1.0 : 0.0; });
    };
    std::string col = ctx.slice(out.r, {k}, {k + 1}, {ca});                                     // [..., m, 1]
    std::string below = ctx.emit1("Mul", {col, column([k](int64_t i) { return i > k; })});
    std::string alpha = ctx.slice(col, {k}, {k + 1}, {ra});                                     // [..., 1, 1]
    std::string xnorm2 = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {below, below}), {ra}, true);
    std::string norm = ctx.emit1("Sqrt", {ctx.emit1("Add", {ctx.emit1("Mul", {alpha, alpha}), xnorm2})});
    // beta = -sign(alpha) * norm with sign(0) = +1: (2 [alpha < 0] - 1) * norm.
    std::string neg = ctx.cast(ctx.emit1("Less", {alpha, zero}), dt);
    std::string beta = ctx.emit1("Mul", {ctx.emit1("Sub", {ctx.emit1("Add", {neg, neg}), one}), norm});
    // No reflection where the column below the diagonal is exactly zero; `keep` guards the divisions.
    std::string reflect = ctx.cast(ctx.emit1("Greater", {xnorm2, zero}), dt);
    std::string keep = ctx.emit1("Sub", {one, reflect});
    std::string tau = ctx.emit1("Mul", {reflect, ctx.emit1("Div", {ctx.emit1("Sub", {beta, alpha}), ctx.emit1("Add", {beta, keep})})});
    std::string scale = ctx.emit1("Add", {ctx.emit1("Sub", {alpha, beta}), keep});
    std::string v = ctx.emit1("Add", {column([k](int64_t i) { return i == k; }), ctx.emit1("Div", {below, scale})});
    // R <- H R = R - tau v (v^T R); column k is then set to (beta or alpha) e_k exactly.
    std::string w = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {v, out.r}), {ra}, true);  // [..., 1, n]
    out.r = ctx.emit1("Sub", {out.r, ctx.emit1("Mul", {ctx.emit1("Mul", {tau, v}), w})});
    std::string diag = ctx.emit1("Add", {ctx.emit1("Mul", {reflect, beta}), ctx.emit1("Mul", {keep, alpha})});
    std::string off_k = gridConstant(ctx, dt, m, n, [k](int64_t i, int64_t j) { return j == k && i >= k ? 0.0 : 1.0; });
    std::string at_kk = gridConstant(ctx, dt, m, n, [k](int64_t i, int64_t j) { return i == k && j == k ? 1.0 : 0.0; });
    out.r = ctx.emit1("Add", {ctx.emit1("Mul", {out.r, off_k}), ctx.emit1("Mul", {at_kk, diag})});
    if (!want_q) continue;
    // Q <- Q H = Q - tau (Q v) v^T, from the identity (a product and a sum, not a MatMul by a
    // transposed operand, which ONNX Runtime fuses into FusedMatMul without a float64 kernel).
    std::string vt = transposeLast(ctx, v, a.rank);  // [..., 1, m]
    std::string tv = ctx.emit1("Mul", {tau, v});
    if (out.q.empty()) {
      std::string eye = gridConstant(ctx, dt, m, m, [](int64_t i, int64_t j) { return i == j ? 1.0 : 0.0; });
      out.q = ctx.emit1("Sub", {eye, ctx.emit1("Mul", {tv, vt})});
    } else {
      std::string qv = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {out.q, vt}), {ca}, true);  // [..., m, 1]
      out.q = ctx.emit1("Sub", {out.q, ctx.emit1("Mul", {ctx.emit1("Mul", {tau, qv}), vt})});
    }
  }
  if (want_q && out.q.empty()) out.q = batchIdentity(ctx, a);
  return out;
}

// linalg_qr(A, mode) / qr(self, some): (Q, R) for mode "reduced" (some), "complete", or "r" (Q empty).
Status convertQr(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(MatrixArg a, matrixArg(ctx, args.in({"A", "self"}, 0), n.kind.substr(6)));
  std::string mode = "reduced";
  if (args.has("mode", 1)) {
    OXPORT_ASSIGN(mode, ctx.constString(args.in("mode", 1)));
  } else if (args.has("some", 1)) {
    OXPORT_ASSIGN(bool some, args.constBool("some", 1));
    mode = some ? "reduced" : "complete";
  }
  if (mode != "reduced" && mode != "complete" && mode != "r")
    return ctx.error("bad-argument", "linalg_qr with mode \"" + mode + "\"", "the modes are \"reduced\", \"complete\" and \"r\"");
  Qr f = householderQr(ctx, a, mode != "r");
  const int64_t k = std::min(a.m, a.n);
  if (mode == "complete") {
    ctx.bind(n.output(0), f.q);
    ctx.bind(n.output(1), f.r);
    return okStatus();
  }
  ctx.bind(n.output(0), mode == "r" ? ctx.constant(HostTensor::fromVector(a.dt, {0}, std::vector<double>{}))
                                    : ctx.slice(f.q, {0}, {k}, {a.rank - 1}));
  ctx.bind(n.output(1), ctx.slice(f.r, {0}, {k}, {a.rank - 2}));
  return okStatus();
}

// linalg_pinv(self, ...) / pinverse(self, rcond): R^-1 Q^T of the reduced QR of the tall one of A
// and A^T, by back substitution row by row from the last.
Status convertPinv(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(MatrixArg a, matrixArg(ctx, args.in("self", 0), n.kind.substr(6)));
  const bool wide = a.m < a.n;
  MatrixArg t = a;
  if (wide) {
    t.x = transposeLast(ctx, a.x, a.rank);
    std::swap(t.m, t.n);
  }
  Qr f = householderQr(ctx, t, true);
  const int ra = a.rank - 2, ca = a.rank - 1;
  const int64_t k = t.n;
  std::string qt = transposeLast(ctx, ctx.slice(f.q, {0}, {k}, {ca}), a.rank);  // [..., k, m']
  std::string rt = transposeLast(ctx, f.r, a.rank);                              // R^T: [..., n', m']
  std::string x;                                                                 // rows i+1.. of R^-1 Q^T
  for (int64_t i = k - 1; i >= 0; --i) {
    std::string row = ctx.slice(qt, {i}, {i + 1}, {ra});  // [..., 1, m']
    if (!x.empty()) {
      std::string r_right = ctx.slice(ctx.slice(rt, {i + 1}, {k}, {ra}), {i}, {i + 1}, {ca});  // R[i, i+1:]^T: [..., k-i-1, 1]
      row = ctx.emit1("Sub", {row, reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {r_right, x}), {ra}, true)});
    }
    std::string d = ctx.slice(ctx.slice(f.r, {i}, {i + 1}, {ra}), {i}, {i + 1}, {ca});
    row = ctx.emit1("Div", {row, d});
    x = x.empty() ? row : ctx.emit1("Concat", {row, x}, {attrInt("axis", ra)});
  }
  return bindOut(ctx, n, wide ? transposeLast(ctx, x, a.rank) : x);
}

// ---- triangular solves (linalg_solve_triangular, triangular_solve, cholesky_solve, cholesky_inverse)

// x with rank raised to `rank` by leading axes of size 1 (batch axes then broadcast).
std::string toRank(Context& ctx, const std::string& x, int have, int rank) {
  if (have >= rank) return x;
  std::vector<int64_t> axes;
  for (int i = 0; i < rank - have; ++i) axes.push_back(i);
  return ctx.unsqueeze(x, axes);
}

// X with T X = B for a triangular T [..., n, n] and B [..., n, k] of the same rank (batch axes
// broadcast): forward substitution from the first row when lower, back substitution from the last
// when upper, as LAPACK's trsm computes it: row i is B[i] minus T[i, j] X[j] for each row j already
// solved, subtracted in the order they were solved, then divided by T[i, i] (not when unit). Only
// T's triangle is read, and not its diagonal when unit.
std::string triangularSolve(Context& ctx, const std::string& t, const std::string& b, int rank, int64_t n, bool lower,
                            bool unit) {
  const int ra = rank - 2, ca = rank - 1;
  std::vector<std::string> rows(static_cast<size_t>(n));
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) order.push_back(lower ? i : n - 1 - i);
  for (size_t s = 0; s < order.size(); ++s) {
    const int64_t i = order[s];
    const std::string t_row = ctx.slice(t, {i}, {i + 1}, {ra});  // [..., 1, n]
    std::string acc = ctx.slice(b, {i}, {i + 1}, {ra});          // [..., 1, k]
    for (size_t p = 0; p < s; ++p) {
      const int64_t j = order[p];
      acc = ctx.emit1("Sub", {acc, ctx.emit1("Mul", {ctx.slice(t_row, {j}, {j + 1}, {ca}), rows[static_cast<size_t>(j)]})});
    }
    if (!unit) acc = ctx.emit1("Div", {acc, ctx.slice(t_row, {i}, {i + 1}, {ca})});
    rows[static_cast<size_t>(i)] = acc;
  }
  return n == 1 ? rows[0] : ctx.emit1("Concat", rows, {attrInt("axis", ra)});
}

// The right-hand side argument B [..., n, k] of a solve with a's n: its tensor and rank, checked.
Result<std::pair<std::string, int>> rhsArg(Context& ctx, const Value* v, const MatrixArg& a, bool left,
                                           const std::string& what) {
  const int rank = ctx.rank(v);
  if (rank < 2 || ctx.dtype(v) != a.dt)
    return ctx.error("bad-argument", what + ": the right-hand side " + ctx.meta(v).toString() +
                                         " is not a batch of matrices of the coefficients' dtype");
  const auto& s = ctx.meta(v).shape;
  if ((left ? s[s.size() - 2] : s.back()) != a.n)
    return ctx.error("bad-argument", what + ": the right-hand side " + ctx.meta(v).toString() + " does not match " +
                                         std::to_string(a.n) + "x" + std::to_string(a.n) + " coefficients");
  OXPORT_ASSIGN(std::string b, ctx.tensor(v));
  return std::make_pair(b, rank);
}

// The square triangular coefficient matrix of a solve.
Result<MatrixArg> squareArg(Context& ctx, const Value* v, const std::string& what) {
  OXPORT_ASSIGN(MatrixArg a, matrixArg(ctx, v, what));
  if (a.m != a.n)
    return ctx.error("bad-argument", what + " of " + std::to_string(a.m) + "x" + std::to_string(a.n) +
                                         " coefficients: they must be square");
  return a;
}

// linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False): A X = B, or X A = B as
// A^T X^T = B^T (A^T is lower where A is upper).
Status convertSolveTriangular(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const std::string what = "linalg_solve_triangular";
  OXPORT_ASSIGN(MatrixArg a, squareArg(ctx, args.in("self", 0), what));
  OXPORT_ASSIGN(bool upper, args.constBool("upper", 2));
  OXPORT_ASSIGN(bool left, args.has("left", 3) ? args.constBool("left", 3) : Result<bool>(true));
  OXPORT_ASSIGN(bool unit, args.has("unitriangular", 4) ? args.constBool("unitriangular", 4) : Result<bool>(false));
  OXPORT_ASSIGN(auto rhs, rhsArg(ctx, args.in("B", 1), a, left, what));
  const int rank = std::max(a.rank, rhs.second);
  std::string t = toRank(ctx, a.x, a.rank, rank), b = toRank(ctx, rhs.first, rhs.second, rank);
  if (left) return bindOut(ctx, n, triangularSolve(ctx, t, b, rank, a.n, !upper, unit));
  std::string x = triangularSolve(ctx, transposeLast(ctx, t, rank), transposeLast(ctx, b, rank), rank, a.n, upper, unit);
  return bindOut(ctx, n, transposeLast(ctx, x, rank));
}

// triangular_solve(self = B, A, upper=True, transpose=False, unitriangular=False) -> (X, A's copy):
// A X = B, or A^T X = B.
Status convertTriangularSolve(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const std::string what = "triangular_solve";
  OXPORT_ASSIGN(MatrixArg a, squareArg(ctx, args.in("A", 1), what));
  OXPORT_ASSIGN(bool upper, args.has("upper", 2) ? args.constBool("upper", 2) : Result<bool>(true));
  OXPORT_ASSIGN(bool transpose, args.has("transpose", 3) ? args.constBool("transpose", 3) : Result<bool>(false));
  OXPORT_ASSIGN(bool unit, args.has("unitriangular", 4) ? args.constBool("unitriangular", 4) : Result<bool>(false));
  OXPORT_ASSIGN(auto rhs, rhsArg(ctx, args.in("self", 0), a, true, what));
  const int rank = std::max(a.rank, rhs.second);
  std::string t = toRank(ctx, a.x, a.rank, rank), b = toRank(ctx, rhs.first, rhs.second, rank);
  if (transpose) t = transposeLast(ctx, t, rank);
  ctx.bind(n.output(0), triangularSolve(ctx, t, b, rank, a.n, upper == transpose, unit));
  ctx.bind(n.output(1), ctx.emit1("Identity", {a.x}));
  return okStatus();
}

// cholesky_solve(self = B, input2 = L, upper=False): A X = B for A = L L^T (U^T U when upper), as
// LAPACK's potrs solves it: L Y = B, then L^T X = Y. cholesky_inverse(L, upper=False): the same
// with B the identity.
ConvertFn convertCholeskySolve(bool inverse) {
  return [inverse](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const std::string what = inverse ? "cholesky_inverse" : "cholesky_solve";
    OXPORT_ASSIGN(MatrixArg a, squareArg(ctx, args.in(inverse ? "self" : "input2", inverse ? 0 : 1), what));
    const int upper_at = inverse ? 1 : 2;
    OXPORT_ASSIGN(bool upper, args.has("upper", upper_at) ? args.constBool("upper", upper_at) : Result<bool>(false));
    std::string b = batchIdentity(ctx, a);
    int rank = a.rank;
    std::string l = a.x;
    if (!inverse) {
      OXPORT_ASSIGN(auto rhs, rhsArg(ctx, args.in("self", 0), a, true, what));
      rank = std::max(a.rank, rhs.second);
      l = toRank(ctx, a.x, a.rank, rank);
      b = toRank(ctx, rhs.first, rhs.second, rank);
    }
    std::string lt = transposeLast(ctx, l, rank);
    // Lower: L Y = B, L^T X = Y. Upper (A = U^T U): U^T Y = B, U X = Y.
    std::string y = triangularSolve(ctx, upper ? lt : l, b, rank, a.n, true, false);
    return bindOut(ctx, n, triangularSolve(ctx, upper ? l : lt, y, rank, a.n, false, false));
  };
}

}  // namespace

void registerLinalgQrOps(Registry& r) {
  addAll(r, {"aten::linalg_qr", "aten::qr"}, convertQr);
  addAll(r, {"aten::linalg_pinv", "aten::pinverse"}, convertPinv);
  r.add("aten::linalg_solve_triangular", convertSolveTriangular);
  r.add("aten::triangular_solve", convertTriangularSolve);
  r.add("aten::cholesky_solve", convertCholeskySolve(false));
  r.add("aten::cholesky_inverse", convertCholeskySolve(true));
}

}  // namespace oxport::convert
