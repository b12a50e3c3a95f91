"""The probe sweep's models, round 5 (probe5v), part 5: generative image models as their authors write
them (Stable Diffusion VAE and UNet blocks, StyleGAN2's up-sampling modulated conv with upfirdn2d, NeRF
rendering with cumprod and searchsorted, LaMa's Fourier unit). Listed in VISION5_GEN.
"""
import math
from typing import Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec

IMG = ["x:0=b,2=h,3=w"]


# ---------------------------------------------------------------- Stable Diffusion VAE (ldm/modules/diffusionmodules/model.py): encoder downsample pad, DiagonalGaussian mode, decoder
def Normalize(c):
    return nn.GroupNorm(num_groups=4, num_channels=c, eps=1e-6, affine=True)


def nonlinearity(x):
    return x * torch.sigmoid(x)


class ResnetBlock(nn.Module):
    def __init__(self, in_channels, out_channels=None, temb_channels=0):
        super().__init__()
        out_channels = in_channels if out_channels is None else out_channels
        self.in_channels, self.out_channels = in_channels, out_channels
        self.norm1 = Normalize(in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, 1, 1)
        if temb_channels > 0:
            self.temb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = Normalize(out_channels)
        self.dropout = nn.Dropout(0.0)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1)
        if in_channels != out_channels:
            self.nin_shortcut = nn.Conv2d(in_channels, out_channels, 1)

    def forward(self, x, temb: Optional[torch.Tensor] = None):
        h = x
        h = nonlinearity(self.norm1(h))
        h = self.conv1(h)
        if temb is not None:
            h = h + self.temb_proj(nonlinearity(temb))[:, :, None, None]
        h = self.conv2(self.dropout(nonlinearity(self.norm2(h))))
        if self.in_channels != self.out_channels:
            x = self.nin_shortcut(x)
        return x + h


