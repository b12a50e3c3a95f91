#!/usr/bin/python3
"""Makes the bundled sample model: sample_cnn.pt (a traced TorchScript module) and
sample_cnn.preset.json (the export settings, keyed by torch.onnx.export's parameter names).

Run with the Python that has torch (Debian's python3-torch): /usr/bin/python3 make_sample.py
The network is small but has what a real CNN has: conv-bn-relu, a residual block, max and
adaptive average pooling, flatten and a linear head, with named submodules (stem.conv,
layer1.0.conv1, ...). Batch-norm statistics are randomized so that folding them is tested.
"""
import json
import os
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


class Stem(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size=3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class SampleCNN(nn.Module):
    def __init__(self, num_classes=10, width=16):
        super().__init__()
        self.stem = Stem(3, width)
        self.maxpool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.layer1 = nn.Sequential(BasicBlock(width))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.maxpool(self.stem(x))
        x = self.layer1(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def main():
    torch.manual_seed(0)
    model = SampleCNN()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    model.eval()

    example = torch.randn(1, 3, 32, 32)
    traced = torch.jit.trace(model, example)
    with torch.no_grad():
        diff = (traced(example) - model(example)).abs().max().item()
    if diff > 1e-6:
        sys.exit(f"traced module disagrees with eager by {diff}")

    pt = os.path.join(HERE, "sample_cnn.pt")
    traced.save(pt)

    preset = {
        "format": "oxport-preset",
        "version": 1,
        "model": "sample_cnn.pt",
        "output": "sample_cnn.onnx",
        "args": [{"tensor": {"shape": [1, 3, 32, 32], "dtype": "float32", "fill": "randn", "seed": 0}}],
        "kwargs": {},
        "export_params": True,
        "verbose": False,
        "training": "EVAL",
        "input_names": ["image"],
        "output_names": ["logits"],
        "operator_export_type": "ONNX_FALLTHROUGH",
        "opset_version": 11,
        "do_constant_folding": True,
        "dynamic_axes": {"image": {"0": "batch"}, "logits": {"0": "batch"}},
        "keep_initializers_as_inputs": None,
        "custom_opsets": {},
    }
    with open(os.path.join(HERE, "sample_cnn.preset.json"), "w") as f:
        json.dump(preset, f, indent=2)
        f.write("\n")

    params = sum(p.numel() for p in model.parameters())
    print(f"wrote {pt} ({os.path.getsize(pt)} bytes, {params} parameters) and sample_cnn.preset.json")


if __name__ == "__main__":
    main()
