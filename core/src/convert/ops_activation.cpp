// Activations: relu family, sigmoid/tanh, hardtanh/clamp-like, softmax family.
#include <cmath>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

ConvertFn unary(const std::string& op) {
  return [op](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in({"self", "a"}, 0)));
    return bindOut(ctx, n, ctx.emit1(op, {x}));
  };
}

// Clip with constant bounds: attributes before opset 11, inputs from 11.
Result<std::string> clip(Context& ctx, const std::string& x, DType dt, std::optional<double> lo, std::optional<double> hi) {
  if (ctx.opset() < 11) {
    std::vector<Attribute> attrs;
    if (lo) attrs.push_back(attrFloat("min", static_cast<float>(*lo)));
    if (hi) attrs.push_back(attrFloat("max", static_cast<float>(*hi)));
    return ctx.emit1("Clip", {x}, std::move(attrs));
  }
  std::vector<std::string> ins{x, lo ? ctx.constScalar(*lo, dt) : std::string(), hi ? ctx.constScalar(*hi, dt) : std::string()};
  while (!ins.empty() && ins.back().empty()) ins.pop_back();
  return ctx.emit1("Clip", ins);
}

Status convertHardtanh(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(double lo, ctx.constDouble(args.in("min_val", 1)));
  OXPORT_ASSIGN(double hi, ctx.constDouble(args.in("max_val", 2)));
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string y, clip(ctx, x, ctx.dtype(args.in("self", 0)), lo, hi));
  return bindOut(ctx, n, y);
}

Status convertRelu6(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string y, clip(ctx, x, ctx.dtype(args.in("self", 0)), 0.0, 6.0));
  return bindOut(ctx, n, y);
}

Status convertLeakyRelu(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  double slope = 0.01;
  if (n.inputs.size() > 1) { OXPORT_ASSIGN(slope, ctx.constDouble(args.in("negative_slope", 1))); }
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("LeakyRelu", {x}, {attrFloat("alpha", static_cast<float>(slope))}));
}

// softmax(input, dim, dtype) / log_softmax: opset 13 has a real axis; before, the op
// flattens at `axis`, so a non-last dim goes through a transpose.
ConvertFn softmax(const std::string& op) {
  return [op](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
    const int rank = ctx.rank(args.in("self", 0));
    dim = ctx.normDim(dim, rank);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    if (args.has("dtype", 2)) x = ctx.cast(x, n.output(0)->meta.dtype);
    if (rank == 0) return bindOut(ctx, n, ctx.emit1(op, {ctx.unsqueeze(x, {0})}));
    if (ctx.opset() >= 13 || dim == rank - 1)
      return bindOut(ctx, n, ctx.emit1(op, {x}, {attrInt("axis", dim)}));
    std::vector<int64_t> perm;
    for (int i = 0; i < rank; ++i) perm.push_back(i);
    std::swap(perm[static_cast<size_t>(dim)], perm.back());
    std::string t = ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
    std::string s = ctx.emit1(op, {t}, {attrInt("axis", rank - 1)});
    return bindOut(ctx, n, ctx.emit1("Transpose", {s}, {attrInts("perm", perm)}));
  };
}

// gelu(self, approximate="none"|"tanh")
Status convertGelu(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  std::string approx = "none";
  if (n.inputs.size() > 1 && args.in("approximate", 1)->constant && args.in("approximate", 1)->constant->isString()) approx = args.in("approximate", 1)->constant->str();
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  if (approx == "tanh") {
    // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    std::string x3 = ctx.emit1("Mul", {ctx.emit1("Mul", {x, x}), x});
    std::string inner = ctx.emit1("Add", {x, ctx.emit1("Mul", {x3, ctx.constScalar(0.044715, dt)})});
    std::string th = ctx.emit1("Tanh", {ctx.emit1("Mul", {inner, ctx.constScalar(std::sqrt(2.0 / M_PI), dt)})});
    std::string y = ctx.emit1("Mul", {ctx.emit1("Mul", {x, ctx.constScalar(0.5, dt)}),
                                      ctx.emit1("Add", {th, ctx.constScalar(1.0, dt)})});
    return bindOut(ctx, n, y);
  }
  // 0.5 * x * (1 + erf(x / sqrt(2)))
  std::string e = ctx.emit1("Erf", {ctx.emit1("Div", {x, ctx.constScalar(std::sqrt(2.0), dt)})});
  std::string y = ctx.emit1("Mul", {ctx.emit1("Mul", {x, ctx.emit1("Add", {e, ctx.constScalar(1.0, dt)})}),
                                    ctx.constScalar(0.5, dt)});
  return bindOut(ctx, n, y);
}

// x op f(x): silu is x * sigmoid(x), tanhshrink x - tanh(x).
ConvertFn selfWith(const std::string& op, const std::string& f) {
  return [op, f](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    return bindOut(ctx, n, ctx.emit1(op, {x, ctx.emit1(f, {x})}));
  };
}

Status convertHardsigmoid(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("HardSigmoid", {x}, {attrFloat("alpha", 1.0f / 6.0f), attrFloat("beta", 0.5f)}));
}

