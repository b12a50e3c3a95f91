#!/usr/bin/python3
"""Traced models for the input-shape guesses of Model::load (ModelInfo::input_guesses).

usage: make_guess_models.py OUT_DIR   (writes OUT/<name>.pt and OUT/done)
Each model is traced at a size the guess cannot know (batch 2, odd spatial sizes), as users do;
the test checks what the saved graph still tells (channels, features, dtype) and that the guessed
shape runs.
"""
import os
import sys
import warnings

import torch
import torchvision


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(10, 20, batch_first=True)
        self.fc = torch.nn.Linear(20, 5)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y)


class Gru(torch.nn.Module):  # sequence-first
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(6, 8)

    def forward(self, x):
        return self.gru(x)[0]


class Linear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Embed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 8)

    def forward(self, tokens):
        return self.emb(tokens).mean(1)


class Mlp(torch.nn.Module):  # x.view(-1, 784): the trace keeps the constant sizes
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(784, 10)

    def forward(self, x):
        return self.fc(x.view(-1, 784))


class Grouped(torch.nn.Module):  # normalization first, then a grouped convolution
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(6)
        self.conv = torch.nn.Conv2d(6, 12, 3, groups=3)

    def forward(self, x):
        return self.conv(torch.relu(self.bn(x)))


class Elementwise(torch.nn.Module):  # nothing in the graph shows the input's shape
    def forward(self, x):
        return torch.sigmoid(x) * 2 + x.view(x.size(0), -1).sum()


class Segmenter(torch.nn.Module):  # a strided conv stem, then bilinear resizing back to the input's size
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.head = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = self.head(torch.relu(self.stem(x)))
        return torch.nn.functional.interpolate(y, size=x.shape[2:], mode="bilinear", align_corners=False)


MODELS = [
    ("resnet18", lambda: torchvision.models.resnet18(), lambda: torch.randn(2, 3, 64, 80)),
    ("lstm", Lstm, lambda: torch.randn(2, 7, 10)),
    ("gru", Gru, lambda: torch.randn(5, 2, 6)),
    ("linear", Linear, lambda: torch.randn(3, 16)),
    ("embedding", Embed, lambda: torch.randint(0, 100, (2, 9))),
    ("mlp_view", Mlp, lambda: torch.randn(2, 1, 28, 28)),
    ("grouped_conv", Grouped, lambda: torch.randn(2, 6, 9, 9)),
    ("elementwise", Elementwise, lambda: torch.randn(2, 5)),
    ("segmenter", Segmenter, lambda: torch.randn(2, 3, 40, 48)),
]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    for name, make, example in MODELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.jit.trace(make().eval(), example()).save(os.path.join(out, name + ".pt"))
    open(os.path.join(out, "done"), "w").write("ok\n")


if __name__ == "__main__":
    main()
