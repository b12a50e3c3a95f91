"""The probe sweep's models, round 5 (probe5v), part 1: timm-style backbones beyond torchvision.
Written the way their authors write them (from memory of timm / the papers' reference code: their index
tables, meshgrids, in-place writes, `.shape` arithmetic), small configs, random weights, fixed seed.
Part 2 (detection/pose heads) is probe_zoo_vision5_b.py, generative image models probe_zoo_vision5_gen.py,
segmentation networks probe_zoo_vision5_seg.py, MobileViTv2 and PVTv2 probe_zoo_vision5_tokens.py.
"""
import itertools
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec

IMG = ["x:0=b,2=h,3=w"]
BATCH = ["x:0=b"]


def randomize_bn(m):
    """Random running stats and affine so eval-mode BN is not the identity."""
    g = torch.Generator().manual_seed(1)
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.weight.data.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.bias.data.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
    return m


# ---------------------------------------------------------------- ConvNeXt V2 (GRN, channels_first LayerNorm)
class LayerNormCF(nn.Module):
    def __init__(self, c, eps=1e-6, data_format="channels_last"):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(c) + 0.1 * torch.randn(c))
        self.bias = nn.Parameter(0.1 * torch.randn(c))
        self.eps = eps
        self.data_format = data_format
        self.normalized_shape = (c,)

    def forward(self, x):
        if self.data_format == "channels_last":
            return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class GRN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(0.1 * torch.randn(1, 1, 1, dim))
        self.beta = nn.Parameter(0.1 * torch.randn(1, 1, 1, dim))

    def forward(self, x):
        Gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        Nx = Gx / (Gx.mean(dim=-1, keepdim=True) + 1e-6)
        return self.gamma * (x * Nx) + self.beta + x


class ConvNeXtV2Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
        self.norm = LayerNormCF(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.grn = GRN(4 * dim)
        self.pwconv2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        input = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1)
        x = self.norm(x)
        x = self.pwconv1(x)
        x = self.act(x)
        x = self.grn(x)
        x = self.pwconv2(x)
        x = x.permute(0, 3, 1, 2)
        return input + x


class ConvNeXtV2(nn.Module):
    def __init__(self, dims=(8, 16)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dims[0], 4, 4), LayerNormCF(dims[0], data_format="channels_first"))
        self.stage0 = ConvNeXtV2Block(dims[0])
        self.down = nn.Sequential(LayerNormCF(dims[0], data_format="channels_first"), nn.Conv2d(dims[0], dims[1], 2, 2))
        self.stage1 = ConvNeXtV2Block(dims[1])
        self.norm = nn.LayerNorm(dims[1])

    def forward(self, x):
        x = self.stage1(self.down(self.stage0(self.stem(x))))
        return self.norm(x.mean([-2, -1]))


# ---------------------------------------------------------------- EfficientFormer (Meta4D pool, Flat, Meta3D with ab cache)
class EFAttention(nn.Module):
    def __init__(self, dim=16, key_dim=8, num_heads=2, attn_ratio=2, resolution=4):
        super().__init__()
        self.num_heads = num_heads
        self.scale = key_dim ** -0.5
        self.key_dim = key_dim
        self.nh_kd = nh_kd = key_dim * num_heads
        self.d = int(attn_ratio * key_dim)
        self.dh = int(attn_ratio * key_dim) * num_heads
        self.attn_ratio = attn_ratio
        h = self.dh + nh_kd * 2
        self.qkv = nn.Linear(dim, h)
        self.proj = nn.Linear(self.dh, dim)
        points = list(itertools.product(range(resolution), range(resolution)))
        N = len(points)
        attention_offsets = {}
        idxs = []
        for p1 in points:
            for p2 in points:
                offset = (abs(p1[0] - p2[0]), abs(p1[1] - p2[1]))
                if offset not in attention_offsets:
                    attention_offsets[offset] = len(attention_offsets)
                idxs.append(attention_offsets[offset])
        self.attention_biases = nn.Parameter(torch.randn(num_heads, len(attention_offsets)))
        self.register_buffer("attention_bias_idxs", torch.LongTensor(idxs).view(N, N))

    @torch.no_grad()
    def train(self, mode=True):
        super().train(mode)
        if mode and hasattr(self, "ab"):
            del self.ab
        else:
            self.ab = self.attention_biases[:, self.attention_bias_idxs]
        return self

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x)
        q, k, v = qkv.reshape(B, N, self.num_heads, -1).permute(0, 2, 1, 3).split(
            [self.key_dim, self.key_dim, self.d], dim=3)
        attn = (q @ k.transpose(-2, -1)) * self.scale + (
            self.attention_biases[:, self.attention_bias_idxs] if self.training else self.ab)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, self.dh)
        return self.proj(x)


