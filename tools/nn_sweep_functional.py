"""The nn sweep's cases (tools/nn_sweep.py) for torch.nn.functional 1.13: the functions and the
argument variants that the module cases (nn_sweep_modules.py) do not reach, each in a tiny module.
"""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from nn_sweep_modules import D1, D2, D3, X1, X2, X3, Case, ints


# Scripting a lambda is impossible: each functional case is a small class with a real forward.
class Normalize(nn.Module):
    def __init__(self, p: float, dim: int):
        super().__init__()
        self.p = p
        self.dim = dim

    def forward(self, x):
        return F.normalize(x, p=self.p, dim=self.dim)


class OneHot(nn.Module):
    def forward(self, x):
        return F.one_hot(x, 7)


class OneHotInfer(nn.Module):
    def forward(self, x):
        return F.one_hot(x)


class Pad(nn.Module):
    def __init__(self, pad, mode: str, value: float = 0.0):
        super().__init__()
        self.pad = pad
        self.mode = mode
        self.value = value

    def forward(self, x):
        return F.pad(x, self.pad, mode=self.mode, value=self.value)


class PadNoValue(nn.Module):
    def __init__(self, pad, mode: str):
        super().__init__()
        self.pad = pad
        self.mode = mode

    def forward(self, x):
        return F.pad(x, self.pad, mode=self.mode)


class Interp(nn.Module):
    def __init__(self, mode: str, scale: float, align: bool = False, antialias: bool = False):
        super().__init__()
        self.mode = mode
        self.scale = scale
        self.align = align
        self.antialias = antialias

    def forward(self, x):
        if self.mode in ("nearest", "nearest-exact", "area"):
            return F.interpolate(x, scale_factor=self.scale, mode=self.mode)
        return F.interpolate(x, scale_factor=self.scale, mode=self.mode, align_corners=self.align,
                             antialias=self.antialias)


class InterpLike(nn.Module):
    def forward(self, x, y):
        return F.interpolate(x, size=y.shape[-2:], mode="bilinear", align_corners=False)


class GridSample(nn.Module):
    def __init__(self, mode: str, padding_mode: str, align: bool):
        super().__init__()
        self.mode = mode
        self.padding_mode = padding_mode
        self.align = align

    def forward(self, x, grid):
        return F.grid_sample(x, grid.tanh() * 1.1, mode=self.mode, padding_mode=self.padding_mode,
                             align_corners=self.align)


class AffineGrid(nn.Module):
    def __init__(self, align: bool):
        super().__init__()
        self.align = align

    def forward(self, theta, x):
        return F.affine_grid(theta, x.shape, align_corners=self.align)


class Gumbel(nn.Module):
    def forward(self, x):
        return F.gumbel_softmax(x, tau=0.5, hard=True)


class DropoutTrain(nn.Module):
    def forward(self, x):
        return F.dropout(x, 0.5, training=True)


class EmbFn(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(10, 6))

    def forward(self, idx):
        return F.embedding(idx, self.w, max_norm=1.5, norm_type=1.0)


class ConvTbc(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 4, 6))
        self.b = nn.Parameter(torch.randn(6))

    def forward(self, x):
        return torch.conv_tbc(x, self.w, self.b, 1)


class ConvFn(nn.Module):
    """conv2d with the weight as an input (dynamic filters: CondConv, dynamic heads)."""

    def forward(self, x, w):
        return F.conv2d(x, w, padding=1)


class LinearFn(nn.Module):
    def forward(self, x, w, b):
        return F.linear(x, w, b)


class LayerNormFn(nn.Module):
    def forward(self, x, w, b):
        return F.layer_norm(x, (8,), w, b, 1e-3)


class BatchNormTrainFn(nn.Module):
    def forward(self, x):
        return F.batch_norm(x, None, None, training=True)


class InstanceNormFn(nn.Module):
    def forward(self, x):
        return F.instance_norm(x, use_input_stats=True, eps=1e-3)


class SoftmaxDtype(nn.Module):
    def forward(self, x):
        return F.softmax(x, dim=1, dtype=torch.float64), F.log_softmax(x, -1, dtype=torch.float64)