class AttnBlock(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.norm = Normalize(in_channels)
        self.q = nn.Conv2d(in_channels, in_channels, 1)
        self.k = nn.Conv2d(in_channels, in_channels, 1)
        self.v = nn.Conv2d(in_channels, in_channels, 1)
        self.proj_out = nn.Conv2d(in_channels, in_channels, 1)

    def forward(self, x):
        h_ = self.norm(x)
        q, k, v = self.q(h_), self.k(h_), self.v(h_)
        b, c, h, w = q.shape
        q = q.reshape(b, c, h * w)
        q = q.permute(0, 2, 1)
        k = k.reshape(b, c, h * w)
        w_ = torch.bmm(q, k)
        w_ = w_ * (int(c) ** (-0.5))
        w_ = F.softmax(w_, dim=2)
        v = v.reshape(b, c, h * w)
        w_ = w_.permute(0, 2, 1)
        h_ = torch.bmm(v, w_)
        h_ = h_.reshape(b, c, h, w)
        return x + self.proj_out(h_)


class Downsample(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, 2, 0)

    def forward(self, x):
        pad = (0, 1, 0, 1)
        x = F.pad(x, pad, mode="constant", value=0)
        return self.conv(x)


class Upsample(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        x = F.interpolate(x, scale_factor=2.0, mode="nearest")
        return self.conv(x)


class SDVAE(nn.Module):
    def __init__(self, ch=8, z=4):
        super().__init__()
        self.conv_in = nn.Conv2d(3, ch, 3, 1, 1)
        self.down_block = ResnetBlock(ch, 2 * ch)
        self.downsample = Downsample(2 * ch)
        self.mid_1 = ResnetBlock(2 * ch)
        self.mid_attn = AttnBlock(2 * ch)
        self.norm_out = Normalize(2 * ch)
        self.conv_out = nn.Conv2d(2 * ch, 2 * z, 3, 1, 1)
        self.quant_conv = nn.Conv2d(2 * z, 2 * z, 1)
        self.post_quant_conv = nn.Conv2d(z, z, 1)
        self.dec_in = nn.Conv2d(z, 2 * ch, 3, 1, 1)
        self.dec_mid = ResnetBlock(2 * ch)
        self.dec_attn = AttnBlock(2 * ch)
        self.up_block = ResnetBlock(2 * ch, ch)
        self.upsample = Upsample(ch)
        self.dec_norm = Normalize(ch)
        self.dec_out = nn.Conv2d(ch, 3, 3, 1, 1)
        self.scale_factor = 0.18215

    def forward(self, x):
        h = self.downsample(self.down_block(self.conv_in(x)))
        h = self.mid_attn(self.mid_1(h))
        h = self.conv_out(nonlinearity(self.norm_out(h)))
        moments = self.quant_conv(h)
        mean, logvar = torch.chunk(moments, 2, dim=1)
        logvar = torch.clamp(logvar, -30.0, 20.0)
        std = torch.exp(0.5 * logvar)
        z = mean * self.scale_factor + 0 * std
        z = 1.0 / self.scale_factor * z
        z = self.post_quant_conv(z)
        h = self.dec_attn(self.dec_mid(self.dec_in(z)))
        h = self.upsample(self.up_block(h))
        h = self.dec_out(nonlinearity(self.dec_norm(h)))
        return torch.clamp((h + 1.0) / 2.0, min=0.0, max=1.0), std


# ---------------------------------------------------------------- SD UNet block: timestep_embedding, ResBlock emb_out unsqueeze loop, SpatialTransformer with GEGLU cross-attn
def timestep_embedding(timesteps, dim: int, max_period: int = 10000):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half).to(
        device=timesteps.device)
    args = timesteps[:, None].float() * freqs[None]
    embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
    return embedding


class UNetResBlock(nn.Module):
    def __init__(self, c, emb_channels, out_channels):
        super().__init__()
        self.in_layers = nn.Sequential(nn.GroupNorm(4, c), nn.SiLU(), nn.Conv2d(c, out_channels, 3, padding=1))
        self.emb_layers = nn.Sequential(nn.SiLU(), nn.Linear(emb_channels, 2 * out_channels))
        self.out_norm = nn.GroupNorm(4, out_channels)
        self.out_rest = nn.Sequential(nn.SiLU(), nn.Dropout(0.0), nn.Conv2d(out_channels, out_channels, 3, padding=1))
        self.skip_connection = nn.Conv2d(c, out_channels, 1) if c != out_channels else nn.Identity()

    def forward(self, x, emb):
        h = self.in_layers(x)
        emb_out = self.emb_layers(emb).type(h.dtype)
        while len(emb_out.shape) < len(h.shape):
            emb_out = emb_out[..., None]
        scale, shift = torch.chunk(emb_out, 2, dim=1)
        h = self.out_norm(h) * (1 + scale) + shift
        h = self.out_rest(h)
        return self.skip_connection(x) + h


class CrossAttention(nn.Module):
    def __init__(self, query_dim, context_dim=None, heads=2, dim_head=8):
        super().__init__()
        inner_dim = dim_head * heads
        context_dim = query_dim if context_dim is None else context_dim
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_k = nn.Linear(context_dim, inner_dim, bias=False)
        self.to_v = nn.Linear(context_dim, inner_dim, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner_dim, query_dim), nn.Dropout(0.0))

    def forward(self, x, context: Optional[torch.Tensor] = None):
        h = self.heads
        q = self.to_q(x)
        context = x if context is None else context
        k = self.to_k(context)
        v = self.to_v(context)
        b, n, _ = q.shape
        # rearrange(t, 'b n (h d) -> (b h) n d', h=h)
        q, k, v = [t.reshape(t.shape[0], t.shape[1], h, -1).permute(0, 2, 1, 3).reshape(t.shape[0] * h, t.shape[1], -1)
                   for t in (q, k, v)]
        sim = torch.einsum("b i d, b j d -> b i j", q, k) * self.scale
        attn = sim.softmax(dim=-1)
        out = torch.einsum("b i j, b j d -> b i d", attn, v)
        out = out.reshape(b, h, n, -1).permute(0, 2, 1, 3).reshape(b, n, -1)
        return self.to_out(out)


class GEGLU(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim_out * 2)

    def forward(self, x):
        x, gate = self.proj(x).chunk(2, dim=-1)
        return x * F.gelu(gate)


class SpatialTransformer(nn.Module):
    def __init__(self, c, context_dim):
        super().__init__()
        self.norm = nn.GroupNorm(4, c, eps=1e-6)
        self.proj_in = nn.Conv2d(c, c, 1)
        self.attn1 = CrossAttention(c)
        self.attn2 = CrossAttention(c, context_dim)
        self.ff = nn.Sequential(GEGLU(c, 2 * c), nn.Dropout(0.0), nn.Linear(2 * c, c))
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(c), nn.LayerNorm(c), nn.LayerNorm(c)
        self.proj_out = nn.Conv2d(c, c, 1)

    def forward(self, x, context):
        b, c, h, w = x.shape
        x_in = x
        x = self.proj_in(self.norm(x))
        x = x.permute(0, 2, 3, 1).reshape(b, h * w, c)  # 'b c h w -> b (h w) c'
        x = self.attn1(self.norm1(x)) + x
        x = self.attn2(self.norm2(x), context=context) + x
        x = self.ff(self.norm3(x)) + x
        x = x.reshape(b, h, w, c).permute(0, 3, 1, 2)  # 'b (h w) c -> b c h w'
        return self.proj_out(x) + x_in