class Pooling(nn.Module):
    def __init__(self, pool_size=3):
        super().__init__()
        self.pool = nn.AvgPool2d(pool_size, stride=1, padding=pool_size // 2, count_include_pad=False)

    def forward(self, x):
        return self.pool(x) - x


class Meta4D(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.token_mixer = Pooling()
        self.mlp = nn.Sequential(nn.Conv2d(dim, dim * 4, 1), nn.BatchNorm2d(dim * 4), nn.GELU(),
                                 nn.Conv2d(dim * 4, dim, 1), nn.BatchNorm2d(dim))
        self.layer_scale_1 = nn.Parameter(1e-1 * torch.ones(dim))
        self.layer_scale_2 = nn.Parameter(1e-1 * torch.ones(dim))

    def forward(self, x):
        x = x + self.layer_scale_1.unsqueeze(-1).unsqueeze(-1) * self.token_mixer(x)
        return x + self.layer_scale_2.unsqueeze(-1).unsqueeze(-1) * self.mlp(x)


class Flat(nn.Module):
    def forward(self, x):
        return x.flatten(2).transpose(1, 2)


class Meta3D(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.token_mixer = EFAttention(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 4), nn.GELU(), nn.Linear(dim * 4, dim))
        self.layer_scale_1 = nn.Parameter(1e-1 * torch.ones(dim))
        self.layer_scale_2 = nn.Parameter(1e-1 * torch.ones(dim))

    def forward(self, x):
        x = x + self.layer_scale_1.unsqueeze(0).unsqueeze(0) * self.token_mixer(self.norm1(x))
        return x + self.layer_scale_2.unsqueeze(0).unsqueeze(0) * self.mlp(self.norm2(x))


class EfficientFormer(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.meta4d = Meta4D(16)
        self.flat = Flat()
        self.meta3d = Meta3D(16)
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 5)
        self.dist_head = nn.Linear(16, 5)

    def forward(self, x):
        x = self.meta3d(self.flat(self.meta4d(self.stem(x))))
        x = self.norm(x)
        return (self.head(x.mean(-2)) + self.dist_head(x.mean(-2))) / 2


# ---------------------------------------------------------------- LeViT (attention-bias index tables, Subsample, Linear_BN)
class LinearBN(nn.Sequential):
    def __init__(self, a, b):
        super().__init__()
        self.add_module("c", nn.Linear(a, b, bias=False))
        self.add_module("bn", nn.BatchNorm1d(b))

    def forward(self, x):
        l, bn = self._modules.values()
        x = l(x)
        return bn(x.flatten(0, 1)).reshape_as(x)


class Subsample(nn.Module):
    def __init__(self, stride, resolution):
        super().__init__()
        self.stride = stride
        self.resolution = resolution

    def forward(self, x):
        B, N, C = x.shape
        x = x.view(B, self.resolution, self.resolution, C)[:, ::self.stride, ::self.stride].reshape(B, -1, C)
        return x


class LeViTAttention(nn.Module):
    def __init__(self, dim, key_dim, num_heads, attn_ratio, resolution):
        super().__init__()
        self.num_heads = num_heads
        self.scale = key_dim ** -0.5
        self.key_dim = key_dim
        self.nh_kd = nh_kd = key_dim * num_heads
        self.d = int(attn_ratio * key_dim)
        self.dh = int(attn_ratio * key_dim) * num_heads
        h = self.dh + nh_kd * 2
        self.qkv = LinearBN(dim, h)
        self.proj = nn.Sequential(nn.Hardswish(), LinearBN(self.dh, dim))
        points = list(itertools.product(range(resolution), range(resolution)))
        N = len(points)
        attention_offsets = {}
        idxs = []
        for p1 in points:
            for p2 in points:
                offset = (abs(p1[0] - p2[0]), abs(p1[1] - p2[1]))
                if offset not in attention_offsets:
                    attention_offsets[offset] = len(attention_offsets)
                idxs.append(attention_offsets[offset])
        self.attention_biases = nn.Parameter(torch.randn(num_heads, len(attention_offsets)))
        self.register_buffer("attention_bias_idxs", torch.LongTensor(idxs).view(N, N))

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x)
        q, k, v = qkv.view(B, N, self.num_heads, -1).split([self.key_dim, self.key_dim, self.d], dim=3)
        q = q.permute(0, 2, 1, 3)
        k = k.permute(0, 2, 1, 3)
        v = v.permute(0, 2, 1, 3)
        attn = (q @ k.transpose(-2, -1)) * self.scale + self.attention_biases[:, self.attention_bias_idxs]
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, self.dh)
        return self.proj(x)


