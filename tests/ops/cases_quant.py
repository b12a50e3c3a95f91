"""Fake quantization (QAT) ops: exported as QuantizeLinear/DequantizeLinear pairs (see
docs/QAT_AND_CONTROL_FLOW.md). Inputs are random normals with scales of 0.05..0.1, so no value
lies on a rounding tie (where ONNX Runtime's x / scale and libtorch's x * (1 / scale) may differ)."""
import torch
import torch.ao.quantization as tq
import torch.nn as nn

from optest import T, case


class PerTensorBuffers(nn.Module):
    """Tensor qparams as buffers, as FakeQuantize keeps them."""

    def __init__(self, qmin=0, qmax=255, scale=0.05, zp=100):
        super().__init__()
        self.register_buffer("scale", torch.tensor([scale]))
        self.register_buffer("zero_point", torch.tensor([zp], dtype=torch.int32))
        self.qmin, self.qmax = qmin, qmax

    def forward(self, x):
        return torch.fake_quantize_per_tensor_affine(x, self.scale, self.zero_point, self.qmin, self.qmax)


class PerChannel(nn.Module):
    def __init__(self, axis=1, channels=4, qmin=-128, qmax=127):
        super().__init__()
        self.register_buffer("scale", torch.linspace(0.02, 0.08, channels))
        self.register_buffer("zero_point", torch.arange(channels, dtype=torch.int32) - 1)
        self.axis, self.qmin, self.qmax = axis, qmin, qmax

    def forward(self, x):
        return torch.fake_quantize_per_channel_affine(x, self.scale, self.zero_point, self.axis, self.qmin, self.qmax)