class MaxPoolIdx(nn.Module):
    def forward(self, x):
        return F.max_pool2d_with_indices(x, 3, 2, 1, 1, True)


class Pdist(nn.Module):
    def forward(self, x):
        return F.pdist(x, 2.0)


class CosSimEps(nn.Module):
    def forward(self, x, y):
        return F.cosine_similarity(x, y.expand_as(x), dim=-1, eps=1e-6)


class Mhaf(nn.Module):
    """multi_head_attention_forward with a key padding mask and an attention mask, weights averaged."""

    def __init__(self):
        super().__init__()
        self.m = nn.MultiheadAttention(16, 4)

    def forward(self, q, mask):
        attn = torch.triu(torch.full((q.shape[0], q.shape[0]), float("-inf")), 1)
        out, w = self.m(q, q, q, key_padding_mask=mask, attn_mask=attn)
        return out, w


class SdpaLike(nn.Module):
    """The attention most models write by hand: softmax(q k^T / sqrt(d)) v with a boolean mask."""

    def forward(self, q, k):
        s = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)
        s = s.masked_fill(torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).triu(1), float("-inf"))
        return F.softmax(s, -1) @ k


class Threshold(nn.Module):
    def forward(self, x):
        return F.threshold(x, 0.2, -1.0)


class LeakyInplace(nn.Module):
    def forward(self, x):
        y = x * 2
        F.leaky_relu_(y, 0.1)
        F.hardtanh_(y, -0.5, 0.5)
        return F.elu_(y)


class RreluTrain(nn.Module):
    def forward(self, x):
        return F.rrelu(x, training=True)


class Unfold3(nn.Module):
    def forward(self, x):
        return F.unfold(x, (2, 2), stride=(2, 1))


class Glu(nn.Module):
    def forward(self, x):
        return F.glu(x, -1)


class FracMaxPool(nn.Module):
    def forward(self, x):
        return F.fractional_max_pool2d(x, 2, output_ratio=0.5, _random_samples=torch.full((x.shape[0], x.shape[1], 2), 0.3))


