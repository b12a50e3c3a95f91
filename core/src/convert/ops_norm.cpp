// Normalization: batch_norm, layer_norm, group_norm, instance_norm.
#include <numeric>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// A per-channel constant (weight or bias left as None by affine=False).
Result<std::string> channelParam(Context& ctx, const Value* v, int64_t channels, float fill, DType dtype) {
  if (!ctx.isNone(v)) return ctx.tensorOfType(v, dtype);
  if (dtype == DType::Float64)
    return ctx.constant(HostTensor::fromVector<double>(dtype, {channels}, std::vector<double>(channels, fill)));
  std::string c = ctx.constant(HostTensor::fromVector<float>(DType::Float32, {channels}, std::vector<float>(channels, fill)));
  return dtype == DType::Float32 ? c : ctx.cast(c, dtype);
}

// (x - mean) / sqrt(var + eps) * weight + bias with the biased mean and variance of x over every
// axis but the channels (axis 1): batch_norm with batch statistics, exact at every opset.
Status batchStatsNorm(Context& ctx, const Node& n, const Args& args, double eps) {
  const Value* x = args.in("input", 0);
  const int rank = ctx.rank(x);
  const DType dt = ctx.dtype(x);
  OXPORT_ASSIGN(std::string in, ctx.tensor(x));
  std::vector<int64_t> axes{0};
  for (int a = 2; a < rank; ++a) axes.push_back(a);
  const std::vector<Attribute> reduce{attrInts("axes", axes), attrInt("keepdims", 1)};
  std::string centered = ctx.emit1("Sub", {in, ctx.emit1("ReduceMean", {in}, reduce)});
  std::string var = ctx.emit1("ReduceMean", {ctx.emit1("Mul", {centered, centered})}, reduce);
  std::string y = ctx.emit1("Div", {centered, ctx.emit1("Sqrt", {ctx.emit1("Add", {var, ctx.constScalar(eps, dt)})})});
  std::vector<int64_t> cshape(static_cast<size_t>(rank - 1), 1);
  cshape[0] = -1;
  for (int k = 1; k <= 2; ++k) {
    const Value* p = args.in(k == 1 ? "weight" : "bias", k);
    if (ctx.isNone(p)) continue;
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(p, dt));
    if (rank > 2) t = ctx.emit1("Reshape", {t, ctx.constInt64s(cshape)});
    y = ctx.emit1(k == 1 ? "Mul" : "Add", {y, t});
  }
  return bindOut(ctx, n, y);
}

// batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)
Status convertBatchNorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* x = args.in("input", 0);
  const auto& shape = ctx.meta(x).shape;
  if (shape.size() < 2) return ctx.error("bad-argument", "batch_norm input must have a channel axis");
  const int64_t c = shape[1];
  const DType dt = ctx.dtype(x);
  OXPORT_ASSIGN(double momentum, ctx.constDouble(args.in("momentum", 6)));
  OXPORT_ASSIGN(double eps, ctx.constDouble(args.in("eps", 7)));
  const bool training = ctx.trainingForm();
  const bool has_stats = !ctx.isNone(args.in("running_mean", 3)) && !ctx.isNone(args.in("running_var", 4));
  // PyTorch normalizes with the batch's statistics when the call says training=True (so always
  // without running statistics: track_running_stats=False, F.batch_norm(x, None, None)), whatever
  // mode the module is in; outside a training export that is the batch-statistics formula.
  bool batch_stats = !has_stats;
  if (args.has("training")) { OXPORT_ASSIGN(batch_stats, ctx.constBool(args.in("training", 5))); }
  if (!training && (batch_stats || !has_stats)) return batchStatsNorm(ctx, n, args, eps);
  if (training && ctx.opset() < 14)
    return ctx.needsOpset(14, "batch_norm in training mode (BatchNormalization training_mode)");
  OXPORT_ASSIGN(std::string in, ctx.tensor(x));
  OXPORT_ASSIGN(std::string scale, channelParam(ctx, args.in("weight", 1), c, 1.0f, dt));
  OXPORT_ASSIGN(std::string bias, channelParam(ctx, args.in("bias", 2), c, 0.0f, dt));
  std::string mean, var;
  if (has_stats) {
    OXPORT_ASSIGN(mean, ctx.tensorOfType(args.in("running_mean", 3), dt));
    OXPORT_ASSIGN(var, ctx.tensorOfType(args.in("running_var", 4), dt));
  } else {
    OXPORT_ASSIGN(mean, channelParam(ctx, args.in("running_mean", 3), c, 0.0f, dt));
    OXPORT_ASSIGN(var, channelParam(ctx, args.in("running_var", 4), c, 1.0f, dt));
  }
  // A rank-2 input (N, C) is fine for BatchNormalization as is.
  std::vector<Attribute> attrs{attrFloat("epsilon", static_cast<float>(eps))};
  if (training) {
    attrs.push_back(attrFloat("momentum", static_cast<float>(1.0 - momentum)));
    attrs.push_back(attrInt("training_mode", 1));
    auto outs = ctx.emit("BatchNormalization", {in, scale, bias, mean, var}, 3, std::move(attrs));
    return bindOut(ctx, n, outs[0]);
  }
  if (ctx.opset() < 14) attrs.push_back(attrFloat("momentum", static_cast<float>(1.0 - momentum)));
  return bindOut(ctx, n, ctx.emit1("BatchNormalization", {in, scale, bias, mean, var}, std::move(attrs)));
}

