// Margin, embedding and count losses: margin_ranking_loss, hinge_embedding_loss, soft_margin_loss,
// cosine_embedding_loss, triplet_margin_loss, multi_margin_loss, multilabel_margin_loss and poisson_nll_loss, as libtorch
// 1.13 computes them (the same formulas, epsilons and masks), at every opset from 9.
// reduction: 0 none, 1 mean, 2 sum (at::Reduction).
#include <cmath>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

Result<double> doubleArg(Context& ctx, const Node& n, const std::string& name, double fallback) {
  const Value* v = Args(ctx, n).optIn(name.c_str());
  if (!v || ctx.isNone(v)) return fallback;
  return ctx.constDouble(v);
}

std::string clampMin0(Context& ctx, const std::string& x, DType dt) {
  return ctx.emit1("Max", {x, ctx.constScalar(0, dt)});
}

// margin_ranking_loss(input1, input2, target, margin, reduction): max(0, -target (x1 - x2) + margin)
Status convertMarginRanking(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"input1", "input2", "target"}));
  OXPORT_ASSIGN(double margin, doubleArg(ctx, n, "margin", 0));
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, n.inputs.size() - 1));
  std::string d = ctx.emit1("Sub", {in[0], in[1]});
  std::string l = ctx.emit1("Add", {ctx.emit1("Neg", {ctx.emit1("Mul", {in[2], d})}), ctx.constScalar(margin, dt)});
  return bindOut(ctx, n, applyReduction(ctx, clampMin0(ctx, l, dt), reduction));
}

// hinge_embedding_loss(self, target, margin, reduction): where target != 1 max(0, margin - x),
// plus where target != -1 x.
Status convertHingeEmbedding(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "target"}));
  OXPORT_ASSIGN(double margin, doubleArg(ctx, n, "margin", 1.0));
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, n.inputs.size() - 1));
  std::string zero = ctx.constScalar(0, dt);
  std::string clamp = clampMin0(ctx, ctx.emit1("Sub", {ctx.constScalar(margin, dt), in[0]}), dt);
  // Equal takes floats from opset 11: target == v as neither less nor greater.
  auto equals = [&](double v) {
    std::string c = ctx.constScalar(v, dt);
    return ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {in[1], c}), ctx.emit1("Greater", {in[1], c})})});
  };
  std::string m = ctx.emit1("Where", {equals(1), zero, clamp});
  std::string s = ctx.emit1("Where", {equals(-1), zero, in[0]});
  return bindOut(ctx, n, applyReduction(ctx, ctx.emit1("Add", {m, s}), reduction));
}

// soft_margin_loss(self, target, reduction): log(1 + exp(-target x))
Status convertSoftMargin(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"self", "target"}));
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, n.inputs.size() - 1));
  std::string z = ctx.emit1("Exp", {ctx.emit1("Neg", {ctx.emit1("Mul", {in[0], in[1]})})});
  std::string l = ctx.emit1("Log", {ctx.emit1("Add", {z, ctx.constScalar(1, dt)})});
  return bindOut(ctx, n, applyReduction(ctx, l, reduction));
}

