"""Probe models, round 2 (tools/probe_zoo_seq2.py lists them in SEQ2): speech synthesis/enhancement
(HiFi-GAN, Conv-TasNet, Tacotron attention) and time series (DLinear, PatchTST, N-BEATS, Informer,
packed LSTM, TFT, Mamba, RWKV), written the way their authors write them."""
import math
from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# ---------------------------------------------------------------- speech synthesis / enhancement
class HiFiResBlock(nn.Module):
    def __init__(self, c, k=3, dil=(1, 3, 5)):
        super().__init__()
        wn = nn.utils.weight_norm
        self.convs1 = nn.ModuleList([wn(nn.Conv1d(c, c, k, 1, dilation=d, padding=(k * d - d) // 2)) for d in dil])
        self.convs2 = nn.ModuleList([wn(nn.Conv1d(c, c, k, 1, dilation=1, padding=(k - 1) // 2)) for _ in dil])

    def forward(self, x):
        for c1, c2 in zip(self.convs1, self.convs2):
            xt = F.leaky_relu(x, 0.1)
            xt = c1(xt)
            xt = F.leaky_relu(xt, 0.1)
            xt = c2(xt)
            x = xt + x
        return x


class HiFiGAN(nn.Module):
    def __init__(self, mels=16, c=32):
        super().__init__()
        wn = nn.utils.weight_norm
        self.conv_pre = wn(nn.Conv1d(mels, c, 7, 1, padding=3))
        self.ups = nn.ModuleList([wn(nn.ConvTranspose1d(c, c // 2, 8, 4, padding=2)),
                                  wn(nn.ConvTranspose1d(c // 2, c // 4, 4, 2, padding=1))])
        self.resblocks = nn.ModuleList([HiFiResBlock(c // 2), HiFiResBlock(c // 4)])
        self.conv_post = wn(nn.Conv1d(c // 4, 1, 7, 1, padding=3))

    def forward(self, x):
        x = self.conv_pre(x)
        for up, rb in zip(self.ups, self.resblocks):
            x = F.leaky_relu(x, 0.1)
            x = rb(up(x))
        x = F.leaky_relu(x)
        return torch.tanh(self.conv_post(x))


class CumLayerNorm(nn.Module):
    def __init__(self, c, eps=1e-8):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(1, c, 1))
        self.bias = nn.Parameter(torch.zeros(1, c, 1))
        self.eps = eps

    def forward(self, x):
        b, c, t = x.shape
        step_sum = x.sum(1)
        step_pow_sum = x.pow(2).sum(1)
        cum_sum = torch.cumsum(step_sum, dim=1)
        cum_pow_sum = torch.cumsum(step_pow_sum, dim=1)
        entry_cnt = torch.arange(c, c * (t + 1), c, dtype=x.dtype, device=x.device).view(1, -1)
        cum_mean = cum_sum / entry_cnt
        cum_var = (cum_pow_sum - 2 * cum_mean * cum_sum) / entry_cnt + cum_mean.pow(2)
        cum_std = (cum_var + self.eps).sqrt()
        x = (x - cum_mean.unsqueeze(1)) / cum_std.unsqueeze(1)
        return x * self.gain + self.bias


class ConvTasNet(nn.Module):
    def __init__(self, N=16, L=8, B=8, H=16, spk=2):
        super().__init__()
        self.L, self.spk, self.N = L, spk, N
        self.encoder = nn.Conv1d(1, N, L, stride=L // 2, bias=False)
        self.ln = CumLayerNorm(N)
        self.bottleneck = nn.Conv1d(N, B, 1)
        self.tcn = nn.ModuleList()
        for d in (1, 2, 4):
            self.tcn.append(nn.Sequential(nn.Conv1d(B, H, 1), nn.PReLU(), CumLayerNorm(H),
                                          nn.Conv1d(H, H, 3, dilation=d, padding=d, groups=H), nn.PReLU(),
                                          CumLayerNorm(H), nn.Conv1d(H, B, 1)))
        self.mask = nn.Conv1d(B, spk * N, 1)
        self.decoder = nn.ConvTranspose1d(N, 1, L, stride=L // 2, bias=False)

    def forward(self, mixture):
        w = F.relu(self.encoder(mixture.unsqueeze(1)))
        y = self.bottleneck(self.ln(w))
        for blk in self.tcn:
            y = y + blk(y)
        m = torch.sigmoid(self.mask(y)).view(w.shape[0], self.spk, self.N, -1)
        src = (w.unsqueeze(1) * m).view(-1, self.N, w.shape[-1])
        out = self.decoder(src).view(w.shape[0], self.spk, -1)
        return out


class LocationAttention(nn.Module):
    """Tacotron 2's location-sensitive attention, run over decoder steps in a scripted loop."""

    def __init__(self, d=16, att=16, filt=4, k=5):
        super().__init__()
        self.query_layer = nn.Linear(d, att, bias=False)
        self.memory_layer = nn.Linear(d, att, bias=False)
        self.v = nn.Linear(att, 1, bias=True)
        self.location_conv = nn.Conv1d(2, filt, k, padding=(k - 1) // 2, bias=False)
        self.location_dense = nn.Linear(filt, att, bias=False)
        self.rnn = nn.LSTMCell(d, d)

    def forward(self, memory, queries):
        b, t, _ = memory.shape
        processed = self.memory_layer(memory)
        w = torch.zeros(b, t)
        cum = torch.zeros(b, t)
        h = torch.zeros(b, memory.shape[2])
        c = torch.zeros(b, memory.shape[2])
        ctxs: List[torch.Tensor] = []
        for i in range(queries.shape[1]):
            h, c = self.rnn(queries[:, i], (h, c))
            loc = self.location_dense(self.location_conv(torch.stack([w, cum], 1)).transpose(1, 2))
            energies = self.v(torch.tanh(self.query_layer(h).unsqueeze(1) + loc + processed)).squeeze(-1)
            w = F.softmax(energies, dim=1)
            cum = cum + w
            ctxs.append(torch.bmm(w.unsqueeze(1), memory).squeeze(1))
        return torch.stack(ctxs, 1)


# ---------------------------------------------------------------- time series
class DLinear(nn.Module):
    def __init__(self, seq_len=24, pred_len=8, kernel=5):
        super().__init__()
        self.kernel_size = kernel
        self.avg = nn.AvgPool1d(kernel_size=kernel, stride=1, padding=0)
        self.Linear_Seasonal = nn.Linear(seq_len, pred_len)
        self.Linear_Trend = nn.Linear(seq_len, pred_len)

    def moving_avg(self, x):
        front = x[:, 0:1, :].repeat(1, (self.kernel_size - 1) // 2, 1)
        end = x[:, -1:, :].repeat(1, (self.kernel_size - 1) // 2, 1)
        x = torch.cat([front, x, end], dim=1)
        return self.avg(x.permute(0, 2, 1)).permute(0, 2, 1)

    def forward(self, x):  # (b, seq, channels)
        trend = self.moving_avg(x)
        seasonal = x - trend
        s = self.Linear_Seasonal(seasonal.permute(0, 2, 1))
        t = self.Linear_Trend(trend.permute(0, 2, 1))
        return (s + t).permute(0, 2, 1)


class PatchTST(nn.Module):
    def __init__(self, c=3, seq=32, patch_len=8, stride=4, d=16, pred=8):
        super().__init__()
        self.patch_len, self.stride = patch_len, stride
        n = (seq - patch_len) // stride + 2
        self.affine_weight = nn.Parameter(torch.ones(c) + 0.1 * torch.randn(c))
        self.affine_bias = nn.Parameter(0.1 * torch.randn(c))
        self.pad = nn.ReplicationPad1d((0, stride))
        self.W_P = nn.Linear(patch_len, d)
        self.W_pos = nn.Parameter(torch.randn(n, d) * 0.02)
        self.enc = nn.TransformerEncoderLayer(d, 4, 32, dropout=0.0, batch_first=True)
        self.head = nn.Linear(n * d, pred)

    def forward(self, x):  # (b, seq, c)
        means = x.mean(1, keepdim=True).detach()
        x = x - means
        stdev = torch.sqrt(torch.var(x, dim=1, keepdim=True, unbiased=False) + 1e-5).detach()
        x = x / stdev
        x = x * self.affine_weight + self.affine_bias
        z = self.pad(x.permute(0, 2, 1))
        z = z.unfold(dimension=-1, size=self.patch_len, step=self.stride)  # b c n p
        b, c, n, p = z.shape
        u = self.W_P(z).reshape(b * c, n, -1) + self.W_pos
        u = self.enc(u).reshape(b, c, -1)
        y = self.head(u).permute(0, 2, 1)
        y = (y - self.affine_bias) / (self.affine_weight + 1e-10)
        return y * stdev + means


class NBeats(nn.Module):
    def __init__(self, backcast=16, forecast=8, units=32, degree=3, harmonics=4):
        super().__init__()
        self.backcast, self.forecast = backcast, forecast
        t_b = torch.linspace(0, 1, backcast)
        t_f = torch.linspace(1, 1 + forecast / backcast, forecast)
        self.register_buffer("T_b", torch.stack([t_b ** i for i in range(degree + 1)]))
        self.register_buffer("T_f", torch.stack([t_f ** i for i in range(degree + 1)]))
        fr = torch.arange(1, harmonics + 1).float()[:, None] * 2 * math.pi
        self.register_buffer("S_b", torch.cat([torch.cos(fr * t_b), torch.sin(fr * t_b)]))
        self.register_buffer("S_f", torch.cat([torch.cos(fr * t_f), torch.sin(fr * t_f)]))
        self.trend = nn.Sequential(nn.Linear(backcast, units), nn.ReLU(), nn.Linear(units, units), nn.ReLU())
        self.trend_theta = nn.Linear(units, degree + 1, bias=False)
        self.season = nn.Sequential(nn.Linear(backcast, units), nn.ReLU(), nn.Linear(units, units), nn.ReLU())
        self.season_theta = nn.Linear(units, 2 * harmonics, bias=False)

    def forward(self, x):
        th = self.trend_theta(self.trend(x))
        x = x - th @ self.T_b
        f = th @ self.T_f
        th = self.season_theta(self.season(x))
        x = x - torch.einsum("bp,pt->bt", th, self.S_b)
        return x, f + torch.einsum("bp,pt->bt", th, self.S_f)


class InformerDistil(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.downConv = nn.Conv1d(c, c, kernel_size=3, padding=2, padding_mode="circular")
        self.norm = nn.BatchNorm1d(c)
        self.activation = nn.ELU()
        self.maxPool = nn.MaxPool1d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        x = self.downConv(x.permute(0, 2, 1))
        x = self.activation(self.norm(x))
        return self.maxPool(x).transpose(1, 2)


class PackedLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(32, 3)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return self.fc(out), h


class GRN(nn.Module):
    def __init__(self, d_in, d, d_out, ctx: int = 0):
        super().__init__()
        self.skip = nn.Linear(d_in, d_out) if d_in != d_out else None
        self.fc1 = nn.Linear(d_in, d)
        self.ctx = nn.Linear(ctx, d, bias=False) if ctx else None
        self.fc2 = nn.Linear(d, d)
        self.glu = nn.Linear(d, 2 * d_out)
        self.ln = nn.LayerNorm(d_out)

    def forward(self, a, c: Optional[torch.Tensor] = None):
        res = a if self.skip is None else self.skip(a)
        h = self.fc1(a)
        if c is not None and self.ctx is not None:
            h = h + self.ctx(c)
        h = self.fc2(F.elu(h))
        return self.ln(res + F.glu(self.glu(h), dim=-1))


class TFTVariableSelection(nn.Module):
    def __init__(self, n_vars=4, d=16):
        super().__init__()
        self.n = n_vars
        self.embed = nn.ModuleList([nn.Linear(1, d) for _ in range(n_vars)])
        self.flat = GRN(n_vars * d, d, n_vars, ctx=8)
        self.var_grns = nn.ModuleList([GRN(d, d, d) for _ in range(n_vars)])

    def forward(self, x, static):  # x (b, t, n_vars), static (b, 8)
        embs = [emb(x[..., i:i + 1]) for i, emb in enumerate(self.embed)]
        flat = torch.cat(embs, dim=-1)
        w = F.softmax(self.flat(flat, static.unsqueeze(1)), dim=-1).unsqueeze(-2)  # b t 1 n
        proc = torch.stack([g(e) for g, e in zip(self.var_grns, embs)], dim=-1)  # b t d n
        return (proc * w).sum(-1), w.squeeze(-2)


class MambaScan(nn.Module):
    def __init__(self, d=8, n=4, dt_rank=2):
        super().__init__()
        self.in_proj = nn.Linear(d, 2 * d)
        self.conv1d = nn.Conv1d(d, d, 4, groups=d, padding=3)
        self.x_proj = nn.Linear(d, dt_rank + 2 * n, bias=False)
        self.dt_proj = nn.Linear(dt_rank, d)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, n + 1).float().repeat(d, 1)))
        self.D = nn.Parameter(torch.ones(d))
        self.out_proj = nn.Linear(d, d)
        self.n, self.dt_rank = n, dt_rank

    def forward(self, x):  # (b, l, d)
        b, l, d = x.shape
        xz = self.in_proj(x)
        x, z = xz.chunk(2, dim=-1)
        x = F.silu(self.conv1d(x.transpose(1, 2))[:, :, :l].transpose(1, 2))
        A = -torch.exp(self.A_log.float())
        dbl = self.x_proj(x)
        delta, B, C = torch.split(dbl, [self.dt_rank, self.n, self.n], dim=-1)
        delta = F.softplus(self.dt_proj(delta))
        deltaA = torch.exp(delta.unsqueeze(-1) * A)  # b l d n
        deltaB_u = delta.unsqueeze(-1) * B.unsqueeze(2) * x.unsqueeze(-1)
        h = torch.zeros(b, d, self.n)
        ys: List[torch.Tensor] = []
        for i in range(l):
            h = deltaA[:, i] * h + deltaB_u[:, i]
            ys.append((h @ C[:, i, :].unsqueeze(-1)).squeeze(-1))
        y = torch.stack(ys, dim=1) + x * self.D
        return self.out_proj(y * F.silu(z))


class RWKVTimeMix(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.time_mix_k = nn.Parameter(torch.rand(1, 1, d))
        self.time_mix_v = nn.Parameter(torch.rand(1, 1, d))
        self.time_mix_r = nn.Parameter(torch.rand(1, 1, d))
        self.time_decay = nn.Parameter(torch.randn(d) * 0.1)
        self.key = nn.Linear(d, d, bias=False)
        self.value = nn.Linear(d, d, bias=False)
        self.receptance = nn.Linear(d, d, bias=False)
        self.output = nn.Linear(d, d, bias=False)

    def forward(self, x):
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xv = x * self.time_mix_v + xx * (1 - self.time_mix_v)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
        k, v, r = self.key(xk), self.value(xv), torch.sigmoid(self.receptance(xr))
        w = torch.exp(-torch.exp(self.time_decay))
        t = x.shape[1]
        decay = w ** torch.arange(t, dtype=x.dtype).view(-1, 1)  # t d
        ek = torch.exp(k.clamp(max=30))
        num = torch.cumsum(ek * v / decay, dim=1) * decay  # simple prefix form of the wkv recurrence
        den = torch.cumsum(ek / decay, dim=1) * decay
        return self.output(r * num / (den + 1e-6))


def lengths():
    return np.array([7, 4, 6], dtype=np.int64)
