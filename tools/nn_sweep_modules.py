"""The nn sweep's cases (tools/nn_sweep.py) for the classes of torch.nn 1.13: every nn.Module
subclass that computes something, each in a tiny module with its common argument variants.

A case is Case(name, make, args, dyn=...): make() builds the module (called with the seed set),
args are CLI tensor specs ("2x3x8x8", "4:int64:arange") or numpy arrays (exact values: indices,
targets), dyn the --dynamic-axes values of the dynamic run (None: the op has no dynamic form worth
testing). Input names are in0, in1, ...
"""
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(20)


class Case:
    def __init__(self, name, make, args, dyn=("in0:0=batch",), modes=("trace", "script"), tol=None):
        self.name = name
        self.make = make
        self.args = list(args)
        self.dyn = list(dyn) if dyn else []
        self.modes = modes
        self.tol = tol


def nd(name, d):
    """The torch.nn class of dimension d: nd("Conv{}d", 2) is nn.Conv2d."""
    return getattr(nn, name.format(d))


def ints(shape, high, low=0):
    return rng.integers(low, high, shape).astype(np.int64)


class Lazy(nn.Module):
    """A Lazy module after one forward (its parameters are then materialized)."""

    def __init__(self, m, shape):
        super().__init__()
        self.m = m
        with torch.no_grad():
            m(torch.randn(shape))

    def forward(self, x):
        return self.m(x)


class Two(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, a, b):
        return self.m(a, b)


class Three(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, a, b, c):
        return self.m(a, b, c)


class Mha(nn.Module):
    def __init__(self, m, mask=False):
        super().__init__()
        self.m = m
        self.mask = mask

    def forward(self, q, k, v):
        out, w = self.m(q, k, v)
        return out, w


