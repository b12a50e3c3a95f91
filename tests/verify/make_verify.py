#!/usr/bin/python3
"""Models whose outputs ONNX Runtime and libtorch cannot match element for element, as users
write them: tie-ordered indices (CornerNet/HigherHRNet-style heatmap top-k, argmax over equal
logits, sort with repeated keys, max(dim)) and random ops (dropout in training mode, rand_like,
randn, bernoulli, multinomial); and a decoder with an off-by-one index, the real bug that tie
order must not hide.

usage: make_verify.py OUT_DIR   (writes OUT/<name>.pt, traced and scripted)
"""
import os
import sys

import torch
import torch.nn.functional as F


class HeatmapTopK(torch.nn.Module):
    """Keypoint decoder: peaks of a ReLU heatmap (mostly zeros, so top-k ties) as scores and x/y."""

    def __init__(self, shift=0):
        super().__init__()
        self.head = torch.nn.Conv2d(3, 2, 3, padding=1)
        self.shift = shift

    def forward(self, x):
        hm = torch.relu(self.head(x) - 1.0)
        hmax = F.max_pool2d(hm, 3, stride=1, padding=1)
        hm = hm * (hmax == hm).float()
        b, c, h, w = hm.shape
        scores, inds = torch.topk(hm.view(b, -1), 300)
        inds = (inds + self.shift) % (c * h * w)
        cls = inds // (h * w)
        pix = inds % (h * w)
        ys = pix // w
        xs = pix % w
        return scores, torch.stack([xs, ys, cls], -1)


class ClassTies(torch.nn.Module):
    """argmax over classes with equal (clamped) logits, sort with repeated keys, max(dim)."""

    def forward(self, x):
        logits = torch.clamp(x.mean(dim=(2, 3)) * 0.0 + x[:, :, 0, :].sum(-1).round(), 0, 1)
        cls = torch.argmax(logits, dim=1)
        keys = torch.round(x[:, 0] * 2).flatten(1)
        sorted_keys, order = torch.sort(keys, dim=1, descending=True)
        best, where = torch.max(torch.round(x[:, 1]), dim=2)
        return cls, sorted_keys, order, best, where


class RandomOps(torch.nn.Module):
    """A deterministic head next to outputs drawn at random inside forward."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 4)
        self.drop = torch.nn.Dropout(0.3)

    def forward(self, x):
        y = self.proj(x)
        noisy = y + torch.rand_like(y) + torch.randn(y.shape)
        mask = torch.bernoulli(torch.sigmoid(y))
        picks = torch.multinomial(torch.softmax(y, -1), 2, replacement=True)
        return y, noisy, mask, picks, self.drop(y)


def save(m, example, out, name):
    torch.manual_seed(0)
    m.eval()
    torch.jit.trace(m, example, check_trace=False).save(os.path.join(out, name + "_traced.pt"))
    torch.jit.script(m).save(os.path.join(out, name + "_scripted.pt"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    save(HeatmapTopK(), torch.randn(1, 3, 16, 16), out, "heatmap_topk")
    torch.manual_seed(0)
    save(HeatmapTopK(shift=1), torch.randn(1, 3, 16, 16), out, "heatmap_topk_off_by_one")
    save(ClassTies(), torch.randn(2, 4, 6, 6), out, "class_ties")
    torch.manual_seed(0)
    save(RandomOps(), torch.randn(2, 8), out, "random_ops")
    with open(os.path.join(out, "done"), "w") as f:
        f.write("ok\n")


if __name__ == "__main__":
    main()
