// Linear algebra: linear, addmm, matmul, mm, bmm, t.
#include <algorithm>

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
  const Value* x = n.input(0);
  const Value* w = n.input(1);
  const Value* b = n.inputs.size() > 2 ? n.input(2) : nullptr;
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
  double beta = 1.0, alpha = 1.0;
  if (n.inputs.size() > 3) { OXPORT_ASSIGN(beta, ctx.constDouble(n.input(3))); }
  if (n.inputs.size() > 4) { OXPORT_ASSIGN(alpha, ctx.constDouble(n.input(4))); }
  OXPORT_ASSIGN(std::string c, ctx.tensor(n.input(0)));
  OXPORT_ASSIGN(std::string a, ctx.tensor(n.input(1)));
  OXPORT_ASSIGN(std::string b, ctx.tensor(n.input(2)));
  if (!isFloating(ctx.dtype(n.input(1)))) {
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
  OXPORT_ASSIGN(std::string a, ctx.tensor(n.input(0)));
  OXPORT_ASSIGN(std::string b, ctx.tensor(n.input(1)));
  const auto& as = ctx.meta(n.input(0)).shape;
  const auto& bs = ctx.meta(n.input(1)).shape;
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
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  if (ctx.rank(n.input(0)) < 2) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  return bindOut(ctx, n, ctx.emit1("Transpose", {x}, {attrInts("perm", {1, 0})}));
}

}  // namespace

void registerLinearOps(Registry& r) {
  r.add("aten::linear", convertLinear);
  r.add("aten::addmm", convertAddmm);
  addAll(r, {"aten::matmul", "aten::mm", "aten::bmm"}, convertMatmul);
  addAll(r, {"aten::t", "aten::t_"}, convertT);
}

}  // namespace oxport::convert
