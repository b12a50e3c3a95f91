"""The probe sweep's models (tools/probe_models.py), round 5: quantization-aware and quantized models
made the way users make them with torch 1.13: eager fuse_modules + prepare_qat (ConvBnReLU2d,
ConvBn2d, LinearReLU), prepare_qat_fx GraphModules, default / fbgemm / qnnpack / x86 qconfigs,
FixedQParams for sigmoid/tanh/hardsigmoid, _LearnableFakeQuantize, FloatFunctional, QAT Embedding,
a QAT transformer block and segmentation net, 4-bit ranges, horizon-style hand-written fake quant,
and CONVERTED int8 models (convert / convert_fx / dynamic quantization). Small configs, random
weights, a few training steps on random data, fixed seed."""
import copy

import torch
import torch.ao.quantization as tq
import torch.nn.functional as F
from torch import nn
from torch.ao.quantization import quantize_fx
from torch.ao.quantization._learnable_fake_quantize import _LearnableFakeQuantize

from probe_zoo import Spec


def train_steps(model, shape, steps=3, target=None):
    """A few SGD steps on random data (observers and BN statistics move, as after real QAT)."""
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    model.train()
    for _ in range(steps):
        x = torch.randn(shape) if isinstance(shape, tuple) else shape()
        out = model(x)
        out = out[0] if isinstance(out, (tuple, list)) else out
        loss = out.float().pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


def freeze(model, observers_off=True):
    if observers_off:
        model.apply(tq.disable_observer)
    model.apply(torch.nn.intrinsic.qat.freeze_bn_stats)
    return model.eval()


