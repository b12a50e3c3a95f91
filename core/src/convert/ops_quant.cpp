// Quantization-aware-training ops: fake quantization (per tensor, per channel, learnable, and the
// fused moving-average observer of the fbgemm QAT qconfig) and explicit quantize/dequantize.
//
// A fake quantization y = (clamp(round(x / s) + zp, qmin, qmax) - zp) * s is exported as a
// QuantizeLinear/DequantizeLinear pair holding the exact scale and zero point:
// - a range of at most 256 levels fits 8 bits: uint8 when it lies in 0..255, int8 in -128..127,
//   otherwise uint8 with the zero point shifted by qmin (the same numbers come out);
// - a range narrower than the 8-bit type (e.g. 0..127 of reduce_range) adds a clamp after the
//   DequantizeLinear at the dequantized bounds (qmin - zp) * s and (qmax - zp) * s. Dequantizing
//   is monotonic, so clamping after it equals clamping the integers: the result is exact.
// - per-channel needs QuantizeLinear's `axis` (opset 13). Below 13 a per-channel fake quantization
//   of a constant (weights) is computed at export time, as libtorch does; of a dynamic tensor it is
//   refused ("opset-too-old", which ONNX_FALLTHROUGH keeps as a custom node).
// Ranges of more than 256 levels are refused ("unsupported-form").
#include <algorithm>
#include <cmath>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

struct QParams {
  std::vector<float> scale;   // one per tensor, or one per channel
  std::vector<int64_t> zero_point;
  int64_t qmin = 0;
  int64_t qmax = 255;
  int64_t axis = -1;          // >= 0: per channel along this axis
};

Result<std::vector<double>> constNumbers(Context& ctx, const Value* v, const std::string& what) {
  if (v->constant) {
    const auto& c = *v->constant;
    if (c.isNumber()) return std::vector<double>{c.toDouble()};
    if (c.isTensor()) {
      std::vector<double> out;
      for (int64_t i = 0; i < c.tensor().numel(); ++i) out.push_back(c.tensor().at(i));
      return out;
    }
  }
  return ctx.error("unsupported-form",
                   what + " of the fake quantization depends on the inputs; only scales and zero points known "
                          "at export time (buffers or constants) are exported",
                   "freeze the observers (model.apply(torch.ao.quantization.disable_observer)) before saving");
}

// PyTorch's own rounding of a learnable (float) zero point: nearest, then into the range.
int64_t zeroPointOf(double z, int64_t qmin, int64_t qmax) {
  auto r = static_cast<int64_t>(std::nearbyint(z));
  return std::min(std::max(r, qmin), qmax);
}

Result<QParams> readQParams(Context& ctx, const Value* scale, const Value* zp, const Value* qmin,
                            const Value* qmax, bool learnable) {
  QParams q;
  OXPORT_ASSIGN(q.qmin, ctx.constInt(qmin));
  OXPORT_ASSIGN(q.qmax, ctx.constInt(qmax));
  OXPORT_ASSIGN(auto s, constNumbers(ctx, scale, "the scale"));
  OXPORT_ASSIGN(auto z, constNumbers(ctx, zp, "the zero point"));
  if (s.empty() || (s.size() != z.size() && z.size() != 1))
    return ctx.error("bad-argument", "scale has " + std::to_string(s.size()) + " values and zero point " +
                                         std::to_string(z.size()));
  for (double v : s) q.scale.push_back(static_cast<float>(v));
  for (size_t i = 0; i < s.size(); ++i) {
    double zi = z[z.size() == 1 ? 0 : i];
    q.zero_point.push_back(learnable ? zeroPointOf(zi, q.qmin, q.qmax) : static_cast<int64_t>(zi));
  }
  return q;
}

// libtorch's fake quantization of one float (same operations, same float rounding).
float fakeQuantOne(float x, float scale, int64_t zp, int64_t qmin, int64_t qmax) {
  float inv_scale = 1.0f / scale;
  auto q = static_cast<int64_t>(zp + std::nearbyint(x * inv_scale));
  q = std::min(std::max(q, qmin), qmax);
  return static_cast<float>(q - zp) * scale;
}