class LeViTAttentionSubsample(nn.Module):
    def __init__(self, in_dim, out_dim, key_dim, num_heads, attn_ratio, stride, resolution, resolution_):
        super().__init__()
        self.num_heads = num_heads
        self.scale = key_dim ** -0.5
        self.key_dim = key_dim
        self.d = int(attn_ratio * key_dim)
        self.dh = self.d * num_heads
        self.resolution_ = resolution_
        self.resolution_2 = resolution_ ** 2
        self.kv = LinearBN(in_dim, self.dh + key_dim * num_heads)
        self.q = nn.Sequential(Subsample(stride, resolution), LinearBN(in_dim, key_dim * num_heads))
        self.proj = nn.Sequential(nn.Hardswish(), LinearBN(self.dh, out_dim))
        points = list(itertools.product(range(resolution), range(resolution)))
        points_ = list(itertools.product(range(resolution_), range(resolution_)))
        N, N_ = len(points), len(points_)
        attention_offsets = {}
        idxs = []
        for p1 in points_:
            for p2 in points:
                size = 1
                offset = (abs(p1[0] * stride - p2[0] + (size - 1) / 2), abs(p1[1] * stride - p2[1] + (size - 1) / 2))
                if offset not in attention_offsets:
                    attention_offsets[offset] = len(attention_offsets)
                idxs.append(attention_offsets[offset])
        self.attention_biases = nn.Parameter(torch.randn(num_heads, len(attention_offsets)))
        self.register_buffer("attention_bias_idxs", torch.LongTensor(idxs).view(N_, N))

    def forward(self, x):
        B, N, C = x.shape
        k, v = self.kv(x).view(B, N, self.num_heads, -1).split([self.key_dim, self.d], dim=3)
        k = k.permute(0, 2, 1, 3)
        v = v.permute(0, 2, 1, 3)
        q = self.q(x).view(B, self.resolution_2, self.num_heads, self.key_dim).permute(0, 2, 1, 3)
        attn = (q @ k.transpose(-2, -1)) * self.scale + self.attention_biases[:, self.attention_bias_idxs]
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, -1, self.dh)
        return self.proj(x)


class LeViT(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.Hardswish(), nn.Conv2d(8, 16, 3, 2, 1))
        self.attn = LeViTAttention(16, 4, 2, 2, 4)
        self.down = LeViTAttentionSubsample(16, 24, 4, 4, 2, 2, 4, 2)
        self.head_bn = nn.BatchNorm1d(24)
        self.head = nn.Linear(24, 5)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = x + self.attn(x)
        x = self.down(x)
        return self.head(self.head_bn(x.mean(1)))


# ---------------------------------------------------------------- BEiT (relative position bias table with cls entries, q_bias/v_bias)
class BEiTAttention(nn.Module):
    def __init__(self, dim=16, num_heads=2, window_size=(4, 4)):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.q_bias = nn.Parameter(0.1 * torch.randn(dim))
        self.v_bias = nn.Parameter(0.1 * torch.randn(dim))
        self.window_size = window_size
        self.num_relative_distance = (2 * window_size[0] - 1) * (2 * window_size[1] - 1) + 3
        self.relative_position_bias_table = nn.Parameter(torch.randn(self.num_relative_distance, num_heads))
        coords_h = torch.arange(window_size[0])
        coords_w = torch.arange(window_size[1])
        coords = torch.stack(torch.meshgrid([coords_h, coords_w], indexing="ij"))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += window_size[0] - 1
        relative_coords[:, :, 1] += window_size[1] - 1
        relative_coords[:, :, 0] *= 2 * window_size[1] - 1
        relative_position_index = torch.zeros(size=(window_size[0] * window_size[1] + 1,) * 2, dtype=relative_coords.dtype)
        relative_position_index[1:, 1:] = relative_coords.sum(-1)
        relative_position_index[0, 0:] = self.num_relative_distance - 3
        relative_position_index[0:, 0] = self.num_relative_distance - 2
        relative_position_index[0, 0] = self.num_relative_distance - 1
        self.register_buffer("relative_position_index", relative_position_index)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv_bias = torch.cat((self.q_bias, torch.zeros_like(self.v_bias, requires_grad=False), self.v_bias))
        qkv = F.linear(input=x, weight=self.qkv.weight, bias=qkv_bias)
        qkv = qkv.reshape(B, N, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        relative_position_bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(
            self.window_size[0] * self.window_size[1] + 1, self.window_size[0] * self.window_size[1] + 1, -1)
        relative_position_bias = relative_position_bias.permute(2, 0, 1).contiguous()
        attn = attn + relative_position_bias.unsqueeze(0)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, -1)
        return self.proj(x)


