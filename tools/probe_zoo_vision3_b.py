"""The probe sweep's models, round 3, part 2 (listed in probe_zoo_vision3.VISION3): depth, stereo, video,
low-level vision (restoration, super-resolution, frame interpolation) and detection odds and ends.
Written the way their authors write them (from memory of the real code), random weights, small sizes.
"""
import math
from typing import List

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torch import nn

from probe_zoo import Spec
from probe_zoo_vision import LayerNorm2dMeanVar as LayerNorm2d, cbr  # NAFNet's LayerNorm2d: mean/var over channels


# ---------------------------------------------------------------- MiDaS small (fusion blocks)
class ResidualConvUnit(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, 1, 1)
        self.conv2 = nn.Conv2d(c, c, 3, 1, 1)
        self.activation = nn.ReLU(False)
        self.skip_add = nn.quantized.FloatFunctional()

    def forward(self, x):
        out = self.conv2(self.activation(self.conv1(self.activation(x))))
        return self.skip_add.add(out, x)


class FeatureFusionBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.resConfUnit1 = ResidualConvUnit(c)
        self.resConfUnit2 = ResidualConvUnit(c)
        self.out_conv = nn.Conv2d(c, c, 1)

    def forward(self, x, skip: List[torch.Tensor]):
        output = x
        if len(skip) == 1:
            output = output + self.resConfUnit1(skip[0])
        output = self.resConfUnit2(output)
        output = F.interpolate(output, scale_factor=2.0, mode="bilinear", align_corners=True)
        return self.out_conv(output)


def dw_sep(cin, cout, s):
    return nn.Sequential(nn.Conv2d(cin, cin, 3, s, 1, groups=cin, bias=False), nn.BatchNorm2d(cin), nn.ReLU6(),
                         nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout))