class PerChannelWeight(nn.Module):
    """Per-channel fake quantization of a constant (a conv weight): below opset 13 computed at export."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.q = PerChannel(axis=0, channels=4)

    def forward(self, x):
        return nn.functional.conv2d(x, self.q(self.conv.weight), self.conv.bias)


class Learnable(nn.Module):
    def __init__(self, per_channel=False):
        super().__init__()
        n = 4 if per_channel else 1
        self.scale = nn.Parameter(torch.full((n,), 0.06))
        self.zero_point = nn.Parameter(torch.full((n,), 3.4))  # rounded to 3 by libtorch
        self.per_channel = per_channel

    def forward(self, x):
        if self.per_channel:
            return torch._fake_quantize_learnable_per_channel_affine(x, self.scale, self.zero_point, 1, 0, 255, 1.0)
        return torch._fake_quantize_learnable_per_tensor_affine(x, self.scale, self.zero_point, 0, 255, 1.0)


def fused(per_channel=False, enabled=True):
    if per_channel:
        m = tq.FusedMovingAvgObsFakeQuantize(observer=tq.MovingAveragePerChannelMinMaxObserver, quant_min=-128,
                                             quant_max=127, dtype=torch.qint8, qscheme=torch.per_channel_symmetric,
                                             ch_axis=0)
    else:
        m = tq.FusedMovingAvgObsFakeQuantize(quant_min=0, quant_max=127)
    with torch.no_grad():
        m(torch.randn(4, 3, 5, 5) * 2 if per_channel else torch.randn(2, 4, 5, 5) * 2)  # calibrate
    m.disable_observer()
    if not enabled:
        m.disable_fake_quant()
    return m


class ConvertedConvRelu(nn.Module):
    """Eager int8 model as users convert it: QuantStub, Conv2d+ReLU, DeQuantStub."""

    def __init__(self):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.conv, self.relu = nn.Conv2d(3, 4, 3), nn.ReLU()

    def forward(self, x):
        return self.dequant(self.relu(self.conv(self.quant(x))))


def converted(kind):
    """A model after torch.ao.quantization.convert / quantize_dynamic (qnnpack: the engine this
    libtorch has): its quantized::* ops take packed weights, refused as `quantized-model`."""
    torch.backends.quantized.engine = "qnnpack"
    if kind == "dynamic_linear":
        return tq.quantize_dynamic(nn.Sequential(nn.Linear(4, 6), nn.ReLU()).eval(), {nn.Linear}, dtype=torch.qint8)
    m = ConvertedConvRelu().eval()
    m.qconfig = tq.get_default_qconfig("qnnpack")
    tq.fuse_modules(m, [["conv", "relu"]], inplace=True)
    tq.prepare(m, inplace=True)
    m(torch.randn(2, 3, 6, 6))  # calibrate
    return tq.convert(m)


CASES = [
    case("fake_quant_per_tensor_uint8", lambda x: torch.fake_quantize_per_tensor_affine(x, 0.05, 100, 0, 255),
         [T(2, 3, 4)], opsets=(10, 11, 13, 17), dynamic={0: [0]}),
    case("fake_quant_per_tensor_int8", lambda x: torch.fake_quantize_per_tensor_affine(x, 0.07, -3, -128, 127),
         [T(2, 3, 4)], opsets=(10, 13)),
    case("fake_quant_reduce_range_0_127", lambda x: torch.fake_quantize_per_tensor_affine(x, 0.03, 64, 0, 127),
         [T(2, 3, 4)], opsets=(10, 11, 13)),
    case("fake_quant_4bit_0_15", lambda x: torch.fake_quantize_per_tensor_affine(x, 0.2, 7, 0, 15),
         [T(2, 3, 4)], opsets=(10, 13)),
    case("fake_quant_shifted_range", lambda x: torch.fake_quantize_per_tensor_affine(x, 0.05, 0, -100, 155),
         [T(2, 3, 4)], opsets=(10, 13)),
    case("fake_quant_tensor_qparams", PerTensorBuffers(), [T(2, 3, 4)], opsets=(10, 13)),
    case("fake_quant_tensor_qparams_0_127", PerTensorBuffers(0, 127, 0.04, 20), [T(2, 3, 4)], opsets=(11, 13)),
    case("fake_quant_per_channel", PerChannel(), [T(2, 4, 3)], opsets=(13, 17), dynamic={0: [0]}),
    case("fake_quant_per_channel_narrow", PerChannel(qmin=-8, qmax=7), [T(2, 4, 3)], opsets=(13,)),
    case("fake_quant_per_channel_opset11_refused", PerChannel(), [T(2, 4, 3)], opsets=(11,),
         operator_export_type="ONNX", expect="error:opset-too-old"),
    case("fake_quant_per_channel_weight", PerChannelWeight(), [T(1, 3, 6, 6)], opsets=(10, 11, 13)),
    case("fake_quant_16bit_refused", lambda x: torch.fake_quantize_per_tensor_affine(x, 0.001, 0, 0, 65535),
         [T(2, 3)], opsets=(13,), operator_export_type="ONNX", expect="error:unsupported-form"),
    case("fake_quant_opset9_refused", lambda x: torch.fake_quantize_per_tensor_affine(x, 0.05, 100, 0, 255),
         [T(2, 3)], opsets=(9,), operator_export_type="ONNX", expect="error:opset-too-old"),
    case("fake_quant_learnable_per_tensor", Learnable(), [T(2, 4, 3)], opsets=(10, 13)),
    case("fake_quant_learnable_per_channel", Learnable(per_channel=True), [T(2, 4, 3)], opsets=(13,)),
    case("fused_obs_fake_quant", fused(), [T(2, 4, 5, 5)], opsets=(10, 13)),
    case("fused_obs_fake_quant_per_channel", fused(per_channel=True), [T(4, 3, 5, 5)], opsets=(13,)),
    case("fused_obs_fake_quant_disabled", fused(enabled=False), [T(2, 4, 5, 5)], opsets=(11,)),
    case("int8_converted_conv_refused", converted("conv"), [T(1, 3, 6, 6)], opsets=(11, 13),
         expect="error:quantized-model"),
    case("int8_dynamic_linear_refused", converted("dynamic_linear"), [T(2, 4)], opsets=(11, 13),
         expect="error:quantized-model"),
]