class BEiT(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, 4, 4)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.norm1 = nn.LayerNorm(dim)
        self.attn = BEiTAttention(dim)
        self.gamma_1 = nn.Parameter(0.1 * torch.ones(dim))
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.gamma_2 = nn.Parameter(0.1 * torch.ones(dim))
        self.fc_norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        batch_size, seq_len, _ = x.size()
        cls_tokens = self.cls_token.expand(batch_size, -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x = x + self.gamma_1 * self.attn(self.norm1(x))
        x = x + self.gamma_2 * self.mlp(self.norm2(x))
        t = x[:, 1:, :]
        return self.fc_norm(t.mean(1))


# ---------------------------------------------------------------- CaiT (talking-heads attention, class attention)
class TalkingHeadAttn(nn.Module):
    def __init__(self, dim=16, num_heads=4):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.proj_l = nn.Linear(num_heads, num_heads)
        self.proj_w = nn.Linear(num_heads, num_heads)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = q @ k.transpose(-2, -1)
        attn = self.proj_l(attn.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        attn = attn.softmax(dim=-1)
        attn = self.proj_w(attn.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class ClassAttn(nn.Module):
    def __init__(self, dim=16, num_heads=4):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        q = self.q(x[:, 0]).unsqueeze(1).reshape(B, 1, self.num_heads, C // self.num_heads).permute(0, 2, 1, 3)
        k = self.k(x).reshape(B, N, self.num_heads, C // self.num_heads).permute(0, 2, 1, 3)
        q = q * self.scale
        v = self.v(x).reshape(B, N, self.num_heads, C // self.num_heads).permute(0, 2, 1, 3)
        attn = q @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        x_cls = (attn @ v).transpose(1, 2).reshape(B, 1, C)
        return self.proj(x_cls)


class CaiT(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.norm0 = nn.LayerNorm(dim)
        self.attn = TalkingHeadAttn(dim)
        self.gamma_1 = nn.Parameter(1e-1 * torch.ones(dim))
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.norm1 = nn.LayerNorm(dim)
        self.cattn = ClassAttn(dim)
        self.gamma_c = nn.Parameter(1e-1 * torch.ones(dim))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 5)

    def forward(self, tokens):
        x = tokens + self.gamma_1 * self.attn(self.norm0(tokens))
        cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
        u = torch.cat((cls_tokens, x), dim=1)
        cls_tokens = cls_tokens + self.gamma_c * self.cattn(self.norm1(u))
        x = torch.cat((cls_tokens, x), dim=1)
        x = self.norm(x)
        return self.head(x[:, 0])


# ---------------------------------------------------------------- XCiT (Fourier pos enc, cross-covariance attention, LPI)
class PositionalEncodingFourier(nn.Module):
    def __init__(self, hidden_dim=8, dim=16, temperature=10000):
        super().__init__()
        self.token_projection = nn.Conv2d(hidden_dim * 2, dim, kernel_size=1)
        self.scale = 2 * math.pi
        self.temperature = temperature
        self.hidden_dim = hidden_dim
        self.dim = dim
        self.eps = 1e-6

    def forward(self, B: int, H: int, W: int):
        device = self.token_projection.weight.device
        y_embed = torch.arange(1, H + 1, dtype=torch.float32, device=device).unsqueeze(1).repeat(1, 1, W)
        x_embed = torch.arange(1, W + 1, dtype=torch.float32, device=device).repeat(1, H, 1)
        y_embed = y_embed / (y_embed[:, -1:, :] + self.eps) * self.scale
        x_embed = x_embed / (x_embed[:, :, -1:] + self.eps) * self.scale
        dim_t = torch.arange(self.hidden_dim, dtype=torch.float32, device=device)
        dim_t = self.temperature ** (2 * torch.div(dim_t, 2, rounding_mode="floor") / self.hidden_dim)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack([pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()], dim=4).flatten(3)
        pos_y = torch.stack([pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()], dim=4).flatten(3)
        pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
        pos = self.token_projection(pos)
        return pos.repeat(B, 1, 1, 1)


class XCA(nn.Module):
    def __init__(self, dim=16, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.temperature = nn.Parameter(torch.rand(num_heads, 1, 1) + 0.5)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 4, 1)
        q, k, v = qkv.unbind(0)
        q = F.normalize(q, dim=-1)
        k = F.normalize(k, dim=-1)
        attn = (q @ k.transpose(-2, -1)) * self.temperature
        attn = attn.softmax(dim=-1)
        x = (attn @ v).permute(0, 3, 1, 2).reshape(B, N, C)
        return self.proj(x)


class LPI(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.conv1 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)
        self.act = nn.GELU()
        self.bn = nn.BatchNorm2d(dim)
        self.conv2 = nn.Conv2d(dim, dim, 3, padding=1, groups=dim)

    def forward(self, x, H: int, W: int):
        B, N, C = x.shape
        x = x.permute(0, 2, 1).reshape(B, C, H, W)
        x = self.conv2(self.bn(self.act(self.conv1(x))))
        return x.reshape(B, C, N).permute(0, 2, 1)


class XCiT(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.patch_embed = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.GELU(), nn.Conv2d(8, dim, 3, 2, 1))
        self.pos_embed = PositionalEncodingFourier(dim=dim)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = XCA(dim)
        self.gamma1 = nn.Parameter(0.5 * torch.ones(dim))
        self.norm3 = nn.LayerNorm(dim)
        self.local_mp = LPI(dim)
        self.gamma3 = nn.Parameter(0.5 * torch.ones(dim))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        B = x.shape[0]
        x = self.patch_embed(x)
        Hp, Wp = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose(1, 2)
        pos_encoding = self.pos_embed(B, Hp, Wp).reshape(B, -1, x.shape[1]).permute(0, 2, 1)
        x = x + pos_encoding
        x = x + self.gamma1 * self.attn(self.norm1(x))
        x = x + self.gamma3 * self.local_mp(self.norm3(x), Hp, Wp)
        return self.norm(x)


# ---------------------------------------------------------------- CoAtNet (MBConv + relative attention via gather of a bias table)
class SE(nn.Module):
    def __init__(self, inp, oup, expansion=0.25):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Linear(oup, int(inp * expansion), bias=False), nn.GELU(),
                                nn.Linear(int(inp * expansion), oup, bias=False), nn.Sigmoid())

    def forward(self, x):
        b, c, _, _ = x.size()
        y = self.avg_pool(x).view(b, c)
        y = self.fc(y).view(b, c, 1, 1)
        return x * y


class MBConv(nn.Module):
    def __init__(self, inp, oup):
        super().__init__()
        hidden = inp * 4
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.proj = nn.Conv2d(inp, oup, 1, 1, 0, bias=False)
        self.conv = nn.Sequential(nn.BatchNorm2d(inp), nn.Conv2d(inp, hidden, 1, 2, 0, bias=False), nn.BatchNorm2d(hidden),
                                  nn.GELU(), nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden, bias=False),
                                  nn.BatchNorm2d(hidden), nn.GELU(), SE(inp, hidden),
                                  nn.Conv2d(hidden, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup))

    def forward(self, x):
        return self.proj(self.pool(x)) + self.conv(x)


class CoAtAttention(nn.Module):
    def __init__(self, inp, oup, image_size, heads=2, dim_head=8):
        super().__init__()
        inner_dim = dim_head * heads
        self.ih, self.iw = image_size
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.relative_bias_table = nn.Parameter(torch.randn((2 * self.ih - 1) * (2 * self.iw - 1), heads))
        coords = torch.meshgrid((torch.arange(self.ih), torch.arange(self.iw)), indexing="ij")
        coords = torch.flatten(torch.stack(coords), 1)
        relative_coords = coords[:, :, None] - coords[:, None, :]
        relative_coords[0] += self.ih - 1
        relative_coords[1] += self.iw - 1
        relative_coords[0] *= 2 * self.iw - 1
        relative_coords = relative_coords.permute(1, 2, 0)  # 'c h w -> h w c'
        relative_index = relative_coords.sum(-1).flatten().unsqueeze(1)
        self.register_buffer("relative_index", relative_index)
        self.to_qkv = nn.Linear(inp, inner_dim * 3, bias=False)
        self.to_out = nn.Linear(inner_dim, oup)

    def forward(self, x):
        b, n, _ = x.shape
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = [t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in qkv]
        dots = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        relative_bias = self.relative_bias_table.gather(0, self.relative_index.repeat(1, self.heads))
        relative_bias = relative_bias.reshape(self.ih * self.iw, self.ih * self.iw, self.heads).permute(2, 0, 1)
        dots = dots + relative_bias.unsqueeze(0)
        attn = dots.softmax(dim=-1)
        out = torch.matmul(attn, v)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


class CoAtNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.s0 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.GELU())
        self.s1 = MBConv(8, 16)
        self.ih, self.iw = 4, 4
        self.norm = nn.LayerNorm(16)
        self.attn = CoAtAttention(16, 16, (4, 4))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 5, bias=False)

    def forward(self, x):
        x = self.s1(self.s0(x))
        b, c, h, w = x.shape
        t = x.flatten(2).transpose(1, 2)  # 'b c ih iw -> b (ih iw) c'
        t = t + self.attn(self.norm(t))
        x = t.transpose(1, 2).reshape(b, c, self.ih, self.iw)
        return self.fc(self.pool(x).view(-1, c))


# ---------------------------------------------------------------- RepVGG, deploy form (branches fused by the author's code)
def conv_bn(cin, cout, k, s, p, groups=1):
    r = nn.Sequential()
    r.add_module("conv", nn.Conv2d(cin, cout, k, s, p, groups=groups, bias=False))
    r.add_module("bn", nn.BatchNorm2d(cout))
    return r


class RepVGGBlock(nn.Module):
    def __init__(self, cin, cout, stride=1, groups=1):
        super().__init__()
        self.deploy = False
        self.groups = groups
        self.in_channels = cin
        self.nonlinearity = nn.ReLU()
        self.rbr_identity = nn.BatchNorm2d(cin) if cout == cin and stride == 1 else None
        self.rbr_dense = conv_bn(cin, cout, 3, stride, 1, groups)
        self.rbr_1x1 = conv_bn(cin, cout, 1, stride, 0, groups)
        self.cin, self.cout, self.stride = cin, cout, stride

    def forward(self, inputs):
        if hasattr(self, "rbr_reparam"):
            return self.nonlinearity(self.rbr_reparam(inputs))
        id_out = 0 if self.rbr_identity is None else self.rbr_identity(inputs)
        return self.nonlinearity(self.rbr_dense(inputs) + self.rbr_1x1(inputs) + id_out)

    def _fuse_bn_tensor(self, branch):
        if branch is None:
            return 0, 0
        if isinstance(branch, nn.Sequential):
            kernel = branch.conv.weight
            running_mean, running_var = branch.bn.running_mean, branch.bn.running_var
            gamma, beta, eps = branch.bn.weight, branch.bn.bias, branch.bn.eps
        else:
            input_dim = self.in_channels // self.groups
            kernel_value = np.zeros((self.in_channels, input_dim, 3, 3), dtype=np.float32)
            for i in range(self.in_channels):
                kernel_value[i, i % input_dim, 1, 1] = 1
            kernel = torch.from_numpy(kernel_value)
            running_mean, running_var = branch.running_mean, branch.running_var
            gamma, beta, eps = branch.weight, branch.bias, branch.eps
        std = (running_var + eps).sqrt()
        t = (gamma / std).reshape(-1, 1, 1, 1)
        return kernel * t, beta - running_mean * gamma / std

    def switch_to_deploy(self):
        k3, b3 = self._fuse_bn_tensor(self.rbr_dense)
        k1, b1 = self._fuse_bn_tensor(self.rbr_1x1)
        kid, bid = self._fuse_bn_tensor(self.rbr_identity)
        kernel = k3 + F.pad(k1, [1, 1, 1, 1]) + kid
        self.rbr_reparam = nn.Conv2d(self.cin, self.cout, 3, self.stride, 1, groups=self.groups, bias=True)
        self.rbr_reparam.weight.data = kernel.detach()
        self.rbr_reparam.bias.data = (b3 + b1 + bid).detach()
        for para in self.parameters():
            para.detach_()
        self.__delattr__("rbr_dense")
        self.__delattr__("rbr_1x1")
        if hasattr(self, "rbr_identity"):
            self.__delattr__("rbr_identity")
        self.deploy = True


class RepVGGDeploy(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage0 = RepVGGBlock(3, 8, 2)
        self.stage1 = nn.Sequential(RepVGGBlock(8, 16, 2), RepVGGBlock(16, 16, 1, groups=2), RepVGGBlock(16, 16, 1))
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.linear = nn.Linear(16, 5)
        randomize_bn(self)
        for m in self.modules():
            if isinstance(m, RepVGGBlock):
                m.switch_to_deploy()

    def forward(self, x):
        out = self.stage1(self.stage0(x))
        return self.linear(self.gap(out).view(out.size(0), -1))


# ---------------------------------------------------------------- GhostNetV2 (DFC attention: pooled, gated, nearest-upsampled to out's size)
class GhostModuleV2(nn.Module):
    def __init__(self, inp, oup, mode="attn"):
        super().__init__()
        self.mode = mode
        self.gate_fn = nn.Sigmoid()
        self.oup = oup
        init_channels = math.ceil(oup / 2)
        new_channels = init_channels
        self.primary_conv = nn.Sequential(nn.Conv2d(inp, init_channels, 1, 1, 0, bias=False),
                                          nn.BatchNorm2d(init_channels), nn.ReLU(inplace=True))
        self.cheap_operation = nn.Sequential(nn.Conv2d(init_channels, new_channels, 3, 1, 1, groups=init_channels, bias=False),
                                             nn.BatchNorm2d(new_channels), nn.ReLU(inplace=True))
        self.short_conv = nn.Sequential(
            nn.Conv2d(inp, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup),
            nn.Conv2d(oup, oup, kernel_size=(1, 5), stride=1, padding=(0, 2), groups=oup, bias=False), nn.BatchNorm2d(oup),
            nn.Conv2d(oup, oup, kernel_size=(5, 1), stride=1, padding=(2, 0), groups=oup, bias=False), nn.BatchNorm2d(oup))

    def forward(self, x):
        res = self.short_conv(F.avg_pool2d(x, kernel_size=2, stride=2))
        x1 = self.primary_conv(x)
        x2 = self.cheap_operation(x1)
        out = torch.cat([x1, x2], dim=1)
        return out[:, :self.oup, :, :] * F.interpolate(self.gate_fn(res), size=(out.shape[-2], out.shape[-1]), mode="nearest")


class GhostNetV2(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.ghost1 = GhostModuleV2(8, 15)
        self.ghost2 = GhostModuleV2(15, 8)
        randomize_bn(self)

    def forward(self, x):
        x = self.conv_stem(x)
        return x + self.ghost2(self.ghost1(x))


VISION5 = [
    ("v5_convnextv2_grn", lambda: Spec(ConvNeXtV2(), ["2x3x32x32"], ["x"], IMG)),
    ("v5_efficientformer_ab", lambda: Spec(EfficientFormer(), ["2x3x16x16"], ["x"], BATCH, modes=("trace",))),
    ("v5_levit_bias_idx", lambda: Spec(randomize_bn(LeViT()), ["2x3x16x16"], ["x"], BATCH, modes=("trace",))),
    ("v5_beit_relpos", lambda: Spec(BEiT(), ["2x3x16x16"], ["x"], BATCH, modes=("trace",))),
    ("v5_cait_talking_class", lambda: Spec(CaiT(), ["2x9x16"], ["tokens"], ["tokens:0=b,1=n"])),
    ("v5_xcit_xca_lpi", lambda: Spec(randomize_bn(XCiT()), ["2x3x16x24"], ["x"], IMG)),
    ("v5_coatnet_relbias", lambda: Spec(randomize_bn(CoAtNet()), ["2x3x16x16"], ["x"], BATCH)),
    ("v5_repvgg_deploy", lambda: Spec(RepVGGDeploy(), ["2x3x16x16"], ["x"], IMG)),
    ("v5_ghostnetv2_dfc", lambda: Spec(GhostNetV2(), ["1x3x18x22"], ["x"], IMG)),
]
