"""The probe sweep's models, round 3 (tools/probe_models.py): recommendation, generative, graph,
scientific / tabular / time series.

Written the way their authors write them (DLRM, DeepFM, DCN-v2, DIN, two-tower retrieval, SASRec, VAE,
VQ-VAE, DDIM with classifier-free guidance, LDM attention, RealNVP, Glow, MADE, SN-GAN, PixelCNN,
top-k/top-p sampling, dense GCN, GraphSAGE, GAT, SchNet, EGNN, MPNN, TabNet, FT-Transformer, Neural
ODE, SIREN, Kalman, TCN, N-HiTS, quantile heads), random weights, fixed seed, small sizes.
Results: docs/PROBES.md (probe3n).
"""
import math
from typing import List, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec
from probe_zoo_vision import timestep_embedding  # the diffusion UNet's sinusoidal embedding


def ids(shape, high, seed=0, low=0):
    return np.random.RandomState(seed).randint(low, high, size=shape).astype(np.int64)


def mlp(sizes, act=nn.ReLU, last_act=False):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(act())
    return nn.Sequential(*layers)


# ================================================================ recommendation
class DLRM(nn.Module):
    """facebookresearch/dlrm dlrm_s_pytorch.py: EmbeddingBag(sum) with offsets, dot interaction, li/lj."""

    def __init__(self, m=8, tables=(50, 40), dense=13):
        super().__init__()
        self.emb_l = nn.ModuleList([nn.EmbeddingBag(n, m, mode="sum", sparse=False) for n in tables])
        self.bot_l = mlp([dense, 16, m], last_act=True)
        n = len(tables) + 1
        self.top_l = nn.Sequential(mlp([m + n * (n - 1) // 2, 16, 1]), nn.Sigmoid())

    def interact_features(self, x: torch.Tensor, ly: List[torch.Tensor]):
        (batch_size, d) = x.shape
        T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
        Z = torch.bmm(T, torch.transpose(T, 1, 2))
        _, ni, nj = Z.shape
        li = torch.tensor([i for i in range(ni) for j in range(i)])
        lj = torch.tensor([j for i in range(nj) for j in range(i)])
        Zflat = Z[:, li, lj]
        return torch.cat([x] + [Zflat], dim=1)

    def forward(self, dense_x, idx0, off0, idx1, off1, psw1):
        x = self.bot_l(dense_x)
        ly = [self.emb_l[0](idx0, off0), self.emb_l[1](idx1, off1, per_sample_weights=psw1)]
        return self.top_l(self.interact_features(x, ly))


class DLRMTril(nn.Module):
    """torchrec-style interaction: tril_indices(offset=-1) and index by the flattened position."""

    def __init__(self, m=8, n=4):
        super().__init__()
        self.emb = nn.EmbeddingBag(100, m, mode="mean")
        self.n = n
        self.register_buffer("tri", torch.tril_indices(n + 1, n + 1, offset=-1), persistent=False)

    def forward(self, dense, ids_):
        b = dense.shape[0]
        sp = self.emb(ids_.reshape(-1, 3)).view(b, self.n, -1)  # 2-D input: bags of 3, no offsets
        combined = torch.cat([dense.unsqueeze(1), sp], dim=1)
        z = torch.bmm(combined, combined.transpose(1, 2))
        flat = z.flatten(1)[:, self.tri[0] * (self.n + 1) + self.tri[1]]
        return torch.cat([dense, flat], dim=1)


class DeepFM(nn.Module):
    """DeepCTR-Torch style: first order + FM second order 0.5 * (sum^2 - sum of squares) + DNN."""

    def __init__(self, field_dims=(10, 20, 30, 15), k=8):
        super().__init__()
        self.register_buffer("offsets", torch.tensor((0, *np.cumsum(field_dims)[:-1]), dtype=torch.long))
        self.linear = nn.Embedding(sum(field_dims), 1)
        self.bias = nn.Parameter(torch.zeros(1))
        self.embedding = nn.Embedding(sum(field_dims), k)
        self.mlp = nn.Sequential(nn.Linear(len(field_dims) * k, 32), nn.BatchNorm1d(32), nn.ReLU(),
                                 nn.Dropout(0.2), nn.Linear(32, 1))
        self.embed_output_dim = len(field_dims) * k

    def forward(self, x):
        x = x + self.offsets.unsqueeze(0)
        emb = self.embedding(x)
        square_of_sum = torch.sum(emb, dim=1) ** 2
        sum_of_square = torch.sum(emb ** 2, dim=1)
        fm = 0.5 * torch.sum(square_of_sum - sum_of_square, dim=1, keepdim=True)
        lin = torch.sum(self.linear(x), dim=1) + self.bias
        return torch.sigmoid(lin + fm + self.mlp(emb.view(-1, self.embed_output_dim))).squeeze(1)


class DCNv2(nn.Module):
    """DCN-v2 cross network, mixture of low-rank experts with gating (DCN-Mix)."""

    def __init__(self, d=24, layers=2, experts=2, rank=4):
        super().__init__()
        self.U = nn.ParameterList([nn.Parameter(torch.randn(experts, d, rank) * 0.1) for _ in range(layers)])
        self.V = nn.ParameterList([nn.Parameter(torch.randn(experts, d, rank) * 0.1) for _ in range(layers)])
        self.C = nn.ParameterList([nn.Parameter(torch.randn(experts, rank, rank) * 0.1) for _ in range(layers)])
        self.gating = nn.ModuleList([nn.Linear(d, 1, bias=False) for _ in range(experts)])
        self.bias = nn.ParameterList([nn.Parameter(torch.zeros(d, 1)) for _ in range(layers)])
        self.layers, self.experts = layers, experts
        self.full = nn.Linear(d, d)

    def forward(self, x):
        x_0 = x.unsqueeze(2)
        x_l = x_0
        for i in range(self.layers):
            outs, gates = [], []
            for e in range(self.experts):
                gates.append(self.gating[e](x_l.squeeze(2)))
                v_x = torch.matmul(self.V[i][e].t(), x_l)
                v_x = torch.tanh(v_x)
                v_x = torch.matmul(self.C[i][e], v_x)
                v_x = torch.tanh(v_x)
                uv_x = torch.matmul(self.U[i][e], v_x)
                dot_ = uv_x + self.bias[i]
                outs.append((x_0 * dot_).squeeze(2))
            outs_t = torch.stack(outs, 2)
            gate = torch.softmax(torch.stack(gates, 1), 1)
            x_l = torch.matmul(outs_t, gate) + x_l
        x_l = x_l.squeeze(2)
        return x_l + x * self.full(x_l)  # DCN-v2 full-rank cross: x0 * (W xl + b) + xl


class DINAttention(nn.Module):
    """DIN (DeepCTR) local activation unit: [q, k, q-k, q*k] -> MLP, masked by behaviour length."""

    def __init__(self, d=16, items=200):
        super().__init__()
        self.item_emb = nn.Embedding(items, d, padding_idx=0)
        self.dnn = mlp([4 * d, 32, 16], act=nn.Sigmoid, last_act=True)
        self.dense = nn.Linear(16, 1)
        self.out = mlp([2 * d, 32, 1])

    def forward(self, target, hist, hist_len):
        q = self.item_emb(target)  # B, d
        keys = self.item_emb(hist)  # B, T, d
        T = keys.size(1)
        queries = q.unsqueeze(1).expand(-1, T, -1)
        att_in = torch.cat([queries, keys, queries - keys, queries * keys], dim=-1)
        score = self.dense(self.dnn(att_in)).transpose(1, 2)  # B, 1, T
        mask = torch.arange(T, device=hist.device).repeat(hist_len.size(0), 1) < hist_len.view(-1, 1)
        paddings = torch.ones_like(score) * (-2 ** 32 + 1)
        score = torch.where(mask.unsqueeze(1), score, paddings)
        score = F.softmax(score, dim=-1)
        interest = torch.matmul(score, keys).squeeze(1)
        return torch.sigmoid(self.out(torch.cat([interest, q], -1)))


class TwoTower(nn.Module):
    """Two-tower retrieval: user tower over features + history mean, item corpus buffer, cosine, top-k."""

    def __init__(self, d=16, items=300, k=10):
        super().__init__()
        self.user = mlp([8 + d, 32, d])
        self.hist_emb = nn.Embedding(items, d)
        self.item_tower = mlp([d, 32, d])
        self.register_buffer("corpus", torch.randn(items, d))
        self.k, self.temperature = k, 0.05

    def forward(self, feats, hist):
        h = self.hist_emb(hist).mean(dim=1)
        u = F.normalize(self.user(torch.cat([feats, h], -1)), p=2, dim=-1)
        v = F.normalize(self.item_tower(self.corpus), dim=1)
        scores = torch.matmul(u, v.t()) / self.temperature
        top_scores, top_ids = torch.topk(scores, self.k, dim=1)
        return top_scores, top_ids


class SASRec(nn.Module):
    """pmixer/SASRec.pytorch log2feats: emb * sqrt(d), arange positions, timeline mask, causal mask."""

    def __init__(self, items=100, d=32, maxlen=64, blocks=2, heads=2):
        super().__init__()
        self.item_emb = nn.Embedding(items + 1, d, padding_idx=0)
        self.pos_emb = nn.Embedding(maxlen, d)
        self.attn_ln = nn.ModuleList([nn.LayerNorm(d, eps=1e-8) for _ in range(blocks)])
        self.attn = nn.ModuleList([nn.MultiheadAttention(d, heads, 0.2) for _ in range(blocks)])
        self.fwd_ln = nn.ModuleList([nn.LayerNorm(d, eps=1e-8) for _ in range(blocks)])
        self.conv1 = nn.ModuleList([nn.Conv1d(d, d, 1) for _ in range(blocks)])
        self.conv2 = nn.ModuleList([nn.Conv1d(d, d, 1) for _ in range(blocks)])
        self.last_ln = nn.LayerNorm(d, eps=1e-8)
        self.d = d

    def forward(self, log_seqs, pos_seqs):
        seqs = self.item_emb(log_seqs) * self.d ** 0.5
        positions = torch.arange(log_seqs.shape[1], device=log_seqs.device).unsqueeze(0).expand_as(log_seqs)
        seqs = seqs + self.pos_emb(positions)
        timeline_mask = log_seqs == 0
        seqs = seqs * ~timeline_mask.unsqueeze(-1)
        tl = seqs.shape[1]
        attention_mask = ~torch.tril(torch.ones((tl, tl), dtype=torch.bool, device=seqs.device))
        for i in range(len(self.attn)):
            seqs = torch.transpose(seqs, 0, 1)
            Q = self.attn_ln[i](seqs)
            mha, _ = self.attn[i](Q, seqs, seqs, attn_mask=attention_mask)
            seqs = torch.transpose(Q + mha, 0, 1)
            seqs = self.fwd_ln[i](seqs)
            y = self.conv2[i](F.relu(self.conv1[i](seqs.transpose(-1, -2)))).transpose(-1, -2)
            seqs = (y + seqs) * ~timeline_mask.unsqueeze(-1)
        feats = self.last_ln(seqs)
        return (feats * self.item_emb(pos_seqs)).sum(dim=-1)


# ================================================================ generative
class VAE(nn.Module):
    """Conv VAE with the reparameterisation noise as an input (eps), as exported for decoding."""

    def __init__(self, z=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 4, 2, 1), nn.ReLU(), nn.Conv2d(8, 16, 4, 2, 1), nn.ReLU(),
                                 nn.Flatten())
        self.fc_mu, self.fc_var = nn.Linear(16 * 7 * 7, z), nn.Linear(16 * 7 * 7, z)
        self.dec_in = nn.Linear(z, 16 * 7 * 7)
        self.dec = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(8, 1, 4, 2, 1),
                                 nn.Sigmoid())

    def forward(self, x, eps):
        h = self.enc(x)
        mu, log_var = self.fc_mu(h), self.fc_var(h)
        std = torch.exp(0.5 * log_var)
        z = eps * std + mu
        recon = self.dec(self.dec_in(z).view(-1, 16, 7, 7))
        kld = torch.mean(-0.5 * torch.sum(1 + log_var - mu ** 2 - log_var.exp(), dim=1), dim=0)
        return recon, kld


class VectorQuantizer(nn.Module):
    """taming-transformers VectorQuantizer: expanded squared distance, argmin, embedding, straight-through."""

    def __init__(self, n_e=64, e_dim=16, beta=0.25, use_cdist=False):
        super().__init__()
        self.embedding = nn.Embedding(n_e, e_dim)
        self.embedding.weight.data.uniform_(-1.0 / n_e, 1.0 / n_e)
        self.e_dim, self.beta, self.use_cdist = e_dim, beta, use_cdist
        self.enc = nn.Conv2d(3, e_dim, 3, 2, 1)
        self.dec = nn.ConvTranspose2d(e_dim, 3, 4, 2, 1)

    def forward(self, x):
        z = self.enc(x) * 0.02
        z = z.permute(0, 2, 3, 1).contiguous()
        z_flattened = z.view(-1, self.e_dim)
        if self.use_cdist:
            d = torch.cdist(z_flattened, self.embedding.weight)
        else:
            d = torch.sum(z_flattened ** 2, dim=1, keepdim=True) + torch.sum(self.embedding.weight ** 2, dim=1) \
                - 2 * torch.matmul(z_flattened, self.embedding.weight.t())
        min_encoding_indices = torch.argmin(d, dim=1)
        z_q = self.embedding(min_encoding_indices).view(z.shape)
        loss = torch.mean((z_q.detach() - z) ** 2) + self.beta * torch.mean((z_q - z.detach()) ** 2)
        z_q = z + (z_q - z).detach()
        z_q = z_q.permute(0, 3, 1, 2).contiguous()
        return self.dec(z_q), loss, min_encoding_indices.view(z.shape[0], -1)


class DDIMStep(nn.Module):
    """One DDIM sampler step (LDM ddim.py p_sample_ddim): CFG by cat/chunk, alphas gathered by t."""

    def __init__(self, c=4, ctx=8, steps=1000):
        super().__init__()
        betas = torch.linspace(0.00085 ** 0.5, 0.012 ** 0.5, steps, dtype=torch.float64) ** 2
        self.register_buffer("alphas_cumprod", torch.cumprod(1.0 - betas, dim=0).float())
        self.temb = nn.Sequential(nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, c))
        self.cemb = nn.Linear(ctx, c)
        self.net = nn.Sequential(nn.Conv2d(c, 16, 3, padding=1), nn.SiLU(), nn.Conv2d(16, c, 3, padding=1))
        self.scale = 7.5

    def apply_model(self, x, t, c):
        h = x + self.temb(timestep_embedding(t, 32))[:, :, None, None] + self.cemb(c)[:, :, None, None]
        return self.net(h)

    def forward(self, x, t, t_prev, cond, uncond):
        b = x.shape[0]
        x_in = torch.cat([x] * 2)
        t_in = torch.cat([t] * 2)
        c_in = torch.cat([uncond, cond])
        e_t_uncond, e_t = self.apply_model(x_in, t_in, c_in).chunk(2)
        e_t = e_t_uncond + self.scale * (e_t - e_t_uncond)
        a_t = self.alphas_cumprod.gather(-1, t).reshape(b, 1, 1, 1)
        a_prev = self.alphas_cumprod[t_prev].reshape(b, 1, 1, 1)
        sqrt_one_minus_at = (1.0 - a_t).sqrt()
        pred_x0 = (x - sqrt_one_minus_at * e_t) / a_t.sqrt()
        dir_xt = (1.0 - a_prev).sqrt() * e_t
        return a_prev.sqrt() * pred_x0 + dir_xt, pred_x0


