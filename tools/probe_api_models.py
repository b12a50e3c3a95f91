"""The live models of tools/probe_api.py: vision, NLP, QAT, scripted decoders with loops, a
ScriptFunction, keyword/None/Optional arguments, dict/list/namedtuple outputs, nested tuple and dict
inputs, buffers updated in forward, shared weights, half precision. Random weights, fixed seed
(make(name) seeds before building)."""
import collections
from typing import Dict, List, NamedTuple, Optional, Tuple

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from test_errors import qat_model  # noqa: E402  (the QAT model of the Python tests: fused, calibrated, frozen)


# ---- models ---------------------------------------------------------------------------------------

class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = self.drop(F.relu(self.bn(self.conv(x))))
        return self.fc(y.mean((2, 3)))


class TinyBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 32)
        self.pos = nn.Parameter(torch.randn(1, 64, 32) * 0.02)
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.cls = nn.Linear(32, 3)

    def forward(self, input_ids, attention_mask: Optional[torch.Tensor] = None):
        h = self.emb(input_ids) + self.pos[:, : input_ids.shape[1]]
        pad = None if attention_mask is None else attention_mask == 0
        h = self.enc(h, src_key_padding_mask=pad)
        return self.cls(h[:, 0])


class LstmTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 24, batch_first=True)
        self.out = nn.Linear(24, 7)

    def forward(self, tokens, state: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        y, (h, c) = self.lstm(self.emb(tokens), state)
        return self.out(y), (h, c)


class GreedyDecoder(nn.Module):
    """A scripted decoder: a loop whose count is an argument, an early stop on data."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 16)
        self.cell = nn.GRUCell(16, 16)
        self.proj = nn.Linear(16, 20)

    def forward(self, h, max_len: int = 5):
        tok = torch.zeros(h.shape[0], dtype=torch.long)
        outs = []
        for _ in range(max_len):
            h = self.cell(self.emb(tok), h)
            logits = self.proj(h)
            tok = logits.argmax(-1)
            outs.append(logits)
        return torch.stack(outs, 1)


class Keywords(nn.Module):
    """Positional, defaulted, Optional and keyword-only parameters, tensors and values of each kind."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x, scale: float = 2.0, mask: Optional[torch.Tensor] = None, repeat: int = 1,
                mode: str = "sum", flip: bool = False, dims: Optional[List[int]] = None, *, bias=None):
        y = self.fc(x) * scale
        for _ in range(repeat):
            y = torch.tanh(y)
        if mask is not None:
            y = y * mask
        if flip:
            y = y.flip(-1)
        if bias is not None:
            y = y + bias
        d = dims if dims is not None else [-1]
        return y.sum(d) if mode == "sum" else y.amax(d)


class Det(nn.Module):
    """Dict output, as torchvision-style heads return them."""

    def __init__(self):
        super().__init__()
        self.body = nn.Conv2d(3, 8, 3, padding=1)
        self.cls = nn.Conv2d(8, 4, 1)
        self.box = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        f = F.relu(self.body(x))
        return {"scores": self.cls(f).sigmoid(), "boxes": self.box(f)}


class Pyramid(nn.Module):
    """List output (an FPN's levels)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, 2, 1)
        self.c2 = nn.Conv2d(4, 4, 3, 2, 1)

    def forward(self, x):
        a = self.c1(x)
        return [a, self.c2(a), F.max_pool2d(a, 2)]


class Pred(NamedTuple):
    logits: torch.Tensor
    probs: torch.Tensor


class NamedOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        z = self.fc(x)
        return Pred(z, z.softmax(-1))


class NestedIn(nn.Module):
    """A nested tuple input: ((a, b), c)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, pair: Tuple[torch.Tensor, torch.Tensor], c):
        a, b = pair
        return self.fc(a) + b * c


class DictArg(nn.Module):
    """forward(x, **kwargs): named extras passed as a dict."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, **kwargs):
        y = self.fc(x)
        if "mask" in kwargs:
            y = y * kwargs["mask"]
        return y * kwargs.get("temperature", 1.0)


class FeatureDict(nn.Module):
    """A scripted model taking a Dict[str, Tensor] (multi-modal features)."""

    def __init__(self):
        super().__init__()
        self.img = nn.Linear(8, 4)
        self.txt = nn.Linear(6, 4)

    def forward(self, feats: Dict[str, torch.Tensor]):
        return self.img(feats["image"]) + self.txt(feats["text"])


class RunningPeak(nn.Module):
    """Buffers updated in forward: a call count and the running peak of |x| it normalises by."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.register_buffer("peak", torch.ones(4))
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.calls.add_(1)
        self.peak.copy_(torch.maximum(self.peak, x.abs().amax(0)))
        return self.proj(x / self.peak)


class Tied(nn.Module):
    """Shared weights: the LM head is the embedding."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(40, 16)
        self.mix = nn.Linear(16, 16)
        self.head = nn.Linear(16, 40, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.mix(self.emb(ids))))


class Zeta(nn.Module):
    """An op with no ONNX form (torch.special.zeta) between ordinary ones."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)

    def forward(self, x):
        return torch.special.zeta(torch.relu(self.fc(x)) + 2.0, 2.0) * 2


class CausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("tril", torch.tril(torch.ones(32, 32)).bool())
        self.emb = nn.Embedding(64, 32)
        self.qkv = nn.Linear(32, 96)
        self.o = nn.Linear(32, 32)

    def forward(self, ids):
        x = self.emb(ids)
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(32, -1)
        att = (q @ k.transpose(1, 2)) / (c ** 0.5)
        att = att.masked_fill(~self.tril[:t, :t], float("-inf")).softmax(-1)
        return self.o(att @ v)


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.d1 = nn.Conv2d(3, 8, 3, padding=1)
        self.d2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.u = nn.Conv2d(24, 2, 3, padding=1)

    def forward(self, x):
        a = F.relu(self.d1(x))
        b = F.relu(self.d2(a))
        up = F.interpolate(b, size=a.shape[-2:], mode="bilinear", align_corners=False)
        return self.u(torch.cat([a, up], 1))


class Gate(nn.Module):
    """Scripted: an if on the data, an Optional tensor argument."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, skip: Optional[torch.Tensor] = None):
        y = self.fc(x)
        if bool(y.sum() > 0):
            y = y * 2
        else:
            y = y - 1
        if skip is not None:
            y = y + skip
        return y


class Resizer(nn.Module):
    """Baked non-tensor arguments of every kind: a list of ints, a str, a bool, None."""

    def forward(self, x, size: List[int], mode: str = "nearest", antialias: bool = False, scale: Optional[float] = None):
        y = F.interpolate(x, size=size, mode=mode)
        return y if scale is None else y * scale


class GruEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(10, 12, num_layers=2, bidirectional=True)

    def forward(self, x):
        y, h = self.gru(x)
        return y, h


class HalfMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(8))
        self.shift = nn.Parameter(torch.randn(8))

    def forward(self, x):
        return torch.sigmoid(x * self.scale + self.shift) * x


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 2)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


@torch.jit.script
def mish_fn(x, beta: float):
    return x * torch.tanh(F.softplus(x * beta))


def tv(name, **kw):
    import torchvision
    return getattr(torchvision.models, name)(weights=None, **kw)


# name -> (factory, args); factory() gives the live model (seeded), args the export_to_onnx args.
def R(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


def I(hi, *shape):
    return torch.randint(0, hi, shape)


MODELS = collections.OrderedDict([
    ("cnn", (lambda: Cnn().eval(), lambda: R(2, 3, 16, 16))),
    ("resnet18", (lambda: tv("resnet18").eval(), lambda: (R(1, 3, 64, 64),))),
    ("mobilenet_v3", (lambda: tv("mobilenet_v3_small").eval(), lambda: (R(1, 3, 64, 64),))),
    ("tiny_bert", (lambda: TinyBert().eval(), lambda: (I(100, 2, 12), {"attention_mask": torch.ones(2, 12, dtype=torch.long)}))),
    ("tiny_bert_nomask", (lambda: TinyBert().eval(), lambda: (I(100, 2, 12), {}))),
    ("lstm_tagger", (lambda: LstmTagger().eval(), lambda: (I(50, 2, 9),))),
    ("lstm_state", (lambda: LstmTagger().eval(), lambda: (I(50, 2, 9), (R(1, 2, 24), R(1, 2, 24))))),
    ("qat", (qat_model, lambda: (R(1, 3, 16, 16),))),
    ("greedy_decoder_script", (lambda: torch.jit.script(GreedyDecoder().eval()), lambda: (R(2, 16), 4))),
    ("script_fn", (lambda: mish_fn, lambda: (R(3, 5), 1.5))),
    ("keywords", (lambda: Keywords().eval(), lambda: (R(2, 6), {"mask": R(2, 6), "repeat": 2, "mode": "max",
                                                                "flip": True, "dims": [1], "bias": R(2, 6)}))),
    ("keywords_defaults", (lambda: Keywords().eval(), lambda: (R(2, 6), 0.5))),
    ("det_dict_out", (lambda: Det().eval(), lambda: (R(1, 3, 16, 16),))),
    ("pyramid_list_out", (lambda: Pyramid().eval(), lambda: (R(1, 3, 16, 16),))),
    ("namedtuple_out", (lambda: NamedOut().eval(), lambda: (R(3, 8),))),
    ("nested_tuple_in", (lambda: NestedIn().eval(), lambda: ((R(2, 4), R(2, 4)), R(2, 4)))),
    ("kwargs_dict", (lambda: DictArg().eval(), lambda: (R(2, 4), {"mask": R(2, 4), "temperature": 0.5}))),
    ("feature_dict_script", (lambda: torch.jit.script(FeatureDict().eval()),
                             lambda: ({"image": R(2, 8), "text": R(2, 6)}, {}))),
    ("buffer_update", (lambda: RunningPeak().eval(), lambda: (R(3, 4),))),
    ("tied_weights", (lambda: Tied().eval(), lambda: (I(40, 2, 5),))),
    ("causal_lm", (lambda: CausalLM().eval(), lambda: (I(64, 2, 10),))),
    ("unet", (lambda: TinyUNet().eval(), lambda: (R(1, 3, 16, 16),))),
    ("gate_script", (lambda: torch.jit.script(Gate().eval()), lambda: (R(2, 4), {"skip": R(2, 4)}))),
    ("resizer_baked", (lambda: Resizer().eval(), lambda: (R(1, 2, 5, 5), [7, 9], "bilinear", False, None))),
    ("gru_encoder", (lambda: GruEncoder().eval(), lambda: (R(6, 2, 10),))),
    ("half", (lambda: HalfMlp().half().eval(), lambda: (R(2, 8, dtype=torch.float16),))),
    ("hooked", (lambda: Hooked().eval(), lambda: (R(2, 4),))),
])


def make(name):
    torch.manual_seed(0)
    factory, args = MODELS[name]
    m = factory()
    return m, args()
