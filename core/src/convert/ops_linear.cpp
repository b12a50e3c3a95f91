// Linear algebra: linear, addmm, matmul, mm, bmm, t; addmv/addr/addbmm, multi_dot,
// matrix_power and bilinear (nn.Bilinear).
#include <algorithm>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// Whether linear node n reads its weight (input 1) transposed: a MatMul with the transposed
// weight when the input is not 2-D (2-D inputs take Gemm with transB, which reads it as is).
bool readsWeightTransposed(Context& ctx, const Node* n, size_t idx) {
  return n->kind == "aten::linear" && idx == 1 && ctx.rank(n->input(0)) != 2 && ctx.rank(n->input(1)) == 2;
}

// The transposed weight: folded on the host when the weight is a constant and folding is on,
// unless the weight is also read as itself (an embedding tied to an output projection): then a
// Transpose of the one weight, so that the file holds its bytes once.
Result<std::string> transposedWeight(Context& ctx, const Value* w) {
  bool read_as_itself = false;
  for (const auto& [user, idx] : ctx.weightUses(w)) read_as_itself = read_as_itself || !readsWeightTransposed(ctx, user, idx);
  if (w->constant && w->constant->isTensor() && w->constant->tensor().shape.size() == 2 &&
      ctx.settings().constant_folding && !read_as_itself) {
    std::string hint = w->param_name.empty() ? "Constant" : "MatMul";
    return ctx.transposedConstant(w->constant->tensor(), hint, w);
  }
  OXPORT_ASSIGN(std::string name, ctx.tensor(w));
  return ctx.emit1("Transpose", {name}, {attrInts("perm", {1, 0})});
}

// linear(input, weight, bias=None)
Status convertLinear(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* x = args.in("input", 0);
  const Value* w = args.in("weight", 1);
  const Value* b = args.optIn("bias", 2);
  const bool has_bias = b && !ctx.isNone(b);
  OXPORT_ASSIGN(std::string xin, ctx.tensor(x));
  if (ctx.rank(x) == 2 && ctx.rank(w) == 2) {
    OXPORT_ASSIGN(std::string wn, ctx.tensor(w));
    std::vector<std::string> ins{xin, wn};
    if (has_bias) {
      OXPORT_ASSIGN(std::string bn, ctx.tensor(b));
      ins.push_back(bn);
    }
    return bindOut(ctx, n, ctx.emit1("Gemm", ins, {attrFloat("alpha", 1.0f), attrFloat("beta", 1.0f), attrInt("transB", 1)}));
  }
  std::string y;
  if (ctx.rank(w) == 1) {
    OXPORT_ASSIGN(std::string wn, ctx.tensor(w));
    y = ctx.emit1("MatMul", {xin, wn});
  } else {
    OXPORT_ASSIGN(std::string wt, transposedWeight(ctx, w));
    y = ctx.emit1("MatMul", {xin, wt});
  }
  if (has_bias) {
    OXPORT_ASSIGN(std::string bn, ctx.tensor(b));
    y = ctx.emit1("Add", {y, bn});
  }
  return bindOut(ctx, n, y);
}

// addmm(self, mat1, mat2, beta=1, alpha=1) = beta*self + alpha*(mat1 @ mat2)
Status convertAddmm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  double beta = 1.0, alpha = 1.0;
  if (n.inputs.size() > 3) { OXPORT_ASSIGN(beta, ctx.constDouble(args.in("beta", 3))); }
  if (n.inputs.size() > 4) { OXPORT_ASSIGN(alpha, ctx.constDouble(args.in("alpha", 4))); }
  OXPORT_ASSIGN(std::string c, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string a, ctx.tensor(args.in("mat1", 1)));
  OXPORT_ASSIGN(std::string b, ctx.tensor(args.in("mat2", 2)));
  if (!isFloating(ctx.dtype(args.in("mat1", 1)))) {
    std::string mm = ctx.emit1("MatMul", {a, b});
    return bindOut(ctx, n, ctx.emit1("Add", {mm, c}));
  }
  return bindOut(ctx, n, ctx.emit1("Gemm", {a, b, c}, {attrFloat("alpha", static_cast<float>(alpha)),
                                                      attrFloat("beta", static_cast<float>(beta))}));
}