// Binds y * weight + bias (layer_norm's and group_norm's arguments 2 and 3, each optional) in dtype
// dt, then cast to `out` (layer_norm of a float16 input works in float32); a non-empty `shape`
// reshapes them first (group_norm's [C, 1, ...], over the channel axis).
Status bindScaleShift(Context& ctx, const Node& n, const Args& args, std::string y, DType dt,
                      const std::vector<int64_t>& shape, DType out) {
  for (int k = 0; k < 2; ++k) {
    const Value* p = args.in(k == 0 ? "weight" : "bias", 2 + k);
    if (ctx.isNone(p)) continue;
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(p, dt));
    if (!shape.empty()) t = ctx.emit1("Reshape", {t, ctx.constInt64s(shape)});
    y = ctx.emit1(k == 0 ? "Mul" : "Add", {y, t});
  }
  return bindOut(ctx, n, out != dt ? ctx.cast(y, out) : y);
}

// layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)
Status convertLayerNorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* x = args.in("input", 0);
  OXPORT_ASSIGN(auto nshape, ctx.constInts(args.in("normalized_shape", 1)));
  OXPORT_ASSIGN(double eps, ctx.constDouble(args.in("eps", 4)));
  const int rank = ctx.rank(x);
  const int64_t axis = rank - static_cast<int64_t>(nshape.size());
  const DType dt = ctx.dtype(x);
  OXPORT_ASSIGN(std::string in, ctx.tensor(x));
  int64_t count = 1;
  for (auto d : nshape) count *= d;
  if (ctx.opset() >= 17) {
    OXPORT_ASSIGN(std::string scale, channelParam(ctx, args.in("weight", 2), count, 1.0f, dt));
    if (!ctx.isNone(args.in("weight", 2)) && nshape.size() != 1) {
      // weight already has normalized_shape
    } else if (ctx.isNone(args.in("weight", 2)) && nshape.size() != 1) {
      scale = ctx.emit1("Reshape", {scale, ctx.constInt64s(nshape)});
    }
    std::vector<std::string> ins{in, scale};
    if (!ctx.isNone(args.in("bias", 3))) {
      OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("bias", 3), dt));
      ins.push_back(b);
    }
    auto outs = ctx.emit("LayerNormalization", ins, 1,
                         {attrInt("axis", axis), attrFloat("epsilon", static_cast<float>(eps))});
    return bindOut(ctx, n, outs[0]);
  }
  // Decomposed form (opsets 9-16). For float16/bfloat16 inputs the statistics and the affine step
  // run in float32 between Casts, as PyTorch's kernels accumulate: the variance of small activations
  // (GPT-2's embeddings, std 0.02) loses most of its bits when squared and averaged in float16.
  const DType work = (dt == DType::Float16 || dt == DType::BFloat16) ? DType::Float32 : dt;
  if (work != dt) in = ctx.cast(in, work);
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  std::string mean = ctx.emit1("ReduceMean", {in}, {attrInts("axes", axes), attrInt("keepdims", 1)});
  std::string centered = ctx.emit1("Sub", {in, mean});
  std::string sq = ctx.emit1("Mul", {centered, centered});
  std::string var = ctx.emit1("ReduceMean", {sq}, {attrInts("axes", axes), attrInt("keepdims", 1)});
  std::string denom = ctx.emit1("Sqrt", {ctx.emit1("Add", {var, ctx.constScalar(eps, work)})});
  std::string y = ctx.emit1("Div", {centered, denom});
  return bindScaleShift(ctx, n, args, y, work, {}, dt);
}

