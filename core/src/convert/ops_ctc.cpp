// ctc_loss (nn.CTCLoss, F.ctc_loss): the forward (alpha) recursion of libtorch's ctc_loss_cpu in
// log space, as an ONNX Loop over time. Both overloads (lengths as int lists or as tensors), padded
// 2-D targets [N, S] and 1-D concatenated targets, batched [T, N, C] and unbatched [T, C] input,
// reduction none/mean/sum, any blank index, zero_infinity. Every opset from 9 (Loop, Gather).
//
// Over the extended labels l' = (blank, t_0, blank, t_1, ..., blank) of length L = 2S + 1:
//   alpha_0(s) = lp_0(l'_s) for s < 2 (s = 1 only with a target), -inf otherwise
//   alpha_t(s) = lse(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if l'_s != blank and
//                l'_s != l'_{s-2}) + lp_t(l'_s), for t < input_length (after it alpha stays)
//   loss = -lse(alpha(2 tl), alpha(2 tl - 1))
// with lse's maximum taken as 0 where every term is -inf, as libtorch. mean divides each loss by
// its target length (at least 1) and averages over the batch.
#include <cmath>
#include <limits>

#include "convert/args.h"
#include "convert/loop_body.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

constexpr double kFloatMax = std::numeric_limits<float>::max();

// m where it is finite, 0 where it is -inf (Less than the lowest float: Equal takes floats only from opset 11).
std::string zeroIfNegInf(Context& ctx, const std::string& m, DType dt) {
  return ctx.emit1("Where", {ctx.emit1("Less", {m, ctx.constScalar(-kFloatMax, dt)}), ctx.constScalar(0, dt), m});
}

// log(sum exp(terms)) elementwise, with the maximum replaced by 0 where it is -inf (libtorch's form).
std::string logSumExp(Context& ctx, const std::vector<std::string>& terms, DType dt) {
  std::string m = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) m = ctx.emit1("Max", {m, terms[i]});
  m = zeroIfNegInf(ctx, m, dt);
  std::string sum;
  for (const auto& t : terms) {
    std::string e = ctx.emit1("Exp", {ctx.emit1("Sub", {t, m})});
    sum = sum.empty() ? e : ctx.emit1("Add", {sum, e});
  }
  return ctx.emit1("Add", {ctx.emit1("Log", {sum}), m});
}

// x shifted right by `by` along axis 1, filled with `fill` ([N, by], emitted outside the Loop).
std::string shiftRight(Context& ctx, const std::string& x, int64_t by, const std::string& fill) {
  return ctx.emit1("Concat", {fill, ctx.slice(x, {0}, {-by}, {1})}, {attrInt("axis", 1)});
}

// A [N, k] tensor of `value` (dtype dt) for a batch of size n ([1] int64).
std::string filled(Context& ctx, const std::string& n, int64_t k, double value, DType dt) {
  std::string shape = ctx.emit1("Concat", {n, ctx.constInt64s({k})}, {attrInt("axis", 0)});
  return ctx.emit1("Expand", {ctx.reshape(ctx.constScalar(value, dt), {1, 1}), shape});
}

// The padded targets [N, S] from the 1-D concatenation of every sample's targets: row n reads
// from its offset (the sum of the lengths before it); S is the total length (the longest row
// fits), entries past a row's length are never read by the recursion.
std::string paddedTargets(Context& ctx, const std::string& targets, const std::string& tl, const std::string& n) {
  std::string total = dimSize(ctx, targets, 0);
  std::string r = arangeOf(ctx, n);
  // offset[n] = sum of tl[m] for m < n, as a strictly-lower-triangular product (every opset).
  std::string lower = ctx.emit1("Less", {ctx.unsqueeze(r, {0}), ctx.unsqueeze(r, {1})});   // [n, m]: m < n
  std::string tlf = ctx.cast(tl, DType::Float64);
  std::string offset = ctx.cast(ctx.emit1("MatMul", {ctx.cast(lower, DType::Float64), ctx.unsqueeze(tlf, {1})}), DType::Int64);  // [N, 1]
  std::string idx = ctx.emit1("Add", {offset, ctx.unsqueeze(arangeOf(ctx, total), {0})});   // [N, S]
  std::string last = ctx.emit1("Sub", {total, ctx.constInt64s({1})});
  idx = ctx.emit1("Where", {ctx.emit1("Greater", {idx, last}), last, idx});  // (int64 Min is opset 12)
  return ctx.emit1("Gather", {targets, idx}, {attrInt("axis", 0)});
}