Status convertHardswish(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  if (ctx.opset() >= 14) return bindOut(ctx, n, ctx.emit1("HardSwish", {x}));
  std::string hs = ctx.emit1("HardSigmoid", {x}, {attrFloat("alpha", 1.0f / 6.0f), attrFloat("beta", 0.5f)});
  return bindOut(ctx, n, ctx.emit1("Mul", {x, hs}));
}

// elu(self, alpha, scale, input_scale)
Status convertElu(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(double alpha, ctx.constDouble(args.in("alpha", 1)));
  OXPORT_ASSIGN(double scale, ctx.constDouble(args.in("scale", 2)));
  OXPORT_ASSIGN(double input_scale, ctx.constDouble(args.in("input_scale", 3)));
  if (scale != 1.0 || input_scale != 1.0)
    return ctx.error("unsupported-form", "elu with scale or input_scale other than 1 has no ONNX form");
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("Elu", {x}, {attrFloat("alpha", static_cast<float>(alpha))}));
}

// softplus(self, beta, threshold)
Status convertSoftplus(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(double beta, ctx.constDouble(args.in("beta", 1)));
  double threshold = 20.0;
  if (args.has("threshold")) { OXPORT_ASSIGN(threshold, ctx.constDouble(args.in("threshold", 2))); }
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  const std::string bx = beta == 1.0 ? x : ctx.emit1("Mul", {x, ctx.constScalar(beta, dt)});
  std::string sp = ctx.emit1("Softplus", {bx});
  if (beta != 1.0) sp = ctx.emit1("Div", {sp, ctx.constScalar(beta, dt)});
  // PyTorch returns x itself where beta * x > threshold; softplus differs from x there by
  // log1p(exp(-beta * x)) / beta, below float precision only for thresholds near the default 20.
  if (threshold >= 20.0) return bindOut(ctx, n, sp);
  const std::string linear = ctx.emit1("Greater", {bx, ctx.constScalar(threshold, dt)});
  return bindOut(ctx, n, ctx.emit1("Where", {linear, x, sp}));
}

Status convertPrelu(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string w, ctx.tensor(args.in("weight", 1)));
  const int rank = ctx.rank(args.in("self", 0));
  const auto& wshape = ctx.meta(args.in("weight", 1)).shape;
  if (rank >= 2 && wshape.size() == 1 && wshape[0] > 1) {
    std::vector<int64_t> axes;
    for (int i = 1; i < rank - 1; ++i) axes.push_back(i);
    if (!axes.empty()) w = ctx.unsqueeze(w, axes);
  }
  return bindOut(ctx, n, ctx.emit1("PRelu", {x, w}));
}

// glu(self, dim=-1): first half * sigmoid(second half), halves by an even Split.
Status convertGlu(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  int64_t dim = -1;
  if (n.inputs.size() > 1) { OXPORT_ASSIGN(dim, ctx.constInt(args.in("dim", 1))); }
  const int64_t axis = ctx.normDim(dim, ctx.rank(args.in("self", 0)));
  auto halves = ctx.emit("Split", {x}, 2, {attrInt("axis", axis)});
  return bindOut(ctx, n, ctx.emit1("Mul", {halves[0], ctx.emit1("Sigmoid", {halves[1]})}));
}

// A number argument, or `dflt` when the overload lacks it or it is None.
Result<double> scalarArg(Context& ctx, const Node& n, const ArgName& name, size_t pos, double dflt) {
  const Value* v = Args(ctx, n).optIn(name, pos);
  if (!v || ctx.isNone(v)) return dflt;
  return ctx.constDouble(v);
}

// hardshrink(self, lambd=0.5): x where |x| > lambd, else 0.
Status convertHardshrink(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(double l, scalarArg(ctx, n, "lambd", 1, 0.5));
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  std::string keep = ctx.emit1("Greater", {ctx.emit1("Abs", {x}), ctx.constScalar(l, dt)});
  return bindOut(ctx, n, ctx.emit1("Where", {keep, x, ctx.constScalar(0, dt)}));
}

// softshrink(self, lambd=0.5): x - lambd above lambd, x + lambd below -lambd, else 0.
Status convertSoftshrink(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(double l, scalarArg(ctx, n, "lambd", 1, 0.5));
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  std::string lp = ctx.constScalar(l, dt), ln = ctx.constScalar(-l, dt), zero = ctx.constScalar(0, dt);
  std::string low = ctx.emit1("Where", {ctx.emit1("Less", {x, ln}), ctx.emit1("Add", {x, lp}), zero});
  return bindOut(ctx, n, ctx.emit1("Where", {ctx.emit1("Greater", {x, lp}), ctx.emit1("Sub", {x, lp}), low}));
}

// threshold(self, threshold, value): x where x > threshold, else value.
Status convertThreshold(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  OXPORT_ASSIGN(std::string th, ctx.tensorOfType(args.in("threshold", 1), dt));
  OXPORT_ASSIGN(std::string v, ctx.tensorOfType(args.in("value", 2), dt));
  return bindOut(ctx, n, ctx.emit1("Where", {ctx.emit1("Greater", {x, th}), x, v}));
}

