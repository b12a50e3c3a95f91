#!/usr/bin/python3
"""Models with the classic tracing traps for dynamic axes, and clean counterparts.

usage: make_traps.py OUT_DIR   (writes OUT/<name>.pt and OUT/manifest.json)
Each trap bakes the example size of a dynamic axis into the trace; oxport must warn before
writing and verification at other sizes must fail. Clean models must give no warning and pass.
"""
import json
import os
import sys
import warnings

import torch


class BakedView(torch.nn.Module):
    def forward(self, x):
        return x.view(int(x.shape[0]), -1)


class BakedZeros(torch.nn.Module):
    def forward(self, x):
        return x + torch.zeros(int(x.shape[0]), 1)


class BakedArange(torch.nn.Module):
    def forward(self, x):
        return x * torch.arange(int(x.shape[1])).float()


class BakedExpand(torch.nn.Module):
    def forward(self, x):
        return x.mean(dim=1, keepdim=True).expand(int(x.shape[0]), 3) + x


class SizeOneExpand(torch.nn.Module):
    """Traced at batch 1: expand(1, 3) broadcasts only while the batch is 1."""
    def forward(self, x):
        y = x.flip(0)
        return x + y.expand(int(x.shape[0]), 3)


class PythonBranch(torch.nn.Module):
    """A size read in a Python branch: tracing keeps only the branch taken (see ROBUSTNESS.md)."""
    def forward(self, x):
        if x.shape[0] > 1:
            return x * 2
        return x + 1


class PythonBranchStaticAxis(torch.nn.Module):
    """A branch on axis 1, which stays fixed: nothing to warn about when only axis 0 is dynamic."""
    def forward(self, x):
        if x.shape[1] > 2:
            return x * 2
        return x + 1