// group_norm(input, num_groups, weight, bias, eps, cudnn_enabled)
Status convertGroupNorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* x = args.in("input", 0);
  OXPORT_ASSIGN(int64_t groups, args.constInt("num_groups", 1));
  OXPORT_ASSIGN(double eps, args.constDouble("eps", 4));
  const auto& shape = ctx.meta(x).shape;
  const int rank = ctx.rank(x);
  if (rank < 2) return ctx.error("bad-argument", "group_norm input must have a channel axis");
  const int64_t c = shape[1];
  const DType dt = ctx.dtype(x);
  OXPORT_ASSIGN(std::string in, ctx.tensor(x));
  // (N, C, *) -> (N, G, -1), InstanceNormalization over it, back to the input shape.
  std::string shape_in = ctx.shapeOf(in);
  std::string grouped = ctx.emit1("Reshape", {in, ctx.constInt64s({0, groups, -1})});
  std::string ones = ctx.constant(HostTensor::fromVector<float>(DType::Float32, {groups}, std::vector<float>(groups, 1.0f)));
  std::string zeros = ctx.constant(HostTensor::fromVector<float>(DType::Float32, {groups}, std::vector<float>(groups, 0.0f)));
  if (dt != DType::Float32) {
    ones = ctx.cast(ones, dt);
    zeros = ctx.cast(zeros, dt);
  }
  std::string normed = ctx.emit1("InstanceNormalization", {grouped, ones, zeros}, {attrFloat("epsilon", static_cast<float>(eps))});
  std::string y = ctx.emit1("Reshape", {normed, shape_in});
  std::vector<int64_t> bshape(static_cast<size_t>(rank - 1), 1);
  bshape[0] = c;
  return bindScaleShift(ctx, n, args, y, dt, bshape, dt);
}

// instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled)
Status convertInstanceNorm(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* x = args.in("input", 0);
  OXPORT_ASSIGN(bool use_input_stats, ctx.constBool(args.in("use_input_stats", 5)));
  OXPORT_ASSIGN(double eps, ctx.constDouble(args.in("eps", 7)));
  const int64_t c = ctx.meta(x).shape.at(1);
  const DType dt = ctx.dtype(x);
  OXPORT_ASSIGN(std::string in, ctx.tensor(x));
  OXPORT_ASSIGN(std::string w, channelParam(ctx, args.in("weight", 1), c, 1.0f, dt));
  OXPORT_ASSIGN(std::string b, channelParam(ctx, args.in("bias", 2), c, 0.0f, dt));
  if (!use_input_stats) {
    // InstanceNorm with track_running_stats=True in eval: the running statistics per channel,
    // which is the inference form of BatchNormalization.
    if (ctx.isNone(args.in("running_mean", 3)) || ctx.isNone(args.in("running_var", 4)))
      return ctx.error("bad-argument", "instance_norm with use_input_stats=False needs running_mean and running_var");
    OXPORT_ASSIGN(std::string mean, ctx.tensorOfType(args.in("running_mean", 3), dt));
    OXPORT_ASSIGN(std::string var, ctx.tensorOfType(args.in("running_var", 4), dt));
    std::vector<Attribute> attrs{attrFloat("epsilon", static_cast<float>(eps))};
    return bindOut(ctx, n, ctx.emit1("BatchNormalization", {in, w, b, mean, var}, std::move(attrs)));
  }
  return bindOut(ctx, n, ctx.emit1("InstanceNormalization", {in, w, b}, {attrFloat("epsilon", static_cast<float>(eps))}));
}

}  // namespace

void registerNormOps(Registry& r) {
  r.add("aten::batch_norm", convertBatchNorm);
  r.add("aten::layer_norm", convertLayerNorm);
  r.add("aten::group_norm", convertGroupNorm);
  r.add("aten::instance_norm", convertInstanceNorm);
}

}  // namespace oxport::convert