class SDUNetBlock(nn.Module):
    def __init__(self, c=8, model_channels=8, context_dim=12):
        super().__init__()
        self.model_channels = model_channels
        ted = model_channels * 4
        self.time_embed = nn.Sequential(nn.Linear(model_channels, ted), nn.SiLU(), nn.Linear(ted, ted))
        self.input_conv = nn.Conv2d(4, c, 3, padding=1)
        self.res = UNetResBlock(c, ted, 16)
        self.st = SpatialTransformer(16, context_dim)
        self.down = nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.res2 = UNetResBlock(32, ted, 16)
        self.out = nn.Sequential(nn.GroupNorm(4, 16), nn.SiLU(), nn.Conv2d(16, 4, 3, padding=1))

    def forward(self, x, timesteps, context):
        t_emb = timestep_embedding(timesteps, self.model_channels)
        emb = self.time_embed(t_emb)
        h = self.st(self.res(self.input_conv(x), emb), context)
        skip = h
        h = self.down(h)
        h = F.interpolate(h, scale_factor=2.0, mode="nearest")
        h = torch.cat([h, skip], dim=1)
        return self.out(self.res2(h, emb))


# ---------------------------------------------------------------- StyleGAN2 (rosinality): up-sampling modulated conv via grouped conv_transpose2d + blur
def make_kernel(k):
    k = torch.tensor(k, dtype=torch.float32)
    if k.ndim == 1:
        k = k[None, :] * k[:, None]
    k /= k.sum()
    return k


def upfirdn2d_native(input, kernel, up_x: int, up_y: int, down_x: int, down_y: int, pad_x0: int, pad_x1: int,
                     pad_y0: int, pad_y1: int):
    _, channel, in_h, in_w = input.shape
    input = input.reshape(-1, in_h, in_w, 1)
    _, in_h, in_w, minor = input.shape
    kernel_h, kernel_w = kernel.shape
    out = input.view(-1, in_h, 1, in_w, 1, minor)
    out = F.pad(out, [0, 0, 0, up_x - 1, 0, 0, 0, up_y - 1])
    out = out.view(-1, in_h * up_y, in_w * up_x, minor)
    out = F.pad(out, [0, 0, max(pad_x0, 0), max(pad_x1, 0), max(pad_y0, 0), max(pad_y1, 0)])
    out = out[:, max(-pad_y0, 0): out.shape[1] - max(-pad_y1, 0), max(-pad_x0, 0): out.shape[2] - max(-pad_x1, 0), :]
    out = out.permute(0, 3, 1, 2)
    out = out.reshape([-1, 1, in_h * up_y + pad_y0 + pad_y1, in_w * up_x + pad_x0 + pad_x1])
    w = torch.flip(kernel, [0, 1]).view(1, 1, kernel_h, kernel_w)
    out = F.conv2d(out, w)
    out = out.reshape(-1, minor, in_h * up_y + pad_y0 + pad_y1 - kernel_h + 1, in_w * up_x + pad_x0 + pad_x1 - kernel_w + 1)
    out = out.permute(0, 2, 3, 1)
    out = out[:, ::down_y, ::down_x, :]
    out_h = (in_h * up_y + pad_y0 + pad_y1 - kernel_h) // down_y + 1
    out_w = (in_w * up_x + pad_x0 + pad_x1 - kernel_w) // down_x + 1
    return out.view(-1, channel, out_h, out_w)


class Blur(nn.Module):
    def __init__(self, kernel, pad: Tuple[int, int], upsample_factor=1):
        super().__init__()
        kernel = make_kernel(kernel)
        if upsample_factor > 1:
            kernel = kernel * (upsample_factor ** 2)
        self.register_buffer("kernel", kernel)
        self.pad = pad

    def forward(self, input):
        return upfirdn2d_native(input, self.kernel, 1, 1, 1, 1, self.pad[0], self.pad[1], self.pad[0], self.pad[1])