Result<HostTensor> fakeQuantOnHost(Context& ctx, const HostTensor& x, const QParams& q) {
  if (x.dtype != DType::Float32) return ctx.error("unsupported-form", "fake quantization of a constant that is not float32");
  std::vector<float> out(static_cast<size_t>(x.numel()));
  const auto* data = static_cast<const float*>(x.data);
  int64_t inner = 1, channels = 1;
  if (q.axis >= 0) {
    channels = x.shape.at(static_cast<size_t>(q.axis));
    for (size_t d = static_cast<size_t>(q.axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    size_t c = q.axis >= 0 ? static_cast<size_t>((i / inner) % channels) : 0;
    out[static_cast<size_t>(i)] = fakeQuantOne(data[i], q.scale.at(c), q.zero_point.at(c), q.qmin, q.qmax);
  }
  return HostTensor::fromVector<float>(DType::Float32, x.shape, out);
}

// Emits the Q/DQ (+ clamp) form of a fake quantization of `x` and returns the result's name.
Result<std::string> emitFakeQuant(Context& ctx, const Value* xv, const QParams& q) {
  const int64_t levels = q.qmax - q.qmin + 1;
  const bool per_channel = q.axis >= 0;
  for (size_t i = 0; i < q.zero_point.size(); ++i) {
    if (q.zero_point[i] < q.qmin || q.zero_point[i] > q.qmax)
      return ctx.error("bad-argument", "zero point " + std::to_string(q.zero_point[i]) + " lies outside quant range [" +
                                           std::to_string(q.qmin) + ", " + std::to_string(q.qmax) + "]");
    if (!(q.scale[i] > 0.0f) || !std::isfinite(q.scale[i]))
      return ctx.error("bad-argument", "scale " + std::to_string(q.scale[i]) + " is not a positive finite number",
                       "calibrate the model (run it on data with the observers enabled) before saving");
  }
  if (levels > 256)
    return ctx.error("unsupported-form",
                     "quant range [" + std::to_string(q.qmin) + ", " + std::to_string(q.qmax) + "] has " +
                         std::to_string(levels) + " levels; ONNX QuantizeLinear holds at most 8 bits (256 levels)",
                     "use an 8-bit range, or export with operator_export_type ONNX_FALLTHROUGH to keep the op as a "
                     "node in domain org.pytorch.aten");
  // Constants below opset 13 per channel (and any constant below opset 10): computed now.
  if (xv->constant && xv->constant->isTensor() && ((per_channel && ctx.opset() < 13) || ctx.opset() < 10)) {
    OXPORT_ASSIGN(HostTensor folded, fakeQuantOnHost(ctx, xv->constant->tensor(), q));
    // Per-channel weights at opsets 10-12: the numbers are exact, but the file holds no Q/DQ pair for
    // them, which int8 runtimes (TensorRT, ONNX Runtime's QDQ fusion) need to quantize the layer.
    // Said once per export.
    const bool said = std::any_of(ctx.warnings().begin(), ctx.warnings().end(),
                                  [](const Diagnostic& d) { return d.code == "per-channel-weights-folded"; });
    if (per_channel && ctx.opset() >= 10 && !said) {
      ctx.warn("per-channel-weights-folded",
               "per-channel fake quantization of constants (QAT weights) is computed at export: opset " +
                   std::to_string(ctx.opset()) +
                   "'s QuantizeLinear has no axis, so the file holds the fake-quantized float weights without a "
                   "DequantizeLinear (same numbers; said once for all such weights)",
               "export with opset 13 to keep per-channel QuantizeLinear/DequantizeLinear on the weights, which "
               "int8 runtimes (TensorRT, ONNX Runtime's QDQ fusion) need to run the layer in int8");
      ctx.warnings().back().severity = Severity::Note;
    }
    return ctx.constant(std::move(folded), "FakeQuantized", xv);
  }
  if (ctx.opset() < 10) return ctx.needsOpset(10, "fake quantization (QuantizeLinear/DequantizeLinear)");
  if (per_channel && ctx.opset() < 13)
    return ctx.needsOpset(13, "per-channel fake quantization of a dynamic tensor (QuantizeLinear axis)");

  // The 8-bit type and the zero-point shift.
  DType qtype = DType::UInt8;
  int64_t shift = 0, lo = 0, hi = 255;
  if (q.qmin >= 0 && q.qmax <= 255) {
    qtype = DType::UInt8;
  } else if (q.qmin >= -128 && q.qmax <= 127) {
    qtype = DType::Int8;
    lo = -128;
    hi = 127;
  } else {
    shift = q.qmin;
  }
  const bool clamp = q.qmin - shift > lo || q.qmax - shift < hi;

  OXPORT_ASSIGN(std::string x, ctx.tensor(xv));
  DType xdt = ctx.dtype(xv);
  if (xdt != DType::Float32) x = ctx.cast(x, DType::Float32);

  const auto n = static_cast<int64_t>(q.scale.size());
  std::vector<int64_t> qshape;
  if (per_channel) qshape.push_back(n);
  std::string scale = ctx.constant(HostTensor::fromVector<float>(DType::Float32, qshape, q.scale), "scale");
  std::string zp;
  if (qtype == DType::UInt8) {
    std::vector<uint8_t> z;
    for (auto v : q.zero_point) z.push_back(static_cast<uint8_t>(v - shift));
    zp = ctx.constant(HostTensor::fromVector<uint8_t>(DType::UInt8, qshape, z), "zero_point");
  } else {
    std::vector<int8_t> z;
    for (auto v : q.zero_point) z.push_back(static_cast<int8_t>(v - shift));
    zp = ctx.constant(HostTensor::fromVector<int8_t>(DType::Int8, qshape, z), "zero_point");
  }
  std::vector<Attribute> attrs;
  if (per_channel) attrs.push_back(attrInt("axis", q.axis));
  std::string quantized = ctx.emit1("QuantizeLinear", {x, scale, zp}, attrs);
  std::string y = ctx.emit1("DequantizeLinear", {quantized, scale, zp}, attrs);

  if (clamp) {
    // The dequantized bounds, computed as DequantizeLinear computes them: (q - zp) * s in float.
    std::vector<float> lows, highs;
    for (int64_t i = 0; i < n; ++i) {
      float s = q.scale[static_cast<size_t>(i)];
      int64_t z = q.zero_point[static_cast<size_t>(i)];
      lows.push_back(static_cast<float>(q.qmin - z) * s);
      highs.push_back(static_cast<float>(q.qmax - z) * s);
    }
    if (!per_channel) {
      if (ctx.opset() < 11) {
        y = ctx.emit1("Clip", {y}, {attrFloat("min", lows[0]), attrFloat("max", highs[0])});
      } else {
        y = ctx.emit1("Clip", {y, ctx.constScalar(lows[0], DType::Float32), ctx.constScalar(highs[0], DType::Float32)});
      }
    } else {
      // Per-channel bounds broadcast along `axis`: shape [C, 1, ..., 1].
      std::vector<int64_t> bshape{n};
      for (int d = static_cast<int>(q.axis) + 1; d < ctx.rank(xv); ++d) bshape.push_back(1);
      std::string lo_t = ctx.constant(HostTensor::fromVector<float>(DType::Float32, bshape, lows), "clamp_min");
      std::string hi_t = ctx.constant(HostTensor::fromVector<float>(DType::Float32, bshape, highs), "clamp_max");
      y = ctx.emit1("Min", {ctx.emit1("Max", {y, lo_t}), hi_t});
    }
  }
  if (xdt != DType::Float32) y = ctx.cast(y, xdt);
  return y;
}

Result<int64_t> channelAxis(Context& ctx, const Node& n, const Value* axis_v, const Value* x) {
  OXPORT_ASSIGN(int64_t axis, ctx.constInt(axis_v));
  axis = ctx.normDim(axis, ctx.rank(x));
  if (axis < 0 || axis >= ctx.rank(x))
    return ctx.error("bad-argument", "channel axis " + std::to_string(axis) + " is out of range for " + n.kind);
  return axis;
}

// fake_quantize_per_tensor_affine(x, scale, zero_point, quant_min, quant_max) in its float/int and
// tensor-qparams forms; _fake_quantize_learnable_per_tensor_affine(x, scale, zp, qmin, qmax, grad).
ConvertFn perTensor(bool learnable) {
  return [learnable](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(QParams q, readQParams(ctx, args.in("scale", 1), args.in("zero_point", 2), args.in("quant_min", 3), args.in("quant_max", 4), learnable));
    if (q.scale.size() != 1) return ctx.error("bad-argument", "per-tensor fake quantization with several scales");
    OXPORT_ASSIGN(std::string y, emitFakeQuant(ctx, args.in("self", 0), q));
    return bindOut(ctx, n, y);
  };
}

// _fake_quantize_per_tensor_affine_cachemask_tensor_qparams(x, scale, zp, fake_quant_enabled, qmin, qmax)
// -> (output, mask)
Status convertCachemaskTensorQParams(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto enabled, constNumbers(ctx, args.in("fake_quant_enabled", 3), "fake_quant_enabled"));
  if (!n.output(1)->users.empty())
    return ctx.error("unsupported-form", "the mask output of " + n.kind + " (for gradients) has no ONNX form");
  if (!enabled.empty() && enabled[0] == 0) {
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    return bindOut(ctx, n, x);
  }
  OXPORT_ASSIGN(QParams q, readQParams(ctx, args.in("scale", 1), args.in("zero_point", 2), args.in("quant_min", 4), args.in("quant_max", 5), false));
  OXPORT_ASSIGN(std::string y, emitFakeQuant(ctx, args.in("self", 0), q));
  return bindOut(ctx, n, y);
}

// fake_quantize_per_channel_affine(x, scale, zero_point, axis, quant_min, quant_max) and the
// learnable variant (…, grad_factor).
ConvertFn perChannel(bool learnable) {
  return [learnable](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(QParams q, readQParams(ctx, args.in("scale", 1), args.in("zero_point", 2), args.in("quant_min", 4), args.in("quant_max", 5), learnable));
    OXPORT_ASSIGN(q.axis, channelAxis(ctx, n, args.in("axis", 3), args.in("self", 0)));
    OXPORT_ASSIGN(std::string y, emitFakeQuant(ctx, args.in("self", 0), q));
    return bindOut(ctx, n, y);
  };
}

// fused_moving_avg_obs_fake_quant(x, observer_on, fake_quant_on, running_min, running_max, scale,
// zero_point, averaging_const, quant_min, quant_max, ch_axis, per_row_fake_quant, symmetric_quant):
// exported with the scale and zero point as saved (the frontend runs it with the observer off).
Status convertFusedObsFakeQuant(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto enabled, constNumbers(ctx, args.in("fake_quant_on", 2), "fake_quant_enabled"));
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  if (!enabled.empty() && enabled[0] == 0) return bindOut(ctx, n, x);
  OXPORT_ASSIGN(QParams q, readQParams(ctx, args.in("scale", 5), args.in("zero_point", 6), args.in("quant_min", 8), args.in("quant_max", 9), false));
  bool per_row = false;
  if (n.inputs.size() > 11) {
    OXPORT_ASSIGN(per_row, ctx.constBool(args.in("per_row_fake_quant", 11)));
  }
  if (per_row) {
    OXPORT_ASSIGN(q.axis, channelAxis(ctx, n, args.in("ch_axis", 10), args.in("self", 0)));
  } else if (q.scale.size() != 1) {
    return ctx.error("bad-argument", "per-tensor fake quantization with several scales");
  }
  OXPORT_ASSIGN(std::string y, emitFakeQuant(ctx, args.in("self", 0), q));
  return bindOut(ctx, n, y);
}

