"""Fixture models for the localize tests, made as users make them (random weights, fixed seed).

    make_models.py OUT_DIR   writes cnn.pt (a small ResNet-like CNN with a layer scale, traced),
    transformer.pt (a 2-layer nn.TransformerEncoder, traced) and loop.pt (a scripted model with a
    data-dependent while loop), each with a preset beside it (NAME.preset.json). Each has a
    per-channel/per-feature scale whose broadcast the tests break on purpose."""
import json
import os
import sys

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.scale = nn.Parameter(torch.rand(16, 1, 1) + 0.5)  # a per-channel layer scale
        self.layer1 = Block(16, 16, 1)
        self.layer2 = Block(16, 32, 2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x) * self.scale))
        return self.fc(torch.flatten(self.pool(x), 1))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.gamma = nn.Parameter(torch.rand(32) + 0.5)  # a per-feature scale
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        return self.head(self.encoder(x) * self.gamma)


class LoopNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(16, 16)
        self.gamma = nn.Parameter(torch.rand(16) + 0.5)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.inp(x)) * self.gamma
        i = 0
        while bool(h.abs().max() > 0.05) and i < 6:
            h = h * 0.5 + 0.1 * torch.tanh(h)
            i += 1
        return torch.softmax(self.head(h), dim=-1)


def randomize_bn(m):
    # Trained-looking batch norm statistics, so folding and scaling matter.
    g = torch.Generator().manual_seed(1)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.weight.data.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.bias.data.copy_(torch.randn(mod.num_features, generator=g) * 0.1)


def save(out, name, module, shape, script=False):
    module.eval()
    x = torch.randn(*shape)
    # Traced with autograd on, as a training script traces (no fused inference fast paths).
    m = torch.jit.script(module) if script else torch.jit.trace(module, x, check_trace=False)
    m.save(os.path.join(out, name + ".pt"))
    preset = {"args": [{"tensor": {"shape": list(shape), "dtype": "float32", "fill": "randn", "seed": 0}}]}
    with open(os.path.join(out, name + ".preset.json"), "w") as f:
        json.dump(preset, f)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    cnn = Cnn()
    randomize_bn(cnn)
    save(out, "cnn", cnn, (1, 3, 16, 16))
    torch.manual_seed(0)
    t = Transformer()
    with torch.no_grad():  # nn.TransformerEncoder deep-copies its layer: make the layers differ
        for p in t.encoder.parameters():
            p.add_(torch.randn(p.shape) * 0.05)
    save(out, "transformer", t, (2, 32, 32))
    torch.manual_seed(0)
    save(out, "loop", LoopNet(), (16, 16), script=True)


if __name__ == "__main__":
    main()