class ModulatedConv2dUp(nn.Module):
    def __init__(self, in_channel, out_channel, kernel_size, style_dim, demodulate=True, upsample=True):
        super().__init__()
        self.eps = 1e-8
        self.kernel_size = kernel_size
        self.in_channel = in_channel
        self.out_channel = out_channel
        self.upsample = upsample
        factor = 2
        p = (4 - factor) - (kernel_size - 1)
        pad0 = (p + 1) // 2 + factor - 1
        pad1 = p // 2 + 1
        self.blur = Blur([1, 3, 3, 1], pad=(pad0, pad1), upsample_factor=factor)
        fan_in = in_channel * kernel_size ** 2
        self.scale = 1 / math.sqrt(fan_in)
        self.padding = kernel_size // 2
        self.weight = nn.Parameter(torch.randn(1, out_channel, in_channel, kernel_size, kernel_size))
        self.modulation = nn.Linear(style_dim, in_channel)
        self.demodulate = demodulate

    def forward(self, input, style):
        batch, in_channel, height, width = input.shape
        style = self.modulation(style).view(batch, 1, in_channel, 1, 1)
        weight = self.scale * self.weight * style
        if self.demodulate:
            demod = torch.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-8)
            weight = weight * demod.view(batch, self.out_channel, 1, 1, 1)
        weight = weight.view(batch * self.out_channel, in_channel, self.kernel_size, self.kernel_size)
        input = input.view(1, batch * in_channel, height, width)
        weight = weight.view(batch, self.out_channel, in_channel, self.kernel_size, self.kernel_size)
        weight = weight.transpose(1, 2).reshape(batch * in_channel, self.out_channel, self.kernel_size, self.kernel_size)
        out = F.conv_transpose2d(input, weight, padding=0, stride=2, groups=batch)
        _, _, height, width = out.shape
        out = out.view(batch, self.out_channel, height, width)
        return self.blur(out)


class StyleGAN2Up(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = ModulatedConv2dUp(8, 6, 3, 16)
        self.noise_weight = nn.Parameter(torch.tensor([0.1]))
        self.bias = nn.Parameter(0.1 * torch.randn(1, 6, 1, 1))

    def forward(self, x, style, noise):
        out = self.conv(x, style)
        out = out + self.noise_weight * noise
        return F.leaky_relu(out + self.bias, negative_slope=0.2) * math.sqrt(2)


# ---------------------------------------------------------------- NeRF: positional encoding, stratified z, raw2outputs with cumprod, sample_pdf with searchsorted
class Embedder(nn.Module):
    def __init__(self, multires=4):
        super().__init__()
        self.freq_bands = [2.0 ** i for i in range(multires)]

    def forward(self, inputs):
        out = [inputs]
        for freq in self.freq_bands:
            out.append(torch.sin(inputs * freq))
            out.append(torch.cos(inputs * freq))
        return torch.cat(out, -1)


def sample_pdf(bins, weights, N_samples: int):
    weights = weights + 1e-5
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)
    u = torch.linspace(0., 1., steps=N_samples)
    u = u.expand(list(cdf.shape[:-1]) + [N_samples]).contiguous()
    inds = torch.searchsorted(cdf, u, right=True)
    below = torch.max(torch.zeros_like(inds - 1), inds - 1)
    above = torch.min((cdf.shape[-1] - 1) * torch.ones_like(inds), inds)
    inds_g = torch.stack([below, above], -1)
    matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)
    denom = cdf_g[..., 1] - cdf_g[..., 0]
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    return bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])


class NeRF(nn.Module):
    def __init__(self, W=32, N_samples=8, N_importance=6):
        super().__init__()
        self.embed = Embedder(4)
        self.embeddirs = Embedder(2)
        in_ch, in_dir = 3 + 3 * 8, 3 + 3 * 4
        self.pts_linears = nn.ModuleList([nn.Linear(in_ch, W), nn.Linear(W, W), nn.Linear(W + in_ch, W)])
        self.skips = [1]
        self.alpha_linear = nn.Linear(W, 1)
        self.feature_linear = nn.Linear(W, W)
        self.views_linears = nn.Linear(in_dir + W, W // 2)
        self.rgb_linear = nn.Linear(W // 2, 3)
        self.N_samples, self.N_importance = N_samples, N_importance
        self.near, self.far = 2.0, 6.0

    def mlp(self, pts, viewdirs):
        input_pts = self.embed(pts)
        input_views = self.embeddirs(viewdirs[:, None].expand(pts.shape))
        h = input_pts
        for i, l in enumerate(self.pts_linears):
            h = F.relu(l(h))
            if i in self.skips:
                h = torch.cat([input_pts, h], -1)
        alpha = self.alpha_linear(h)
        feature = self.feature_linear(h)
        h = F.relu(self.views_linears(torch.cat([feature, input_views], -1)))
        rgb = self.rgb_linear(h)
        return torch.cat([rgb, alpha], -1)

    def raw2outputs(self, raw, z_vals, rays_d):
        raw2alpha = lambda raw, dists: 1. - torch.exp(-F.relu(raw) * dists)  # noqa: E731
        dists = z_vals[..., 1:] - z_vals[..., :-1]
        dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[..., :1].shape)], -1)
        dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
        rgb = torch.sigmoid(raw[..., :3])
        alpha = raw2alpha(raw[..., 3], dists)
        weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
        rgb_map = torch.sum(weights[..., None] * rgb, -2)
        depth_map = torch.sum(weights * z_vals, -1)
        disp_map = 1. / torch.max(1e-10 * torch.ones_like(depth_map), depth_map / torch.sum(weights, -1))
        acc_map = torch.sum(weights, -1)
        return rgb_map, disp_map, acc_map, weights, depth_map

    def forward(self, rays_o, rays_d):
        N_rays = rays_o.shape[0]
        viewdirs = rays_d / torch.norm(rays_d, dim=-1, keepdim=True)
        t_vals = torch.linspace(0., 1., steps=self.N_samples)
        z_vals = self.near * (1. - t_vals) + self.far * (t_vals)
        z_vals = z_vals.expand([N_rays, self.N_samples])
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
        raw = self.mlp(pts, viewdirs)
        rgb_map, disp_map, acc_map, weights, depth_map = self.raw2outputs(raw, z_vals, rays_d)
        z_vals_mid = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
        z_samples = sample_pdf(z_vals_mid, weights[..., 1:-1], self.N_importance).detach()
        z_vals, _ = torch.sort(torch.cat([z_vals, z_samples], -1), -1)
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
        raw = self.mlp(pts, viewdirs)
        rgb_map, disp_map, acc_map, weights, depth_map = self.raw2outputs(raw, z_vals, rays_d)
        return rgb_map, disp_map, acc_map