// matmul/mm/bmm. ONNX Runtime's MatMul fails on several empty operands (an empty inner dim,
// an empty batch against a 1-D operand: "cannot broadcast"), where PyTorch gives zeros or an
// empty result. When the example has an empty operand the product is written as broadcast Mul
// and ReduceSum over the inner dim, which ONNX Runtime gets right for every size.
Status convertMatmul(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string a, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string b, ctx.tensor(args.in({"mat2", "other"}, 1)));
  const auto& as = ctx.meta(args.in("self", 0)).shape;
  const auto& bs = ctx.meta(args.in({"mat2", "other"}, 1)).shape;
  bool empty = false;
  for (int64_t d : as) empty = empty || d == 0;
  for (int64_t d : bs) empty = empty || d == 0;
  if (!empty || as.empty() || bs.empty()) return bindOut(ctx, n, ctx.emit1("MatMul", {a, b}));
  const bool vec_a = as.size() == 1, vec_b = bs.size() == 1;
  if (vec_a) a = ctx.unsqueeze(a, {0});  // [k] -> [1, k]
  if (vec_b) b = ctx.unsqueeze(b, {1});  // [k] -> [k, 1]
  const int64_t ra = vec_a ? 2 : static_cast<int64_t>(as.size()), rb = vec_b ? 2 : static_cast<int64_t>(bs.size());
  const int64_t rp = std::max(ra, rb) + 1;  // rank of the [..., m, k, n] products
  std::string prod = ctx.emit1("Mul", {ctx.unsqueeze(a, {ra}), ctx.unsqueeze(b, {rb - 2})});
  std::string y = reduceOver(ctx, "ReduceSum", prod, {rp - 2}, false);  // [..., m, n]
  std::vector<int64_t> drop;
  if (vec_a) drop.push_back(rp - 3);
  if (vec_b) drop.push_back(rp - 2);
  if (!drop.empty()) y = ctx.squeeze(y, drop);
  return bindOut(ctx, n, y);
}

Status convertT(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  if (ctx.rank(args.in("self", 0)) < 2) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  return bindOut(ctx, n, ctx.emit1("Transpose", {x}, {attrInts("perm", {1, 0})}));
}

// beta * self + alpha * product, for addmv(self, mat, vec) / addr(self, vec1, vec2) /
// addbmm(self, batch1, batch2); beta = 0 ignores self (NaN in it included), as PyTorch.
enum class AddProduct { Mv, Outer, SumOfBmm };
ConvertFn addProduct(AddProduct kind) {
  return [kind](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = n.output(0)->meta.dtype;
    OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in({"mat", "batch1", "vec1"}, 1), args.in({"vec", "batch2", "vec2"}, 2)}));
    double beta = 1.0, alpha = 1.0;
    if (const Value* b = args.optIn("beta")) { OXPORT_ASSIGN(beta, ctx.constDouble(b)); }
    if (const Value* a = args.optIn("alpha")) { OXPORT_ASSIGN(alpha, ctx.constDouble(a)); }
    std::string p;
    if (kind == AddProduct::Mv) p = ctx.emit1("MatMul", {ins[1], ins[2]});
    else if (kind == AddProduct::Outer) p = ctx.emit1("Mul", {ctx.unsqueeze(ins[1], {1}), ctx.unsqueeze(ins[2], {0})});
    else p = reduceOver(ctx, "ReduceSum", ctx.emit1("MatMul", {ins[1], ins[2]}), {0}, false);
    if (alpha != 1.0) p = ctx.emit1("Mul", {p, ctx.constScalar(alpha, dt)});
    if (beta == 0.0) return bindOut(ctx, n, p);
    std::string self = beta == 1.0 ? ins[0] : ctx.emit1("Mul", {ins[0], ctx.constScalar(beta, dt)});
    return bindOut(ctx, n, ctx.emit1("Add", {self, p}));
  };
}