// quantize_per_tensor(x, scale, zero_point, dtype) followed by dequantize: QuantizeLinear and
// DequantizeLinear. The quantized value is bound to the QuantizeLinear output; dequantize finds
// the scale and zero point at its producer.
constexpr int64_t kQUInt8 = 13, kQInt8 = 12;  // c10::ScalarType numbers

Status convertQuantizePerTensor(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 10) return ctx.needsOpset(10, "quantize_per_tensor (QuantizeLinear)");
  OXPORT_ASSIGN(double s, ctx.constDouble(args.in("scale", 1)));
  OXPORT_ASSIGN(int64_t z, ctx.constInt(args.in("zero_point", 2)));
  OXPORT_ASSIGN(int64_t dt, ctx.constInt(args.in("dtype", 3)));
  if (dt != kQUInt8 && dt != kQInt8)
    return ctx.error("unsupported-form", "quantize_per_tensor to a dtype other than quint8/qint8 has no ONNX form");
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  if (ctx.dtype(args.in("self", 0)) != DType::Float32) x = ctx.cast(x, DType::Float32);
  std::string scale = ctx.constScalar(s, DType::Float32);
  std::string zp = ctx.constScalar(static_cast<double>(z), dt == kQUInt8 ? DType::UInt8 : DType::Int8);
  return bindOut(ctx, n, ctx.emit1("QuantizeLinear", {x, scale, zp}));
}

