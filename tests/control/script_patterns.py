"""Scripted patterns that the probe rounds found refused (issue 16), written as users write them:
lists of sizes built in loops whose count the rank decides (F.interpolate's scripted size list, a
per-level comprehension), checks that raise on values computed from the inputs (nn.LSTM's
check_forward_args on a packed batch), a grouped convolution whose group count is a size (CondInst),
and a bicubic resize with computed scale factors inside an If (DINO's interpolate_pos_encoding).
"""
import math
from typing import List

import torch
import torch.nn.functional as F
from torch import nn


class RelPosResize(nn.Module):
    """SAM's get_rel_pos: a table trained for another size, resized with F.interpolate(size=int,
    mode="linear") to 2 * H - 1; the scripted interpolate builds its size list with
    `[size for _ in range(dim)]`, dim from the rank of a value made inside forward."""

    def __init__(self):
        super().__init__()
        self.rel_pos = nn.Parameter(torch.randn(5, 4))

    def forward(self, x):  # x: [B, H, W, 4]
        H = x.shape[1]
        L = 2 * H - 1
        r = F.interpolate(self.rel_pos.reshape(1, 5, -1).permute(0, 2, 1), size=L, mode="linear")
        r = r.reshape(-1, L).permute(1, 0)  # [L, 4]
        coords = torch.arange(H)[:, None] - torch.arange(H)[None, :] + (H - 1)
        rh = r[coords]  # [H, H, 4]
        return torch.einsum("bhwc,hkc->bhwk", x, rh)


class SizesInRankLoop(nn.Module):
    """A list of ints appended in a loop over the rank and under an if on the rank (both decided
    once the shapes are known), then used as sizes; and a list of tensors per level."""

    def forward(self, x):  # x: [B, C, H, W]
        y = x.relu()
        sizes: List[int] = []
        for i in range(y.dim() - 2):
            sizes.append(y.shape[i + 2] * 2)
        if y.dim() == 4:
            sizes.append(y.shape[1])
        up = F.interpolate(y, size=sizes[:2], mode="nearest")
        return up[:, : sizes[2]] + 1


class PerLevelSplit(nn.Module):
    """Deformable DETR's per-level comprehension: value.split([h * w for h, w in shapes]), then a
    loop over the levels that reshapes each part to its (h, w)."""

    def forward(self, f0, f1):
        n, c = f0.shape[0], f0.shape[1]
        shapes = [(f0.shape[2], f0.shape[3]), (f1.shape[2], f1.shape[3])]
        value = torch.cat([f0.flatten(2), f1.flatten(2)], 2)
        parts = value.split([h * w for h, w in shapes], dim=2)
        normalizer = torch.stack([torch.tensor([w, h]) for h, w in shapes]).to(f0.dtype)
        outs = []
        for lid, (h, w) in enumerate(shapes):
            outs.append(F.avg_pool2d(parts[lid].reshape(n, c, h, w), 2).flatten(1))
        return torch.cat(outs, 1), normalizer


class DataCheck(nn.Module):
    """nn.LSTM's check_forward_args on a packed batch: the expected batch read from a tensor's data
    (int(batch_sizes[0])) and the message built with str.format; and a check whose other branch
    computes the result (an If with an output)."""

    def forward(self, x, batch_sizes):
        expected = int(batch_sizes[0])
        if x.size(0) != expected:
            raise RuntimeError("Expected batch {}, got {}".format(expected, x.size(0)))
        if bool(x.isnan().any()):
            raise ValueError("nan in the input")
        else:
            y = x * 2
        return y + batch_sizes.sum()


class PerInstanceConv(nn.Module):
    """CondInst's dynamic mask head: per-instance 1x1 weights from a controller, one grouped
    F.conv2d with groups = the number of instances."""

    def __init__(self):
        super().__init__()
        self.controller = nn.Linear(6, 4 * 3 + 4)

    def forward(self, feats, inst):  # feats: [1, 3, H, W], inst: [n, 6]
        n = inst.shape[0]
        params = self.controller(inst)
        w = params[:, :12].reshape(n * 4, 3, 1, 1)
        b = params[:, 12:].reshape(n * 4)
        x = feats.repeat(1, n, 1, 1)
        y = F.conv2d(x, w, bias=b, groups=n)
        return y.reshape(n, 4, feats.shape[2], feats.shape[3]).sigmoid()


class InterpPosEncoding(nn.Module):
    """DINO's interpolate_pos_encoding: a bicubic resize of the permuted position grid by scale
    factors computed from the image size, in the branch taken when the grid's size differs (ONNX
    Runtime 1.20 refused the plain NCHW Resize at load: its transpose optimizer makes it NHWC)."""

    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, 8, 4, 4)
        self.pos_embed = nn.Parameter(torch.randn(1, 17, 8))

    def forward(self, x):
        w, h = x.shape[2], x.shape[3]
        t = self.patch_embed(x).flatten(2).transpose(1, 2)
        npatch = t.shape[1]
        N = self.pos_embed.shape[1] - 1
        if npatch == N and w == h:
            pos = self.pos_embed[:, 1:]
        else:
            sq = int(math.sqrt(N))
            w0, h0 = w // 4 + 0.1, h // 4 + 0.1
            dim = t.shape[-1]  # read from the input: the permute stays in the graph, before the Resize
            p = F.interpolate(self.pos_embed[:, 1:].reshape(1, sq, sq, dim).permute(0, 3, 1, 2),
                              scale_factor=(w0 / sq, h0 / sq), mode="bicubic")
            pos = p.permute(0, 2, 3, 1).reshape(1, -1, 8)
        return t + pos