class LDMCrossAttention(nn.Module):
    """LDM SpatialTransformer bits: GroupNorm, proj_in, xformers-style head reshape, baddbmm, cross-attn."""

    def __init__(self, c=32, heads=4, ctx=16):
        super().__init__()
        self.norm = nn.GroupNorm(8, c, eps=1e-6, affine=True)
        self.proj_in = nn.Conv2d(c, c, 1)
        self.to_q, self.to_k, self.to_v = nn.Linear(c, c, bias=False), nn.Linear(ctx, c, bias=False), \
            nn.Linear(ctx, c, bias=False)
        self.to_out = nn.Sequential(nn.Linear(c, c), nn.Dropout(0.0))
        self.proj_out = nn.Conv2d(c, c, 1)
        self.heads, self.dim_head = heads, c // heads
        self.scale = self.dim_head ** -0.5

    def forward(self, x, context):
        b, c, h, w = x.shape
        x_in = x
        x = self.proj_in(self.norm(x))
        x = x.permute(0, 2, 3, 1).reshape(b, h * w, c)
        q, k, v = self.to_q(x), self.to_k(context), self.to_v(context)
        B = q.shape[0]
        q, k, v = map(lambda t: t.unsqueeze(3).reshape(B, t.shape[1], self.heads, self.dim_head)
                      .permute(0, 2, 1, 3).reshape(B * self.heads, t.shape[1], self.dim_head).contiguous(), (q, k, v))
        sim = torch.baddbmm(torch.empty(q.shape[0], q.shape[1], k.shape[1], dtype=q.dtype, device=q.device),
                            q, k.transpose(-1, -2), beta=0, alpha=self.scale)
        attn = sim.softmax(dim=-1)
        out = torch.bmm(attn, v)
        out = out.unsqueeze(0).reshape(B, self.heads, out.shape[1], self.dim_head).permute(0, 2, 1, 3) \
            .reshape(B, out.shape[1], self.heads * self.dim_head)
        out = self.to_out(out)
        out = out.reshape(b, h, w, c).permute(0, 3, 1, 2)
        return self.proj_out(out) + x_in


