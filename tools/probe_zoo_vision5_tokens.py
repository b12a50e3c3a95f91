"""The probe sweep's models, round 5 (probe5v), part 4: token mixers on feature maps (MobileViTv2's
F.unfold/F.fold patches, PVTv2's spatial-reduction attention with H, W passed as ints). Listed in
VISION5_TOKENS.
"""
from typing import Tuple

import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec
from probe_zoo_vision5 import IMG, randomize_bn


# ---------------------------------------------------------------- MobileViTv2 (F.unfold patches, separable linear attention, F.fold)
class LinearSelfAttention(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.qkv_proj = nn.Conv2d(embed_dim, 1 + 2 * embed_dim, 1)
        self.out_proj = nn.Conv2d(embed_dim, embed_dim, 1)
        self.embed_dim = embed_dim

    def forward(self, x):
        qkv = self.qkv_proj(x)  # [B, 1 + 2d, P, N]
        query, key, value = torch.split(qkv, split_size_or_sections=[1, self.embed_dim, self.embed_dim], dim=1)
        context_scores = F.softmax(query, dim=-1)
        context_vector = key * context_scores
        context_vector = torch.sum(context_vector, dim=-1, keepdim=True)
        out = F.relu(value) * context_vector.expand_as(value)
        return self.out_proj(out)


class MobileViTV2Block(nn.Module):
    def __init__(self, c=8, d=16, patch=2):
        super().__init__()
        self.local_rep = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, groups=c), nn.BatchNorm2d(c), nn.SiLU(), nn.Conv2d(c, d, 1, bias=False))
        self.norm1 = nn.GroupNorm(1, d)
        self.attn = LinearSelfAttention(d)
        self.norm2 = nn.GroupNorm(1, d)
        self.ffn = nn.Sequential(nn.Conv2d(d, 2 * d, 1), nn.SiLU(), nn.Conv2d(2 * d, d, 1))
        self.conv_proj = nn.Sequential(nn.Conv2d(d, c, 1, bias=False), nn.BatchNorm2d(c))
        self.patch_h = self.patch_w = patch

    def unfolding_pytorch(self, feature_map) -> Tuple[torch.Tensor, Tuple[int, int]]:
        batch_size, in_channels, img_h, img_w = feature_map.shape
        patches = F.unfold(feature_map, kernel_size=(self.patch_h, self.patch_w), stride=(self.patch_h, self.patch_w))
        patches = patches.reshape(batch_size, in_channels, self.patch_h * self.patch_w, -1)
        return patches, (img_h, img_w)

    def folding_pytorch(self, patches, output_size: Tuple[int, int]):
        batch_size, in_dim, patch_size, n_patches = patches.shape
        patches = patches.reshape(batch_size, in_dim * patch_size, n_patches)
        return F.fold(patches, output_size=output_size, kernel_size=(self.patch_h, self.patch_w),
                      stride=(self.patch_h, self.patch_w))

    def forward(self, x):
        fm = self.local_rep(x)
        patches, output_size = self.unfolding_pytorch(fm)
        patches = patches + self.attn(self.norm1(patches))
        patches = patches + self.ffn(self.norm2(patches))
        fm = self.folding_pytorch(patches, output_size)
        return self.conv_proj(fm)


# ---------------------------------------------------------------- PVTv2 (spatial-reduction attention, DWConv MLP with H, W)
class PVTAttention(nn.Module):
    def __init__(self, dim=16, num_heads=2, sr_ratio=2):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, dim * 2)
        self.proj = nn.Linear(dim, dim)
        self.sr_ratio = sr_ratio
        self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, H: int, W: int):
        B, N, C = x.shape
        q = self.q(x).reshape(B, N, self.num_heads, C // self.num_heads).permute(0, 2, 1, 3)
        x_ = x.permute(0, 2, 1).reshape(B, C, H, W)
        x_ = self.sr(x_).reshape(B, C, -1).permute(0, 2, 1)
        x_ = self.norm(x_)
        kv = self.kv(x_).reshape(B, -1, 2, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class DWConvMlp(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.dwconv = nn.Conv2d(2 * dim, 2 * dim, 3, 1, 1, groups=2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x, H: int, W: int):
        x = self.fc1(x)
        B, N, C = x.shape
        x = x.transpose(1, 2).view(B, C, H, W)
        x = self.dwconv(x).flatten(2).transpose(1, 2)
        return self.fc2(F.gelu(x))


class PVTv2(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, 7, 4, 3)
        self.pe_norm = nn.LayerNorm(dim)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = PVTAttention(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = DWConvMlp(dim)

    def forward(self, x):
        B = x.shape[0]
        x = self.patch_embed(x)
        _, _, H, W = x.shape
        x = self.pe_norm(x.flatten(2).transpose(1, 2))
        x = x + self.attn(self.norm1(x), H, W)
        x = x + self.mlp(self.norm2(x), H, W)
        return x.reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()


VISION5_TOKENS = [
    ("v5_mobilevitv2_unfold", lambda: Spec(randomize_bn(MobileViTV2Block()), ["1x8x8x12"], ["x"], IMG, modes=("trace",))),
    ("v5_pvtv2_sr_attn", lambda: Spec(PVTv2(), ["2x3x32x24"], ["x"], IMG)),
]