Status convertDequantize(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Node* p = args.in("self", 0)->producer;
  if (!p || p->kind != "aten::quantize_per_tensor")
    return ctx.error("unsupported-form", "dequantize of a tensor not made by quantize_per_tensor in the graph",
                     "export the QAT (fake-quantized) model rather than the converted quantized one");
  const Args quantize(ctx, *p);  // the quantize_per_tensor that made the input
  OXPORT_ASSIGN(double s, quantize.constDouble("scale", 1));
  OXPORT_ASSIGN(int64_t z, quantize.constInt("zero_point", 2));
  OXPORT_ASSIGN(int64_t dt, quantize.constInt("dtype", 3));
  OXPORT_ASSIGN(std::string q, ctx.tensor(args.in("self", 0)));
  std::string scale = ctx.constScalar(s, DType::Float32);
  std::string zp = ctx.constScalar(static_cast<double>(z), dt == kQUInt8 ? DType::UInt8 : DType::Int8);
  return bindOut(ctx, n, ctx.emit1("DequantizeLinear", {q, scale, zp}));
}

}  // namespace

void registerQuantOps(Registry& r) {
  r.add("aten::fake_quantize_per_tensor_affine", perTensor(false));
  r.add("aten::_fake_quantize_learnable_per_tensor_affine", perTensor(true));
  r.add("aten::_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", convertCachemaskTensorQParams);
  r.add("aten::fake_quantize_per_channel_affine", perChannel(false));
  r.add("aten::_fake_quantize_learnable_per_channel_affine", perChannel(true));
  r.add("aten::fused_moving_avg_obs_fake_quant", convertFusedObsFakeQuant);
  r.add("aten::quantize_per_tensor", convertQuantizePerTensor);
  r.add("aten::dequantize", convertDequantize);
}

}  // namespace oxport::convert