def cases():
    pos = "2x4x8x8:float32:rand"
    return [
        Case("F_normalize", lambda: Normalize(2.0, 1), [X2], dyn=D2),
        Case("F_normalize_p1_last", lambda: Normalize(1.0, -1), [X2], dyn=D2),
        Case("F_one_hot", OneHot, [ints((3, 4), 7)]),
        Case("F_one_hot_infer", OneHotInfer, [ints((3, 4), 7)]),
        Case("F_pad_constant", lambda: Pad((1, 2, 0, 1), "constant", 0.3), [X2], dyn=D2),
        Case("F_pad_constant_negative", lambda: Pad((-1, 2, 1, -2), "constant", 0.0), [X2], dyn=D2),
        Case("F_pad_reflect", lambda: PadNoValue((2, 1, 1, 2), "reflect"), [X2], dyn=D2),
        Case("F_pad_replicate", lambda: PadNoValue((2, 1, 1, 2), "replicate"), [X2], dyn=D2),
        Case("F_pad_circular", lambda: PadNoValue((2, 1, 1, 2), "circular"), [X2], dyn=D2),
        Case("F_pad_circular_3d", lambda: PadNoValue((1, 1, 2, 0, 1, 1), "circular"), [X3], dyn=D3),
        Case("F_pad_reflect_1d", lambda: PadNoValue((3, 1), "reflect"), [X1], dyn=D1),
        Case("F_pad_reflect_3d", lambda: PadNoValue((1, 1, 2, 0, 1, 1), "reflect"), [X3], dyn=D3),
        Case("F_pad_replicate_3d", lambda: PadNoValue((1, 1, 2, 0, 1, 1), "replicate"), [X3], dyn=D3),
        Case("F_interp_nearest_exact", lambda: Interp("nearest-exact", 1.7), [X2], dyn=D2),
        Case("F_interp_area", lambda: Interp("area", 0.5), [X2], dyn=D2),
        Case("F_interp_bilinear_down", lambda: Interp("bilinear", 0.6), [X2], dyn=D2),
        Case("F_interp_bilinear_aa", lambda: Interp("bilinear", 0.5, antialias=True), [X2], dyn=D2),
        Case("F_interp_bicubic_ac", lambda: Interp("bicubic", 1.5, align=True), [X2], dyn=D2),
        Case("F_interp_size_of_other", InterpLike, [X2, "2x1x11x13"], dyn=D2 + ("in1:0=batch", "in1:2=h2", "in1:3=w2")),
        Case("F_grid_sample_bilinear_zeros", lambda: GridSample("bilinear", "zeros", False), [X2, "2x5x7x2"],
             dyn=D2 + ("in1:0=batch", "in1:1=gh", "in1:2=gw")),
        Case("F_grid_sample_nearest_border_ac", lambda: GridSample("nearest", "border", True), [X2, "2x5x7x2"],
             dyn=D2 + ("in1:0=batch",)),
        Case("F_grid_sample_bicubic_reflection", lambda: GridSample("bicubic", "reflection", False), [X2, "2x5x7x2"],
             dyn=D2 + ("in1:0=batch",)),
        Case("F_grid_sample_3d", lambda: GridSample("bilinear", "zeros", False), [X3, "2x3x5x7x3"], dyn=("in0:0=batch", "in1:0=batch")),
        Case("F_affine_grid", lambda: AffineGrid(False), ["2x2x3", X2], dyn=("in0:0=batch", "in1:0=batch", "in1:2=h", "in1:3=w")),
        Case("F_affine_grid_ac_3d", lambda: AffineGrid(True), ["2x3x4", X3], dyn=("in0:0=batch", "in1:0=batch")),
        Case("F_gumbel_softmax", Gumbel, [X2], dyn=None),
        Case("F_dropout_training", DropoutTrain, [X2], dyn=None),
        Case("F_rrelu_training", RreluTrain, [X2], dyn=None),
        Case("F_embedding_max_norm_l1", EmbFn, [ints((3, 5), 10)]),
        Case("F_conv_tbc", ConvTbc, ["7x2x4"], dyn=("in0:0=len", "in0:1=batch")),
        Case("F_conv2d_weight_input", ConvFn, [X2, "6x4x3x3"], dyn=D2),
        Case("F_linear_weight_input", LinearFn, [X2, "5x8", "5:float32"], dyn=D2),
        Case("F_layer_norm_weight_input", LayerNormFn, [X2, "8:float32", "8:float32"], dyn=D2),
        Case("F_batch_norm_training_stats", BatchNormTrainFn, [X2], dyn=D2),
        Case("F_instance_norm_fn", InstanceNormFn, [X2], dyn=D2),
        Case("F_softmax_dtype", SoftmaxDtype, [X2], dyn=D2),
        Case("F_max_pool2d_with_indices_ceil", MaxPoolIdx, [X2], dyn=D2),
        Case("F_pdist", Pdist, ["6x5"], dyn=("in0:0=n",)),
        Case("F_cosine_similarity_broadcast", lambda: Fn2Cos(), [X2, "1x4x8x8"], dyn=("in0:0=batch",)),
        Case("F_multi_head_attention_masks", Mhaf, ["5x2x16", np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)],
             dyn=None),
        Case("F_attention_by_hand", SdpaLike, ["2x4x6x8", "2x4x6x8"], dyn=("in0:0=batch", "in0:2=seq", "in1:0=batch", "in1:2=seq")),
        Case("F_threshold", Threshold, [X2], dyn=D2),
        Case("F_inplace_activations", LeakyInplace, [X2], dyn=D2),
        Case("F_unfold_rect", Unfold3, [X2], dyn=D2),
        Case("F_glu_last", Glu, [X2], dyn=D2),
        Case("F_softplus_log_sigmoid_pos", lambda: Fn2Pos(), [pos, pos], dyn=None),
        Case("F_fractional_max_pool2d_samples", FracMaxPool, [X2], dyn=None),
    ]


class Fn2Cos(nn.Module):
    def forward(self, x, y):
        return F.cosine_similarity(x, y, dim=1, eps=1e-6)


class Fn2Pos(nn.Module):
    def forward(self, x, y):
        return F.softplus(x, beta=-1.0), F.logsigmoid(y), F.silu(x, inplace=False), F.mish(y), F.celu(x, 2.0)
