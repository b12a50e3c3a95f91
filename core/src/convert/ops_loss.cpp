// Losses as models compute them in forward (distillation, auxiliary heads, exported training
// graphs): mse_loss, l1_loss, smooth_l1_loss, huber_loss, binary_cross_entropy(_with_logits),
// nll_loss and cross_entropy_loss. reduction: 0 none, 1 mean, 2 sum (at::Reduction).
#include <optional>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// The binary cross entropies' loss l, times their optional `weight` (argument 2), reduced.
Status bindWeightedLoss(Context& ctx, const Node& n, std::string l, int64_t reduction) {
  const Args args(ctx, n);
  if (args.has("weight", 2)) {
    OXPORT_ASSIGN(std::string w, ctx.tensorOfType(args.in("weight", 2), n.output(0)->meta.dtype));
    l = ctx.emit1("Mul", {l, w});
  }
  return bindOut(ctx, n, applyReduction(ctx, l, reduction));
}

// Pointwise losses of (self, target): f(self - target), reduced.
ConvertFn pointwiseLoss(const std::string& kind) {
  return [kind](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("target", 1)}));
    const DType dt = n.output(0)->meta.dtype;
    OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, 2));
    std::string d = ctx.emit1("Sub", {ins[0], ins[1]});
    std::string l;
    if (kind == "mse") {
      l = ctx.emit1("Mul", {d, d});
    } else if (kind == "l1") {
      l = ctx.emit1("Abs", {d});
    } else {
      // smooth_l1 (beta): |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta
      // huber (delta):    |d| < delta ? 0.5 d^2 : delta (|d| - 0.5 delta)
      double p = 1.0;
      if (n.inputs.size() > 3) { OXPORT_ASSIGN(p, ctx.constDouble(args.in({"beta", "delta"}, 3))); }
      std::string a = ctx.emit1("Abs", {d});
      if (kind == "smooth_l1" && p == 0.0) {
        l = a;
      } else {
        std::string half_sq = ctx.emit1("Mul", {ctx.emit1("Mul", {d, d}), ctx.constScalar(0.5, dt)});
        std::string small, large;
        if (kind == "smooth_l1") {
          small = ctx.emit1("Div", {half_sq, ctx.constScalar(p, dt)});
          large = ctx.emit1("Sub", {a, ctx.constScalar(0.5 * p, dt)});
        } else {
          small = half_sq;
          large = ctx.emit1("Mul", {ctx.emit1("Sub", {a, ctx.constScalar(0.5 * p, dt)}), ctx.constScalar(p, dt)});
        }
        l = ctx.emit1("Where", {ctx.emit1("Less", {a, ctx.constScalar(p, dt)}), small, large});
      }
    }
    return bindOut(ctx, n, applyReduction(ctx, l, reduction));
  };
}

// binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction):
// (1 - t) x + (1 + (pw - 1) t) softplus(-x), written stably as max(-x, 0) + log(exp(-max) + exp(-x - max)).
Status convertBceWithLogits(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("target", 1)}));
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, 4));
  const std::string& x = ins[0];
  const std::string& t = ins[1];
  std::string one = ctx.constScalar(1, dt);
  std::string negx = ctx.emit1("Neg", {x});
  // softplus(-x) = max(-x, 0) + log(1 + exp(-|x|))
  std::string sp = ctx.emit1(
      "Add", {ctx.emit1("Relu", {negx}),
              ctx.emit1("Log", {ctx.emit1("Add", {one, ctx.emit1("Exp", {ctx.emit1("Neg", {ctx.emit1("Abs", {x})})})})})});
  std::string coef = one;
  if (args.has("pos_weight", 3)) {
    OXPORT_ASSIGN(std::string pw, ctx.tensorOfType(args.in("pos_weight", 3), dt));
    coef = ctx.emit1("Add", {one, ctx.emit1("Mul", {ctx.emit1("Sub", {pw, one}), t})});
  }
  std::string l = ctx.emit1("Add", {ctx.emit1("Mul", {ctx.emit1("Sub", {one, t}), x}), ctx.emit1("Mul", {coef, sp})});
  return bindWeightedLoss(ctx, n, l, reduction);
}

// binary_cross_entropy(self, target, weight, reduction): -(t log x + (1 - t) log(1 - x)), each log
// clamped at -100 as PyTorch does.
Status convertBce(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("target", 1)}));
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, 3));
  std::string one = ctx.constScalar(1, dt);
  std::string floor = ctx.constScalar(-100, dt);
  std::string lx = ctx.emit1("Max", {ctx.emit1("Log", {ins[0]}), floor});
  std::string l1x = ctx.emit1("Max", {ctx.emit1("Log", {ctx.emit1("Sub", {one, ins[0]})}), floor});
  std::string l = ctx.emit1(
      "Neg", {ctx.emit1("Add", {ctx.emit1("Mul", {ins[1], lx}), ctx.emit1("Mul", {ctx.emit1("Sub", {one, ins[1]}), l1x})})});
  return bindWeightedLoss(ctx, n, l, reduction);
}