# ---------------------------------------------------------------- LaMa: FFC Fourier unit (rfftn ortho, real/imag stacked as channels, irfftn with s=)
class FourierUnit(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv_layer = nn.Conv2d(in_channels * 2, out_channels * 2, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels * 2)
        self.relu = nn.ReLU(inplace=True)
        self.fft_norm = "ortho"

    def forward(self, x):
        batch = x.shape[0]
        fft_dim = (-2, -1)
        ffted = torch.fft.rfftn(x, dim=fft_dim, norm=self.fft_norm)
        ffted = torch.stack((ffted.real, ffted.imag), dim=-1)
        ffted = ffted.permute(0, 1, 4, 2, 3).contiguous()
        ffted = ffted.view((batch, -1,) + ffted.size()[3:])
        ffted = self.relu(self.bn(self.conv_layer(ffted)))
        ffted = ffted.view((batch, -1, 2,) + ffted.size()[2:]).permute(0, 1, 3, 4, 2).contiguous()
        ffted = torch.complex(ffted[..., 0], ffted[..., 1])
        ifft_shape_slice = x.shape[-2:]
        return torch.fft.irfftn(ffted, s=ifft_shape_slice, dim=fft_dim, norm=self.fft_norm)


class LaMaFFC(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(c, c // 2, 1, bias=False), nn.BatchNorm2d(c // 2), nn.ReLU(inplace=True))
        self.fu = FourierUnit(c // 2, c // 2)
        self.conv2 = nn.Conv2d(c // 2, c, 1, bias=False)
        self.l2l = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        s = self.conv1(x)
        return self.l2l(x) + self.conv2(s + self.fu(s))


def _rays():
    r = np.random.RandomState(3)
    o = r.randn(5, 3).astype(np.float32) * 0.1
    d = r.randn(5, 3).astype(np.float32)
    d[:, 2] = -np.abs(d[:, 2]) - 1.0
    return o, d


VISION5_GEN = [
    ("v5_sd_vae", lambda: Spec(SDVAE(), ["1x3x16x16"], ["x"], IMG, modes=("trace",))),
    ("v5_sd_unet_block", lambda: Spec(SDUNetBlock(), ["2x4x8x8", np.array([981, 1]), "2x5x12"], ["x", "t", "context"],
                                     ["x:0=b,2=h,3=w", "t:0=b", "context:0=b,1=n"])),
    ("v5_stylegan2_up_blur", lambda: Spec(StyleGAN2Up(), ["2x8x6x6", "2x16", "2x1x12x12"], ["x", "style", "noise"],
                                         ["x:2=h,3=w", "noise:2=h2,3=w2"])),  # groups=batch: the batch stays fixed
    ("v5_nerf_render", lambda: Spec(NeRF(), list(_rays()), ["rays_o", "rays_d"], ["rays_o:0=n", "rays_d:0=n"],
                                   modes=("trace",))),
    ("v5_lama_ffc", lambda: Spec(LaMaFFC(), ["1x8x12x16"], ["x"], IMG)),
]