// linalg_multi_dot(tensors): MatMul left to right (a 1-D first/last operand is a row/column).
Status convertMultiDot(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto xs, ctx.tensorList(args.in("tensors", 0)));
  if (xs.empty()) return ctx.error("bad-argument", "multi_dot of no tensors");
  std::string y = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) y = ctx.emit1("MatMul", {y, xs[i]});
  return bindOut(ctx, n, xs.size() == 1 ? ctx.emit1("Identity", {y}) : y);
}

// linalg_matrix_power / matrix_power(self, n) for n >= 1: repeated squaring with MatMul.
Status convertMatrixPower(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(int64_t k, ctx.constInt(args.in("n", 1)));
  if (k < 1)
    return ctx.error("unsupported-form", "matrix_power with an exponent below 1 (an identity or an inverse)",
                     "use an exponent of 1 or more");
  std::string result, base = x;
  for (int64_t e = k; e > 0; e >>= 1) {
    if (e & 1) result = result.empty() ? base : ctx.emit1("MatMul", {result, base});
    if (e > 1) base = ctx.emit1("MatMul", {base, base});
  }
  return bindOut(ctx, n, result == x ? ctx.emit1("Identity", {x}) : result);
}

// bilinear(input1, input2, weight[o, i, j], bias): y[..., o] = x1 W[o] x2 + b[o], as
// (x1 @ W as [i, o*j]) reshaped [B, o, j], times x2, summed over j.
Status convertBilinear(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("input1", 0), args.in("input2", 1), args.in("weight", 2)}));
  const auto& ws = ctx.meta(args.in("weight", 2)).shape;
  if (ws.size() != 3) return ctx.error("bad-argument", "bilinear needs a 3-D weight");
  const int64_t o = ws[0], i = ws[1], j = ws[2];
  std::string x1 = ctx.reshape(ins[0], {-1, i}), x2 = ctx.reshape(ins[1], {-1, j});
  std::string w = ctx.reshape(ctx.emit1("Transpose", {ins[2]}, {attrInts("perm", {1, 0, 2})}), {i, o * j});
  std::string t = ctx.reshape(ctx.emit1("MatMul", {x1, w}), {-1, o, j});
  std::string y = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {t, ctx.unsqueeze(x2, {1})}), {2}, false);
  if (args.has("bias", 3)) {
    OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("bias", 3), n.output(0)->meta.dtype));
    y = ctx.emit1("Add", {y, b});
  }
  const int rank = ctx.rank(args.in("input1", 0));
  std::string lead = ctx.slice(ctx.shapeOf(ins[0]), {0}, {rank - 1}, {0});
  return bindOut(ctx, n, ctx.emit1("Reshape", {y, ctx.emit1("Concat", {lead, ctx.constInt64s({o})}, {attrInt("axis", 0)})}));
}

}  // namespace

void registerLinearOps(Registry& r) {
  r.add("aten::addmv", addProduct(AddProduct::Mv));
  r.add("aten::addr", addProduct(AddProduct::Outer));
  r.add("aten::addbmm", addProduct(AddProduct::SumOfBmm));
  r.add("aten::linalg_multi_dot", convertMultiDot);
  addAll(r, {"aten::linalg_matrix_power", "aten::matrix_power"}, convertMatrixPower);
  r.add("aten::bilinear", convertBilinear);
  r.add("aten::linear", convertLinear);
  r.add("aten::addmm", convertAddmm);
  addAll(r, {"aten::matmul", "aten::mm", "aten::bmm"}, convertMatmul);
  addAll(r, {"aten::t", "aten::t_"}, convertT);
}

}  // namespace oxport::convert