class MiDaSSmall(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.layer1 = nn.Sequential(cbr(3, 8, s=2), dw_sep(8, 8, 2))
        self.layer2 = dw_sep(8, 16, 2)
        self.layer3 = dw_sep(16, 24, 2)
        self.layer4 = dw_sep(24, 32, 2)
        self.layer_rn = nn.ModuleList([nn.Conv2d(ci, c, 3, 1, 1, bias=False) for ci in (8, 16, 24, 32)])
        self.refinenet = nn.ModuleList([FeatureFusionBlock(c) for _ in range(4)])
        self.output_conv = nn.Sequential(nn.Conv2d(c, c // 2, 3, 1, 1), nn.Upsample(scale_factor=2, mode="bilinear"),
                                         nn.Conv2d(c // 2, 4, 3, 1, 1), nn.ReLU(True), nn.Conv2d(4, 1, 1), nn.ReLU(True))

    def forward(self, x):
        l1 = self.layer1(x)
        l2 = self.layer2(l1)
        l3 = self.layer3(l2)
        l4 = self.layer4(l3)
        rn = [self.layer_rn[0](l1), self.layer_rn[1](l2), self.layer_rn[2](l3), self.layer_rn[3](l4)]
        path_4 = self.refinenet[3](rn[3], [])
        path_3 = self.refinenet[2](path_4, [rn[2]])
        path_2 = self.refinenet[1](path_3, [rn[1]])
        path_1 = self.refinenet[0](path_2, [rn[0]])
        return torch.squeeze(self.output_conv(path_1), dim=1)


# ---------------------------------------------------------------- monodepth2 depth decoder
class Conv3x3(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.pad = nn.ReflectionPad2d(1)
        self.conv = nn.Conv2d(cin, cout, 3)

    def forward(self, x):
        return self.conv(self.pad(x))


def disp_to_depth(disp, min_depth: float, max_depth: float):
    min_disp = 1 / max_depth
    max_disp = 1 / min_depth
    scaled_disp = min_disp + (max_disp - min_disp) * disp
    return scaled_disp, 1 / scaled_disp


class Monodepth2(nn.Module):
    def __init__(self):
        super().__init__()
        ch = [8, 16, 32]
        self.enc = nn.ModuleList([cbr(3, 8, s=2), cbr(8, 16, s=2), cbr(16, 32, s=2)])
        self.upconv0 = nn.ModuleList([nn.Sequential(Conv3x3(ch[i], ch[i] // 2), nn.ELU(inplace=True)) for i in range(3)])
        self.upconv1 = nn.ModuleList([nn.Sequential(Conv3x3(ch[i] // 2 + (ch[i - 1] if i > 0 else 0), ch[i] // 2), nn.ELU(inplace=True)) for i in range(3)])
        self.dispconv = nn.ModuleList([Conv3x3(ch[i] // 2, 1) for i in range(3)])

    def forward(self, img):
        feats: List[torch.Tensor] = []
        x = img
        for e in self.enc:
            x = e(x)
            feats.append(x)
        x = feats[-1]
        disps: List[torch.Tensor] = []
        for i in range(2, -1, -1):
            x = self.upconv0[i](x)
            x = F.interpolate(x, scale_factor=2, mode="nearest")
            if i > 0:
                x = torch.cat([x, feats[i - 1]], 1)
            x = self.upconv1[i](x)
            disps.append(torch.sigmoid(self.dispconv[i](x)))
        _, depth = disp_to_depth(disps[-1], 0.1, 100.0)
        return disps[-1], depth


# ---------------------------------------------------------------- stereo: cost volumes, 3-D aggregation, soft-argmin
def groupwise_correlation(fea1, fea2, num_groups: int):
    B, C, H, W = fea1.shape
    cpg = C // num_groups
    return (fea1 * fea2).view([B, num_groups, cpg, H, W]).mean(dim=2)


class GwcStereo(nn.Module):
    """GwcNet-style: correlations per disparity by slicing, padded and stacked."""

    def __init__(self, maxdisp=12, groups=4):
        super().__init__()
        self.maxdisp = maxdisp
        self.groups = groups
        self.feature = nn.Sequential(cbr(3, 8, s=2), cbr(8, 8, s=2))
        self.agg = nn.Sequential(nn.Conv3d(groups, 8, 3, 1, 1), nn.BatchNorm3d(8), nn.ReLU(), nn.Conv3d(8, 1, 3, 1, 1))

    def forward(self, left, right):
        fl = self.feature(left)
        fr = self.feature(right)
        D = self.maxdisp // 4
        costs: List[torch.Tensor] = []
        for i in range(D):
            if i > 0:
                c = groupwise_correlation(fl[:, :, :, i:], fr[:, :, :, :-i], self.groups)
                costs.append(F.pad(c, [i, 0, 0, 0]))
            else:
                costs.append(groupwise_correlation(fl, fr, self.groups))
        volume = torch.stack(costs, dim=2).contiguous()
        cost = self.agg(volume)
        cost = F.interpolate(cost, [self.maxdisp, left.size()[2], left.size()[3]], mode="trilinear", align_corners=False)
        cost = torch.squeeze(cost, 1)
        pred = F.softmax(cost, dim=1)
        disp_values = torch.arange(0, self.maxdisp, dtype=pred.dtype, device=pred.device).view(1, self.maxdisp, 1, 1)
        return torch.sum(pred * disp_values, 1)


class PSMCostVolume(nn.Module):
    """PSMNet-style: concatenation volume filled by in-place slice writes into new_zeros."""

    def __init__(self, maxdisp=4):
        super().__init__()
        self.maxdisp = maxdisp
        self.feature = cbr(3, 4, s=2)
        self.agg = nn.Sequential(nn.Conv3d(8, 4, 3, 1, 1), nn.ReLU(), nn.Conv3d(4, 1, 3, 1, 1))

    def forward(self, left, right):
        refimg_fea = self.feature(left)
        targetimg_fea = self.feature(right)
        B, C, H, W = refimg_fea.shape
        cost = refimg_fea.new_zeros([B, 2 * C, self.maxdisp, H, W])
        for i in range(self.maxdisp):
            if i > 0:
                cost[:, :C, i, :, i:] = refimg_fea[:, :, :, i:]
                cost[:, C:, i, :, i:] = targetimg_fea[:, :, :, :-i]
            else:
                cost[:, :C, i, :, :] = refimg_fea
                cost[:, C:, i, :, :] = targetimg_fea
        cost = self.agg(cost.contiguous()).squeeze(1)
        pred = F.softmin(cost, dim=1)  # soft-argmin over the cost
        disp = torch.arange(self.maxdisp, dtype=pred.dtype).view(1, -1, 1, 1)
        return (pred * disp).sum(1)


# ---------------------------------------------------------------- X3D block, TimeSformer, TSM
class SE3d(nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.fc1 = nn.Conv3d(c, c // r, 1)
        self.fc2 = nn.Conv3d(c // r, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool3d(x, 1)
        return x * torch.sigmoid(self.fc2(F.relu(self.fc1(s))))


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class X3DBlock(nn.Module):
    def __init__(self, c=8, inner=16):
        super().__init__()
        self.stem_xy = nn.Conv3d(3, c, (1, 3, 3), (1, 2, 2), (0, 1, 1), bias=False)
        self.stem_t = nn.Conv3d(c, c, (5, 1, 1), 1, (2, 0, 0), groups=c, bias=False)
        self.a = nn.Sequential(nn.Conv3d(c, inner, 1, bias=False), nn.BatchNorm3d(inner), nn.ReLU())
        self.b = nn.Conv3d(inner, inner, 3, (1, 2, 2), 1, groups=inner, bias=False)
        self.b_bn = nn.BatchNorm3d(inner)
        self.se = SE3d(inner)
        self.act = Swish()
        self.c = nn.Sequential(nn.Conv3d(inner, c, 1, bias=False), nn.BatchNorm3d(c))
        self.branch1 = nn.Sequential(nn.Conv3d(c, c, 1, (1, 2, 2), bias=False), nn.BatchNorm3d(c))
        self.head = nn.Linear(c, 5)

    def forward(self, x):
        x = self.stem_t(self.stem_xy(x))
        y = self.c(self.act(self.se(self.b_bn(self.b(self.a(x))))))
        x = F.relu(self.branch1(x) + y)
        x = F.adaptive_avg_pool3d(x, 1).flatten(1)
        return self.head(x)


class DividedSTAttention(nn.Module):
    def __init__(self, d=16, heads=2, t=4):
        super().__init__()
        self.T = t
        self.num_heads = heads
        self.temporal_norm1 = nn.LayerNorm(d)
        self.temporal_attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.temporal_fc = nn.Linear(d, d)
        self.norm1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.patch = nn.Conv2d(3, d, 4, 4)
        self.cls_token = nn.Parameter(torch.randn(1, 1, d))

    def forward(self, video):
        B, C, T, H, W = video.shape
        x = self.patch(video.permute(0, 2, 1, 3, 4).reshape(B * T, C, H, W))
        W_ = x.size(-1)
        x = x.flatten(2).transpose(1, 2)  # (b t) n d
        n = x.size(1)
        x = x.reshape(B, T, n, -1).permute(0, 2, 1, 3).reshape(B, n * T, -1)  # b (n t) d
        x = torch.cat((self.cls_token.expand(B, -1, -1), x), dim=1)
        # temporal: 'b (h w t) m -> (b h w) t m'
        xt = x[:, 1:, :].reshape(B * n, T, -1)
        nt = self.temporal_norm1(xt)
        res_temporal = self.temporal_attn(nt, nt, nt)[0]
        res_temporal = self.temporal_fc(res_temporal.reshape(B, n * T, -1))
        xt = x[:, 1:, :] + res_temporal
        # spatial: 'b (h w t) m -> (b t) (h w) m' with the cls token repeated per frame
        init_cls_token = x[:, 0, :].unsqueeze(1)
        cls_token = init_cls_token.repeat(1, T, 1).reshape(B * T, -1).unsqueeze(1)
        xs = xt.reshape(B, n, T, -1).permute(0, 2, 1, 3).reshape(B * T, n, -1)
        xs = torch.cat((cls_token, xs), 1)
        ns = self.norm1(xs)
        res_spatial = self.attn(ns, ns, ns)[0]
        cls_token = res_spatial[:, 0, :].reshape(B, T, -1).mean(1, True)
        res_spatial = res_spatial[:, 1:, :].reshape(B, T, n, -1).permute(0, 2, 1, 3).reshape(B, n * T, -1)
        x = torch.cat((init_cls_token, xt), 1) + torch.cat((cls_token, res_spatial), 1)
        return x, W_


class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=4, n_div=4):
        super().__init__()
        self.net = net
        self.n_segment = n_segment
        self.fold_div = n_div

    @staticmethod
    def shift(x, n_segment: int, fold_div: int = 3):
        nt, c, h, w = x.size()
        n_batch = nt // n_segment
        x = x.view(n_batch, n_segment, c, h, w)
        fold = c // fold_div
        out = torch.zeros_like(x)
        out[:, :-1, :fold] = x[:, 1:, :fold]  # shift left
        out[:, 1:, fold: 2 * fold] = x[:, :-1, fold: 2 * fold]  # shift right
        out[:, :, 2 * fold:] = x[:, :, 2 * fold:]  # not shift
        return out.view(nt, c, h, w)

    def forward(self, x):
        return self.net(self.shift(x, self.n_segment, self.fold_div))


class TSM(nn.Module):
    def __init__(self, n_segment=4):
        super().__init__()
        self.n_segment = n_segment
        self.conv1 = cbr(3, 8, s=2)
        self.block = TemporalShift(nn.Conv2d(8, 8, 3, 1, 1), n_segment)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = self.block(self.conv1(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        base_out = self.fc(x)
        base_out = base_out.view((-1, self.n_segment) + base_out.size()[1:])
        return base_out.mean(dim=1)


# ---------------------------------------------------------------- SwinIR (shifted windows with a computed mask, reflect pad, pixel shuffle)
def window_partition(x, window_size: int):
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)


def window_reverse(windows, window_size: int, H: int, W: int):
    B = int(windows.shape[0] / (H * W / window_size / window_size))
    x = windows.view(B, H // window_size, W // window_size, window_size, window_size, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class SwinIRLayer(nn.Module):
    def __init__(self, d=16, heads=2, ws=4, shift=2):
        super().__init__()
        self.window_size = ws
        self.shift_size = shift
        self.num_heads = heads
        self.norm1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.scale = (d // heads) ** -0.5
        self.relative_position_bias_table = nn.Parameter(torch.randn((2 * ws - 1) * (2 * ws - 1), heads) * 0.02)
        coords = torch.stack(torch.meshgrid([torch.arange(ws), torch.arange(ws)], indexing="ij"))
        cf = torch.flatten(coords, 1)
        rel = (cf[:, :, None] - cf[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += ws - 1
        rel[:, :, 1] += ws - 1
        rel[:, :, 0] *= 2 * ws - 1
        self.register_buffer("relative_position_index", rel.sum(-1))
        self.norm2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def calculate_mask(self, H: int, W: int):
        img_mask = torch.zeros((1, H, W, 1))
        ws, s = self.window_size, self.shift_size
        cnt = 0
        for h in [(0, H - ws), (H - ws, H - s), (H - s, H)]:
            for w in [(0, W - ws), (W - ws, W - s), (W - s, W)]:
                img_mask[:, h[0]:h[1], w[0]:w[1], :] = cnt
                cnt += 1
        mask_windows = window_partition(img_mask, ws).view(-1, ws * ws)
        attn_mask = mask_windows.unsqueeze(1) - mask_windows.unsqueeze(2)
        return attn_mask.masked_fill(attn_mask != 0, float(-100.0)).masked_fill(attn_mask == 0, float(0.0))

    def forward(self, x, H: int, W: int):
        B, L, C = x.shape
        ws = self.window_size
        shortcut = x
        x = self.norm1(x).view(B, H, W, C)
        x = torch.roll(x, shifts=(-self.shift_size, -self.shift_size), dims=(1, 2))
        xw = window_partition(x, ws).view(-1, ws * ws, C)
        B_, N, _ = xw.shape
        qkv = self.qkv(xw).reshape(B_, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.scale) @ k.transpose(-2, -1)
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(N, N, -1)
        attn = attn + bias.permute(2, 0, 1).contiguous().unsqueeze(0)
        mask = self.calculate_mask(H, W).to(x.device)
        nW = mask.shape[0]
        attn = attn.view(B_ // nW, nW, self.num_heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
        attn = attn.view(-1, self.num_heads, N, N).softmax(-1)
        xw = self.proj((attn @ v).transpose(1, 2).reshape(B_, N, C))
        x = window_reverse(xw.view(-1, ws, ws, C), ws, H, W)
        x = torch.roll(x, shifts=(self.shift_size, self.shift_size), dims=(1, 2)).view(B, H * W, C)
        x = shortcut + x
        return x + self.mlp(self.norm2(x))


class SwinIR(nn.Module):
    def __init__(self, d=16, upscale=2, ws=4):
        super().__init__()
        self.window_size = ws
        self.upscale = upscale
        self.conv_first = nn.Conv2d(3, d, 3, 1, 1)
        self.layer = SwinIRLayer(d, ws=ws)
        self.conv_after_body = nn.Conv2d(d, d, 3, 1, 1)
        self.upsample = nn.Sequential(nn.Conv2d(d, 4 * d, 3, 1, 1), nn.PixelShuffle(2))
        self.conv_last = nn.Conv2d(d, 3, 3, 1, 1)

    def check_image_size(self, x):
        _, _, h, w = x.size()
        mod_pad_h = (self.window_size - h % self.window_size) % self.window_size
        mod_pad_w = (self.window_size - w % self.window_size) % self.window_size
        return F.pad(x, (0, mod_pad_w, 0, mod_pad_h), "reflect")

    def forward(self, x):
        H, W = x.shape[2:]
        x = self.check_image_size(x)
        x = self.conv_first(x)
        h, w = x.shape[2], x.shape[3]
        t = x.flatten(2).transpose(1, 2)
        t = self.layer(t, h, w)
        y = t.transpose(1, 2).view(x.shape[0], -1, h, w)
        x = self.conv_after_body(y) + x
        x = self.conv_last(self.upsample(x))
        return x[:, :, :H * self.upscale, :W * self.upscale]


# ---------------------------------------------------------------- NAFNet, Restormer
class SimpleGate(nn.Module):
    def forward(self, x):
        x1, x2 = x.chunk(2, dim=1)
        return x1 * x2


class NAFBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        dw = 2 * c
        self.conv1 = nn.Conv2d(c, dw, 1)
        self.conv2 = nn.Conv2d(dw, dw, 3, padding=1, groups=dw)
        self.conv3 = nn.Conv2d(dw // 2, c, 1)
        self.sca = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(dw // 2, dw // 2, 1))
        self.sg = SimpleGate()
        self.conv4 = nn.Conv2d(c, 2 * c, 1)
        self.conv5 = nn.Conv2d(c, c, 1)
        self.norm1 = LayerNorm2d(c)
        self.norm2 = LayerNorm2d(c)
        self.beta = nn.Parameter(torch.randn((1, c, 1, 1)) * 0.1)
        self.gamma = nn.Parameter(torch.randn((1, c, 1, 1)) * 0.1)

    def forward(self, inp):
        x = self.sg(self.conv2(self.conv1(self.norm1(inp))))
        x = self.conv3(x * self.sca(x))
        y = inp + x * self.beta
        x = self.conv5(self.sg(self.conv4(self.norm2(y))))
        return y + x * self.gamma


class NAFNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.intro = nn.Conv2d(3, c, 3, padding=1)
        self.enc = NAFBlock(c)
        self.down = nn.Conv2d(c, 2 * c, 2, 2)
        self.middle = NAFBlock(2 * c)
        self.up = nn.Sequential(nn.Conv2d(2 * c, 4 * c, 1, bias=False), nn.PixelShuffle(2))
        self.dec = NAFBlock(c)
        self.ending = nn.Conv2d(c, 3, 3, padding=1)
        self.padder_size = 2

    def forward(self, inp):
        B, C, H, W = inp.shape
        mod_pad_h = (self.padder_size - H % self.padder_size) % self.padder_size
        mod_pad_w = (self.padder_size - W % self.padder_size) % self.padder_size
        x = F.pad(inp, (0, mod_pad_w, 0, mod_pad_h))
        x = self.intro(x)
        e = self.enc(x)
        x = self.up(self.middle(self.down(e))) + e
        x = self.ending(self.dec(x))
        x = x + F.pad(inp, (0, mod_pad_w, 0, mod_pad_h))
        return x[:, :, :H, :W]


class RestormerLN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(c))
        self.bias = nn.Parameter(torch.zeros(c))

    def forward(self, x):
        h, w = x.shape[-2:]
        x = x.flatten(2).transpose(1, 2)  # to_3d: b c h w -> b (h w) c
        mu = x.mean(-1, keepdim=True)
        sigma = x.var(-1, keepdim=True, unbiased=False)
        x = (x - mu) / torch.sqrt(sigma + 1e-5) * self.weight + self.bias
        return x.transpose(1, 2).reshape(x.shape[0], -1, h, w)  # to_4d


class TransposedAttention(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.num_heads = heads
        self.temperature = nn.Parameter(torch.ones(heads, 1, 1) + 0.1)
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.qkv_dwconv = nn.Conv2d(3 * c, 3 * c, 3, 1, 1, groups=3 * c)
        self.project_out = nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv_dwconv(self.qkv(x)).chunk(3, dim=1)
        q = q.reshape(b, self.num_heads, -1, h * w)
        k = k.reshape(b, self.num_heads, -1, h * w)
        v = v.reshape(b, self.num_heads, -1, h * w)
        q = F.normalize(q, dim=-1)
        k = F.normalize(k, dim=-1)
        attn = (q @ k.transpose(-2, -1)) * self.temperature
        out = attn.softmax(dim=-1) @ v
        return self.project_out(out.reshape(b, c, h, w))


class GDFN(nn.Module):
    def __init__(self, c, factor=2.66):
        super().__init__()
        hidden = int(c * factor)
        self.project_in = nn.Conv2d(c, hidden * 2, 1)
        self.dwconv = nn.Conv2d(hidden * 2, hidden * 2, 3, 1, 1, groups=hidden * 2)
        self.project_out = nn.Conv2d(hidden, c, 1)

    def forward(self, x):
        x1, x2 = self.dwconv(self.project_in(x)).chunk(2, dim=1)
        return self.project_out(F.gelu(x1) * x2)


class Restormer(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, c, 3, 1, 1)
        self.norm1 = RestormerLN(c)
        self.attn = TransposedAttention(c, 2)
        self.norm2 = RestormerLN(c)
        self.ffn = GDFN(c)
        self.down = nn.Sequential(nn.Conv2d(c, c // 2, 3, 1, 1, bias=False), nn.PixelUnshuffle(2))
        self.up = nn.Sequential(nn.Conv2d(2 * c, 4 * c, 3, 1, 1, bias=False), nn.PixelShuffle(2))
        self.output = nn.Conv2d(c, 3, 3, 1, 1)

    def forward(self, img):
        x = self.patch_embed(img)
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        x = self.up(self.down(x)) + x
        return self.output(x) + img


# ---------------------------------------------------------------- RIFE-style flow warp, Real-ESRGAN, deblur
def rife_warp(tenInput, tenFlow):
    B, _, H, W = tenFlow.shape
    tenHorizontal = torch.linspace(-1.0, 1.0, W, device=tenFlow.device).view(1, 1, 1, W).expand(B, -1, H, -1)
    tenVertical = torch.linspace(-1.0, 1.0, H, device=tenFlow.device).view(1, 1, H, 1).expand(B, -1, -1, W)
    g = torch.cat([tenHorizontal, tenVertical], 1)
    tenFlow = torch.cat([tenFlow[:, 0:1, :, :] / ((tenInput.shape[3] - 1.0) / 2.0),
                         tenFlow[:, 1:2, :, :] / ((tenInput.shape[2] - 1.0) / 2.0)], 1)
    grid = (g + tenFlow).permute(0, 2, 3, 1)
    return F.grid_sample(input=tenInput, grid=grid, mode="bilinear", padding_mode="border", align_corners=True)


def flow_warp_meshgrid(x, flow):
    """basicsr flow_warp: pixel grid from meshgrid, normalized to [-1, 1]."""
    _, _, h, w = x.size()
    grid_y, grid_x = torch.meshgrid(torch.arange(0, h).type_as(x), torch.arange(0, w).type_as(x), indexing="ij")
    grid = torch.stack((grid_x, grid_y), 2).float()
    vgrid = grid + flow.permute(0, 2, 3, 1)
    vgrid_x = 2.0 * vgrid[:, :, :, 0] / max(w - 1, 1) - 1.0
    vgrid_y = 2.0 * vgrid[:, :, :, 1] / max(h - 1, 1) - 1.0
    vgrid_scaled = torch.stack((vgrid_x, vgrid_y), dim=3)
    return F.grid_sample(x, vgrid_scaled, mode="bilinear", padding_mode="zeros", align_corners=True)


class RIFELite(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.conv0 = nn.Sequential(cbr(6, c, s=2), cbr(c, c, s=2))
        self.lastconv = nn.ConvTranspose2d(c, 5, 4, 2, 1)

    def forward(self, img0, img1):
        x = torch.cat((img0, img1), 1)
        flow = self.lastconv(self.conv0(x))
        flow = F.interpolate(flow, scale_factor=2.0, mode="bilinear", align_corners=False) * 2.0
        mask = torch.sigmoid(flow[:, 4:5])
        w0 = rife_warp(img0, flow[:, :2])
        w1 = flow_warp_meshgrid(img1, flow[:, 2:4])
        return w0 * mask + w1 * (1 - mask)


class RealESRGANx2(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.conv_first = nn.Conv2d(3 * 4, c, 3, 1, 1)
        self.body = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(c, c, 3, 1, 1))
        self.conv_up1 = nn.Conv2d(c, c, 3, 1, 1)
        self.conv_up2 = nn.Conv2d(c, c, 3, 1, 1)
        self.conv_last = nn.Conv2d(c, 3, 3, 1, 1)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2, inplace=True)

    def forward(self, x):
        feat = F.pixel_unshuffle(x, downscale_factor=2)
        feat = self.conv_first(feat)
        feat = feat + self.body(feat)
        feat = self.lrelu(self.conv_up1(F.interpolate(feat, scale_factor=2, mode="nearest")))
        feat = self.lrelu(self.conv_up2(F.interpolate(feat, scale_factor=2, mode="nearest")))
        return self.conv_last(feat)


class DeblurUNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.e1 = cbr(3, c)
        self.e2 = cbr(c, 2 * c, s=2)
        self.e3 = cbr(2 * c, 4 * c, s=2)
        self.d3 = nn.ConvTranspose2d(4 * c, 2 * c, 3, stride=2, padding=1, output_padding=1)
        self.d2 = nn.ConvTranspose2d(2 * c, c, 3, stride=2, padding=1, output_padding=1)
        self.out = nn.Conv2d(c, 3, 3, 1, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(e1)
        e3 = self.e3(e2)
        d2 = F.relu(self.d3(e3)) + e2
        d1 = F.relu(self.d2(d2)) + e1
        return x + self.out(d1)


# ---------------------------------------------------------------- detection odds and ends
class YOLOv8NMS(nn.Module):
    """End-to-end export: decode + score filter + torchvision batched_nms in the graph (traced)."""

    def __init__(self, nc=3, conf=0.3, iou=0.5):
        super().__init__()
        self.nc = nc
        self.conf = conf
        self.iou = iou
        self.stem = nn.Sequential(cbr(3, 8, s=2), cbr(8, 8, s=2), cbr(8, 8, s=2))
        self.box = nn.Conv2d(8, 4, 1)
        self.cls = nn.Conv2d(8, nc, 1)

    def forward(self, x):
        f = self.stem(x)
        b, _, h, w = f.shape
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
        anchors = torch.stack((xs + 0.5, ys + 0.5), -1).view(-1, 2)
        ltrb = F.softplus(self.box(f)).flatten(2).transpose(1, 2)[0]
        scores = self.cls(f).sigmoid().flatten(2).transpose(1, 2)[0]
        boxes = torch.cat((anchors - ltrb[:, :2], anchors + ltrb[:, 2:]), 1) * 8.0
        conf, j = scores.max(1)
        keep = conf > self.conf
        boxes, conf, j = boxes[keep], conf[keep], j[keep]
        i = torchvision.ops.batched_nms(boxes, conf, j, self.iou)
        return boxes[i], conf[i], j[i]


def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=-1)


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    return inter / union, union


def generalized_box_iou(boxes1, boxes2):
    iou, union = box_iou(boxes1, boxes2)
    lt = torch.min(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    area = wh[:, :, 0] * wh[:, :, 1]
    return iou - (area - union) / area


class DETRMatcherCost(nn.Module):
    def __init__(self, d=16, classes=5):
        super().__init__()
        self.class_embed = nn.Linear(d, classes + 1)
        self.bbox_embed = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    def forward(self, hs, tgt_ids, tgt_bbox):
        bs, num_queries = hs.shape[:2]
        out_prob = self.class_embed(hs).flatten(0, 1).softmax(-1)
        out_bbox = self.bbox_embed(hs).sigmoid().flatten(0, 1)
        cost_class = -out_prob[:, tgt_ids]
        cost_bbox = torch.cdist(out_bbox, tgt_bbox, p=1)
        cost_giou = -generalized_box_iou(box_cxcywh_to_xyxy(out_bbox), box_cxcywh_to_xyxy(tgt_bbox))
        C = 5 * cost_bbox + cost_class + 2 * cost_giou
        return C.view(bs, num_queries, -1)


class CornerNetDecode(nn.Module):
    """Corner pooling (cummax over flipped dims) + CornerNet's _decode: top-k corners, pair by embedding."""

    def __init__(self, c=8, classes=2, K=6):
        super().__init__()
        self.K = K
        self.pre = cbr(3, c, s=4)
        self.tl_heat = nn.Conv2d(c, classes, 1)
        self.br_heat = nn.Conv2d(c, classes, 1)
        self.tl_tag = nn.Conv2d(c, 1, 1)
        self.br_tag = nn.Conv2d(c, 1, 1)

    @staticmethod
    def top_pool(x):
        return torch.flip(torch.cummax(torch.flip(x, [2]), dim=2)[0], [2])

    @staticmethod
    def left_pool(x):
        return torch.flip(torch.cummax(torch.flip(x, [3]), dim=3)[0], [3])

    @staticmethod
    def bottom_pool(x):
        return torch.cummax(x, dim=2)[0]

    @staticmethod
    def right_pool(x):
        return torch.cummax(x, dim=3)[0]

    def _topk(self, scores):
        batch, cat, height, width = scores.size()
        topk_scores, topk_inds = torch.topk(scores.view(batch, -1), self.K)
        topk_clses = (topk_inds // (height * width)).int()
        topk_inds = topk_inds % (height * width)
        topk_ys = (topk_inds // width).int().float()
        topk_xs = (topk_inds % width).int().float()
        return topk_scores, topk_inds, topk_clses, topk_ys, topk_xs

    def forward(self, x):
        f = self.pre(x)
        tl = self.top_pool(f) + self.left_pool(f)
        br = self.bottom_pool(f) + self.right_pool(f)
        tl_heat = torch.sigmoid(self.tl_heat(tl))
        br_heat = torch.sigmoid(self.br_heat(br))
        batch, cat, height, width = tl_heat.size()
        K = self.K
        tl_scores, tl_inds, tl_clses, tl_ys, tl_xs = self._topk(tl_heat)
        br_scores, br_inds, br_clses, br_ys, br_xs = self._topk(br_heat)
        tl_ys = tl_ys.view(batch, K, 1).expand(batch, K, K)
        tl_xs = tl_xs.view(batch, K, 1).expand(batch, K, K)
        br_ys = br_ys.view(batch, 1, K).expand(batch, K, K)
        br_xs = br_xs.view(batch, 1, K).expand(batch, K, K)
        tl_tag = self.tl_tag(tl).view(batch, 1, -1).permute(0, 2, 1).gather(1, tl_inds.unsqueeze(2)).view(batch, K, 1)
        br_tag = self.br_tag(br).view(batch, 1, -1).permute(0, 2, 1).gather(1, br_inds.unsqueeze(2)).view(batch, 1, K)
        dists = torch.abs(tl_tag - br_tag)
        tl_scores = tl_scores.view(batch, K, 1).expand(batch, K, K)
        br_scores = br_scores.view(batch, 1, K).expand(batch, K, K)
        scores = (tl_scores + br_scores) / 2
        tl_clses = tl_clses.view(batch, K, 1).expand(batch, K, K)
        br_clses = br_clses.view(batch, 1, K).expand(batch, K, K)
        cls_inds = tl_clses != br_clses
        dist_inds = dists > 0.5
        width_inds = br_xs < tl_xs
        height_inds = br_ys < tl_ys
        scores = scores.clone()
        scores[cls_inds] = -1
        scores[dist_inds] = -1
        scores[width_inds] = -1
        scores[height_inds] = -1
        scores = scores.view(batch, -1)
        scores, inds = torch.topk(scores, 4)
        bboxes = torch.stack((tl_xs, tl_ys, br_xs, br_ys), dim=3).view(batch, -1, 4)
        bboxes = bboxes.gather(1, inds.unsqueeze(2).expand(batch, 4, 4))
        return bboxes, scores


class FCOSHead(nn.Module):
    def __init__(self, c=8, classes=3):
        super().__init__()
        self.strides = [8, 16]
        self.fpn = nn.ModuleList([cbr(3, c, s=8), cbr(3, c, s=16)])
        self.cls_logits = nn.Conv2d(c, classes, 3, padding=1)
        self.bbox_pred = nn.Conv2d(c, 4, 3, padding=1)
        self.centerness = nn.Conv2d(c, 1, 3, padding=1)
        self.scales = nn.Parameter(torch.ones(2))

    def compute_locations(self, h: int, w: int, stride: int):
        shifts_x = torch.arange(0, w * stride, step=stride, dtype=torch.float32)
        shifts_y = torch.arange(0, h * stride, step=stride, dtype=torch.float32)
        shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
        return torch.stack((shift_x.reshape(-1), shift_y.reshape(-1)), dim=1) + stride // 2

    def forward(self, x):
        boxes: List[torch.Tensor] = []
        scores: List[torch.Tensor] = []
        ctr_t: List[torch.Tensor] = []
        for i, layer in enumerate(self.fpn):
            f = layer(x)
            N, _, H, W = f.shape
            loc = self.compute_locations(H, W, self.strides[i])
            ltrb = torch.exp(self.scales[i] * self.bbox_pred(f)).permute(0, 2, 3, 1).reshape(N, -1, 4) * self.strides[i]
            cls = self.cls_logits(f).permute(0, 2, 3, 1).reshape(N, -1, 3).sigmoid()
            ctr = self.centerness(f).permute(0, 2, 3, 1).reshape(N, -1).sigmoid()
            scores.append(torch.sqrt(cls * ctr[:, :, None]))
            boxes.append(torch.cat([loc[None] - ltrb[..., :2], loc[None] + ltrb[..., 2:]], -1))
            # centerness target of the decoded boxes (compute_centerness_targets)
            left_right = ltrb[..., [0, 2]]
            top_bottom = ltrb[..., [1, 3]]
            ctr_t.append(torch.sqrt((left_right.min(dim=-1)[0] / left_right.max(dim=-1)[0]) *
                                    (top_bottom.min(dim=-1)[0] / top_bottom.max(dim=-1)[0])))
        return torch.cat(boxes, 1), torch.cat(scores, 1), torch.cat(ctr_t, 1)


class ATSSAssign(nn.Module):
    """mmdet ATSSAssigner.assign in forward: cdist, per-level topk, mean+std IoU threshold, inside check."""

    def __init__(self, topk=3):
        super().__init__()
        self.topk = topk

    def forward(self, bboxes, gt_bboxes, num_level_bboxes: List[int]):
        INF = 100000000
        num_gt, num_bboxes = gt_bboxes.size(0), bboxes.size(0)
        overlaps, _ = box_iou(bboxes, gt_bboxes)
        gt_points = torch.stack(((gt_bboxes[:, 0] + gt_bboxes[:, 2]) / 2.0, (gt_bboxes[:, 1] + gt_bboxes[:, 3]) / 2.0), dim=1)
        bboxes_points = torch.stack(((bboxes[:, 0] + bboxes[:, 2]) / 2.0, (bboxes[:, 1] + bboxes[:, 3]) / 2.0), dim=1)
        distances = torch.cdist(bboxes_points, gt_points)
        candidate_idxs: List[torch.Tensor] = []
        start_idx = 0
        for bboxes_per_level in num_level_bboxes:
            end_idx = start_idx + bboxes_per_level
            distances_per_level = distances[start_idx:end_idx, :]
            selectable_k = min(self.topk, bboxes_per_level)
            _, topk_idxs_per_level = distances_per_level.topk(selectable_k, dim=0, largest=False)
            candidate_idxs.append(topk_idxs_per_level + start_idx)
            start_idx = end_idx
        candidate_idx = torch.cat(candidate_idxs, dim=0)
        candidate_overlaps = overlaps[candidate_idx, torch.arange(num_gt)]
        overlaps_mean_per_gt = candidate_overlaps.mean(0)
        overlaps_std_per_gt = candidate_overlaps.std(0)
        overlaps_thr_per_gt = overlaps_mean_per_gt + overlaps_std_per_gt
        is_pos = candidate_overlaps >= overlaps_thr_per_gt[None, :]
        for gt_idx in range(num_gt):
            candidate_idx[:, gt_idx] += gt_idx * num_bboxes
        ep_bboxes_cx = bboxes_points[:, 0].view(1, -1).expand(num_gt, num_bboxes).contiguous().view(-1)
        ep_bboxes_cy = bboxes_points[:, 1].view(1, -1).expand(num_gt, num_bboxes).contiguous().view(-1)
        candidate_idx = candidate_idx.view(-1)
        l_ = ep_bboxes_cx[candidate_idx].view(-1, num_gt) - gt_bboxes[:, 0]
        t_ = ep_bboxes_cy[candidate_idx].view(-1, num_gt) - gt_bboxes[:, 1]
        r_ = gt_bboxes[:, 2] - ep_bboxes_cx[candidate_idx].view(-1, num_gt)
        b_ = gt_bboxes[:, 3] - ep_bboxes_cy[candidate_idx].view(-1, num_gt)
        is_in_gts = torch.stack([l_, t_, r_, b_], dim=1).min(dim=1)[0] > 0.01
        is_pos = is_pos & is_in_gts
        overlaps_inf = torch.full_like(overlaps, -INF).t().contiguous().view(-1)
        index = candidate_idx.view(-1)[is_pos.view(-1)]
        overlaps_inf[index] = overlaps.t().contiguous().view(-1)[index]
        overlaps_inf = overlaps_inf.view(num_gt, -1).t()
        max_overlaps, argmax_overlaps = overlaps_inf.max(dim=1)
        assigned = torch.where(max_overlaps != -INF, argmax_overlaps + 1, torch.zeros_like(argmax_overlaps))
        return assigned, max_overlaps


class ATSSModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.assigner = ATSSAssign()

    def forward(self, anchors, gt):
        n = anchors.shape[0]
        return self.assigner(anchors, gt, [n // 2, n - n // 2])


def _anchors():
    g = np.random.RandomState(1)
    xy = g.uniform(0, 48, (16, 2))
    wh = g.uniform(4, 16, (16, 2))
    return np.concatenate([xy, xy + wh], 1).astype(np.float32)


def _gts():
    return np.array([[2, 2, 30, 30], [20, 10, 60, 40], [5, 30, 25, 60]], dtype=np.float32)


def _tgt_boxes():
    g = np.random.RandomState(2)
    return np.concatenate([g.uniform(0.2, 0.8, (3, 2)), g.uniform(0.1, 0.3, (3, 2))], 1).astype(np.float32)


IMG = ["x:0=b,2=h,3=w"]

VISION3_B = [
    ("midas_small", lambda: Spec(MiDaSSmall(), ["1x3x64x64"], ["x"], IMG)),
    ("monodepth2_decoder", lambda: Spec(Monodepth2(), ["1x3x32x48"], ["x"], IMG)),
    ("gwcnet_stack_volume", lambda: Spec(GwcStereo(), ["1x3x16x32", "1x3x16x32"], ["left", "right"],
                                         ["left:0=b,2=h,3=w", "right:0=b,2=h,3=w"])),
    ("psmnet_inplace_volume", lambda: Spec(PSMCostVolume(), ["1x3x16x24", "1x3x16x24"], ["left", "right"],
                                           ["left:0=b,2=h,3=w", "right:0=b,2=h,3=w"])),
    ("x3d_block", lambda: Spec(X3DBlock(), ["1x3x4x16x16"], ["x"], ["x:0=b,2=t,3=h,4=w"])),
    ("timesformer_divided", lambda: Spec(DividedSTAttention(), ["1x3x4x16x16"], ["video"], ["video:0=b,2=t,3=h,4=w"])),
    ("tsm_shift", lambda: Spec(TSM(), ["8x3x16x16"], ["x"], ["x:0=bt,2=h,3=w"])),
    ("swinir", lambda: Spec(SwinIR(), ["1x3x14x18"], ["x"], IMG)),
    ("nafnet", lambda: Spec(NAFNet(), ["1x3x15x16"], ["x"], IMG)),
    ("restormer", lambda: Spec(Restormer(), ["1x3x16x16"], ["x"], IMG)),
    ("rife_warp", lambda: Spec(RIFELite(), ["1x3x16x24", "1x3x16x24"], ["img0", "img1"],
                               ["img0:0=b,2=h,3=w", "img1:0=b,2=h,3=w"])),
    ("realesrgan_unshuffle", lambda: Spec(RealESRGANx2(), ["1x3x8x12"], ["x"], IMG)),
    ("deblur_convT_outpad", lambda: Spec(DeblurUNet(), ["1x3x16x16"], ["x"], IMG)),
    ("yolov8_batched_nms", lambda: Spec(YOLOv8NMS(), ["1x3x64x64"], ["x"], ["x:2=h,3=w"], modes=("trace",))),
    ("detr_giou_cost", lambda: Spec(DETRMatcherCost(), ["2x5x16", np.array([1, 3, 0]), _tgt_boxes()], ["hs", "tgt_ids", "tgt_bbox"],
                                    ["hs:0=b,1=q", "tgt_ids:0=t", "tgt_bbox:0=t"])),
    ("cornernet_pool_decode", lambda: Spec(CornerNetDecode(), ["1x3x32x32"], ["x"], IMG)),
    ("fcos_centerness", lambda: Spec(FCOSHead(), ["1x3x32x48"], ["x"], IMG)),
    ("atss_assign", lambda: Spec(ATSSModel(), [_anchors(), _gts()], ["anchors", "gt"], ["anchors:0=n", "gt:0=g"])),
]