class RealNVPCoupling(nn.Module):
    """RealNVP affine coupling with a checkerboard mask buffer; returns y and log|det J|."""

    def __init__(self, c=4, hw=8):
        super().__init__()
        mask = ((torch.arange(hw).view(-1, 1) + torch.arange(hw).view(1, -1)) % 2).float()
        self.register_buffer("mask", mask.view(1, 1, hw, hw))
        self.net = nn.Sequential(nn.Conv2d(c, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 2 * c, 3, padding=1))
        self.scale = nn.Parameter(torch.ones(1, c, 1, 1))

    def forward(self, x):
        x_b = x * self.mask
        st = self.net(x_b)
        s, t = st.chunk(2, dim=1)
        s = self.scale * torch.tanh(s)
        s = s * (1 - self.mask)
        t = t * (1 - self.mask)
        y = x_b + (1 - self.mask) * (x * torch.exp(s) + t)
        return y, s.view(s.size(0), -1).sum(-1)


class GlowStep(nn.Module):
    """rosinality/glow-pytorch: ActNorm, InvConv2d (slogdet of the weight) and InvConv2dLU, affine coupling."""

    def __init__(self, c=4):
        super().__init__()
        self.loc = nn.Parameter(torch.randn(1, c, 1, 1) * 0.1)
        self.scale = nn.Parameter(torch.rand(1, c, 1, 1) + 0.5)
        q, _ = torch.linalg.qr(torch.randn(c, c))
        self.weight = nn.Parameter(q.unsqueeze(2).unsqueeze(3))
        w_p, w_l, w_u = torch.linalg.lu(torch.linalg.qr(torch.randn(c, c))[0])
        w_s = torch.diag(w_u)
        self.register_buffer("w_p", w_p)
        self.register_buffer("u_mask", torch.triu(torch.ones(c, c), 1))
        self.register_buffer("l_mask", torch.triu(torch.ones(c, c), 1).T)
        self.register_buffer("s_sign", torch.sign(w_s))
        self.register_buffer("l_eye", torch.eye(c))
        self.w_l, self.w_s, self.w_u = nn.Parameter(w_l), nn.Parameter(torch.log(torch.abs(w_s))), nn.Parameter(
            torch.triu(w_u, 1))
        self.net = nn.Sequential(nn.Conv2d(c // 2, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, c, 3, padding=1))

    def calc_weight(self):
        weight = self.w_p @ (self.w_l * self.l_mask + self.l_eye) @ (
            (self.w_u * self.u_mask) + torch.diag(self.s_sign * torch.exp(self.w_s)))
        return weight.unsqueeze(2).unsqueeze(3)

    def forward(self, input):
        _, _, height, width = input.shape
        log_abs = torch.log(torch.abs(self.scale))
        logdet = height * width * torch.sum(log_abs)
        out = self.scale * (input + self.loc)
        out = F.conv2d(out, self.weight)
        logdet = logdet + height * width * torch.slogdet(self.weight.squeeze().double())[1].float()
        out = F.conv2d(out, self.calc_weight())
        logdet = logdet + height * width * torch.sum(self.w_s)
        in_a, in_b = out.chunk(2, 1)
        log_s, t = self.net(in_a).chunk(2, 1)
        s = torch.sigmoid(log_s + 2)
        out_b = (in_b + t) * s
        logdet = logdet + torch.sum(torch.log(s).view(input.shape[0], -1), 1)
        return torch.cat([in_a, out_b], 1), logdet


class GaussianLogLik(nn.Module):
    """GP / full-covariance Gaussian head: covariance from the input, slogdet, logdet, solve, cholesky."""

    def __init__(self, d=4, f=8):
        super().__init__()
        self.L = nn.Linear(f, d * d)
        self.mu = nn.Linear(f, d)
        self.d = d

    def forward(self, feat, y):
        A = self.L(feat).view(-1, self.d, self.d)
        cov = A @ A.transpose(-1, -2) + 0.5 * torch.eye(self.d)
        sign, logabs = torch.linalg.slogdet(cov)
        ld = torch.logdet(cov)
        r = (y - self.mu(feat)).unsqueeze(-1)
        maha = (r.transpose(-1, -2) @ torch.linalg.solve(cov, r)).view(-1)
        return -0.5 * (maha + logabs + self.d * math.log(2 * math.pi)), sign, ld


class MaskedLinear(nn.Linear):
    def __init__(self, i, o):
        super().__init__(i, o)
        self.register_buffer("mask", torch.ones(o, i))

    def set_mask(self, mask):
        self.mask.data.copy_(torch.from_numpy(mask.astype(np.uint8).T))

    def forward(self, input):
        return F.linear(input, self.mask * self.weight, self.bias)


class MADE(nn.Module):
    """karpathy/pytorch-made: MaskedLinear layers with connectivity masks from random orderings."""

    def __init__(self, nin=8, hidden=(32, 32)):
        super().__init__()
        hs = [nin] + list(hidden) + [nin * 2]
        layers = []
        for h0, h1 in zip(hs, hs[1:]):
            layers += [MaskedLinear(h0, h1), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])
        rng = np.random.RandomState(0)
        m = {-1: np.arange(nin)}
        for l_ in range(len(hidden)):
            m[l_] = rng.randint(m[l_ - 1].min(), nin - 1, size=hidden[l_])
        masks = [m[l_ - 1][:, None] <= m[l_][None, :] for l_ in range(len(hidden))]
        masks.append(m[len(hidden) - 1][:, None] < m[-1][None, :])
        masks[-1] = np.concatenate([masks[-1]] * 2, axis=1)
        for layer, mk in zip([l_ for l_ in self.net.modules() if isinstance(l_, MaskedLinear)], masks):
            layer.set_mask(mk)

    def forward(self, x):
        mu, alpha = self.net(x).chunk(2, dim=1)
        u = (x - mu) * torch.exp(-alpha)
        return u, -alpha.sum(1)


class SNDiscriminator(nn.Module):
    """SN-GAN discriminator: spectral_norm convs (eval: weight_orig / sigma from u, v buffers)."""

    def __init__(self):
        super().__init__()
        sn = nn.utils.spectral_norm
        self.main = nn.Sequential(sn(nn.Conv2d(3, 16, 4, 2, 1)), nn.LeakyReLU(0.1), sn(nn.Conv2d(16, 32, 4, 2, 1)),
                                  nn.LeakyReLU(0.1), sn(nn.Conv2d(32, 64, 3, 1, 1)), nn.LeakyReLU(0.1))
        self.linear = sn(nn.Linear(64, 1))

    def forward(self, x):
        h = self.main(x)
        return self.linear(torch.sum(h, dim=(2, 3)))


class MaskedConv2d(nn.Conv2d):
    """PixelCNN masked convolution: the mask applied to weight.data in forward (as the common repos do)."""

    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_buffer("mask", self.weight.data.clone())
        _, _, kH, kW = self.weight.size()
        self.mask.fill_(1)
        self.mask[:, :, kH // 2, kW // 2 + (mask_type == "B"):] = 0
        self.mask[:, :, kH // 2 + 1:] = 0

    def forward(self, x):
        self.weight.data *= self.mask
        return super(MaskedConv2d, self).forward(x)


class PixelCNN(nn.Module):
    def __init__(self, fm=16):
        super().__init__()
        self.net = nn.Sequential(MaskedConv2d("A", 1, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
                                 MaskedConv2d("B", fm, fm, 7, 1, 3, bias=False), nn.BatchNorm2d(fm), nn.ReLU(True),
                                 nn.Conv2d(fm, 256, 1))

    def forward(self, x):
        return F.log_softmax(self.net(x), dim=1)


class TopKTopPFilter(nn.Module):
    """HF top_k_top_p_filtering: topk threshold, sort + cumsum + shifted mask + scatter; then a sample
    by Gumbel-max with external noise (deterministic) and the probabilities."""

    def __init__(self, vocab=64, d=16, top_k=20, top_p=0.9):
        super().__init__()
        self.lm = nn.Linear(d, vocab)
        self.top_k, self.top_p = top_k, top_p

    def forward(self, h, gumbel):
        logits = self.lm(h) / 0.8
        indices_to_remove = logits < torch.topk(logits, self.top_k)[0][..., -1, None]
        logits = logits.masked_fill(indices_to_remove, -float("inf"))
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        sorted_indices_to_remove = cumulative_probs > self.top_p
        sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., 0] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
        logits = logits.masked_fill(indices_to_remove, -float("inf"))
        probs = F.softmax(logits, dim=-1)
        token = torch.argmax(logits + gumbel, dim=-1)
        return probs, token


class MultinomialSample(nn.Module):
    """torch.multinomial in the graph: random, cannot be verified against libtorch."""

    def __init__(self, vocab=64, d=16):
        super().__init__()
        self.lm = nn.Linear(d, vocab)

    def forward(self, h):
        probs = F.softmax(self.lm(h), dim=-1)
        return torch.multinomial(probs, num_samples=1)


# ================================================================ graph (PyG-free)
class DenseGCN(nn.Module):
    """Kipf GCN on a dense adjacency: A + I, D^-1/2 with inf -> 0, A_hat X W, two layers."""

    def __init__(self, f=8, h=16, c=4):
        super().__init__()
        self.w1, self.w2 = nn.Linear(f, h), nn.Linear(h, c)

    @staticmethod
    def norm(adj):
        adj = adj + torch.eye(adj.size(-1), device=adj.device)
        deg = adj.sum(-1)
        d_inv_sqrt = deg.pow(-0.5)
        d_inv_sqrt = d_inv_sqrt.masked_fill(torch.isinf(d_inv_sqrt), 0.0)
        return d_inv_sqrt.unsqueeze(-1) * adj * d_inv_sqrt.unsqueeze(-2)

    def forward(self, x, adj):
        a = self.norm(adj)
        x = F.relu(a @ self.w1(x))
        return F.log_softmax(a @ self.w2(x), dim=-1)


class GraphSAGE(nn.Module):
    """SAGEConv(mean) over edge_index with index_add_ / scatter_add_, root weight, l2-normalize."""

    def __init__(self, f=8, h=16):
        super().__init__()
        self.lin_l1, self.lin_r1 = nn.Linear(f, h), nn.Linear(f, h, bias=False)
        self.lin_l2, self.lin_r2 = nn.Linear(h, h), nn.Linear(h, h, bias=False)

    @staticmethod
    def mean_aggr(x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        out = torch.zeros_like(x).index_add_(0, dst, x.index_select(0, src))
        deg = torch.zeros(x.size(0), dtype=x.dtype, device=x.device)
        deg.scatter_add_(0, dst, torch.ones(dst.size(0), dtype=x.dtype, device=x.device))
        return out / deg.clamp(min=1).unsqueeze(-1)

    def forward(self, x, edge_index):
        x = F.relu(self.lin_l1(self.mean_aggr(x, edge_index)) + self.lin_r1(x))
        x = self.lin_l2(self.mean_aggr(x, edge_index)) + self.lin_r2(x)
        return F.normalize(x, p=2.0, dim=-1)


class GAT(nn.Module):
    """GATConv without PyG: per-edge scores, softmax per destination by scatter_reduce('amax'),
    index_select, scatter_add; self loops added with torch.arange."""

    def __init__(self, f=8, heads=2, c=8):
        super().__init__()
        self.lin = nn.Linear(f, heads * c, bias=False)
        self.att_src = nn.Parameter(torch.randn(1, heads, c) * 0.3)
        self.att_dst = nn.Parameter(torch.randn(1, heads, c) * 0.3)
        self.bias = nn.Parameter(torch.zeros(heads * c))
        self.heads, self.c = heads, c

    def forward(self, x, edge_index):
        n = x.size(0)
        loop = torch.arange(n, device=x.device)
        src = torch.cat([edge_index[0], loop])
        dst = torch.cat([edge_index[1], loop])
        h = self.lin(x).view(-1, self.heads, self.c)
        a_src = (h * self.att_src).sum(-1)
        a_dst = (h * self.att_dst).sum(-1)
        alpha = F.leaky_relu(a_src.index_select(0, src) + a_dst.index_select(0, dst), 0.2)
        idx = dst.unsqueeze(-1).expand_as(alpha)
        amax = torch.zeros(n, self.heads, dtype=x.dtype).scatter_reduce(0, idx, alpha, reduce="amax",
                                                                        include_self=False)
        alpha = (alpha - amax.index_select(0, dst)).exp()
        denom = torch.zeros(n, self.heads, dtype=x.dtype).scatter_add(0, idx, alpha)
        alpha = alpha / (denom.index_select(0, dst) + 1e-16)
        msg = h.index_select(0, src) * alpha.unsqueeze(-1)
        out = torch.zeros(n, self.heads, self.c, dtype=x.dtype).index_add(0, dst, msg)
        return out.view(n, -1) + self.bias


class SchNetInteraction(nn.Module):
    """SchNet: pairwise distances, Gaussian radial basis, cosine cutoff, continuous-filter conv (dense)."""

    def __init__(self, atoms=10, h=16, g=20, cutoff=5.0):
        super().__init__()
        self.embedding = nn.Embedding(atoms, h)
        self.register_buffer("offset", torch.linspace(0.0, cutoff, g))
        self.coeff = -0.5 / (cutoff / (g - 1)) ** 2
        self.cutoff = cutoff
        self.filt = nn.Sequential(nn.Linear(g, h), nn.Softplus(), nn.Linear(h, h))
        self.lin1, self.lin2 = nn.Linear(h, h, bias=False), nn.Linear(h, h)
        self.out = nn.Linear(h, 1)

    def forward(self, z, pos):
        h = self.embedding(z)  # B, N, h
        dist = (pos.unsqueeze(2) - pos.unsqueeze(1)).pow(2).sum(-1).add(1e-9).sqrt()
        rbf = torch.exp(self.coeff * torch.pow(dist.unsqueeze(-1) - self.offset, 2))
        C = 0.5 * (torch.cos(dist * math.pi / self.cutoff) + 1.0)
        C = C * (dist < self.cutoff).float() * (1 - torch.eye(dist.size(1), device=dist.device))
        W = self.filt(rbf) * C.unsqueeze(-1)
        m = (self.lin1(h).unsqueeze(1) * W).sum(2)
        h = h + self.lin2(F.softplus(m) - math.log(2.0))
        return self.out(h).sum(1)


def unsorted_segment_sum(data, segment_ids, num_segments: int):
    result = data.new_full((num_segments, data.size(1)), 0)
    segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
    result.scatter_add_(0, segment_ids, data)
    return result


class EGNNLayer(nn.Module):
    """vgsatorras/egnn E_GCL: edge MLP on [h_i, h_j, |x_i - x_j|^2], coordinate update, node MLP."""

    def __init__(self, h=16):
        super().__init__()
        self.edge_mlp = nn.Sequential(nn.Linear(2 * h + 1, h), nn.SiLU(), nn.Linear(h, h), nn.SiLU())
        self.node_mlp = nn.Sequential(nn.Linear(2 * h, h), nn.SiLU(), nn.Linear(h, h))
        self.coord_mlp = nn.Sequential(nn.Linear(h, h), nn.SiLU(), nn.Linear(h, 1, bias=False))

    def forward(self, h, x, edge_index):
        row, col = edge_index[0], edge_index[1]
        coord_diff = x[row] - x[col]
        radial = torch.sum(coord_diff ** 2, 1).unsqueeze(1)
        edge_feat = self.edge_mlp(torch.cat([h[row], h[col], radial], dim=1))
        trans = coord_diff * self.coord_mlp(edge_feat)
        agg = unsorted_segment_sum(trans, row, num_segments=x.size(0))
        count = unsorted_segment_sum(torch.ones_like(trans), row, num_segments=x.size(0))
        x = x + agg / count.clamp(min=1)
        agg_h = unsorted_segment_sum(edge_feat, row, num_segments=h.size(0))
        h = h + self.node_mlp(torch.cat([h, agg_h], dim=1))
        return h, x


class MPNNLoop(nn.Module):
    """Gilmer MPNN-style: a fixed number of message steps (scripted loop), GRUCell update, sum readout."""

    def __init__(self, f=8, h=16, steps: int = 3):
        super().__init__()
        self.lin0 = nn.Linear(f, h)
        self.msg = nn.Linear(h, h)
        self.gru = nn.GRUCell(h, h)
        self.steps = steps
        self.out = nn.Linear(h, 1)

    def forward(self, x, adj):
        h = F.relu(self.lin0(x))  # N, h
        for _ in range(self.steps):
            m = adj @ self.msg(h)
            h = self.gru(m, h)
        return self.out(h.sum(0, keepdim=True))


# ================================================================ scientific / tabular / time
def _make_ix_like(input, dim: int = -1):
    d = input.size(dim)
    rho = torch.arange(1, d + 1, device=input.device, dtype=input.dtype)
    view = [1] * input.dim()
    view[0] = -1
    return rho.view(view).transpose(0, dim)


def sparsemax(input, dim: int = -1):
    """dreamquark-ai/tabnet sparsemax.py SparsemaxFunction.forward."""
    max_val, _ = input.max(dim=dim, keepdim=True)
    input = input - max_val
    input_srt, _ = torch.sort(input, descending=True, dim=dim)
    input_cumsum = input_srt.cumsum(dim) - 1
    rhos = _make_ix_like(input, dim)
    support = rhos * input_srt > input_cumsum
    support_size = support.sum(dim=dim).unsqueeze(dim)
    tau = input_cumsum.gather(dim, support_size - 1)
    tau = tau / support_size.to(input.dtype)
    return torch.clamp(input - tau, min=0)


def entmax15(input, dim: int = -1):
    """dreamquark-ai/tabnet Entmax15Function.forward (exact sort-based)."""
    max_val, _ = input.max(dim=dim, keepdim=True)
    input = (input - max_val) / 2
    Xsrt, _ = torch.sort(input, descending=True, dim=dim)
    rho = _make_ix_like(input, dim)
    mean = Xsrt.cumsum(dim) / rho
    mean_sq = (Xsrt ** 2).cumsum(dim) / rho
    ss = rho * (mean_sq - mean ** 2)
    delta = (1 - ss) / rho
    delta_nz = torch.clamp(delta, 0)
    tau = mean - torch.sqrt(delta_nz)
    support_size = (tau <= Xsrt).sum(dim).unsqueeze(dim)
    tau_star = tau.gather(dim, support_size - 1)
    return torch.clamp(input - tau_star, min=0) ** 2


class TabNetEncoder(nn.Module):
    """TabNet steps: GLU feature transformer, attentive transformer with prior, sparsemax / entmax masks."""

    def __init__(self, d_in=12, n_d=8, n_a=8, steps=3, gamma=1.3, use_entmax=False):
        super().__init__()
        self.initial_bn = nn.BatchNorm1d(d_in, momentum=0.01)
        self.shared = nn.Linear(d_in, 2 * (n_d + n_a), bias=False)
        self.ft = nn.ModuleList([nn.Linear(n_d + n_a, 2 * (n_d + n_a), bias=False) for _ in range(steps + 1)])
        self.bn = nn.ModuleList([nn.BatchNorm1d(2 * (n_d + n_a)) for _ in range(steps + 1)])
        self.att = nn.ModuleList([nn.Linear(n_a, d_in, bias=False) for _ in range(steps)])
        self.att_bn = nn.ModuleList([nn.BatchNorm1d(d_in) for _ in range(steps)])
        self.n_d, self.steps, self.gamma, self.use_entmax = n_d, steps, gamma, use_entmax
        self.final = nn.Linear(n_d, 2)

    def feat(self, x, i: int):
        h = F.glu(self.shared(x), dim=-1)
        return (h + F.glu(self.bn[i](self.ft[i](h)), dim=-1)) * math.sqrt(0.5)

    def forward(self, x):
        x = self.initial_bn(x)
        prior = torch.ones_like(x)
        att = self.feat(x, 0)[:, self.n_d:]
        res = torch.zeros(x.shape[0], self.n_d, device=x.device)
        m_loss = torch.zeros(1)
        for step in range(self.steps):
            a = self.att_bn[step](self.att[step](att)) * prior
            M = entmax15(a) if self.use_entmax else sparsemax(a)
            m_loss = m_loss + torch.mean(torch.sum(M * torch.log(M + 1e-15), dim=1))
            prior = torch.mul(self.gamma - M, prior)
            out = self.feat(M * x, step + 1)
            res = res + F.relu(out[:, :self.n_d])
            att = out[:, self.n_d:]
        return self.final(res), m_loss / self.steps


class FTTransformer(nn.Module):
    """Yandex rtdl FT-Transformer: numerical embeddings x * W + b, categorical offsets, CLS token,
    pre-norm nn.TransformerEncoderLayer (batch_first), head on the CLS token."""

    def __init__(self, n_num=6, cards=(5, 7), d=32):
        super().__init__()
        self.num_weight = nn.Parameter(torch.randn(n_num, d) * 0.2)
        self.num_bias = nn.Parameter(torch.randn(n_num, d) * 0.2)
        self.register_buffer("category_offsets", torch.tensor([0] + list(cards[:-1])).cumsum(0))
        self.cat_emb = nn.Embedding(sum(cards), d)
        self.cls = nn.Parameter(torch.randn(d) * 0.2)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.1, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Sequential(nn.LayerNorm(d), nn.ReLU(), nn.Linear(d, 1))

    def forward(self, x_num, x_cat):
        xn = self.num_weight[None] * x_num[..., None] + self.num_bias[None]
        xc = self.cat_emb(x_cat + self.category_offsets[None])
        x = torch.cat([self.cls.view(1, 1, -1).expand(len(xn), 1, -1), xn, xc], dim=1)
        x = self.enc(x)
        return self.head(x[:, 0])


class ODEFunc(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d + 1, 32), nn.Tanh(), nn.Linear(32, d))

    def forward(self, t: float, y):
        tt = torch.full_like(y[:, :1], t)
        return self.net(torch.cat([tt, y], 1))


class NeuralODE(nn.Module):
    """Fixed-step RK4 integration of a learned vector field (torchdiffeq rk4 'method' written out)."""

    def __init__(self, d=8, steps: int = 6, t1: float = 1.0):
        super().__init__()
        self.func = ODEFunc(d)
        self.steps, self.t1 = steps, t1

    def forward(self, y0):
        y = y0
        dt = self.t1 / self.steps
        t = 0.0
        for _ in range(self.steps):
            k1 = self.func(t, y)
            k2 = self.func(t + dt / 2, y + dt * k1 / 2)
            k3 = self.func(t + dt / 2, y + dt * k2 / 2)
            k4 = self.func(t + dt, y + dt * k3)
            y = y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6
            t = t + dt
        return y


class SineLayer(nn.Module):
    def __init__(self, i, o, is_first=False, omega_0=30.0):
        super().__init__()
        self.omega_0 = omega_0
        self.linear = nn.Linear(i, o)
        with torch.no_grad():
            b = 1 / i if is_first else math.sqrt(6 / i) / omega_0
            self.linear.weight.uniform_(-b, b)

    def forward(self, x):
        return torch.sin(self.omega_0 * self.linear(x))


class SIRENFourier(nn.Module):
    """SIREN (vsitzmann/siren) after Gaussian Fourier features (Tancik et al.): [sin(2 pi x B), cos(..)]."""

    def __init__(self, d_in=2, m=16, h=32):
        super().__init__()
        self.register_buffer("B", torch.randn(d_in, m) * 10.0)
        self.net = nn.Sequential(SineLayer(2 * m, h, is_first=True), SineLayer(h, h), nn.Linear(h, 3))

    def forward(self, coords):
        x_proj = (2.0 * math.pi * coords) @ self.B
        return self.net(torch.cat([torch.sin(x_proj), torch.cos(x_proj)], dim=-1))


class PINN(nn.Module):
    """Physics-informed MLP (Raissi-style) with input normalisation by lb/ub buffers and sin activation."""

    def __init__(self):
        super().__init__()
        self.register_buffer("lb", torch.tensor([-1.0, 0.0]))
        self.register_buffer("ub", torch.tensor([1.0, 1.0]))
        self.layers = nn.ModuleList([nn.Linear(2, 20), nn.Linear(20, 20), nn.Linear(20, 20), nn.Linear(20, 1)])

    def forward(self, x, t):
        h = torch.cat([x, t], 1)
        h = 2.0 * (h - self.lb) / (self.ub - self.lb) - 1.0
        for i, layer in enumerate(self.layers):
            h = layer(h)
            if i < len(self.layers) - 1:
                h = torch.sin(h)
        return h


class KalmanStep(nn.Module):
    """A batched Kalman predict/update with learned noise: P F^T, S = H P H^T + R, K = P H^T S^-1 (inverse)."""

    def __init__(self, n=4, m=2):
        super().__init__()
        self.F = nn.Parameter(torch.eye(n) + 0.1 * torch.randn(n, n))
        self.H = nn.Parameter(torch.randn(m, n))
        self.q = nn.Parameter(torch.full((n,), -2.0))
        self.r = nn.Parameter(torch.full((m,), -1.0))
        self.n = n

    def forward(self, x, P, z):
        Q, R = torch.diag_embed(self.q.exp()), torch.diag(self.r.exp())
        x = (self.F @ x.unsqueeze(-1)).squeeze(-1)
        P = self.F @ P @ self.F.T + Q
        S = self.H @ P @ self.H.T + R
        K = P @ self.H.T @ torch.inverse(S)
        y = z - (self.H @ x.unsqueeze(-1)).squeeze(-1)
        x = x + (K @ y.unsqueeze(-1)).squeeze(-1)
        P = (torch.eye(self.n) - K @ self.H) @ P
        return x, P


class CausalTCN(nn.Module):
    """TCN with causal padding by F.pad (left) and dilations; a residual 1x1 downsample."""

    def __init__(self, c_in=3, c=16, k=3, levels=3):
        super().__init__()
        self.convs = nn.ModuleList()
        self.down = nn.Conv1d(c_in, c, 1)
        self.k = k
        for i in range(levels):
            self.convs.append(nn.Conv1d(c_in if i == 0 else c, c, k, dilation=2 ** i))
        self.head = nn.Linear(c, 1)

    def forward(self, x):
        res = self.down(x)
        for i, conv in enumerate(self.convs):
            pad = (self.k - 1) * 2 ** i
            x = F.relu(conv(F.pad(x, (pad, 0))))
            if i == 0:
                x = x + res
        return self.head(x[:, :, -1])


class NHiTS(nn.Module):
    """N-HiTS blocks: MaxPool1d(ceil_mode) multi-rate input pooling, MLP to knots, linear interpolation
    of the knots to the horizon and backcast, doubly residual stacking."""

    def __init__(self, L=48, H=24, pools=(4, 2, 1), downs=(6, 3, 1), h=64):
        super().__init__()
        self.pools = nn.ModuleList([nn.MaxPool1d(p, stride=p, ceil_mode=True) for p in pools])
        self.mlps = nn.ModuleList([mlp([math.ceil(L / p), h, h]) for p in pools])
        self.thetas = nn.ModuleList([nn.Linear(h, L + max(H // d, 1)) for d in downs])
        self.L, self.H = L, H

    def forward(self, insample_y):
        residuals = insample_y.flip(dims=(-1,))
        forecast = insample_y[:, -1:]
        for pool, mlp_, theta_l in zip(self.pools, self.mlps, self.thetas):
            pooled = pool(residuals.unsqueeze(1)).squeeze(1)
            theta = theta_l(mlp_(pooled))
            backcast = theta[:, :self.L]
            knots = theta[:, self.L:]
            block_forecast = F.interpolate(knots[:, None, :], size=self.H, mode="linear", align_corners=False)[:, 0]
            residuals = (residuals - backcast)
            forecast = forecast + block_forecast
        return forecast


class QuantileDistill(nn.Module):
    """Quantile regression head with its pinball loss in forward (distillation target as input)."""

    def __init__(self, f=10, quantiles=(0.1, 0.5, 0.9)):
        super().__init__()
        self.body = mlp([f, 32, 32], last_act=True)
        self.head = nn.Linear(32, len(quantiles))
        self.register_buffer("q", torch.tensor(quantiles))

    def forward(self, x, y):
        preds = self.head(self.body(x))
        preds = torch.cummax(preds, dim=-1)[0]  # non-crossing quantiles
        errors = y.unsqueeze(-1) - preds
        loss = torch.max((self.q - 1) * errors, self.q * errors).sum(-1).mean()
        return preds, loss


GEN3 = [
    # recommendation
    ("dlrm_embbag_offsets", lambda: Spec(DLRM(), ["4x13", ids(10, 50), np.array([0, 2, 5, 7], np.int64),
                                                  ids(9, 40, 1), np.array([0, 1, 4, 6], np.int64), "9:float32"],
                                         ["dense", "idx0", "off0", "idx1", "off1", "psw1"],
                                         ["dense:0=b", "idx0:0=n0", "off0:0=b", "idx1:0=n1", "off1:0=b", "psw1:0=n1"])),
    ("dlrm_tril_bag2d", lambda: Spec(DLRMTril(), ["3x8", ids((3, 12), 100)], ["dense", "ids"],
                                     ["dense:0=b", "ids:0=b"])),
    ("deepfm", lambda: Spec(DeepFM(), [np.stack([ids(5, n, s) for s, n in enumerate((10, 20, 30, 15))], 1)], ["x"],
                            ["x:0=b"])),
    ("dcn_v2_mix", lambda: Spec(DCNv2(), ["4x24"], ["x"], ["x:0=b"])),
    ("din_attention", lambda: Spec(DINAttention(), [ids(4, 200, 2, 1), ids((4, 10), 200, 3),
                                                    np.array([3, 10, 1, 6], np.int64)],
                                   ["target", "hist", "hist_len"], ["target:0=b", "hist:0=b,1=t", "hist_len:0=b"])),
    ("two_tower_topk", lambda: Spec(TwoTower(), ["3x8", ids((3, 5), 300)], ["feats", "hist"],
                                    ["feats:0=b", "hist:0=b,1=t"])),
    ("sasrec", lambda: Spec(SASRec(), [np.concatenate([np.zeros((2, 5), np.int64), ids((2, 15), 101, 4, 1)], 1),
                                       ids((2, 20), 101, 5, 1)], ["log_seqs", "pos_seqs"],
                            ["log_seqs:0=b,1=t", "pos_seqs:0=b,1=t"])),
    # generative
    ("vae_eps_input", lambda: Spec(VAE(), ["2x1x28x28:float32:rand", "2x8"], ["x", "eps"], ["x:0=b", "eps:0=b"])),
    ("vqvae_sqdist", lambda: Spec(VectorQuantizer(), ["2x3x16x16"], ["x"], ["x:0=b,2=h,3=w"])),
    ("vqvae_cdist", lambda: Spec(VectorQuantizer(use_cdist=True), ["2x3x16x16"], ["x"], ["x:0=b,2=h,3=w"])),
    ("ddim_cfg_step", lambda: Spec(DDIMStep(), ["2x4x8x8", np.array([981, 500], np.int64),
                                                np.array([961, 480], np.int64), "2x8", "2x8"],
                                   ["x", "t", "t_prev", "cond", "uncond"],
                                   ["x:0=b,2=h,3=w", "t:0=b", "t_prev:0=b", "cond:0=b", "uncond:0=b"])),
    ("ldm_cross_attn", lambda: Spec(LDMCrossAttention(), ["2x32x8x8", "2x5x16"], ["x", "context"],
                                    ["x:0=b,2=h,3=w", "context:0=b,1=t"])),
    ("realnvp_coupling", lambda: Spec(RealNVPCoupling(), ["2x4x8x8"], ["x"], ["x:0=b"])),
    ("glow_actnorm_invconv", lambda: Spec(GlowStep(), ["2x4x8x8"], ["x"], ["x:0=b,2=h,3=w"])),
    ("gauss_slogdet_solve", lambda: Spec(GaussianLogLik(), ["3x8", "3x4"], ["feat", "y"], ["feat:0=b", "y:0=b"])),
    ("made_masked_linear", lambda: Spec(MADE(), ["4x8"], ["x"], ["x:0=b"])),
    ("sngan_disc_eval", lambda: Spec(SNDiscriminator(), ["2x3x32x32"], ["x"], ["x:0=b,2=h,3=w"])),
    ("pixelcnn_masked", lambda: Spec(PixelCNN(), ["2x1x12x12:float32:rand"], ["x"], ["x:0=b,2=h,3=w"])),
    ("topk_topp_gumbel", lambda: Spec(TopKTopPFilter(), ["3x16", "3x64"], ["h", "gumbel"], ["h:0=b", "gumbel:0=b"])),
    ("multinomial_sample", lambda: Spec(MultinomialSample(), ["3x16"], ["h"], ["h:0=b"])),
    # graph
    ("gcn_dense_adj", lambda: Spec(DenseGCN(), ["2x10x8", (np.random.RandomState(0).rand(2, 10, 10) > 0.7)
                                                .astype(np.float32)], ["x", "adj"], ["x:0=b,1=n", "adj:0=b,1=n,2=n"])),
    ("graphsage_index_add", lambda: Spec(GraphSAGE(), ["10x8", ids((2, 30), 10, 6)], ["x", "edge_index"],
                                         ["x:0=n", "edge_index:1=e"])),
    ("gat_scatter_amax", lambda: Spec(GAT(), ["10x8", ids((2, 30), 10, 7)], ["x", "edge_index"],
                                      ["x:0=n", "edge_index:1=e"])),
    ("schnet_rbf_cutoff", lambda: Spec(SchNetInteraction(), [ids((2, 6), 10, 8), "2x6x3"], ["z", "pos"],
                                       ["z:0=b,1=n", "pos:0=b,1=n"])),
    ("egnn_layer", lambda: Spec(EGNNLayer(), ["10x16", "10x3", ids((2, 30), 10, 9)], ["h", "x", "edge_index"],
                                ["h:0=n", "x:0=n", "edge_index:1=e"])),
    ("mpnn_gru_loop", lambda: Spec(MPNNLoop(), ["10x8", (np.random.RandomState(1).rand(10, 10) > 0.6)
                                                .astype(np.float32)], ["x", "adj"], ["x:0=n", "adj:0=n,1=n"])),
    # scientific / tabular / time
    ("tabnet_sparsemax", lambda: Spec(TabNetEncoder(), ["5x12"], ["x"], ["x:0=b"])),
    ("tabnet_entmax15", lambda: Spec(TabNetEncoder(use_entmax=True), ["5x12"], ["x"], ["x:0=b"])),
    ("ft_transformer", lambda: Spec(FTTransformer(), ["3x6", np.stack([ids(3, 5, 10), ids(3, 7, 11)], 1)],
                                    ["x_num", "x_cat"], ["x_num:0=b", "x_cat:0=b"])),
    ("neural_ode_rk4", lambda: Spec(NeuralODE(), ["4x8"], ["y0"], ["y0:0=b"])),
    ("siren_fourier", lambda: Spec(SIRENFourier(), ["64x2:float32:rand"], ["coords"], ["coords:0=n"])),
    ("pinn_sin", lambda: Spec(PINN(), ["32x1", "32x1:float32:rand"], ["x", "t"], ["x:0=n", "t:0=n"])),
    ("kalman_inverse", lambda: Spec(KalmanStep(), ["3x4", np.tile(np.eye(4, dtype=np.float32), (3, 1, 1)), "3x2"],
                                    ["x", "P", "z"], ["x:0=b", "P:0=b", "z:0=b"])),
    ("tcn_causal_pad", lambda: Spec(CausalTCN(), ["2x3x32"], ["x"], ["x:0=b,2=t"])),
    ("nhits_pool_interp", lambda: Spec(NHiTS(), ["3x48"], ["insample_y"], ["insample_y:0=b"])),
    ("quantile_pinball", lambda: Spec(QuantileDistill(), ["6x10", "6:float32"], ["x", "y"], ["x:0=b", "y:0=b"])),
]


# ================================================================ second batch
def extract(a, t, x_shape):
    """lucidrains denoising-diffusion-pytorch: a.gather(-1, t).reshape(b, 1, 1, 1)."""
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


class DDPMQSample(nn.Module):
    """q_sample + predict_start_from_noise with cosine-schedule buffers, noise as an input."""

    def __init__(self, T=100):
        super().__init__()
        steps = T + 1
        x = torch.linspace(0, T, steps, dtype=torch.float64)
        ac = torch.cos(((x / T) + 0.008) / 1.008 * math.pi * 0.5) ** 2
        ac = ac / ac[0]
        betas = torch.clip(1 - (ac[1:] / ac[:-1]), 0, 0.999)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.register_buffer("sqrt_alphas_cumprod", torch.sqrt(alphas_cumprod).float())
        self.register_buffer("sqrt_one_minus_alphas_cumprod", torch.sqrt(1.0 - alphas_cumprod).float())
        self.register_buffer("sqrt_recip_alphas_cumprod", torch.sqrt(1.0 / alphas_cumprod).float())
        self.register_buffer("sqrt_recipm1_alphas_cumprod", torch.sqrt(1.0 / alphas_cumprod - 1).float())
        self.net = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x_start, t, noise):
        x_t = extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start + \
            extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise
        pred_noise = self.net(x_t)
        x0 = extract(self.sqrt_recip_alphas_cumprod, t, x_t.shape) * x_t - \
            extract(self.sqrt_recipm1_alphas_cumprod, t, x_t.shape) * pred_noise
        return x0.clamp(-1.0, 1.0), F.mse_loss(pred_noise, noise)


class VQEMAOneHot(nn.Module):
    """zalandoresearch / VQ-VAE-2 style: distances, argmin, one-hot by scatter_, matmul with the codebook."""

    def __init__(self, K=32, D=8):
        super().__init__()
        self._embedding = nn.Embedding(K, D)
        self._embedding.weight.data.normal_()
        self.K, self.D = K, D

    def forward(self, inputs):
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape
        flat_input = inputs.view(-1, self.D)
        distances = (torch.sum(flat_input ** 2, dim=1, keepdim=True) + torch.sum(self._embedding.weight ** 2, dim=1)
                     - 2 * torch.matmul(flat_input, self._embedding.weight.t()))
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self.K, device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)
        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
        return quantized.permute(0, 3, 1, 2).contiguous(), 0.25 * e_latent_loss, perplexity


class NeuMF(nn.Module):
    """NCF NeuMF: GMF (elementwise product) + MLP towers over user/item embeddings."""

    def __init__(self, users=50, items=80, f=8):
        super().__init__()
        self.eu_gmf, self.ei_gmf = nn.Embedding(users, f), nn.Embedding(items, f)
        self.eu_mlp, self.ei_mlp = nn.Embedding(users, 2 * f), nn.Embedding(items, 2 * f)
        self.mlp = mlp([4 * f, 2 * f, f], last_act=True)
        self.predict = nn.Linear(2 * f, 1)

    def forward(self, user, item):
        gmf = self.eu_gmf(user) * self.ei_gmf(item)
        m = self.mlp(torch.cat((self.eu_mlp(user), self.ei_mlp(item)), -1))
        return self.predict(torch.cat((gmf, m), -1)).view(-1)


class GINGlobalPool(nn.Module):
    """GIN with (1 + eps) x + sum of neighbours (index_add_), global mean pool by a `batch` vector."""

    def __init__(self, f=8, h=16, graphs: int = 2):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.nn1 = mlp([f, h, h])
        self.graphs = graphs
        self.lin = nn.Linear(h, 1)

    def forward(self, x, edge_index, batch):
        agg = torch.zeros_like(x).index_add_(0, edge_index[1], x[edge_index[0]])
        h = F.relu(self.nn1((1 + self.eps) * x + agg))
        size = int(batch.max().item() + 1) if self.graphs < 0 else self.graphs
        pooled = torch.zeros(size, h.size(1)).index_add_(0, batch, h)
        count = torch.zeros(size).index_add_(0, batch, torch.ones_like(batch, dtype=torch.float))
        return self.lin(pooled / count.clamp(min=1).unsqueeze(1))


class ScoreSDE(nn.Module):
    """Song's score-based SDE tutorial: GaussianFourierProjection of a float time input and
    marginal_prob_std(t) = sqrt((sigma^(2t) - 1) / (2 log sigma)) dividing the output."""

    def __init__(self, embed_dim=16, sigma=25.0):
        super().__init__()
        self.W = nn.Parameter(torch.randn(embed_dim // 2) * 30.0, requires_grad=False)
        self.dense = nn.Linear(embed_dim, 8)
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.out = nn.Conv2d(8, 1, 3, padding=1)
        self.sigma = sigma

    def forward(self, x, t):
        x_proj = t[:, None] * self.W[None, :] * 2 * math.pi
        embed = F.silu(self.dense(torch.cat([torch.sin(x_proj), torch.cos(x_proj)], dim=-1)))
        h = self.out(F.silu(self.conv(x) + embed[:, :, None, None]))
        std = torch.sqrt((self.sigma ** (2 * t) - 1.) / 2. / math.log(self.sigma))
        return h / std[:, None, None, None]


class HoltWinters(nn.Module):
    """Exponential smoothing (level + trend) as a scripted loop over time; learned smoothing by sigmoid."""

    def __init__(self):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(0.0))
        self.beta = nn.Parameter(torch.tensor(-1.0))

    def forward(self, y):
        a, b = torch.sigmoid(self.alpha), torch.sigmoid(self.beta)
        level = y[:, 0]
        trend = y[:, 1] - y[:, 0]
        fitted = [level]
        for i in range(1, y.size(1)):
            prev = level
            level = a * y[:, i] + (1 - a) * (level + trend)
            trend = b * (level - prev) + (1 - b) * trend
            fitted.append(level + trend)
        return torch.stack(fitted, 1), level + trend


GEN3 += [
    ("ddpm_extract_qsample", lambda: Spec(DDPMQSample(), ["2x3x8x8", np.array([5, 77], np.int64), "2x3x8x8"],
                                          ["x_start", "t", "noise"], ["x_start:0=b,2=h,3=w", "t:0=b", "noise:0=b,2=h,3=w"])),
    ("vq_ema_onehot", lambda: Spec(VQEMAOneHot(), ["2x8x4x4"], ["x"], ["x:0=b,2=h,3=w"])),
    ("neumf", lambda: Spec(NeuMF(), [ids(6, 50, 12), ids(6, 80, 13)], ["user", "item"], ["user:0=b", "item:0=b"])),
    ("gin_global_pool", lambda: Spec(GINGlobalPool(), ["10x8", ids((2, 24), 10, 14),
                                                       np.array([0] * 6 + [1] * 4, np.int64)],
                                     ["x", "edge_index", "batch"], ["x:0=n", "edge_index:1=e", "batch:0=n"])),
    ("score_sde_fourier_time", lambda: Spec(ScoreSDE(), ["2x1x8x8", "2:float32:rand"], ["x", "t"],
                                            ["x:0=b,2=h,3=w", "t:0=b"])),
    ("holt_winters_loop", lambda: Spec(HoltWinters(), ["3x12"], ["y"], ["y:0=b,1=t"])),
]