// log_sigmoid(x) = -softplus(-x)
Status convertLogSigmoid(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("Neg", {ctx.emit1("Softplus", {ctx.emit1("Neg", {x})})}));
}

// mish(x) = x * tanh(softplus(x))
Status convertMish(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("Mul", {x, ctx.emit1("Tanh", {ctx.emit1("Softplus", {x})})}));
}

// celu(self, alpha=1): Celu from opset 12 (float32); otherwise alpha * elu(x / alpha).
Status convertCelu(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(double alpha, scalarArg(ctx, n, "alpha", 1, 1.0));
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  if (ctx.opset() >= 12 && dt == DType::Float32)
    return bindOut(ctx, n, ctx.emit1("Celu", {x}, {attrFloat("alpha", static_cast<float>(alpha))}));
  if (dt == DType::Float32) {
    std::string e = ctx.emit1("Elu", {ctx.emit1("Div", {x, ctx.constScalar(alpha, dt)})}, {attrFloat("alpha", 1.0f)});
    return bindOut(ctx, n, ctx.emit1("Mul", {e, ctx.constScalar(alpha, dt)}));
  }
  // ONNX Runtime's Elu is float32 only: x > 0 ? x : alpha * (exp(x / alpha) - 1).
  std::string ex = ctx.emit1("Exp", {ctx.emit1("Div", {x, ctx.constScalar(alpha, dt)})});
  std::string neg = ctx.emit1("Mul", {ctx.emit1("Sub", {ex, ctx.constScalar(1, dt)}), ctx.constScalar(alpha, dt)});
  return bindOut(ctx, n, ctx.emit1("Where", {ctx.emit1("Greater", {x, ctx.constScalar(0, dt)}), x, neg}));
}

// rrelu(self, lower, upper, training, generator): in eval a leaky relu of slope (lower+upper)/2.
Status convertRrelu(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(double lower, scalarArg(ctx, n, "lower", 1, 1.0 / 8.0));
  OXPORT_ASSIGN(double upper, scalarArg(ctx, n, "upper", 2, 1.0 / 3.0));
  bool training = false;
  if (n.inputs.size() > 3) { OXPORT_ASSIGN(training, ctx.constBool(args.in("training", 3))); }
  if (training)
    return ctx.error("unsupported-form", "rrelu in training mode draws random slopes, which ONNX cannot express",
                     "export the model in eval mode (model.eval()) so rrelu uses its fixed slope");
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("LeakyRelu", {x}, {attrFloat("alpha", static_cast<float>((lower + upper) / 2))}));
}

}  // namespace

void registerActivationOps(Registry& r) {
  addAll(r, {"aten::relu", "aten::relu_"}, unary("Relu"));
  addAll(r, {"aten::sigmoid", "aten::sigmoid_"}, unary("Sigmoid"));
  addAll(r, {"aten::tanh", "aten::tanh_"}, unary("Tanh"));
  addAll(r, {"aten::hardtanh", "aten::hardtanh_"}, convertHardtanh);
  addAll(r, {"aten::relu6", "aten::relu6_"}, convertRelu6);
  addAll(r, {"aten::leaky_relu", "aten::leaky_relu_"}, convertLeakyRelu);
  r.add("aten::softmax", softmax("Softmax"));
  r.add("aten::log_softmax", softmax("LogSoftmax"));
  r.add("aten::_softmax", softmax("Softmax"));
  r.add("aten::_log_softmax", softmax("LogSoftmax"));
  r.add("aten::gelu", convertGelu);
  addAll(r, {"aten::silu", "aten::silu_"}, selfWith("Mul", "Sigmoid"));
  addAll(r, {"aten::hardsigmoid", "aten::hardsigmoid_"}, convertHardsigmoid);
  addAll(r, {"aten::hardswish", "aten::hardswish_"}, convertHardswish);
  addAll(r, {"aten::elu", "aten::elu_"}, convertElu);
  r.add("aten::softplus", convertSoftplus);
  r.add("aten::prelu", convertPrelu);
  r.add("aten::glu", convertGlu);
  addAll(r, {"aten::hardshrink", "aten::hardshrink_"}, convertHardshrink);
  addAll(r, {"aten::softshrink", "aten::softshrink_"}, convertSoftshrink);
  r.add("aten::tanhshrink", selfWith("Sub", "Tanh"));
  addAll(r, {"aten::threshold", "aten::threshold_"}, convertThreshold);
  r.add("aten::log_sigmoid", convertLogSigmoid);
  addAll(r, {"aten::mish", "aten::mish_"}, convertMish);
  addAll(r, {"aten::selu", "aten::selu_"}, unary("Selu"));
  addAll(r, {"aten::celu", "aten::celu_"}, convertCelu);
  addAll(r, {"aten::rrelu", "aten::rrelu_"}, convertRrelu);
  r.add("aten::softsign", unary("Softsign"));
}

}  // namespace oxport::convert