// cosine_embedding_loss(input1, input2, target, margin, reduction): cos over the last dim with
// 1e-12 added to both squared magnitudes; 1 - cos where target is 1, max(0, cos - margin) where -1.
Status convertCosineEmbedding(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"input1", "input2", "target"}));
  OXPORT_ASSIGN(double margin, doubleArg(ctx, n, "margin", 0));
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, n.inputs.size() - 1));
  const int64_t last = ctx.rank(Args(ctx, n).in("input1", 0)) - 1;
  if (last < 0) return ctx.error("bad-argument", "cosine_embedding_loss of 0-d inputs");
  auto sumLast = [&](const std::string& a, const std::string& b) {
    return reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {a, b}), {last}, false);
  };
  std::string eps = ctx.constScalar(1e-12, dt);
  std::string m1 = ctx.emit1("Add", {sumLast(in[0], in[0]), eps});
  std::string m2 = ctx.emit1("Add", {sumLast(in[1], in[1]), eps});
  std::string cos = ctx.emit1("Div", {sumLast(in[0], in[1]), ctx.emit1("Sqrt", {ctx.emit1("Mul", {m1, m2})})});
  std::string zero = ctx.constScalar(0, dt);
  std::string pos = ctx.emit1("Sub", {ctx.constScalar(1, dt), cos});
  std::string neg = clampMin0(ctx, ctx.emit1("Sub", {cos, ctx.constScalar(margin, dt)}), dt);
  auto equals = [&](double v) {
    std::string c = ctx.constScalar(v, dt);
    return ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {in[2], c}), ctx.emit1("Greater", {in[2], c})})});
  };
  std::string l = ctx.emit1("Add", {ctx.emit1("Where", {equals(1), pos, zero}), ctx.emit1("Where", {equals(-1), neg, zero})});
  return bindOut(ctx, n, applyReduction(ctx, l, reduction));
}

// ||a - b + eps||_p over the last dim (libtorch's pairwise_distance).
std::string pairwiseDistance(Context& ctx, const std::string& a, const std::string& b, double p, double eps,
                             int64_t last, DType dt) {
  std::string d = ctx.emit1("Add", {ctx.emit1("Sub", {a, b}), ctx.constScalar(eps, dt)});
  if (p == 2) return reduceOver(ctx, "ReduceL2", d, {last}, false);
  if (p == 1) return reduceOver(ctx, "ReduceL1", d, {last}, false);
  std::string ad = ctx.emit1("Abs", {d});
  if (std::isinf(p)) return reduceOver(ctx, p > 0 ? "ReduceMax" : "ReduceMin", ad, {last}, false);
  std::string s = reduceOver(ctx, "ReduceSum", ctx.emit1("Pow", {ad, ctx.constScalar(p, dt)}), {last}, false);
  return ctx.emit1("Pow", {s, ctx.constScalar(1.0 / p, dt)});
}

// triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)
Status convertTripletMargin(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"anchor", "positive", "negative"}));
  OXPORT_ASSIGN(double margin, doubleArg(ctx, n, "margin", 1.0));
  OXPORT_ASSIGN(double p, doubleArg(ctx, n, "p", 2.0));
  OXPORT_ASSIGN(double eps, doubleArg(ctx, n, "eps", 1e-6));
  bool swap = false;
  if (const Value* v = Args(ctx, n).optIn("swap"); v && !ctx.isNone(v)) { OXPORT_ASSIGN(swap, ctx.constBool(v)); }
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, n.inputs.size() - 1));
  if (p == 0) return ctx.error("unsupported-form", "triplet_margin_loss with p=0 (a count of nonzero differences)");
  int64_t last = 0;
  const Args args(ctx, n);
  const char* names[] = {"anchor", "positive", "negative"};
  for (size_t i = 0; i < 3; ++i) last = std::max<int64_t>(last, ctx.rank(args.in(names[i], i)) - 1);
  std::string pos = pairwiseDistance(ctx, in[0], in[1], p, eps, last, dt);
  std::string neg = pairwiseDistance(ctx, in[0], in[2], p, eps, last, dt);
  if (swap) neg = ctx.emit1("Min", {neg, pairwiseDistance(ctx, in[1], in[2], p, eps, last, dt)});
  std::string l = ctx.emit1("Sub", {ctx.emit1("Add", {pos, ctx.constScalar(margin, dt)}), neg});
  return bindOut(ctx, n, applyReduction(ctx, clampMin0(ctx, l, dt), reduction));
}

