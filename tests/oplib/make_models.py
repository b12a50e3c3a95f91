#!/usr/bin/python3
"""Fixtures of the op-library tests: a model using the test library's oxtest::fake_quant (traced
with the library loaded, as a vendor's user does), and one with torchvision's DeformConv2d.

usage: make_models.py LIBRARY OUT_DIR
"""
import os
import sys
import warnings

import torch
import torchvision

warnings.filterwarnings("ignore")


class VendorQat(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x):
        x = torch.ops.oxtest.fake_quant(x, 0.05, 0, -128, 127)
        return torch.relu(self.conv(x))


class LoopQat(torch.nn.Module):
    """Scripted: the vendor's op only inside a loop body (an ONNX Loop), as in a scripted decoder."""

    def forward(self, x):
        y = x
        for _ in range(x.size(0)):
            y = torch.ops.oxtest.fake_quant(y, 0.05, 0, -128, 127) + 1.0
        return y


class Deform(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.offset = torch.nn.Conv2d(3, 18, 3, padding=1)
        self.conv = torchvision.ops.DeformConv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(x, self.offset(x))


def main():
    lib, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.ops.load_library(lib)
    torch.manual_seed(0)
    x = torch.randn(1, 3, 8, 8)
    torch.jit.trace(VendorQat().eval(), (x,)).save(os.path.join(out, "vendor_qat.pt"))
    torch.jit.trace(Deform().eval(), (x,)).save(os.path.join(out, "deform.pt"))
    torch.jit.script(LoopQat().eval()).save(os.path.join(out, "loop_qat.pt"))
    with open(os.path.join(out, "not_a_library.so"), "w") as f:
        f.write("this is text, not a shared library\n")
    open(os.path.join(out, "done"), "w").write("ok\n")


if __name__ == "__main__":
    main()