class Unpool(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.pool = nd("MaxPool{}d", d)(2, return_indices=True)
        self.unpool = nd("MaxUnpool{}d", d)(2)

    def forward(self, x):
        y, i = self.pool(x)
        return self.unpool(y, i)


class Rnn(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        out, h = self.m(x)
        return out, h


class Cell(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x, h):
        out = self.m(x, h)
        return out


class LstmCell(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x, h, c):
        h2, c2 = self.m(x, (h, c))
        return h2, c2


class Alswl(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs=[5, 10], div_value=2.0)

    def forward(self, x):
        return self.m.log_prob(x)


class Ctc(nn.Module):
    def __init__(self, reduction):
        super().__init__()
        self.m = nn.CTCLoss(reduction=reduction)

    def forward(self, logits, targets):
        lp = logits.log_softmax(2)
        return self.m(lp, targets, torch.full((lp.shape[1],), lp.shape[0], dtype=torch.long),
                      torch.full((targets.shape[0],), targets.shape[1], dtype=torch.long))


class Tmd(nn.Module):
    def __init__(self, reduction):
        super().__init__()
        self.m = nn.TripletMarginWithDistanceLoss(reduction=reduction)

    def forward(self, a, p, n):
        return self.m(a, p, n)


def eval_(m):
    return m.eval()


def bn_stats(m):
    with torch.no_grad():
        if getattr(m, "running_mean", None) is not None:
            m.running_mean.uniform_(-1, 1)
            m.running_var.uniform_(0.5, 2)
    return m


X1, X2, X3 = "2x4x16", "2x4x8x8", "2x4x4x6x6"
D1 = ("in0:0=batch", "in0:2=len")
D2 = ("in0:0=batch", "in0:2=h", "in0:3=w")
D3 = ("in0:0=batch", "in0:2=d", "in0:3=h", "in0:4=w")
SEQ = ("in0:0=batch", "in0:1=seq")


def _activations():
    acts = {
        "CELU": lambda: nn.CELU(0.7), "ELU": lambda: nn.ELU(0.5), "GELU": nn.GELU,
        "GELU_tanh": lambda: nn.GELU(approximate="tanh"), "GLU": lambda: nn.GLU(1),
        "Hardshrink": lambda: nn.Hardshrink(0.3), "Hardsigmoid": nn.Hardsigmoid, "Hardswish": nn.Hardswish,
        "Hardtanh": lambda: nn.Hardtanh(-0.5, 0.7), "LeakyReLU": lambda: nn.LeakyReLU(0.2),
        "LogSigmoid": nn.LogSigmoid, "LogSoftmax": lambda: nn.LogSoftmax(1), "Mish": nn.Mish,
        "PReLU": nn.PReLU, "PReLU_channels": lambda: nn.PReLU(4), "ReLU": nn.ReLU, "ReLU6": nn.ReLU6,
        "RReLU_eval": nn.RReLU, "SELU": nn.SELU, "SiLU": nn.SiLU, "Sigmoid": nn.Sigmoid,
        "Softmax": lambda: nn.Softmax(1), "Softmax_neg": lambda: nn.Softmax(-1), "Softmax2d": nn.Softmax2d,
        "Softmin": lambda: nn.Softmin(1), "Softplus": lambda: nn.Softplus(2.0, 5.0), "Softshrink": lambda: nn.Softshrink(0.3),
        "Softsign": nn.Softsign, "Tanh": nn.Tanh, "Tanhshrink": nn.Tanhshrink,
        "Threshold": lambda: nn.Threshold(0.1, 20.0),
        "Dropout_eval": nn.Dropout, "Dropout1d_eval": nn.Dropout1d, "Dropout2d_eval": nn.Dropout2d,
        "Dropout3d_eval": nn.Dropout3d, "AlphaDropout_eval": nn.AlphaDropout,
        "FeatureAlphaDropout_eval": nn.FeatureAlphaDropout, "Identity": nn.Identity,
    }
    return [Case(n, f, [X1], dyn=D1) if n.startswith("Dropout1d") else Case(n, f, [X2], dyn=D2)
            for n, f in acts.items()]


def _norms():
    return [
        Case("BatchNorm1d", lambda: bn_stats(nn.BatchNorm1d(4)), [X1], dyn=D1),
        Case("BatchNorm1d_2d_input", lambda: bn_stats(nn.BatchNorm1d(4)), ["3x4"]),
        Case("BatchNorm2d", lambda: bn_stats(nn.BatchNorm2d(4)), [X2], dyn=D2),
        Case("BatchNorm2d_noaffine", lambda: bn_stats(nn.BatchNorm2d(4, affine=False)), [X2], dyn=D2),
        Case("BatchNorm2d_no_stats", lambda: nn.BatchNorm2d(4, track_running_stats=False), [X2], dyn=D2),
        Case("BatchNorm3d", lambda: bn_stats(nn.BatchNorm3d(4)), [X3], dyn=D3),
        Case("SyncBatchNorm_eval", lambda: bn_stats(nn.SyncBatchNorm(4)), [X2], dyn=D2, modes=("trace",)),
        Case("LazyBatchNorm2d", lambda: bn_stats(Lazy(nn.LazyBatchNorm2d(), (2, 4, 8, 8)).m), [X2], dyn=D2),
        Case("InstanceNorm1d", lambda: nn.InstanceNorm1d(4), [X1], dyn=D1),
        Case("InstanceNorm2d_affine", lambda: nn.InstanceNorm2d(4, affine=True), [X2], dyn=D2),
        Case("InstanceNorm2d_running", lambda: bn_stats(nn.InstanceNorm2d(4, track_running_stats=True)), [X2], dyn=D2),
        Case("InstanceNorm3d", lambda: nn.InstanceNorm3d(4), [X3], dyn=D3),
        Case("LazyInstanceNorm2d", lambda: Lazy(nn.LazyInstanceNorm2d(affine=True), (2, 4, 8, 8)), [X2], dyn=D2),
        Case("GroupNorm", lambda: nn.GroupNorm(2, 4), [X2], dyn=D2),
        Case("GroupNorm_noaffine_3d", lambda: nn.GroupNorm(4, 4, affine=False), [X3], dyn=D3),
        Case("LayerNorm", lambda: nn.LayerNorm(8), [X2], dyn=("in0:0=batch", "in0:2=h")),
        Case("LayerNorm_2d_noaffine", lambda: nn.LayerNorm([8, 8], elementwise_affine=False), [X2], dyn=("in0:0=batch",)),
        Case("LocalResponseNorm", lambda: nn.LocalResponseNorm(3), [X2], dyn=D2),
        Case("LocalResponseNorm_3d", lambda: nn.LocalResponseNorm(2), [X3], dyn=D3),
        Case("CrossMapLRN2d", lambda: nn.CrossMapLRN2d(3), [X2], dyn=D2),
    ]


def _convs():
    c = []
    for d, (X, D) in enumerate([(X1, D1), (X2, D2), (X3, D3)], 1):
        conv = nd("Conv{}d", d)
        convt = nd("ConvTranspose{}d", d)
        lazy = nd("LazyConv{}d", d)
        lazyt = nd("LazyConvTranspose{}d", d)
        shape = [int(s) for s in X.split("x")]
        c += [
            Case(f"Conv{d}d", lambda conv=conv: conv(4, 6, 3), [X], dyn=D),
            Case(f"Conv{d}d_groups_dil", lambda conv=conv: conv(4, 8, 3, groups=2, dilation=2, padding=1, stride=2), [X], dyn=D),
            Case(f"Conv{d}d_same", lambda conv=conv: conv(4, 6, 3, padding="same", dilation=2), [X], dyn=D),
            Case(f"Conv{d}d_same_even", lambda conv=conv: conv(4, 6, 4, padding="same"), [X], dyn=D),
            Case(f"Conv{d}d_valid_nobias", lambda conv=conv: conv(4, 6, 2, padding="valid", bias=False), [X], dyn=D),
            Case(f"Conv{d}d_depthwise", lambda conv=conv: conv(4, 4, 3, groups=4, padding=1), [X], dyn=D),
            Case(f"ConvTranspose{d}d", lambda convt=convt: convt(4, 6, 3, stride=2), [X], dyn=D),
            Case(f"ConvTranspose{d}d_full", lambda convt=convt: convt(4, 6, 3, stride=2, padding=1, output_padding=1,
                                                                    groups=2, dilation=2), [X], dyn=D),
            Case(f"LazyConv{d}d", lambda lazy=lazy, shape=shape: Lazy(lazy(6, 3), shape), [X], dyn=D),
            Case(f"LazyConvTranspose{d}d", lambda lazyt=lazyt, shape=shape: Lazy(lazyt(6, 3), shape), [X], dyn=D),
        ]
        for mode in ("reflect", "replicate", "circular"):
            c.append(Case(f"Conv{d}d_pad_{mode}", lambda conv=conv, mode=mode: conv(4, 6, 3, padding=1, padding_mode=mode),
                          [X], dyn=D))
        c.append(Case(f"Conv{d}d_same_reflect", lambda conv=conv: conv(4, 6, 3, padding="same", padding_mode="reflect"),
                      [X], dyn=D))
    c.append(Case("ConvTranspose2d_output_size", lambda: _ConvTOut(), [X2], dyn=None))
    c.append(Case("LazyLinear", lambda: Lazy(nn.LazyLinear(5), (2, 4, 8, 8)), [X2], dyn=D2[:2]))
    c.append(Case("Linear", lambda: nn.Linear(8, 5), [X2], dyn=D2[:2]))
    c.append(Case("Linear_nobias_1d", lambda: nn.Linear(8, 5, bias=False), ["8:float32"], dyn=None))
    c.append(Case("Bilinear", lambda: Two(nn.Bilinear(6, 5, 3)), ["4x6", "4x5"], dyn=("in0:0=batch", "in1:0=batch")))
    return c


class _ConvTOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.ConvTranspose2d(4, 3, 3, stride=2)

    def forward(self, x):
        return self.m(x, output_size=[x.shape[2] * 2 + 2, x.shape[3] * 2 + 2])


def _pools():
    c = []
    for d, (X, D) in enumerate([(X1, D1), (X2, D2), (X3, D3)], 1):
        def mk(name, *a, d=d, **kw):
            return lambda: nd(name, d)(*a, **kw)

        c += [
            Case(f"MaxPool{d}d", mk("MaxPool{}d", 2), [X], dyn=D),
            Case(f"MaxPool{d}d_ceil_dil_pad", mk("MaxPool{}d", 3, stride=2, padding=1, dilation=2, ceil_mode=True), [X], dyn=D),
            Case(f"MaxPool{d}d_indices", lambda d=d: Rnn(nd("MaxPool{}d", d)(2, return_indices=True)), [X], dyn=D),
            Case(f"MaxUnpool{d}d", lambda d=d: Unpool(d), [X], dyn=D),
            Case(f"AvgPool{d}d", mk("AvgPool{}d", 2), [X], dyn=D),
            Case(f"AvgPool{d}d_ceil_pad_nocount", mk("AvgPool{}d", 3, stride=2, padding=1, ceil_mode=True,
                                                                   count_include_pad=False), [X], dyn=D),
            Case(f"AdaptiveAvgPool{d}d", mk("AdaptiveAvgPool{}d", 2), [X], dyn=("in0:0=batch",)),
            Case(f"AdaptiveAvgPool{d}d_1", mk("AdaptiveAvgPool{}d", 1), [X], dyn=D),
            Case(f"AdaptiveAvgPool{d}d_uneven", mk("AdaptiveAvgPool{}d", 3), [X], dyn=("in0:0=batch",)),
            Case(f"AdaptiveMaxPool{d}d", mk("AdaptiveMaxPool{}d", 2), [X], dyn=("in0:0=batch",)),
            Case(f"AdaptiveMaxPool{d}d_uneven", mk("AdaptiveMaxPool{}d", 3), [X], dyn=("in0:0=batch",)),
        ]
    c += [
        Case("AvgPool2d_divisor", lambda: nn.AvgPool2d(2, divisor_override=3), [X2], dyn=D2),
        Case("LPPool1d", lambda: nn.LPPool1d(2, 3, stride=2), [X1], dyn=D1),
        Case("LPPool2d", lambda: nn.LPPool2d(3, 2), [X2], dyn=D2),
        Case("FractionalMaxPool2d", lambda: nn.FractionalMaxPool2d(2, output_size=4), [X2], dyn=None),
        Case("FractionalMaxPool3d", lambda: nn.FractionalMaxPool3d(2, output_ratio=0.5), [X3], dyn=None),
    ]
    return c


def _padding():
    c = []
    for d, (X, D) in enumerate([(X1, D1), (X2, D2), (X3, D3)], 1):
        for kind in ("Constant", "Reflection", "Replication"):
            cls = getattr(nn, f"{kind}Pad{d}d")
            pad = (1, 2) * d
            if kind == "Constant":
                c.append(Case(f"{kind}Pad{d}d", lambda cls=cls, pad=pad: cls(pad, 0.5), [X], dyn=D))
            else:
                c.append(Case(f"{kind}Pad{d}d", lambda cls=cls, pad=pad: cls(pad), [X], dyn=D))
    c.append(Case("ZeroPad2d", lambda: nn.ZeroPad2d((1, 0, 2, 3)), [X2], dyn=D2))
    c.append(Case("ZeroPad2d_negative", lambda: nn.ZeroPad2d((-1, 1, 0, -2)), [X2], dyn=D2))
    return c


def _shape():
    return [
        Case("PixelShuffle", lambda: nn.PixelShuffle(2), [X2], dyn=D2),
        Case("PixelUnshuffle", lambda: nn.PixelUnshuffle(2), [X2], dyn=D2),
        Case("ChannelShuffle", lambda: nn.ChannelShuffle(2), [X2], dyn=D2),
        Case("Flatten", nn.Flatten, [X2], dyn=D2),
        Case("Flatten_0_2", lambda: nn.Flatten(0, 2), [X2], dyn=D2),
        Case("Unflatten", lambda: nn.Unflatten(1, (2, 2)), [X2], dyn=D2),
        Case("Unfold", lambda: nn.Unfold(3, dilation=1, padding=1, stride=2), [X2], dyn=D2),
        Case("Unfold_dil", lambda: nn.Unfold((2, 3), dilation=2), [X2], dyn=D2),
        Case("Fold", lambda: nn.Fold((6, 6), 3, padding=1, stride=1), ["2x36x36"], dyn=("in0:0=batch",)),
        Case("Upsample_nearest", lambda: nn.Upsample(scale_factor=2), [X2], dyn=D2),
        Case("Upsample_nearest_size", lambda: nn.Upsample(size=(5, 11)), [X2], dyn=D2),
        Case("Upsample_bilinear", lambda: nn.Upsample(scale_factor=2, mode="bilinear"), [X2], dyn=D2),
        Case("Upsample_bilinear_ac", lambda: nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=True), [X2], dyn=D2),
        Case("Upsample_bicubic", lambda: nn.Upsample(scale_factor=2, mode="bicubic"), [X2], dyn=D2),
        Case("Upsample_linear", lambda: nn.Upsample(scale_factor=2, mode="linear"), [X1], dyn=D1),
        Case("Upsample_trilinear", lambda: nn.Upsample(scale_factor=2, mode="trilinear"), [X3], dyn=D3),
        Case("Upsample_nearest3d", lambda: nn.Upsample(size=(5, 7, 9)), [X3], dyn=D3),
        Case("UpsamplingNearest2d", lambda: nn.UpsamplingNearest2d(scale_factor=3), [X2], dyn=D2),
        Case("UpsamplingBilinear2d", lambda: nn.UpsamplingBilinear2d(size=(11, 13)), [X2], dyn=D2),
        Case("CosineSimilarity", lambda: Two(nn.CosineSimilarity(1)), [X2, X2], dyn=("in0:0=batch", "in1:0=batch")),
        Case("PairwiseDistance", lambda: Two(nn.PairwiseDistance()), ["5x8", "5x8"], dyn=("in0:0=batch", "in1:0=batch")),
        Case("PairwiseDistance_p1_keep", lambda: Two(nn.PairwiseDistance(1.0, keepdim=True)), ["5x8", "5x8"],
             dyn=("in0:0=batch", "in1:0=batch")),
    ]


def _embeddings():
    idx = ints((3, 5), 10)
    return [
        Case("Embedding", lambda: nn.Embedding(10, 6), [idx]),
        Case("Embedding_padding_idx", lambda: nn.Embedding(10, 6, padding_idx=0), [idx]),
        Case("Embedding_max_norm", lambda: nn.Embedding(10, 6, max_norm=1.0), [idx]),
        Case("EmbeddingBag_mean_2d", lambda: nn.EmbeddingBag(10, 6), [idx]),
        Case("EmbeddingBag_sum_2d", lambda: nn.EmbeddingBag(10, 6, mode="sum"), [idx]),
        Case("EmbeddingBag_max_2d", lambda: nn.EmbeddingBag(10, 6, mode="max"), [idx]),
        Case("EmbeddingBag_offsets", lambda: Two(nn.EmbeddingBag(10, 6, mode="sum")),
             [ints((8,), 10), np.array([0, 3, 3, 5], dtype=np.int64)]),
        Case("EmbeddingBag_psw", lambda: Three(nn.EmbeddingBag(10, 6, mode="sum")),
             [ints((8,), 10), np.array([0, 2, 5], dtype=np.int64), "8:float32"]),
    ]


def _rnns():
    c = []
    for kind in ("RNN", "LSTM", "GRU"):
        cls = getattr(nn, kind)
        c += [
            Case(kind, lambda cls=cls: Rnn(cls(8, 6)), ["5x2x8"], dyn=("in0:0=seq", "in0:1=batch")),
            Case(f"{kind}_bi_2layer_bf", lambda cls=cls: Rnn(cls(8, 6, num_layers=2, bidirectional=True, batch_first=True,
                                                                  dropout=0.3)), ["2x5x8"], dyn=SEQ),
        ]
    c += [
        Case("RNN_relu_nobias", lambda: Rnn(nn.RNN(8, 6, nonlinearity="relu", bias=False)), ["5x2x8"], dyn=("in0:1=batch",)),
        Case("LSTM_proj", lambda: Rnn(nn.LSTM(8, 6, proj_size=3, num_layers=2)), ["5x2x8"], dyn=("in0:0=seq", "in0:1=batch")),
        Case("LSTM_proj_bi", lambda: Rnn(nn.LSTM(8, 6, proj_size=3, bidirectional=True, batch_first=True)), ["2x5x8"], dyn=SEQ),
        Case("LSTM_unbatched", lambda: Rnn(nn.LSTM(8, 6)), ["5x8"], dyn=("in0:0=seq",)),
        Case("RNNCell", lambda: Cell(nn.RNNCell(8, 6)), ["3x8", "3x6"], dyn=("in0:0=batch", "in1:0=batch")),
        Case("GRUCell", lambda: Cell(nn.GRUCell(8, 6)), ["3x8", "3x6"], dyn=("in0:0=batch", "in1:0=batch")),
        Case("LSTMCell", lambda: LstmCell(nn.LSTMCell(8, 6)), ["3x8", "3x6", "3x6"],
             dyn=("in0:0=batch", "in1:0=batch", "in2:0=batch")),
    ]
    return c


def _attention():
    def enc(**kw):
        return nn.TransformerEncoderLayer(16, 4, 32, **kw)

    def dec(**kw):
        return nn.TransformerDecoderLayer(16, 4, 32, **kw)

    return [
        Case("MultiheadAttention", lambda: Mha(nn.MultiheadAttention(16, 4)), ["5x2x16"] * 3,
             dyn=("in0:0=seq", "in0:1=batch", "in1:0=kv", "in1:1=batch", "in2:0=kv", "in2:1=batch")),
        Case("MultiheadAttention_kdim_vdim", lambda: Mha(nn.MultiheadAttention(16, 4, kdim=8, vdim=12, batch_first=True)),
             ["2x5x16", "2x7x8", "2x7x12"], dyn=("in0:0=batch", "in0:1=seq", "in1:0=batch", "in1:1=kv", "in2:0=batch", "in2:1=kv")),
        Case("MultiheadAttention_bias_kv_zero_attn", lambda: Mha(nn.MultiheadAttention(16, 4, add_bias_kv=True,
                                                                                        add_zero_attn=True)),
             ["5x2x16"] * 3, dyn=("in0:0=seq", "in0:1=batch", "in1:0=kv", "in1:1=batch", "in2:0=kv", "in2:1=batch")),
        Case("TransformerEncoderLayer", lambda: enc(), ["5x2x16"], dyn=("in0:0=seq", "in0:1=batch")),
        Case("TransformerEncoderLayer_bf_gelu_normfirst", lambda: enc(batch_first=True, activation="gelu", norm_first=True),
             ["2x5x16"], dyn=SEQ),
        Case("TransformerEncoder", lambda: nn.TransformerEncoder(enc(batch_first=True), 2), ["2x5x16"], dyn=SEQ),
        Case("TransformerDecoderLayer", lambda: Two(dec()), ["5x2x16", "7x2x16"],
             dyn=("in0:0=seq", "in0:1=batch", "in1:0=mem", "in1:1=batch")),
        Case("TransformerDecoder", lambda: Two(nn.TransformerDecoder(dec(batch_first=True), 2)), ["2x5x16", "2x7x16"],
             dyn=("in0:0=batch", "in0:1=seq", "in1:0=batch", "in1:1=mem")),
        Case("Transformer", lambda: Two(nn.Transformer(16, 4, 1, 1, 32, batch_first=True)), ["2x5x16", "2x7x16"],
             dyn=("in0:0=batch", "in0:1=seq", "in1:0=batch", "in1:1=tgt")),
        Case("AdaptiveLogSoftmaxWithLoss_log_prob", Alswl, ["3x16"]),
    ]


def _losses():
    c = []
    P = ("in0:0=batch", "in1:0=batch")
    pos = "4x5:float32:rand"
    for red in ("none", "mean", "sum"):
        c += [
            Case(f"L1Loss_{red}", lambda red=red: Two(nn.L1Loss(reduction=red)), ["4x5", "4x5"], dyn=P),
            Case(f"MSELoss_{red}", lambda red=red: Two(nn.MSELoss(reduction=red)), ["4x5", "4x5"], dyn=P),
            Case(f"HuberLoss_{red}", lambda red=red: Two(nn.HuberLoss(reduction=red, delta=0.5)), ["4x5", "4x5"], dyn=P),
            Case(f"SmoothL1Loss_{red}", lambda red=red: Two(nn.SmoothL1Loss(reduction=red, beta=0.5)), ["4x5", "4x5"], dyn=P),
            Case(f"BCELoss_{red}", lambda red=red: Two(nn.BCELoss(reduction=red)), [pos, pos], dyn=P),
            Case(f"BCEWithLogitsLoss_{red}", lambda red=red: Two(nn.BCEWithLogitsLoss(reduction=red, pos_weight=torch.rand(5))),
                 ["4x5", pos], dyn=P),
            Case(f"KLDivLoss_{red}", lambda red=red: Two(nn.KLDivLoss(reduction=red)), ["4x5", pos], dyn=P),
            Case(f"KLDivLoss_logtarget_{red}", lambda red=red: Two(nn.KLDivLoss(reduction=red, log_target=True)),
                 ["4x5", "4x5"], dyn=P),
            Case(f"PoissonNLLLoss_{red}", lambda red=red: Two(nn.PoissonNLLLoss(reduction=red)), ["4x5", pos], dyn=P),
            Case(f"PoissonNLLLoss_full_nolog_{red}", lambda red=red: Two(nn.PoissonNLLLoss(log_input=False, full=True,
                                                                                           reduction=red)),
                 [pos, "4x5:float32:arange"], dyn=None),
            Case(f"GaussianNLLLoss_{red}", lambda red=red: Three(nn.GaussianNLLLoss(reduction=red)), ["4x5", "4x5", pos],
                 dyn=P + ("in2:0=batch",)),
            Case(f"CrossEntropyLoss_{red}", lambda red=red: Two(nn.CrossEntropyLoss(reduction=red)), ["4x5", ints((4,), 5)]),
            Case(f"CrossEntropyLoss_w_ls_ii_{red}", lambda red=red: Two(nn.CrossEntropyLoss(
                weight=torch.rand(5), ignore_index=1, label_smoothing=0.1, reduction=red)), ["4x5x3", ints((4, 3), 5)]),
            Case(f"CrossEntropyLoss_probs_{red}", lambda red=red: Two(nn.CrossEntropyLoss(reduction=red, label_smoothing=0.2)),
                 ["4x5", pos], dyn=P),
            Case(f"NLLLoss_{red}", lambda red=red: Two(nn.NLLLoss(reduction=red, weight=torch.rand(5))), ["4x5", ints((4,), 5)]),
            Case(f"NLLLoss2d_{red}", lambda red=red: Two(nn.NLLLoss(reduction=red, ignore_index=2)),
                 ["2x5x3x3", ints((2, 3, 3), 5)]),
            Case(f"MarginRankingLoss_{red}", lambda red=red: Three(nn.MarginRankingLoss(0.3, reduction=red)),
                 ["6:float32", "6:float32", np.sign(rng.standard_normal(6)).astype(np.float32)]),
            Case(f"HingeEmbeddingLoss_{red}", lambda red=red: Two(nn.HingeEmbeddingLoss(0.7, reduction=red)),
                 ["4x5", np.sign(rng.standard_normal((4, 5))).astype(np.float32)]),
            Case(f"SoftMarginLoss_{red}", lambda red=red: Two(nn.SoftMarginLoss(reduction=red)),
                 ["4x5", np.sign(rng.standard_normal((4, 5))).astype(np.float32)]),
            Case(f"CosineEmbeddingLoss_{red}", lambda red=red: Three(nn.CosineEmbeddingLoss(0.1, reduction=red)),
                 ["4x5", "4x5", np.array([1, -1, 1, -1], dtype=np.float32)]),
            Case(f"MultiLabelSoftMarginLoss_{red}", lambda red=red: Two(nn.MultiLabelSoftMarginLoss(reduction=red)),
                 ["4x5", (rng.random((4, 5)) > 0.5).astype(np.float32)]),
            Case(f"MultiLabelMarginLoss_{red}", lambda red=red: Two(nn.MultiLabelMarginLoss(reduction=red)),
                 ["4x5", np.array([[3, 0, -1, 1, 0]] * 4, dtype=np.int64)], dyn=P),
            Case(f"MultiMarginLoss_{red}", lambda red=red: Two(nn.MultiMarginLoss(p=1, margin=0.5, reduction=red)),
                 ["4x5", ints((4,), 5)]),
            Case(f"TripletMarginLoss_{red}", lambda red=red: Three(nn.TripletMarginLoss(reduction=red)), ["4x5"] * 3,
                 dyn=P + ("in2:0=batch",)),
            Case(f"TripletMarginWithDistanceLoss_{red}", lambda red=red: Tmd(red), ["4x5"] * 3, dyn=P + ("in2:0=batch",)),
            Case(f"CTCLoss_{red}", lambda red=red: Ctc(red), ["12x2x6", ints((2, 4), 6, 1)],
                 dyn=("in0:0=seq", "in0:1=batch", "in1:0=batch")),
        ]
    return c


def cases():
    return (_activations() + _norms() + _convs() + _pools() + _padding() + _shape() + _embeddings() + _rnns()
            + _attention() + _losses())
