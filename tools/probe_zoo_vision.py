"""The probe sweep's models (tools/probe_models.py): segmentation, video/audio, diffusion, ViTs,
point clouds, QAT."""
import math
from typing import List

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec


def cbr(i, o, k=3, s=1, g=1):
    return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


# ---------------------------------------------------------------- segmentation
class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.d1 = cbr(3, 8)
        self.d2 = cbr(8, 16, s=2)
        self.d3 = cbr(16, 32, s=2)
        self.u2 = cbr(48, 16)
        self.u1 = cbr(24, 8)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        s1 = self.d1(x)
        s2 = self.d2(s1)
        s3 = self.d3(s2)
        y = F.interpolate(s3, size=s2.shape[-2:], mode="bilinear", align_corners=False)
        y = self.u2(torch.cat([y, s2], dim=1))
        y = F.interpolate(y, size=s1.shape[2:], mode="nearest")
        y = self.u1(torch.cat([y, s1], dim=1))
        return self.out(y)


class PSP(nn.Module):
    def __init__(self, c=16, bins=(1, 2, 3, 6)):
        super().__init__()
        self.stem = cbr(3, c, s=4)
        self.stages = nn.ModuleList([nn.Sequential(nn.AdaptiveAvgPool2d(b), nn.Conv2d(c, c // 4, 1, bias=False),
                                                   nn.BatchNorm2d(c // 4), nn.ReLU()) for b in bins])
        self.bottleneck = cbr(c * 2, c)

    def forward(self, x):
        f = self.stem(x)
        h, w = f.size(2), f.size(3)
        priors = [F.interpolate(stage(f), size=(h, w), mode="bilinear", align_corners=True) for stage in self.stages]
        return self.bottleneck(torch.cat(priors + [f], 1))


class HRFuse(nn.Module):
    """HRNet-style fusion: each branch resampled to every other's resolution and summed."""

    def __init__(self):
        super().__init__()
        self.b0 = cbr(3, 8)
        self.b1 = cbr(3, 16, s=2)
        self.down = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16))
        self.up = nn.Sequential(nn.Conv2d(16, 8, 1, bias=False), nn.BatchNorm2d(8), nn.Upsample(scale_factor=2,
                                                                                               mode="nearest"))

    def forward(self, x):
        x0 = self.b0(x)
        x1 = self.b1(x)
        y0 = F.relu(x0 + self.up(x1))
        y1 = F.relu(x1 + self.down(x0))
        return y0, F.interpolate(y1, scale_factor=2.0, mode="bilinear", align_corners=False)


class ESPCN(nn.Module):
    def __init__(self, r=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.Tanh(), nn.Conv2d(16, 8, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(8, r * r, 3, padding=1))
        self.ps = nn.PixelShuffle(r)

    def forward(self, x):
        return torch.sigmoid(self.ps(self.body(x)))


# ---------------------------------------------------------------- video / audio
class SlowFast(nn.Module):
    def __init__(self, alpha: int = 4):
        super().__init__()
        self.alpha = alpha
        self.slow = nn.Sequential(nn.Conv3d(3, 16, (1, 3, 3), (1, 2, 2), (0, 1, 1)), nn.BatchNorm3d(16), nn.ReLU())
        self.fast = nn.Sequential(nn.Conv3d(3, 4, (5, 3, 3), (1, 2, 2), (2, 1, 1)), nn.BatchNorm3d(4), nn.ReLU())
        self.lateral = nn.Conv3d(4, 8, (5, 1, 1), (alpha, 1, 1), (2, 0, 0))
        self.fc = nn.Linear(16 + 8 + 4, 5)

    def forward(self, frames):
        fast_in = frames
        slow_in = torch.index_select(frames, 2, torch.linspace(0, frames.shape[2] - 1,
                                                               frames.shape[2] // self.alpha).long())
        s = self.slow(slow_in)
        f = self.fast(fast_in)
        s = torch.cat([s, self.lateral(f)], 1)
        s = F.adaptive_avg_pool3d(s, 1).flatten(1)
        f = F.adaptive_avg_pool3d(f, 1).flatten(1)
        return self.fc(torch.cat([s, f], 1))


class Chomp1d(nn.Module):
    def __init__(self, chomp: int):
        super().__init__()
        self.chomp = chomp

    def forward(self, x):
        return x[:, :, :-self.chomp].contiguous()


class TCN(nn.Module):
    def __init__(self):
        super().__init__()
        layers = []
        c = 4
        for i, o in enumerate([8, 8, 8]):
            d = 2 ** i
            layers += [nn.utils.weight_norm(nn.Conv1d(c, o, 3, padding=2 * d, dilation=d)), Chomp1d(2 * d), nn.ReLU()]
            c = o
        self.net = nn.Sequential(*layers)
        self.down = nn.Conv1d(4, 8, 1)

    def forward(self, x):
        return F.relu(self.net(x) + self.down(x))


class RelPosMHA(nn.Module):
    """Conformer/Transformer-XL relative positions: the rel_shift by pad + view."""

    def __init__(self, d=16, h=2):
        super().__init__()
        self.h = h
        self.dk = d // h
        self.qkv = nn.Linear(d, 3 * d)
        self.pos = nn.Linear(d, d, bias=False)
        self.pos_bias_u = nn.Parameter(torch.randn(h, d // h) * 0.1)
        self.pos_bias_v = nn.Parameter(torch.randn(h, d // h) * 0.1)
        self.out = nn.Linear(d, d)

    def rel_shift(self, x):
        b, h, t1, t2 = x.size()
        zero_pad = torch.zeros((b, h, t1, 1), device=x.device, dtype=x.dtype)
        x_padded = torch.cat([zero_pad, x], dim=-1)
        x_padded = x_padded.view(b, h, t2 + 1, t1)
        return x_padded[:, :, 1:].view_as(x)[:, :, :, : t2 // 2 + 1]

    def forward(self, x, pos_emb):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, self.dk).permute(2, 0, 3, 1, 4).unbind(0)
        p = self.pos(pos_emb).view(1, -1, self.h, self.dk).transpose(1, 2)
        ac = torch.matmul(q + self.pos_bias_u.unsqueeze(1), k.transpose(-2, -1))
        bd = self.rel_shift(torch.matmul(q + self.pos_bias_v.unsqueeze(1), p.transpose(-2, -1)))
        att = torch.softmax((ac + bd) / math.sqrt(self.dk), -1)
        return self.out(torch.matmul(att, v).transpose(1, 2).reshape(b, t, -1))


class ConformerBlock(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.ff1 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ln_att = nn.LayerNorm(d)
        self.att = RelPosMHA(d)
        self.ln_conv = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, 7, padding=3, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)
        self.ff2 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ln = nn.LayerNorm(d)

    def forward(self, x, pos_emb):
        x = x + 0.5 * self.ff1(x)
        x = x + self.att(self.ln_att(x), pos_emb)
        c = self.ln_conv(x).transpose(1, 2)
        c = F.glu(self.pw1(c), dim=1)
        c = self.pw2(F.silu(self.bn(self.dw(c))))
        x = x + c.transpose(1, 2)
        return self.ln(x + 0.5 * self.ff2(x))


class LogMel(nn.Module):
    """An STFT as a strided conv with a windowed DFT basis, power, a mel matmul, log."""

    def __init__(self, n_fft=64, hop=16, n_mels=10):
        super().__init__()
        n = torch.arange(n_fft).float()
        k = torch.arange(n_fft // 2 + 1).float()
        win = torch.hann_window(n_fft)
        ang = 2 * math.pi * k[:, None] * n[None, :] / n_fft
        self.register_buffer("real", (torch.cos(ang) * win)[:, None, :])
        self.register_buffer("imag", (-torch.sin(ang) * win)[:, None, :])
        self.register_buffer("mel", torch.rand(n_fft // 2 + 1, n_mels))
        self.hop = hop
        self.n_fft = n_fft

    def forward(self, wav):
        x = F.pad(wav.unsqueeze(1), (self.n_fft // 2, self.n_fft // 2), mode="reflect")
        re = F.conv1d(x, self.real, stride=self.hop)
        im = F.conv1d(x, self.imag, stride=self.hop)
        power = re ** 2 + im ** 2
        mel = torch.matmul(power.transpose(1, 2), self.mel)
        return torch.log(torch.clamp(mel, min=1e-10)).transpose(1, 2)


class CRNN(nn.Module):
    def __init__(self, classes=11):
        super().__init__()
        self.cnn = nn.Sequential(cbr(1, 8), nn.MaxPool2d(2, 2), cbr(8, 16), nn.MaxPool2d((2, 1), (2, 1)))
        self.rnn = nn.LSTM(16 * 4, 16, num_layers=2, bidirectional=True, batch_first=False)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        f = self.cnn(x)
        b, c, h, w = f.size()
        f = f.view(b, c * h, w).permute(2, 0, 1)
        r, _ = self.rnn(f)
        return self.fc(r).log_softmax(2)


# ---------------------------------------------------------------- diffusion / StyleGAN
def timestep_embedding(t, dim: int, max_period: int = 10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, c=16, temb=32):
        super().__init__()
        self.norm1 = nn.GroupNorm(4, c)
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.emb = nn.Sequential(nn.SiLU(), nn.Linear(temb, 2 * c))
        self.norm2 = nn.GroupNorm(4, c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x, emb):
        h = self.conv1(F.silu(self.norm1(x)))
        e = self.emb(emb)[:, :, None, None]
        scale, shift = torch.chunk(e, 2, dim=1)
        h = self.norm2(h) * (1 + scale) + shift
        return x + self.conv2(F.silu(h))


class AttnBlock(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.norm = nn.GroupNorm(4, c)
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.proj = nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, c, h * w).unbind(1)
        a = torch.softmax(torch.einsum("bci,bcj->bij", q, k) * (c ** -0.5), dim=-1)
        o = torch.einsum("bij,bcj->bci", a, v).reshape(b, c, h, w)
        return x + self.proj(o)


class DiffusionUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.t_mlp = nn.Sequential(nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 32))
        self.inp = nn.Conv2d(3, 16, 3, padding=1)
        self.r1 = ResBlock()
        self.att = AttnBlock()
        self.down = nn.Conv2d(16, 16, 3, 2, 1)
        self.r2 = ResBlock()
        self.up = nn.ConvTranspose2d(16, 16, 4, 2, 1)
        self.out = nn.Sequential(nn.GroupNorm(4, 16), nn.SiLU(), nn.Conv2d(16, 3, 3, padding=1))

    def forward(self, x, t):
        emb = self.t_mlp(timestep_embedding(t, 32))
        h = self.r1(self.inp(x), emb)
        h = self.att(h)
        d = self.r2(self.down(h), emb)
        return self.out(h + self.up(d))


class ModulatedConv(nn.Module):
    def __init__(self, cin=8, cout=8, k=3, wdim=16, demodulate: bool = True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(1, cout, cin, k, k))
        self.affine = nn.Linear(wdim, cin)
        self.scale = 1 / math.sqrt(cin * k * k)
        self.demodulate = demodulate
        self.cout = cout
        self.k = k

    def forward(self, x, w):
        b, cin, h, wd = x.shape
        style = self.affine(w).view(b, 1, cin, 1, 1)
        weight = self.scale * self.weight * style
        if self.demodulate:
            demod = torch.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-8)
            weight = weight * demod.view(b, self.cout, 1, 1, 1)
        weight = weight.view(b * self.cout, cin, self.k, self.k)
        x = x.reshape(1, b * cin, h, wd)
        out = F.conv2d(x, weight, padding=self.k // 2, groups=b)
        return out.view(b, self.cout, out.shape[-2], out.shape[-1])


# ---------------------------------------------------------------- timm-style ViTs
def drop_path(x, drop_prob: float = 0.0, training: bool = False):
    if drop_prob == 0.0 or not training:
        return x
    keep = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    rnd = x.new_empty(shape).bernoulli_(keep)
    return x * rnd / keep


class DropPath(nn.Module):
    def __init__(self, p: float = 0.1):
        super().__init__()
        self.drop_prob = p

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training)


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim) * 1e4)

    def forward(self, x):
        return x * self.gamma


class WindowAttention(nn.Module):
    def __init__(self, dim=16, ws: int = 4, heads: int = 2):
        super().__init__()
        self.ws = ws
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.relative_position_bias_table = nn.Parameter(torch.randn((2 * ws - 1) ** 2, heads) * 0.02)
        coords = torch.stack(torch.meshgrid([torch.arange(ws), torch.arange(ws)], indexing="ij"))
        flat = torch.flatten(coords, 1)
        rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += ws - 1
        rel[:, :, 1] += ws - 1
        rel[:, :, 0] *= 2 * ws - 1
        self.register_buffer("relative_position_index", rel.sum(-1))
        self.ls = LayerScale(dim)
        self.dp = DropPath()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        B, H, W, C = x.shape
        shortcut = x
        x = self.norm(x)
        pad_b = (self.ws - H % self.ws) % self.ws
        pad_r = (self.ws - W % self.ws) % self.ws
        x = F.pad(x, (0, 0, 0, pad_r, 0, pad_b))
        Hp, Wp = x.shape[1], x.shape[2]
        x = x.view(B, Hp // self.ws, self.ws, Wp // self.ws, self.ws, C).permute(0, 1, 3, 2, 4, 5)
        x = x.reshape(-1, self.ws * self.ws, C)
        Bw, N, _ = x.shape
        qkv = self.qkv(x).reshape(Bw, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * (C // self.heads) ** -0.5) @ k.transpose(-2, -1)
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(N, N, -1)
        attn = (attn + bias.permute(2, 0, 1).contiguous().unsqueeze(0)).softmax(-1)
        x = (attn @ v).transpose(1, 2).reshape(Bw, N, C)
        x = self.proj(x).view(B, Hp // self.ws, Wp // self.ws, self.ws, self.ws, C)
        x = x.permute(0, 1, 3, 2, 4, 5).reshape(B, Hp, Wp, C)[:, :H, :W, :].contiguous()
        return shortcut + self.dp(self.ls(x))


class MobileViTBlock(nn.Module):
    def __init__(self, c=16, p: int = 2):
        super().__init__()
        self.p = p
        self.local = cbr(c, c)
        self.tr = nn.TransformerEncoderLayer(c, 2, 32, 0.0, batch_first=True)
        self.fuse = cbr(2 * c, c)

    def forward(self, x):
        y = self.local(x)
        B, C, H, W = y.shape
        p = self.p
        # unfold: [B, C, H, W] -> [B*p*p, N, C]
        t = y.reshape(B * C * (H // p), p, W // p, p).transpose(1, 2)
        t = t.reshape(B, C, (H // p) * (W // p), p * p).transpose(1, 3).reshape(B * p * p, -1, C)
        t = self.tr(t)
        # fold back
        t = t.reshape(B, p * p, (H // p) * (W // p), C).transpose(1, 3)
        t = t.reshape(B * C * (H // p), W // p, p, p).transpose(1, 2).reshape(B, C, H, W)
        return self.fuse(torch.cat([x, t], 1))


class LayerNorm2dPermute(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class LayerNorm2dMeanVar(nn.Module):
    def __init__(self, c, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(c))
        self.bias = nn.Parameter(torch.zeros(c))
        self.eps = eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class ConvNeXtBlock(nn.Module):
    def __init__(self, c=16, meanvar: bool = False):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = LayerNorm2dMeanVar(c) if meanvar else LayerNorm2dPermute(c)
        self.pw1 = nn.Conv2d(c, 4 * c, 1)
        self.pw2 = nn.Conv2d(4 * c, c, 1)
        self.gamma = nn.Parameter(torch.ones(c) * 0.5)
        self.dp = DropPath()

    def forward(self, x):
        y = self.pw2(F.gelu(self.pw1(self.norm(self.dw(x)))))
        return x + self.dp(y.mul(self.gamma.reshape(1, -1, 1, 1)))


class PoolFormerBlock(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.norm1 = nn.GroupNorm(1, c)
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.norm2 = nn.GroupNorm(1, c)
        self.mlp = nn.Sequential(nn.Conv2d(c, 4 * c, 1), nn.GELU(), nn.Conv2d(4 * c, c, 1))
        self.ls1 = nn.Parameter(torch.ones(c) * 0.3)
        self.ls2 = nn.Parameter(torch.ones(c) * 0.3)

    def forward(self, x):
        y = self.norm1(x)
        x = x + self.ls1.unsqueeze(-1).unsqueeze(-1) * (self.pool(y) - y)
        return x + self.ls2.unsqueeze(-1).unsqueeze(-1) * self.mlp(self.norm2(x))


# ---------------------------------------------------------------- point clouds / graphs
class PointNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv1d(3, 16, 1), nn.BatchNorm1d(16), nn.ReLU(), nn.Conv1d(16, 32, 1))
        self.fc = nn.Linear(32, 5)

    def forward(self, pts):
        f = self.mlp(pts.transpose(1, 2))
        g = torch.max(f, 2, keepdim=True)[0].view(-1, 32)
        return self.fc(g)


def knn(x, k: int):
    d = torch.cdist(x, x)
    return d.topk(k, dim=-1, largest=False)[1]


class DGCNNEdgeConv(nn.Module):
    def __init__(self, k: int = 4):
        super().__init__()
        self.k = k
        self.conv = nn.Sequential(nn.Conv2d(6, 16, 1, bias=False), nn.BatchNorm2d(16), nn.LeakyReLU(0.2))

    def forward(self, pts):
        B, N, C = pts.shape
        idx = knn(pts, self.k)
        idx_base = torch.arange(0, B, device=pts.device).view(-1, 1, 1) * N
        idx = (idx + idx_base).view(-1)
        feat = pts.reshape(B * N, -1)[idx, :].view(B, N, self.k, C)
        x = pts.view(B, N, 1, C).repeat(1, 1, self.k, 1)
        e = torch.cat((feat - x, x), dim=3).permute(0, 3, 1, 2).contiguous()
        return self.conv(e).max(dim=-1, keepdim=False)[0]


class ScatterPool(nn.Module):
    """A GNN layer: messages gathered with index_select, summed per node with scatter_add / index_add."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        msg = self.lin(torch.index_select(x, 0, src))
        out = torch.zeros_like(x).scatter_add(0, dst.unsqueeze(-1).expand_as(msg), msg)
        deg = torch.zeros(x.size(0), dtype=x.dtype).index_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
        return out / deg.clamp(min=1).unsqueeze(-1)


# ---------------------------------------------------------------- QAT
class QatNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 4)
        self.dequant = torch.ao.quantization.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu1(self.bn1(self.conv1(x)))
        x = self.relu2(self.conv2(x))
        x = self.fc(torch.flatten(self.pool(x), 1))
        return self.dequant(x)


def qat(per_channel):
    m = QatNet().train()
    m = torch.ao.quantization.fuse_modules_qat(m, [["conv1", "bn1", "relu1"], ["conv2", "relu2"]])
    m.qconfig = torch.ao.quantization.get_default_qat_qconfig("fbgemm" if per_channel else "qnnpack")
    torch.ao.quantization.prepare_qat(m, inplace=True)
    for _ in range(3):
        m(torch.randn(2, 3, 16, 16))
    m.apply(torch.ao.quantization.disable_observer)
    return m.eval()


class FusedFloat(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


def fused():
    m = FusedFloat().eval()
    m.bn.running_mean.uniform_(-1, 1)
    m.bn.running_var.uniform_(0.5, 2)
    return torch.quantization.fuse_modules(m, [["conv", "bn", "relu"]])


IMG = ["x:0=b,2=h,3=w"]

VISION = [
    ("unet_interp_skip", lambda: Spec(UNet(), ["1x3x32x32"], ["x"], IMG)),
    ("psp_pyramid", lambda: Spec(PSP(), ["1x3x96x96"], ["x"], IMG)),
    ("hrnet_fuse", lambda: Spec(HRFuse(), ["1x3x32x32"], ["x"], IMG)),
    ("espcn", lambda: Spec(ESPCN(), ["1x1x16x16"], ["x"], IMG)),
    ("slowfast", lambda: Spec(SlowFast(), ["1x3x8x32x32"], ["x"], ["x:0=b,2=t,3=h,4=w"])),
    ("tcn_weightnorm", lambda: Spec(TCN(), ["2x4x50"], ["x"], ["x:0=b,2=t"])),
    ("conformer", lambda: Spec(ConformerBlock(), ["2x10x16", "1x19x16"], ["x", "pos"], ["x:0=b,1=t", "pos:1=p"])),
    ("logmel", lambda: Spec(LogMel(), ["2x800"], ["wav"], ["wav:0=b,1=n"])),
    ("crnn_bilstm", lambda: Spec(CRNN(), ["2x1x16x40"], ["x"], ["x:0=b,3=w"])),
    ("diffusion_unet", lambda: Spec(DiffusionUNet(), ["2x3x16x16", "2:int64:arange"], ["x", "t"],
                                    ["x:0=b,2=h,3=w", "t:0=b"])),
    ("stylegan_modconv", lambda: Spec(ModulatedConv(), ["2x8x16x16", "2x16"], ["x", "w"], ["x:0=b,2=h,3=w", "w:0=b"])),
    ("swin_window_pad", lambda: Spec(WindowAttention(), ["1x10x10x16"], ["x"], ["x:0=b,1=h,2=w"])),
    ("mobilevit", lambda: Spec(MobileViTBlock(), ["1x16x8x8"], ["x"], IMG)),
    ("convnext_ln_permute", lambda: Spec(ConvNeXtBlock(), ["1x16x16x16"], ["x"], IMG)),
    ("convnext_ln_meanvar", lambda: Spec(ConvNeXtBlock(meanvar=True), ["1x16x16x16"], ["x"], IMG)),
    ("poolformer", lambda: Spec(PoolFormerBlock(), ["1x16x16x16"], ["x"], IMG)),
    ("pointnet", lambda: Spec(PointNet(), ["2x64x3"], ["pts"], ["pts:0=b,1=n"])),
    ("dgcnn_edgeconv", lambda: Spec(DGCNNEdgeConv(), ["2x32x3"], ["pts"], ["pts:0=b,1=n"])),
    ("gnn_scatter_add", lambda: Spec(ScatterPool(), ["6x8", np.array([[0, 1, 2, 3, 4, 5, 0, 2], [1, 2, 3, 4, 5, 0, 3, 3]])], ["x", "edge_index"], [])),
    ("qat_per_channel", lambda: Spec(qat(True), ["1x3x16x16"], ["x"], IMG, modes=("trace",))),
    ("qat_per_tensor", lambda: Spec(qat(False), ["1x3x16x16"], ["x"], IMG, modes=("trace",))),
    ("fuse_conv_bn_relu", lambda: Spec(fused(), ["1x3x16x16"], ["x"], IMG)),
]