class CleanView(torch.nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


class CleanZeros(torch.nn.Module):
    def forward(self, x):
        return x + x.new_zeros(x.shape[0], 1)


class CleanConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.flatten(torch.nn.functional.adaptive_avg_pool2d(self.conv(x), 1), 1)


def qat_conv_bn(channels=8):
    """A QAT ConvBnReLU2d without conv bias: its forward makes torch.zeros(out_channels) for the bias,
    which tracing keeps as a constant of shape [8]; 8 is also the example height and width. A
    channel count, not a size: no warning."""
    import torch.ao.quantization as tq
    m = torch.nn.intrinsic.qat.ConvBnReLU2d(3, channels, 3, padding=1, bias=False,
                                             qconfig=tq.get_default_qat_qconfig("fbgemm"))
    m.train()
    m(torch.randn(2, 3, 8, 8))  # calibrate the observers
    m.apply(tq.disable_observer)
    m.apply(torch.nn.intrinsic.qat.freeze_bn_stats)
    return m


class HeadSizeEqualsSequence(torch.nn.Module):
    """BERT-style attention with head size 8, traced at sequence length 8: the constant 8 in
    view(b, n, heads, 8) is the head size (n already follows the sequence axis), and the head
    count read from the weight's shape is folded from the model, not from the input."""

    def __init__(self):
        super().__init__()
        self.heads, self.head_size = 4, 8
        self.qkv = torch.nn.Linear(32, 96)
        self.out = torch.nn.Linear(32, 32)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, self.head_size).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2) / self.head_size ** 0.5).softmax(-1)
        heads = self.qkv.weight.shape[0] // (3 * self.head_size)
        y = (att @ v).transpose(1, 2).reshape(b, -1, heads * self.head_size)
        z = y.reshape(b, -1, self.qkv.weight.shape[1] // heads)  # [b, n * heads, 8]: 8 from the weight
        return self.out(y) + z.softmax(-1).reshape(y.shape)


class BakedSequence(torch.nn.Module):
    """The same attention input with the sequence length read as a Python int: baked."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(32, 32)

    def forward(self, x):
        return self.qkv(x).view(x.size(0), int(x.shape[1]), 4, 8).sum(-1)


class ModulatedConv(torch.nn.Module):
    """StyleGAN's modulated convolution: one group per sample, groups=b (traced: a constant, and ONNX
    Conv's group is an attribute), over weights computed from the input."""

    def __init__(self):
        super().__init__()
        self.affine = torch.nn.Linear(4, 4)
        self.weight = torch.nn.Parameter(torch.randn(5, 4, 3, 3))

    def forward(self, x):
        b, c, h, w = x.shape
        style = self.affine(x.mean((2, 3)))
        wt = self.weight[None] * style[:, None, :, None, None]
        y = torch.nn.functional.conv2d(x.reshape(1, b * c, h, w), wt.reshape(b * 5, c, 3, 3), padding=1, groups=b)
        return y.reshape(b, 5, h, w)


class ClsTokenLen(torch.nn.Module):
    """FT-Transformer's [CLS] token: a parameter expanded to the batch with len(x), a Python int
    when traced, so the expand of a parameter folds into a weight of the example batch."""

    def __init__(self):
        super().__init__()
        self.cls = torch.nn.Parameter(torch.randn(1, 1, 8))
        self.tokens = torch.nn.Linear(4, 8)

    def forward(self, x):
        t = self.tokens(x)
        return torch.cat([self.cls.expand(len(t), -1, -1), t], 1)


class ClsTokenShape(ClsTokenLen):
    """The same with x.shape[0]: traced as a size, so the expand follows the batch."""

    def forward(self, x):
        t = self.tokens(x)
        return torch.cat([self.cls.expand(x.shape[0], -1, -1), t], 1)


class HiddenEqualsBatch(torch.nn.Module):
    """A head size of 64 written in the source, next to a batch of 64: a literal, not a baked size."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 128)

    def forward(self, x):
        return self.fc(x).reshape(-1, 2, 64)


class RecordedSizeTensor(torch.nn.Module):
    """RT-DETR's normalisation by the image size: torch.tensor of sizes is recorded by tracing as a
    constant holding the example's width and height."""

    def forward(self, x):
        h, w = x.shape[-2:]
        scale = torch.tensor([w, h], dtype=x.dtype)
        return x.flatten(2).mean(-1)[:, :2] * scale


class RecordedShapeTable(torch.nn.Module):
    """Deformable attention's spatial_shapes: torch.as_tensor of the levels' sizes, and the offset
    normalizer stacked from it (w, h per level); the tracer records the table's values."""

    def forward(self, x):
        y = torch.nn.functional.avg_pool2d(x, 2)
        shapes = torch.as_tensor([x.shape[-2:], y.shape[-2:]], dtype=torch.long)
        normalizer = torch.stack([shapes[..., 1], shapes[..., 0]], -1)
        offsets = torch.stack([x.mean((1, 2, 3)), y.mean((1, 2, 3))], -1)  # [b, 2 levels]
        return offsets[:, :, None] / normalizer[None]


class LiteralScales(torch.nn.Module):
    """Constants written as numbers in the source line (2.0 and 4.0 next to a batch of 2 and a
    size of 4): literals, not baked sizes."""

    def forward(self, x):
        return x * torch.tensor([0.5, 2.0, 4.0]).view(1, 3, 1, 1)


MODELS = [
    # name, module, example shape, dynamic input axes, dynamic output axes, trap? (True, or what a
    # baked-dynamic-size warning must name)
    ("baked_view", BakedView(), [4, 3, 2], [0], [0], True),
    ("baked_zeros", BakedZeros(), [4, 3], [0], [0], True),
    ("baked_arange", BakedArange(), [2, 6], [1], [1], True),
    ("baked_expand", BakedExpand(), [4, 3], [0], [0], True),
    # traced at size 1: a constant 1 that stands for the batch
    ("size_one_view", BakedView(), [1, 3, 2], [0], [0], True),
    ("size_one_expand", SizeOneExpand(), [1, 3], [0], [0], True),
    ("clean_view", CleanView(), [4, 3, 2], [0], [0], False),
    ("clean_view_size_one", CleanView(), [1, 3, 2], [0], [0], False),
    ("clean_zeros", CleanZeros(), [4, 3], [0], [0], False),
    ("clean_conv", CleanConv(), [2, 3, 8, 8], [0, 2, 3], [0], False),
    ("clean_head_size_equals_sequence", HeadSizeEqualsSequence(), [2, 8, 32], [0, 1], [0, 1], False),
    ("baked_sequence", BakedSequence(), [2, 8, 32], [0, 1], [0, 1], "'size' of aten::view"),
    ("modulated_conv_groups", ModulatedConv(), [2, 4, 6, 6], [0], [0], "'groups'"),
    ("cls_token_len", ClsTokenLen(), [3, 5, 4], [0], [0], "folded from the model's weights"),
    ("clean_cls_token_shape", ClsTokenShape(), [3, 5, 4], [0], [0], False),
    ("clean_hidden_equals_batch", HiddenEqualsBatch(), [64, 64], [0], [0], False),
    # tracing records the values of torch.tensor / as_tensor of sizes: the traced model holds the
    # same constant, so verification cannot see these (verify_confirms False below)
    ("recorded_size_tensor", RecordedSizeTensor(), [2, 3, 8, 12], [0, 2, 3], [0], "recorded by tracing as a constant"),
    ("recorded_shape_table", RecordedShapeTable(), [2, 3, 8, 6], [0, 2, 3], [0], "holds 6"),
    ("clean_literal_scales", LiteralScales(), [2, 3, 4, 4], [0, 2, 3], [0, 2, 3], False),
    ("clean_qat_conv_bn_channels_equal_size", qat_conv_bn(), [2, 3, 8, 8], [0, 2, 3], [0, 2, 3], False),
]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    manifest = []
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(PythonBranch().eval(), torch.randn(4, 3)).save(os.path.join(out, "python_branch.pt"))
        torch.jit.trace(PythonBranchStaticAxis().eval(), torch.randn(4, 3)).save(
            os.path.join(out, "python_branch_static_axis.pt"))
    for name, module, shape, in_axes, out_axes, trap in MODELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(module.eval(), torch.randn(shape))
        traced.save(os.path.join(out, name + ".pt"))
        manifest.append({"name": name, "shape": shape, "input_axes": in_axes, "output_axes": out_axes,
                         "trap": bool(trap), "warns_about": trap if isinstance(trap, str) else "",
                         "verify_confirms": not name.startswith("recorded_")})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
