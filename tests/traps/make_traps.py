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


MODELS = [
    # name, module, example shape, dynamic input axes, dynamic output axes, trap?
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
                         "trap": trap})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