# ---------------------------------------------------------------- eager QAT (torchvision-style)
class SmallNet(nn.Module):
    """torchvision quantizable-style: QuantStub, conv-bn-relu blocks, a conv-bn, residual add via
    FloatFunctional, pooled LinearReLU head, DeQuantStub; fused with fuse_modules before prepare_qat."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.skip = nn.quantized.FloatFunctional()
        self.relu2 = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 16)
        self.relu3 = nn.ReLU()
        self.fc2 = nn.Linear(16, 5)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        y = self.relu1(self.bn1(self.conv1(x)))
        z = self.bn2(self.conv2(y))
        z = self.relu2(self.skip.add(z, y))
        z = torch.flatten(self.pool(z), 1)
        z = self.fc2(self.relu3(self.fc(z)))
        return self.dequant(z)

    def fuse(self):
        tq.fuse_modules_qat(self, [["conv1", "bn1", "relu1"], ["conv2", "bn2"], ["fc", "relu3"]], inplace=True)
        return self


def eager_qat(backend="fbgemm", observers_off=True, qconfig=None):
    torch.manual_seed(0)
    m = SmallNet().train().fuse()
    m.qconfig = qconfig if qconfig is not None else tq.get_default_qat_qconfig(backend)
    tq.prepare_qat(m, inplace=True)
    train_steps(m, (4, 3, 16, 16))
    return freeze(m, observers_off)


class ActNet(nn.Module):
    """FloatFunctional add/cat/mul and fixed-qparams activations (sigmoid, tanh, hardsigmoid)."""

    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.sig = nn.Sigmoid()
        self.tanh = nn.Tanh()
        self.hsig = nn.Hardsigmoid()
        self.ff_add = nn.quantized.FloatFunctional()
        self.ff_mul = nn.quantized.FloatFunctional()
        self.ff_cat = nn.quantized.FloatFunctional()
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        c = self.conv(x)
        a = self.ff_mul.mul(self.sig(c), self.tanh(c))
        b = self.ff_add.add(a, self.hsig(c))
        return self.dequant(self.ff_cat.cat([a, b], dim=1))


def act_qat():
    torch.manual_seed(0)
    m = ActNet().train()
    m.qconfig = tq.get_default_qat_qconfig("qnnpack")
    tq.prepare_qat(m, inplace=True)
    train_steps(m, (2, 3, 8, 8))
    return freeze(m)


def learnable_qat():
    torch.manual_seed(0)
    m = SmallNet().train().fuse()
    act = _LearnableFakeQuantize.with_args(
        observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=torch.quint8,
        use_grad_scaling=True)
    wt = _LearnableFakeQuantize.with_args(
        observer=tq.MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=torch.qint8,
        qscheme=torch.per_tensor_symmetric, use_grad_scaling=True)
    m.qconfig = tq.QConfig(activation=act, weight=wt)
    tq.prepare_qat(m, inplace=True)
    m.apply(tq.enable_fake_quant)
    for mod in m.modules():  # LSQ: scale/zero point learnable after the observer's first estimate
        if isinstance(mod, _LearnableFakeQuantize):
            mod.toggle_qparam_learning(True)
    train_steps(m, (4, 3, 16, 16))
    return freeze(m)


def fourbit_qat():
    """4-bit activations (0..15) and 4-bit symmetric per-channel weights (-8..7)."""
    torch.manual_seed(0)
    m = SmallNet().train().fuse()
    act = tq.FakeQuantize.with_args(observer=tq.MovingAverageMinMaxObserver, quant_min=0, quant_max=15,
                                    dtype=torch.quint8, qscheme=torch.per_tensor_affine)
    wt = tq.FakeQuantize.with_args(observer=tq.MovingAveragePerChannelMinMaxObserver, quant_min=-8, quant_max=7,
                                   dtype=torch.qint8, qscheme=torch.per_channel_symmetric, ch_axis=0)
    m.qconfig = tq.QConfig(activation=act, weight=wt)
    tq.prepare_qat(m, inplace=True)
    train_steps(m, (4, 3, 16, 16))
    return freeze(m)


# ---------------------------------------------------------------- QAT Embedding / EmbeddingBag
class EmbNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 8)
        self.bag = nn.EmbeddingBag(50, 8, mode="sum")
        self.fc = nn.Linear(16, 4)

    def forward(self, ids, offsets):
        e = self.emb(ids).mean(1)
        b = self.bag(ids.flatten(), offsets)
        return self.fc(torch.cat([e, b], 1))


def emb_qat():
    torch.manual_seed(0)
    m = EmbNet().train()
    m.emb.qconfig = tq.default_embedding_qat_qconfig
    m.bag.qconfig = tq.default_embedding_qat_qconfig
    tq.prepare_qat(m, inplace=True)
    ids = torch.randint(0, 50, (3, 5))
    offs = torch.tensor([0, 5, 10])
    for _ in range(2):
        m(ids, offs).sum().backward()
    m.apply(tq.disable_observer)
    return m.eval()


# ---------------------------------------------------------------- FX QAT
class Block(nn.Module):
    """Pre-norm transformer block (Linear/LayerNorm/softmax) with a conv stem for FX QAT."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.heads = heads
        self.scale = (d // heads) ** -0.5
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        b, n, c = x.size(0), x.size(1), x.size(2)
        h = self.ln1(x)
        qkv = self.qkv(h).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        y = (attn @ v).transpose(1, 2).reshape(b, n, c)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class SegNet(nn.Module):
    """UNet-ish segmentation: strided conv-bn-relu encoder, bilinear upsample + cat decoder."""

    def __init__(self):
        super().__init__()

        def cbr(i, o, s=1):
            return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

        self.e1, self.e2, self.e3 = cbr(3, 8), cbr(8, 16, 2), cbr(16, 16, 2)
        self.d2, self.d1 = cbr(32, 16), cbr(24, 8)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(a)
        c = self.e3(b)
        c = F.interpolate(c, size=b.shape[-2:], mode="bilinear", align_corners=False)
        b = self.d2(torch.cat([b, c], 1))
        b = F.interpolate(b, scale_factor=2.0, mode="nearest")
        return self.head(self.d1(torch.cat([a, b], 1)))


def fx_qat(model, shape, backend="fbgemm", observers_off=True):
    torch.manual_seed(0)
    model = model.train()
    qmap = tq.get_default_qat_qconfig_mapping(backend)
    gm = quantize_fx.prepare_qat_fx(model, qmap, (torch.randn(shape),))
    train_steps(gm, shape)
    return freeze(gm, observers_off)


# ---------------------------------------------------------------- horizon-style hand-written fake quant
class HzQuantConv(nn.Module):
    """Fake quant written by hand (horizon_plugin_pytorch style): int8 symmetric, scale buffers,
    activation scale per tensor, weight scale per output channel, zero points all 0."""

    def __init__(self, i, o, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(i, o, 3, stride, 1)
        self.register_buffer("w_scale", self.conv.weight.detach().abs().amax((1, 2, 3)) / 127)
        self.register_buffer("a_scale", torch.tensor([0.04]))
        self.register_buffer("zero", torch.zeros(1, dtype=torch.int32))
        self.register_buffer("w_zero", torch.zeros(o, dtype=torch.int32))

    def forward(self, x):
        w = torch.fake_quantize_per_channel_affine(self.conv.weight, self.w_scale, self.w_zero, 0, -128, 127)
        y = F.relu(F.conv2d(x, w, self.conv.bias, self.conv.stride, self.conv.padding))
        return torch.fake_quantize_per_tensor_affine(y, self.a_scale, self.zero, -128, 127)


class HzNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("in_scale", torch.tensor([1.0 / 64]))
        self.register_buffer("zero", torch.zeros(1, dtype=torch.int32))
        self.b1 = HzQuantConv(3, 8)
        self.b2 = HzQuantConv(8, 8, 2)

    def forward(self, x):
        x = torch.fake_quantize_per_tensor_affine(x, self.in_scale, self.zero, -128, 127)
        return self.b2(self.b1(x))


# ---------------------------------------------------------------- converted int8 models
def eager_converted(backend="qnnpack"):
    torch.backends.quantized.engine = backend
    m = eager_qat(backend)
    return tq.convert(copy.deepcopy(m).eval())


def fx_converted(model, shape, backend="qnnpack"):
    torch.backends.quantized.engine = backend
    gm = fx_qat(model, shape, backend)
    return quantize_fx.convert_fx(copy.deepcopy(gm))


class TConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 8, 3, 2, 1)
        self.up = nn.ConvTranspose2d(8, 4, 2, 2)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        return self.dequant(self.up(F.relu(self.conv(self.quant(x)))))


def tconv_converted():
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    m = TConvNet().eval()
    m.qconfig = tq.get_default_qconfig("qnnpack")
    tq.prepare(m, inplace=True)
    for _ in range(3):
        m(torch.randn(2, 3, 8, 8))
    return tq.convert(m)


class LstmTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, batch_first=True)
        self.fc = nn.Linear(12, 5)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y)