// Below opset 12 (no NegativeLogLikelihoodLoss): the loss of log-probabilities `logp` [N, C, d...]
// at class-index targets [N, d...] as PyTorch defines it: l = -w[t] logp[n, t] where t is not
// ignore_index (0 there); mean divides by the sum of w[t] over the targets not ignored.
std::string classLossByGather(Context& ctx, const std::string& logp, const std::string& target,
                              const std::string* weight, int64_t reduction, int64_t ignore, DType dt) {
  std::string valid = ctx.emit1("Not", {ctx.emit1("Equal", {target, ctx.constScalar(ignore, DType::Int64)})});
  std::string safe = ctx.emit1("Where", {valid, target, ctx.constScalar(0, DType::Int64)});
  std::string picked;
  if (ctx.opset() >= 11) {
    picked = ctx.squeeze(ctx.emit1("GatherElements", {logp, ctx.unsqueeze(safe, {1})}, {attrInt("axis", 1)}), {1});
  } else {
    // No GatherElements before 11: the target's class picked by a one-hot mask along axis 1.
    std::string depth = ctx.emit1("Gather", {ctx.emit1("Shape", {logp}), ctx.constInt64s({1})}, {attrInt("axis", 0)});
    std::string hot = ctx.cast(ctx.emit1("OneHot", {safe, depth, ctx.constInt64s({0, 1})}, {attrInt("axis", 1)}),
                               DType::Bool);
    picked = reduceOver(ctx, "ReduceSum", ctx.emit1("Where", {hot, logp, ctx.constScalar(0, dt)}), {1}, false);
  }
  std::string w = ctx.cast(valid, dt);
  if (weight) w = ctx.emit1("Mul", {w, ctx.emit1("Gather", {*weight, safe}, {attrInt("axis", 0)})});
  std::string l = ctx.emit1("Neg", {ctx.emit1("Mul", {picked, w})});
  if (reduction != 1) return applyReduction(ctx, l, reduction);
  return ctx.emit1("Div", {reduceOver(ctx, "ReduceSum", l, {}, false), reduceOver(ctx, "ReduceSum", w, {}, false)});
}

// log_softmax over axis 1 of any rank (LogSoftmax below opset 13 flattens the axes after it).
std::string logSoftmaxAxis1(Context& ctx, const std::string& x) {
  std::string shifted = ctx.emit1("Sub", {x, reduceOver(ctx, "ReduceMax", x, {1}, true)});
  std::string lse = ctx.emit1("Log", {reduceOver(ctx, "ReduceSum", ctx.emit1("Exp", {shifted}), {1}, true)});
  return ctx.emit1("Sub", {shifted, lse});
}

// nll_loss / nll_loss2d / nll_loss_nd(self, target, weight, reduction, ignore_index) and
// cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing): ONNX's
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss from opset 12, classLossByGather below;
// class-index targets.
ConvertFn convertClassLoss(bool softmax) {
  return [softmax](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    OXPORT_ASSIGN(std::string target, ctx.tensor(args.in("target", 1)));
    if (isFloating(ctx.dtype(args.in("target", 1))))
      return ctx.error("unsupported-form", "a loss with class probabilities as the target",
                       "give the target as class indices (int64)");
    OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, 3));
    int64_t ignore = -100;
    if (const Value* ii = args.optIn("ignore_index")) { OXPORT_ASSIGN(ignore, ctx.constInt(ii)); }
    if (softmax) {
      if (const Value* ls = args.optIn("label_smoothing")) {
        OXPORT_ASSIGN(double smoothing, ctx.constDouble(ls));
        if (smoothing != 0.0)
          return ctx.error("unsupported-form", "cross_entropy with label_smoothing " + std::to_string(smoothing),
                           "export with label_smoothing=0 (ONNX's SoftmaxCrossEntropyLoss has no smoothing)");
      }
    }
    if (ctx.rank(args.in("self", 0)) == 1) {
      // An unbatched input (C) with a 0-d target: a batch of one.
      x = ctx.unsqueeze(x, {0});
      target = ctx.unsqueeze(target, {0});
    }
    if (ctx.opset() < 12) {
      const DType dt = ctx.dtype(args.in("self", 0));
      std::optional<std::string> w;
      if (args.has("weight", 2)) { OXPORT_ASSIGN(w, ctx.tensorOfType(args.in("weight", 2), dt)); }
      std::string y = classLossByGather(ctx, softmax ? logSoftmaxAxis1(ctx, x) : x, ctx.cast(target, DType::Int64),
                                        w ? &*w : nullptr, reduction, ignore, dt);
      if (ctx.rank(args.in("self", 0)) == 1 && reduction == 0) y = ctx.squeeze(y, {0});
      return bindOut(ctx, n, y);
    }
    std::vector<std::string> ins{x, ctx.cast(target, DType::Int64)};
    if (args.has("weight", 2)) {
      OXPORT_ASSIGN(std::string w, ctx.tensor(args.in("weight", 2)));
      ins.push_back(w);
    }
    static const char* kReductions[] = {"none", "mean", "sum"};
    std::vector<Attribute> attrs{attrString("reduction", kReductions[reduction]), attrInt("ignore_index", ignore)};
    std::string y = ctx.emit1(softmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", ins, std::move(attrs));
    if (ctx.rank(args.in("self", 0)) == 1 && reduction == 0) y = ctx.squeeze(y, {0});
    return bindOut(ctx, n, y);
  };
}

}  // namespace

void registerLossOps(Registry& r) {
  r.add("aten::mse_loss", pointwiseLoss("mse"));
  r.add("aten::l1_loss", pointwiseLoss("l1"));
  r.add("aten::smooth_l1_loss", pointwiseLoss("smooth_l1"));
  r.add("aten::huber_loss", pointwiseLoss("huber"));
  r.add("aten::binary_cross_entropy_with_logits", convertBceWithLogits);
  r.add("aten::binary_cross_entropy", convertBce);
  addAll(r, {"aten::nll_loss", "aten::nll_loss2d", "aten::nll_loss_nd"}, convertClassLoss(false));
  r.add("aten::cross_entropy_loss", convertClassLoss(true));
}

}  // namespace oxport::convert