Status convertCtcLoss(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* lp_v = args.in("log_probs", 0);
  const DType dt = ctx.dtype(lp_v);
  if (!isFloating(dt)) return ctx.error("bad-argument", "ctc_loss of non-floating-point log_probs");
  OXPORT_ASSIGN(std::string lp, ctx.tensor(lp_v));
  OXPORT_ASSIGN(std::string targets, args.tensorOfType("targets", 1, DType::Int64));
  OXPORT_ASSIGN(std::string il, ctx.intsTensor(args.in("input_lengths", 2)));
  OXPORT_ASSIGN(std::string tl, ctx.intsTensor(args.in("target_lengths", 3)));
  il = ctx.cast(il, DType::Int64);
  tl = ctx.cast(tl, DType::Int64);
  OXPORT_ASSIGN(int64_t blank, args.constInt("blank", 4));
  OXPORT_ASSIGN(int64_t reduction, reductionArg(ctx, n, 5));
  OXPORT_ASSIGN(bool zero_infinity, args.constBool("zero_infinity", 6));
  const bool unbatched = ctx.rank(lp_v) == 2;
  if (ctx.rank(lp_v) != 3 && !unbatched)
    return ctx.error("bad-argument", "ctc_loss needs log_probs of shape (T, N, C) or (T, C)");
  if (unbatched) {
    lp = ctx.unsqueeze(lp, {1});
    targets = ctx.reshape(targets, {1, -1});
  }
  il = ctx.reshape(il, {-1});
  tl = ctx.reshape(tl, {-1});
  std::string batch = dimSize(ctx, lp, 1);
  if (!unbatched && ctx.rank(args.in("targets", 1)) == 1) targets = paddedTargets(ctx, targets, tl, batch);

  // Extended labels [N, L]: blank, t_0, blank, t_1, ..., blank.
  std::string blanks = ctx.emit1("Add", {ctx.emit1("Mul", {targets, ctx.constInt64s({0})}), ctx.constInt64s({blank})});
  std::string pairs = ctx.emit1("Concat", {ctx.unsqueeze(blanks, {2}), ctx.unsqueeze(targets, {2})}, {attrInt("axis", 2)});
  std::string ext = ctx.emit1("Concat", {ctx.reshape(pairs, {0, -1}), ctx.slice(blanks, {0}, {1}, {1})}, {attrInt("axis", 1)});
  // lp_t(l'_s) for every t as [T, N, L]: one Gather from log_probs as [T, N*C].
  std::string classes = dimSize(ctx, lp, 2);
  std::string rows = ctx.emit1("Mul", {ctx.unsqueeze(arangeOf(ctx, batch), {1}), classes});
  std::string flat = ctx.emit1("Concat", {dimSize(ctx, lp, 0), ctx.constInt64s({-1})}, {attrInt("axis", 0)});
  std::string emit = ctx.emit1("Gather", {ctx.emit1("Reshape", {lp, flat}), ctx.emit1("Add", {rows, ext})}, {attrInt("axis", 1)});
  const std::string ninf = ctx.constScalar(-std::numeric_limits<double>::infinity(), dt);
  std::string ninf1 = filled(ctx, batch, 1, -std::numeric_limits<double>::infinity(), dt);
  std::string ninf2 = filled(ctx, batch, 2, -std::numeric_limits<double>::infinity(), dt);
  // The skip transition s-2 -> s: l'_s is not blank and differs from l'_{s-2}.
  std::string ext2 = shiftRight(ctx, ext, 2, ctx.emit1("Concat", {ctx.slice(blanks, {0}, {1}, {1}), ctx.slice(blanks, {0}, {1}, {1})},
                                                         {attrInt("axis", 1)}));
  std::string skip = ctx.emit1("And", {ctx.emit1("Not", {ctx.emit1("Equal", {ext, ctx.constInt64s({blank})})}),
                                       ctx.emit1("Not", {ctx.emit1("Equal", {ext, ext2})})});
  // alpha_0: s = 0 always, s = 1 where the target is not empty.
  std::string pos = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, ext, 1)), {0});  // [1, L]
  std::string first = ctx.emit1("Gather", {emit, ctx.constInt64s({0}, true)}, {attrInt("axis", 0)});
  std::string start = ctx.emit1("Or", {ctx.emit1("Equal", {pos, ctx.constInt64s({0})}),
                                       ctx.emit1("And", {ctx.emit1("Equal", {pos, ctx.constInt64s({1})}),
                                                         ctx.emit1("Greater", {ctx.unsqueeze(tl, {1}), ctx.constInt64s({0})})})});
  std::string alpha0 = ctx.emit1("Where", {start, first, ninf});
  std::string il_col = ctx.unsqueeze(il, {1});  // [N, 1]

  std::string trips = ctx.emit1("Sub", {dimSize(ctx, lp, 0, true), ctx.constInt64s({1}, true)});
  LoopBody body(ctx, "ctc_alpha_body");  // what the body reads from outside is emitted before it
  std::string k = body.iteration();
  std::string alpha = body.input("ctc_alpha", dt);
  std::string t = ctx.emit1("Add", {k, ctx.constInt64s({1}, true)});
  std::string e = ctx.emit1("Gather", {emit, t}, {attrInt("axis", 0)});  // [N, L]
  std::string a2 = shiftRight(ctx, alpha, 1, ninf1);
  std::string a3 = ctx.emit1("Where", {skip, shiftRight(ctx, alpha, 2, ninf2), ninf});
  std::string next = ctx.emit1("Add", {logSumExp(ctx, {alpha, a2, a3}, dt), e});
  next = ctx.emit1("Where", {ctx.emit1("Less", {t, il_col}), next, alpha});
  std::string last = body.run(trips, {alpha0}, {{next, dt}}).front();

  // -lse(alpha(2 tl), alpha(2 tl - 1)) as a masked reduction over s.
  std::string end = ctx.emit1("Mul", {ctx.unsqueeze(tl, {1}), ctx.constInt64s({2})});
  std::string ends = ctx.emit1("Or", {ctx.emit1("Equal", {pos, end}), ctx.emit1("Equal", {pos, ctx.emit1("Sub", {end, ctx.constInt64s({1})})})});
  std::string masked = ctx.emit1("Where", {ends, last, ninf});
  std::string m = reduceOver(ctx, "ReduceMax", masked, {1}, true);
  m = zeroIfNegInf(ctx, m, dt);
  std::string s = reduceOver(ctx, "ReduceSum", ctx.emit1("Exp", {ctx.emit1("Sub", {masked, m})}), {1}, true);
  std::string loss = ctx.reshape(ctx.emit1("Neg", {ctx.emit1("Add", {ctx.emit1("Log", {s}), m})}), {-1});  // [N]
  if (zero_infinity)
    loss = ctx.emit1("Where", {ctx.emit1("Greater", {loss, ctx.constScalar(kFloatMax, dt)}),
                               ctx.constScalar(0, dt), loss});
  if (reduction == 1) {
    std::string div = ctx.emit1("Max", {ctx.cast(tl, dt), ctx.constScalar(1, dt)});
    return bindOut(ctx, n, reduceOver(ctx, "ReduceMean", ctx.emit1("Div", {loss, div}), {0}, false));
  }
  if (reduction == 2) return bindOut(ctx, n, reduceOver(ctx, "ReduceSum", loss, {0}, false));
  return bindOut(ctx, n, unbatched ? ctx.reshape(loss, {}) : loss);
}

}  // namespace

void registerCtcOps(Registry& r) { r.add("aten::ctc_loss", convertCtcLoss); }

}  // namespace oxport::convert