// multi_margin_loss(self, target, p, margin, weight, reduction): per sample,
// sum over classes i != y of w[y] max(0, margin - x[y] + x[i])^p, divided by the class count.
Status convertMultiMargin(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, args.tensorOfType("self", 0, dt));
  OXPORT_ASSIGN(std::string y, args.tensorOfType("target", 1, DType::Int64));
  OXPORT_ASSIGN(double p, doubleArg(ctx, n, "p", 1.0));
  OXPORT_ASSIGN(double margin, doubleArg(ctx, n, "margin", 1.0));
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, n.inputs.size() - 1));
  if (p != 1 && p != 2) return ctx.error("bad-argument", "multi_margin_loss: p must be 1 or 2, as in PyTorch");
  const int rank = ctx.rank(args.in("self", 0));
  if (rank != 1 && rank != 2) return ctx.error("bad-argument", "multi_margin_loss of a tensor of rank " + std::to_string(rank));
  if (rank == 1) {
    x = ctx.unsqueeze(x, {0});
    y = ctx.reshape(y, {1});
  }
  // One-hot of the target over the classes (every opset; GatherElements needs 11).
  std::string classes = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, x, 1)), {0});         // [1, C]
  std::string hit = ctx.emit1("Equal", {classes, ctx.unsqueeze(y, {1})});               // [N, C]
  std::string zero = ctx.constScalar(0, dt);
  std::string xy = reduceOver(ctx, "ReduceSum", ctx.emit1("Where", {hit, x, zero}), {1}, true);  // [N, 1]
  std::string z = clampMin0(ctx, ctx.emit1("Add", {ctx.emit1("Sub", {ctx.constScalar(margin, dt), xy}), x}), dt);
  if (p == 2) z = ctx.emit1("Mul", {z, z});
  const Value* w = Args(ctx, n).optIn("weight");
  if (w && !ctx.isNone(w)) {
    OXPORT_ASSIGN(std::string wt, ctx.tensorOfType(w, dt));
    std::string wy = reduceOver(ctx, "ReduceSum", ctx.emit1("Where", {hit, ctx.unsqueeze(wt, {0}), zero}), {1}, true);
    z = ctx.emit1("Mul", {z, wy});
  }
  z = ctx.emit1("Where", {hit, zero, z});
  std::string count = ctx.cast(dimSize(ctx, x, 1, true), dt);
  std::string l = ctx.emit1("Div", {reduceOver(ctx, "ReduceSum", z, {1}, false), count});
  if (rank == 1 && reduction == 0) l = ctx.reshape(l, {});
  return bindOut(ctx, n, applyReduction(ctx, l, reduction));
}

// poisson_nll_loss(input, target, log_input, full, eps, reduction)
Status convertPoissonNll(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(auto in, promotedArgs(ctx, n, {"input", "target"}));
  const Args args(ctx, n);
  OXPORT_ASSIGN(bool log_input, args.constBool("log_input", 2));
  OXPORT_ASSIGN(bool full, args.constBool("full", 3));
  OXPORT_ASSIGN(double eps, args.constDouble("eps", 4));
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, 5));
  const std::string& x = in[0];
  const std::string& t = in[1];
  std::string l;
  if (log_input) {
    l = ctx.emit1("Sub", {ctx.emit1("Exp", {x}), ctx.emit1("Mul", {t, x})});
  } else {
    l = ctx.emit1("Sub", {x, ctx.emit1("Mul", {t, ctx.emit1("Log", {ctx.emit1("Add", {x, ctx.constScalar(eps, dt)})})})});
  }
  if (full) {
    // Stirling's term t log t - t + 0.5 log(2 pi t), where t > 1 only.
    std::string st = ctx.emit1("Add", {ctx.emit1("Sub", {ctx.emit1("Mul", {t, ctx.emit1("Log", {t})}), t}),
                                       ctx.emit1("Mul", {ctx.constScalar(0.5, dt),
                                                         ctx.emit1("Log", {ctx.emit1("Mul", {ctx.constScalar(2 * M_PI, dt), t})})})});
    std::string small = ctx.emit1("Not", {ctx.emit1("Greater", {t, ctx.constScalar(1, dt)})});
    l = ctx.emit1("Add", {l, ctx.emit1("Where", {small, ctx.constScalar(0, dt), st})});
  }
  return bindOut(ctx, n, applyReduction(ctx, l, reduction));
}