def dynamic_quantized():
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    return tq.quantize_dynamic(LstmTagger().eval(), {nn.Linear, nn.LSTM}, dtype=torch.qint8)


def dyn_linear():
    torch.backends.quantized.engine = "qnnpack"
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).eval()
    return tq.quantize_dynamic(m, {nn.Linear}, dtype=torch.qint8)


IMG = "2x3x16x16"
# _LearnableFakeQuantize modules neither trace nor script in torch 1.13 (their @torch.jit.export
# enable_observer(enabled=True) is compiled with `enabled` inferred as a Tensor): learnable_qat() stays
# for reference, the op itself is covered by tests/ops/cases_quant.py.
TR = ("trace",)  # eager/FX QAT modules with fused BN (ConvBn2d._forward) and the observer hooks do not script
QUANT5 = [
    ("qat_eager_fbgemm", lambda: Spec(eager_qat("fbgemm"), [IMG], ["x"], ["x:0=b"], TR)),
    ("qat_eager_fbgemm_observers_on", lambda: Spec(eager_qat("fbgemm", observers_off=False), [IMG], ["x"], ["x:0=b"], TR)),
    ("qat_eager_qnnpack", lambda: Spec(eager_qat("qnnpack"), [IMG], ["x"], ["x:0=b"], TR)),
    ("qat_eager_x86", lambda: Spec(eager_qat("x86"), [IMG], ["x"], ["x:0=b"], TR)),
    ("qat_eager_default_qconfig", lambda: Spec(eager_qat(qconfig=tq.default_qat_qconfig), [IMG], ["x"], ["x:0=b"], TR)),
    ("qat_eager_fixedqparams_ff", lambda: Spec(act_qat(), ["2x3x8x8"], ["x"], ["x:0=b"], TR)),
    ("qat_eager_4bit", lambda: Spec(fourbit_qat(), [IMG], ["x"], ["x:0=b"], TR)),
    ("qat_embedding_bag", lambda: Spec(emb_qat(), ["3x5:int64:arange", "3:int64:arange"], ["ids", "offsets"],
                                       modes=("trace",))),
    ("qat_fx_segnet_fbgemm", lambda: Spec(fx_qat(SegNet(), (2, 3, 16, 16)), [IMG], ["x"], ["x:0=b"], TR)),
    ("qat_fx_segnet_qnnpack_obs_on", lambda: Spec(fx_qat(SegNet(), (2, 3, 16, 16), "qnnpack", False), [IMG], ["x"],
                                                  ["x:0=b"], TR)),
    ("qat_fx_transformer_block", lambda: Spec(fx_qat(Block(), (2, 6, 16)), ["2x6x16"], ["x"], ["x:0=b,1=n"])),
    ("qat_hz_handwritten", lambda: Spec(HzNet(), [IMG], ["x"], ["x:0=b"])),
    ("int8_eager_convert_qnnpack", lambda: Spec(eager_converted(), [IMG], ["x"], ["x:0=b"])),
    ("int8_fx_convert_segnet_qnnpack", lambda: Spec(fx_converted(SegNet(), (2, 3, 16, 16)), [IMG], ["x"], ["x:0=b"])),
    ("int8_convtranspose_qnnpack", lambda: Spec(tconv_converted(), ["2x3x8x8"], ["x"], ["x:0=b"])),
    ("int8_dynamic_lstm", lambda: Spec(dynamic_quantized(), ["2x7x8"], ["x"], ["x:0=b,1=t"])),
    ("int8_dynamic_linear", lambda: Spec(dyn_linear(), ["3x8"], ["x"], ["x:0=b"])),
]