// multilabel_margin_loss(self, target, reduction): target holds class indices padded with -1; the
// targets are those before the first -1. Per sample, the sum over targets j and non-targets i of
// max(0, 1 - (x[j] - x[i])), divided by the class count. All as masks over [N, C(k), C(i)]
// (one-hot by Equal, the prefix by a triangular MatMul): every opset.
Status convertMultiLabelMargin(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, args.tensorOfType("self", 0, dt));
  OXPORT_ASSIGN(std::string t, args.tensorOfType("target", 1, DType::Int64));
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, n.inputs.size() - 1));
  const int rank = ctx.rank(args.in("self", 0));
  if (rank != 1 && rank != 2)
    return ctx.error("bad-argument", "multilabel_margin_loss of a tensor of rank " + std::to_string(rank));
  if (rank == 1) {
    x = ctx.unsqueeze(x, {0});
    t = ctx.unsqueeze(t, {0});
  }
  const std::string zero = ctx.constScalar(0, dt);
  std::string r = arangeOf(ctx, dimSize(ctx, x, 1));                                         // [C]
  // valid[n, k]: no -1 at or before k (the count of negatives up to k, by an upper-triangular product).
  std::string upper = ctx.cast(ctx.emit1("Not", {ctx.emit1("Greater", {ctx.unsqueeze(r, {1}), ctx.unsqueeze(r, {0})})}), dt);
  std::string negs = ctx.emit1("MatMul", {ctx.cast(ctx.emit1("Less", {t, ctx.constInt64s({0})}), dt), upper});
  std::string valid = ctx.emit1("Less", {negs, ctx.constScalar(0.5, dt)});                   // [N, C(k)]
  std::string hit = ctx.emit1("And", {ctx.emit1("Equal", {ctx.unsqueeze(t, {2}), ctx.unsqueeze(r, {0, 1})}),
                                      ctx.unsqueeze(valid, {2})});                            // [N, k, i]
  std::string hitf = ctx.cast(hit, dt);
  std::string is_target = ctx.emit1("Greater", {reduceOver(ctx, "ReduceSum", hitf, {1}, true), ctx.constScalar(0.5, dt)});  // [N, 1, i]
  std::string xt = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {hitf, ctx.unsqueeze(x, {1})}), {2}, true);  // [N, k, 1]
  std::string z = clampMin0(ctx, ctx.emit1("Add", {ctx.emit1("Sub", {ctx.constScalar(1, dt), xt}), ctx.unsqueeze(x, {1})}), dt);
  std::string counted = ctx.emit1("And", {ctx.unsqueeze(valid, {2}), ctx.emit1("Not", {is_target})});
  z = ctx.emit1("Where", {counted, z, zero});
  std::string l = ctx.emit1("Div", {reduceOver(ctx, "ReduceSum", z, {1, 2}, false), ctx.cast(dimSize(ctx, x, 1, true), dt)});
  if (rank == 1 && reduction == 0) l = ctx.reshape(l, {});
  return bindOut(ctx, n, applyReduction(ctx, l, reduction));
}

}  // namespace

void registerMarginLossOps(Registry& r) {
  r.add("aten::margin_ranking_loss", convertMarginRanking);
  r.add("aten::hinge_embedding_loss", convertHingeEmbedding);
  r.add("aten::soft_margin_loss", convertSoftMargin);
  r.add("aten::cosine_embedding_loss", convertCosineEmbedding);
  r.add("aten::triplet_margin_loss", convertTripletMargin);
  r.add("aten::multi_margin_loss", convertMultiMargin);
  r.add("aten::poisson_nll_loss", convertPoissonNll);
  r.add("aten::multilabel_margin_loss", convertMultiLabelMargin);
}

}  // namespace oxport::convert
