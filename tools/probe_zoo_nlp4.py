"""The probe sweep's models (tools/probe_models.py), round 4: language and speech models not probed before
(BLOOM ALiBi, NeoX/Falcon/Phi partial rotary, GPT-J interleaved rotary, Qwen2 GQA, Gemma, OPT, a KV-cache
step, logits processors; RoBERTa/DistilBERT/XLNet/Funnel/ELECTRA/sentence-transformers/ColBERT/Longformer/
Perceiver/BART encoders; FastSpeech2, EnCodec, Demucs, Silero VAD, RNN-T, Emformer, log-mel CMVN, wav2vec2
positional conv; BiLSTM-CRF and pointer networks). Written the way their authors write them, small configs."""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec
from probe_zoo_nlp4_speech import (BiLSTMCRF, CRFNormalizer, Demucs, EmformerMask, EspnetConformerFront,
                                   LengthRegulator, LogMelCMVN, PointerNet, ResidualVQ, RNNTJoint, SileroVAD,
                                   Wav2Vec2PosConv)
from probe_zoo_seq2 import repeat_kv, rotate_half  # as in HF's Llama: Qwen2, NeoX and Gemma share them


# ---------------------------------------------------------------- LLM variants
def build_alibi_tensor(attention_mask: torch.Tensor, num_heads: int, dtype: torch.dtype) -> torch.Tensor:
    """BLOOM: slopes in closed form, bias from the cumsum of the mask (arange of the key length)."""
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))), device=attention_mask.device,
                        dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, device=attention_mask.device, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))), dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


class BloomAttention(nn.Module):
    def __init__(self, hidden=32, heads=6):
        super().__init__()
        self.num_heads, self.head_dim = heads, 8
        self.hidden = heads * 8
        self.word_embeddings = nn.Embedding(100, self.hidden)
        self.query_key_value = nn.Linear(self.hidden, 3 * self.hidden)
        self.dense = nn.Linear(self.hidden, self.hidden)
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        self.beta = 1.0

    def forward(self, input_ids, attention_mask):
        h = self.word_embeddings(input_ids)
        b, q_length, _ = h.shape
        alibi = build_alibi_tensor(attention_mask, self.num_heads, h.dtype)
        fused = self.query_key_value(h).view(b, q_length, self.num_heads, 3, self.head_dim)
        query, key, value = fused[..., 0, :], fused[..., 1, :], fused[..., 2, :]
        query = query.transpose(1, 2).reshape(b * self.num_heads, q_length, self.head_dim)
        key = key.permute(0, 2, 3, 1).reshape(b * self.num_heads, self.head_dim, q_length)
        value = value.transpose(1, 2).reshape(b * self.num_heads, q_length, self.head_dim)
        scores = alibi.baddbmm(batch1=query, batch2=key, beta=self.beta, alpha=self.inv_norm_factor)
        scores = scores.view(b, self.num_heads, q_length, q_length)
        causal = torch.triu(torch.ones(q_length, q_length, dtype=torch.bool, device=h.device), diagonal=1)
        mask = causal[None, None] | (attention_mask[:, None, None, :] == 0)
        scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
        probs = F.softmax(scores, dim=-1, dtype=torch.float32).to(h.dtype)
        probs = probs.view(b * self.num_heads, q_length, q_length)
        ctx = torch.bmm(probs, value).view(b, self.num_heads, q_length, self.head_dim)
        ctx = ctx.permute(0, 2, 1, 3).reshape(b, q_length, self.hidden)
        return self.dense(ctx)


class NeoXRotary(nn.Module):
    def __init__(self, dim, base=10000, max_pos=64):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq)
        t = torch.arange(max_pos, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos()[None, None, :, :])
        self.register_buffer("sin_cached", emb.sin()[None, None, :, :])

    def forward(self, x, seq_len: int):
        return self.cos_cached[:, :, :seq_len, ...].to(x.dtype), self.sin_cached[:, :, :seq_len, ...].to(x.dtype)


class FalconNeoXLayer(nn.Module):
    """GPT-NeoX / Falcon: one LayerNorm feeding attention and MLP in parallel, rotary on the first rotary_ndims."""

    def __init__(self, hidden=32, heads=4, rotary_pct=0.25, phi=False):
        super().__init__()
        self.heads, self.head_size = heads, hidden // heads
        self.rotary_ndims = int(self.head_size * rotary_pct)
        self.rotary_emb = NeoXRotary(self.rotary_ndims)
        self.input_layernorm = nn.LayerNorm(hidden)
        self.query_key_value = nn.Linear(hidden, 3 * hidden)
        self.dense = nn.Linear(hidden, hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        self.phi = phi

    def forward(self, x):
        residual = x
        h = self.input_layernorm(x)
        qkv = self.query_key_value(h)
        new_qkv_shape = qkv.size()[:-1] + (self.heads, 3 * self.head_size)
        qkv = qkv.view(*new_qkv_shape)
        query = qkv[..., : self.head_size].permute(0, 2, 1, 3)
        key = qkv[..., self.head_size: 2 * self.head_size].permute(0, 2, 1, 3)
        value = qkv[..., 2 * self.head_size:].permute(0, 2, 1, 3)
        query_rot, query_pass = query[..., : self.rotary_ndims], query[..., self.rotary_ndims:]
        key_rot, key_pass = key[..., : self.rotary_ndims], key[..., self.rotary_ndims:]
        seq_len = key.shape[-2]
        cos, sin = self.rotary_emb(value, seq_len=seq_len)
        query = torch.cat((query_rot * cos + rotate_half(query_rot) * sin, query_pass), dim=-1)
        key = torch.cat((key_rot * cos + rotate_half(key_rot) * sin, key_pass), dim=-1)
        q_len, k_len = query.size(-2), key.size(-2)
        causal = torch.tril(torch.ones((64, 64), dtype=torch.bool)).view(1, 1, 64, 64)[:, :, k_len - q_len: k_len, :k_len]
        scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(self.head_size)
        mask_value = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        scores = torch.where(causal, scores, mask_value)
        attn = torch.matmul(F.softmax(scores, dim=-1), value)
        attn = attn.permute(0, 2, 1, 3).contiguous().view(attn.size(0), attn.size(2), self.heads * self.head_size)
        attn = self.dense(attn)
        mlp = self.fc2(F.gelu(self.fc1(h), approximate="tanh" if self.phi else "none"))
        return attn + mlp + residual


def rotate_every_two(x: torch.Tensor) -> torch.Tensor:
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)


def create_sinusoidal_positions(num_pos: int, dim: int) -> torch.Tensor:
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2) / dim))
    sinusoid_inp = torch.einsum("i , j -> i j", torch.arange(num_pos, dtype=torch.float), inv_freq).float()
    return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)), dim=1)


class GPTJAttention(nn.Module):
    def __init__(self, hidden=32, heads=4, rotary_dim=4):
        super().__init__()
        self.num_attention_heads, self.head_dim, self.rotary_dim = heads, hidden // heads, rotary_dim
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.out_proj = nn.Linear(hidden, hidden, bias=False)
        self.register_buffer("embed_positions", create_sinusoidal_positions(64, rotary_dim))

    def _split_heads(self, t, rotary: bool):
        t = t.view(t.size()[:-1] + (self.num_attention_heads, self.head_dim))
        return t if rotary else t.permute(0, 2, 1, 3)

    def forward(self, hidden_states, position_ids):
        query = self._split_heads(self.q_proj(hidden_states), True)
        key = self._split_heads(self.k_proj(hidden_states), True)
        value = self._split_heads(self.v_proj(hidden_states), False)
        sincos = self.embed_positions[position_ids]
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
        cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
        k_rot, k_pass = key[:, :, :, : self.rotary_dim], key[:, :, :, self.rotary_dim:]
        q_rot, q_pass = query[:, :, :, : self.rotary_dim], query[:, :, :, self.rotary_dim:]
        k_rot = (k_rot * cos) + (rotate_every_two(k_rot) * sin)
        q_rot = (q_rot * cos) + (rotate_every_two(q_rot) * sin)
        key = torch.cat([k_rot, k_pass], dim=-1).permute(0, 2, 1, 3)
        query = torch.cat([q_rot, q_pass], dim=-1).permute(0, 2, 1, 3)
        w = torch.matmul(query.to(torch.float32), key.to(torch.float32).transpose(-1, -2)) / math.sqrt(self.head_dim)
        q_len = query.size(-2)
        causal = torch.tril(torch.ones(q_len, q_len, dtype=torch.bool))
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min))
        out = torch.matmul(F.softmax(w, dim=-1), value)
        out = out.permute(0, 2, 1, 3).contiguous()
        return self.out_proj(out.view(out.size()[:-2] + (self.num_attention_heads * self.head_dim,)))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6, gemma=False):
        super().__init__()
        self.eps, self.gemma = eps, gemma
        self.weight = nn.Parameter(torch.zeros(dim) if gemma else torch.ones(dim))
        with torch.no_grad():
            self.weight.add_(torch.randn(dim) * 0.1)

    def forward(self, x):
        input_dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        if self.gemma:
            return (x * (1.0 + self.weight.float())).to(input_dtype)
        return self.weight * x.to(input_dtype)


class Qwen2Model(nn.Module):
    """Qwen2 / Llama GQA: 4 query heads over 2 KV heads via repeat_kv; Gemma: (1 + w) RMSNorm, sqrt(hidden) scale."""

    def __init__(self, hidden=32, heads=4, kv_heads=2, gemma=False):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.gemma = heads, kv_heads, hidden // heads, gemma
        self.hidden = hidden
        self.embed_tokens = nn.Embedding(100, hidden)
        self.input_layernorm = RMSNorm(hidden, gemma=gemma)
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=not gemma)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=not gemma)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=not gemma)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.norm = RMSNorm(hidden, gemma=gemma)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2, dtype=torch.int64).float() / self.head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, input_ids, attention_mask):
        h = self.embed_tokens(input_ids)
        if self.gemma:
            normalizer = torch.tensor(self.hidden ** 0.5, dtype=h.dtype)
            h = h * normalizer
        bsz, q_len, _ = h.shape
        position_ids = torch.arange(q_len, device=h.device).unsqueeze(0).expand(bsz, -1)
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        freqs = (inv_freq_expanded @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().unsqueeze(1), emb.sin().unsqueeze(1)
        x = self.input_layernorm(h)
        q = self.q_proj(x).view(bsz, q_len, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(bsz, q_len, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(bsz, q_len, self.kv_heads, self.head_dim).transpose(1, 2)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        k = repeat_kv(k, self.heads // self.kv_heads)
        v = repeat_kv(v, self.heads // self.kv_heads)
        min_dtype = torch.finfo(h.dtype).min
        causal_mask = torch.full((q_len, q_len), fill_value=min_dtype, dtype=h.dtype)
        causal_mask = torch.triu(causal_mask, diagonal=1)
        causal_mask = causal_mask[None, None, :, :].expand(bsz, 1, -1, -1).clone()
        padding_mask = causal_mask[..., :q_len].eq(0.0) * attention_mask[:, None, None, :].eq(0.0)
        causal_mask[..., :q_len] = causal_mask[..., :q_len].masked_fill(padding_mask, min_dtype)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim) + causal_mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(w, v).transpose(1, 2).contiguous().reshape(bsz, q_len, -1)
        return self.norm(h + self.o_proj(out))


class OPTLearnedPositionalEmbedding(nn.Embedding):
    def __init__(self, num_embeddings: int, embedding_dim: int):
        self.offset = 2
        super().__init__(num_embeddings + self.offset, embedding_dim)

    def forward(self, attention_mask: torch.Tensor, past_key_values_length: int = 0):
        attention_mask = attention_mask.long()
        positions = (torch.cumsum(attention_mask, dim=1).type_as(attention_mask) * attention_mask).long() - 1
        positions = positions[:, past_key_values_length:]
        return super().forward(positions + self.offset)


class OPTEmbed(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.embed_tokens = nn.Embedding(100, 16, padding_idx=1)
        self.project_in = nn.Linear(16, hidden, bias=False)
        self.embed_positions = OPTLearnedPositionalEmbedding(64, hidden)
        self.final_layer_norm = nn.LayerNorm(hidden)

    def forward(self, input_ids, attention_mask):
        inputs_embeds = self.project_in(self.embed_tokens(input_ids))
        pos = self.embed_positions(attention_mask, 0)
        return self.final_layer_norm(inputs_embeds + pos)


class NeoXKVStep(nn.Module):
    """A KV-cache decode step: past concatenated along a dynamic axis, position ids from the past length,
    the attention mask grown by the new tokens."""

    def __init__(self, hidden=32, heads=4):
        super().__init__()
        self.heads, self.hd = heads, hidden // heads
        self.wte = nn.Embedding(100, hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, 100, bias=False)
        self.rotary = NeoXRotary(self.hd)

    def forward(self, input_ids, past_key, past_value, attention_mask):
        b, s = input_ids.shape
        past_length = past_key.shape[2]
        position_ids = torch.arange(past_length, s + past_length, dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0).view(-1, s)
        h = self.wte(input_ids)
        q, k, v = self.qkv(h).view(b, s, self.heads, 3 * self.hd).permute(0, 2, 1, 3).chunk(3, dim=-1)
        cos = self.rotary.cos_cached[0, 0][position_ids].unsqueeze(1)
        sin = self.rotary.sin_cached[0, 0][position_ids].unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = torch.cat((past_key, k), dim=-2)
        v = torch.cat((past_value, v), dim=-2)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        total = k.shape[-2]
        causal = torch.tril(torch.ones(total, total, dtype=torch.bool))[total - s: total, :total]
        w = torch.where(causal, w, torch.finfo(w.dtype).min)
        w = w + (1.0 - attention_mask[:, None, None, :].to(w.dtype)) * torch.finfo(w.dtype).min
        o = torch.matmul(F.softmax(w, dim=-1), v).permute(0, 2, 1, 3).reshape(b, s, -1)
        return self.lm_head(self.out(o)), k, v


class LogitsProcessors(nn.Module):
    """Repetition penalty (gather / scatter), temperature, top-k, top-p (sort + cumsum + scatter back)."""

    def __init__(self, penalty=1.3, top_p=0.8, top_k=20, temperature=0.7):
        super().__init__()
        self.penalty, self.top_p, self.top_k, self.temperature = penalty, top_p, top_k, temperature
        self.filter_value = -float("inf")

    def forward(self, input_ids, scores):
        score = torch.gather(scores, 1, input_ids)
        score = torch.where(score < 0, score * self.penalty, score / self.penalty)
        scores = scores.scatter(1, input_ids, score)
        scores = scores / self.temperature
        top_k = min(self.top_k, scores.size(-1))
        indices_to_remove = scores < torch.topk(scores, top_k)[0][..., -1, None]
        scores = scores.masked_fill(indices_to_remove, self.filter_value)
        sorted_logits, sorted_indices = torch.sort(scores, descending=False)
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        sorted_indices_to_remove = cumulative_probs <= (1 - self.top_p)
        sorted_indices_to_remove[..., -1:] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
        scores = scores.masked_fill(indices_to_remove, self.filter_value)
        return F.softmax(scores, dim=-1)


# ---------------------------------------------------------------- encoders
def create_position_ids_from_input_ids(input_ids, padding_idx: int, past_key_values_length: int = 0):
    mask = input_ids.ne(padding_idx).int()
    incremental_indices = (torch.cumsum(mask, dim=1).type_as(mask) + past_key_values_length) * mask
    return incremental_indices.long() + padding_idx


class RobertaEmbeddings(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.padding_idx = 1
        self.word_embeddings = nn.Embedding(100, hidden, padding_idx=1)
        self.position_embeddings = nn.Embedding(66, hidden, padding_idx=1)
        self.token_type_embeddings = nn.Embedding(1, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-5)
        self.register_buffer("token_type_ids", torch.zeros((1, 66), dtype=torch.long), persistent=False)

    def forward(self, input_ids):
        position_ids = create_position_ids_from_input_ids(input_ids, self.padding_idx)
        seq_length = input_ids.size(1)
        buffered = self.token_type_ids[:, :seq_length]
        token_type_ids = buffered.expand(input_ids.size(0), seq_length)
        e = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        e = e + self.position_embeddings(position_ids)
        return self.LayerNorm(e)


class DistilBertAttention(nn.Module):
    def __init__(self, dim=32, n_heads=4):
        super().__init__()
        self.n_heads, self.dim = n_heads, dim
        self.q_lin, self.k_lin = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.v_lin, self.out_lin = nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, query, mask):
        bs, q_length, dim = query.size()
        k_length = query.size(1)
        dim_per_head = self.dim // self.n_heads
        mask_reshp = (bs, 1, 1, k_length)

        def shape(x):
            return x.view(bs, -1, self.n_heads, dim_per_head).transpose(1, 2)

        def unshape(x):
            return x.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * dim_per_head)

        q = shape(self.q_lin(query)) / math.sqrt(dim_per_head)
        k, v = shape(self.k_lin(query)), shape(self.v_lin(query))
        scores = torch.matmul(q, k.transpose(2, 3))
        mask = (mask == 0).view(mask_reshp).expand_as(scores)
        scores = scores.masked_fill(mask, torch.tensor(torch.finfo(scores.dtype).min))
        weights = nn.functional.softmax(scores, dim=-1)
        return self.out_lin(unshape(torch.matmul(weights, v)))


class XLNetRelAttn(nn.Module):
    """Transformer-XL / XLNet: content + position scores, the relative shift by pad + view."""

    def __init__(self, d=32, n_head=4):
        super().__init__()
        self.n_head, self.d_head = n_head, d // n_head
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.r_net = nn.Linear(d, d, bias=False)
        self.r_w_bias = nn.Parameter(torch.randn(n_head, self.d_head) * 0.1)
        self.r_r_bias = nn.Parameter(torch.randn(n_head, self.d_head) * 0.1)
        self.o = nn.Linear(d, d, bias=False)
        inv_freq = 1 / (10000 ** (torch.arange(0.0, d, 2.0) / d))
        self.register_buffer("inv_freq", inv_freq)

    @staticmethod
    def _rel_shift(x):
        zero_pad_shape = (x.size(0), 1) + x.size()[2:]
        zero_pad = torch.zeros(zero_pad_shape, device=x.device, dtype=x.dtype)
        x_padded = torch.cat([zero_pad, x], dim=1)
        x_padded_shape = (x.size(1) + 1, x.size(0)) + x.size()[2:]
        x_padded = x_padded.view(*x_padded_shape)
        return x_padded[1:].view_as(x)

    def forward(self, w):  # w: qlen x bsz x d (Transformer-XL layout)
        qlen, bsz = w.size(0), w.size(1)
        pos_seq = torch.arange(qlen - 1, -1, -1.0, device=w.device, dtype=w.dtype)
        sinusoid_inp = torch.ger(pos_seq, self.inv_freq)
        r = torch.cat([sinusoid_inp.sin(), sinusoid_inp.cos()], dim=-1)[:, None, :]
        w_heads = self.qkv(w)
        r_head_k = self.r_net(r)
        w_head_q, w_head_k, w_head_v = torch.chunk(w_heads, 3, dim=-1)
        w_head_q = w_head_q.view(qlen, bsz, self.n_head, self.d_head)
        w_head_k = w_head_k.view(qlen, bsz, self.n_head, self.d_head)
        w_head_v = w_head_v.view(qlen, bsz, self.n_head, self.d_head)
        r_head_k = r_head_k.view(qlen, self.n_head, self.d_head)
        AC = torch.einsum("ibnd,jbnd->ijbn", (w_head_q + self.r_w_bias, w_head_k))
        BD = torch.einsum("ibnd,jnd->ijbn", (w_head_q + self.r_r_bias, r_head_k))
        BD = self._rel_shift(BD)
        attn_score = (AC + BD) * (1 / self.d_head ** 0.5)
        attn_mask = torch.triu(w.new_ones(qlen, qlen), diagonal=1).bool()[:, :, None, None]
        attn_score = attn_score.float().masked_fill(attn_mask, -float("inf"))
        attn_prob = F.softmax(attn_score, dim=1)
        attn_vec = torch.einsum("ijbn,jbnd->ibnd", (attn_prob, w_head_v))
        return self.o(attn_vec.contiguous().view(qlen, bsz, self.n_head * self.d_head))


class FunnelPool(nn.Module):
    """Funnel Transformer: mean-pool the queries (stride 2, keeping [CLS] separate), full-length keys."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln = nn.LayerNorm(d)

    def stride_pool(self, t):
        cls = t[:, :1]
        t = t[:, :-1]
        t = torch.cat([cls, t], dim=1)
        return t[:, 0::2]

    def pool_tensor(self, t):
        suffix = t[:, :-1]
        t = torch.cat([t[:, :1], suffix], dim=1)
        t = F.avg_pool2d(t[:, None], (2, 1), stride=(2, 1), ceil_mode=True)
        return t[:, 0]

    def forward(self, h, mask):
        q = self.pool_tensor(h)
        out, _ = self.attn(q, h, h, key_padding_mask=mask == 0, need_weights=False)
        pooled_mask = self.stride_pool(mask)
        return self.ln(q + out), pooled_mask


class ElectraDiscriminator(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.embeddings = nn.Embedding(100, 16)
        self.embeddings_project = nn.Linear(16, hidden)
        self.layer = nn.TransformerEncoderLayer(hidden, 4, 64, dropout=0.0, activation="gelu", batch_first=True)
        self.dense = nn.Linear(hidden, hidden)
        self.dense_prediction = nn.Linear(hidden, 1)

    def forward(self, input_ids, attention_mask):
        h = self.embeddings_project(self.embeddings(input_ids))
        h = self.layer(h, src_key_padding_mask=attention_mask == 0)
        h = F.gelu(self.dense(h))
        logits = self.dense_prediction(h).squeeze(-1)
        return torch.round((torch.sign(logits) + 1) / 2), logits


class SentenceMeanPool(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.emb = nn.Embedding(100, hidden)
        self.enc = nn.TransformerEncoderLayer(hidden, 4, 64, dropout=0.0, batch_first=True)

    def forward(self, input_ids, attention_mask):
        token_embeddings = self.enc(self.emb(input_ids))
        input_mask_expanded = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).float()
        sum_embeddings = torch.sum(token_embeddings * input_mask_expanded, 1)
        sum_mask = torch.clamp(input_mask_expanded.sum(1), min=1e-9)
        return F.normalize(sum_embeddings / sum_mask, p=2.0, dim=1)


class ColBERT(nn.Module):
    def __init__(self, hidden=32, dim=16):
        super().__init__()
        self.emb = nn.Embedding(100, hidden)
        self.linear = nn.Linear(hidden, dim, bias=False)

    def forward(self, q_ids, d_ids, d_mask):
        Q = F.normalize(self.linear(self.emb(q_ids)), p=2.0, dim=2)
        D = self.linear(self.emb(d_ids))
        D = D * d_mask.unsqueeze(2).float()
        D = F.normalize(D, p=2.0, dim=2)
        return (Q @ D.permute(0, 2, 1)).max(2).values.sum(1)


class LongformerChunks(nn.Module):
    """Longformer _chunk (as_strided over overlapping windows) and a sliding-chunks matmul, plus the unfold form."""

    def __init__(self, window=2):
        super().__init__()
        self.w = window

    @staticmethod
    def _chunk(hidden_states, window_overlap: int):
        hidden_states = hidden_states.view(hidden_states.size(0), torch.div(hidden_states.size(1), (window_overlap * 2),
                                           rounding_mode="trunc"), window_overlap * 2, hidden_states.size(2))
        chunk_size = list(hidden_states.size())
        chunk_size[1] = chunk_size[1] * 2 - 1
        chunk_stride = list(hidden_states.stride())
        chunk_stride[1] = chunk_stride[1] // 2
        return hidden_states.as_strided(size=chunk_size, stride=chunk_stride)

    def forward(self, q, k):  # (batch*heads, seq, head_dim), seq a multiple of 2w
        qc = self._chunk(q, self.w)
        kc = self._chunk(k, self.w)
        scores = torch.einsum("bcxd,bcyd->bcxy", (qc, kc))
        kw = k.unfold(1, 2 * self.w, self.w)  # the same windows by unfold: (b, chunks, d, 2w)
        return scores, torch.einsum("bcxd,bcdy->bcxy", (qc, kw))


class PerceiverCross(nn.Module):
    def __init__(self, d=32, latents=8, in_dim=12):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, d))
        self.ln_q, self.ln_kv = nn.LayerNorm(d), nn.LayerNorm(in_dim)
        self.attn = nn.MultiheadAttention(d, 4, kdim=in_dim, vdim=in_dim, batch_first=True)
        self.mlp = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, inputs, attention_mask):
        batch_size = inputs.shape[0]
        latents = self.latents.expand(batch_size, -1, -1)
        kv = self.ln_kv(inputs)
        out, _ = self.attn(self.ln_q(latents), kv, kv, key_padding_mask=attention_mask == 0, need_weights=False)
        h = latents + out
        return h + self.mlp(h)


class BartTied(nn.Module):
    """BART/T5 encoder-decoder: one shared embedding, scaled; lm_head tied to it; final_logits_bias buffer."""

    def __init__(self, d=32, vocab=50):
        super().__init__()
        self.shared = nn.Embedding(vocab, d, padding_idx=1)
        self.embed_scale = math.sqrt(d)
        self.enc_pos = nn.Embedding(64 + 2, d)
        self.dec_pos = nn.Embedding(64 + 2, d)
        self.encoder = nn.TransformerEncoderLayer(d, 4, 64, dropout=0.0, batch_first=True)
        self.decoder = nn.TransformerDecoderLayer(d, 4, 64, dropout=0.0, batch_first=True)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.shared.weight
        self.register_buffer("final_logits_bias", torch.zeros((1, vocab)))

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        s, t = input_ids.shape[1], decoder_input_ids.shape[1]
        pos_e = torch.arange(0, s, dtype=torch.long) + 2
        pos_d = torch.arange(0, t, dtype=torch.long) + 2
        x = self.shared(input_ids) * self.embed_scale + self.enc_pos(pos_e)
        mem = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        y = self.shared(decoder_input_ids) * self.embed_scale + self.dec_pos(pos_d)
        causal = torch.full((t, t), float("-inf")).triu(1)
        y = self.decoder(y, mem, tgt_mask=causal, memory_key_padding_mask=attention_mask == 0)
        return self.lm_head(y) + self.final_logits_bias


def _mask(b, s, lens):
    m = np.zeros((b, s), dtype=np.int64)
    for i, n in enumerate(lens):
        m[i, :n] = 1
    return m


def _ids(b, s, pad=None, lens=None, seed=0):
    rng = np.random.RandomState(seed)
    ids = rng.randint(2, 100, size=(b, s)).astype(np.int64)
    if pad is not None:
        for i, n in enumerate(lens):
            ids[i, n:] = pad
    return ids


TRACE = ("trace",)  # HuggingFace-style code does not script (finfo, view(*shape), closures, super().forward)


NLP4 = [
    ("bloom_alibi", lambda: Spec(BloomAttention(), [_ids(2, 7), _mask(2, 7, [7, 5])], ["input_ids", "attention_mask"],
                                 ["input_ids:0=b,1=s", "attention_mask:0=b,1=s"], modes=TRACE)),
    ("neox_partial_rotary", lambda: Spec(FalconNeoXLayer(), ["2x7x32"], ["x"], ["x:0=b,1=s"], modes=TRACE)),
    ("phi_partial_rotary", lambda: Spec(FalconNeoXLayer(rotary_pct=0.5, phi=True), ["2x7x32"], ["x"], ["x:0=b,1=s"], modes=TRACE)),
    ("gptj_interleaved_rotary", lambda: Spec(GPTJAttention(), ["2x6x32", np.tile(np.arange(3, 9), (2, 1))],
                                             ["h", "position_ids"], ["h:0=b,1=s", "position_ids:0=b,1=s"], modes=TRACE)),
    ("qwen2_gqa", lambda: Spec(Qwen2Model(), [_ids(2, 7), _mask(2, 7, [7, 4])], ["input_ids", "attention_mask"],
                               ["input_ids:0=b,1=s", "attention_mask:0=b,1=s"], modes=TRACE)),
    ("gemma_rmsnorm", lambda: Spec(Qwen2Model(heads=4, kv_heads=1, gemma=True), [_ids(2, 7), _mask(2, 7, [7, 4])],
                                   ["input_ids", "attention_mask"], ["input_ids:0=b,1=s", "attention_mask:0=b,1=s"], modes=TRACE)),
    ("opt_learned_pos", lambda: Spec(OPTEmbed(), [_ids(2, 7, 1, [7, 5]), _mask(2, 7, [7, 5])],
                                     ["input_ids", "attention_mask"], ["input_ids:0=b,1=s", "attention_mask:0=b,1=s"], modes=TRACE)),
    ("neox_kv_step", lambda: Spec(NeoXKVStep(), [_ids(2, 1), "2x4x5x8", "2x4x5x8", _mask(2, 6, [6, 6])],
                                  ["input_ids", "past_key", "past_value", "attention_mask"],
                                  ["input_ids:0=b,1=s", "past_key:0=b,2=past", "past_value:0=b,2=past",
                                   "attention_mask:0=b,1=total"], modes=TRACE)),
    ("logits_processors", lambda: Spec(LogitsProcessors(), [_ids(2, 5, seed=1) % 50, "2x50"], ["input_ids", "scores"],
                                       ["input_ids:0=b,1=s", "scores:0=b"])),
    ("roberta_pos_ids", lambda: Spec(RobertaEmbeddings(), [_ids(2, 7, 1, [7, 4])], ["input_ids"], ["input_ids:0=b,1=s"])),
    ("distilbert_mask", lambda: Spec(DistilBertAttention(), ["2x7x32", _mask(2, 7, [7, 3])], ["x", "mask"],
                                     ["x:0=b,1=s", "mask:0=b,1=s"], modes=TRACE)),
    ("xlnet_rel_shift", lambda: Spec(XLNetRelAttn(), ["6x2x32"], ["w"], ["w:0=q,1=b"], modes=TRACE)),
    ("funnel_pool", lambda: Spec(FunnelPool(), ["2x8x32", _mask(2, 8, [8, 5])], ["h", "mask"], ["h:0=b,1=s", "mask:0=b,1=s"])),
    ("electra_disc", lambda: Spec(ElectraDiscriminator(), [_ids(2, 7), _mask(2, 7, [7, 5])], ["input_ids", "attention_mask"],
                                  ["input_ids:0=b,1=s", "attention_mask:0=b,1=s"])),
    ("st_mean_pool", lambda: Spec(SentenceMeanPool(), [_ids(2, 7), _mask(2, 7, [7, 2])], ["input_ids", "attention_mask"],
                                  ["input_ids:0=b,1=s", "attention_mask:0=b,1=s"])),
    ("colbert_maxsim", lambda: Spec(ColBERT(), [_ids(2, 4), _ids(2, 9, seed=3), _mask(2, 9, [9, 6])],
                                    ["q", "d", "d_mask"], ["q:0=b,1=sq", "d:0=b,1=sd", "d_mask:0=b,1=sd"])),
    ("longformer_chunks", lambda: Spec(LongformerChunks(), ["4x8x8", "4x8x8"], ["q", "k"], ["q:0=bh,1=s", "k:0=bh,1=s"], modes=TRACE)),
    ("perceiver_latents", lambda: Spec(PerceiverCross(), ["2x10x12", _mask(2, 10, [10, 6])], ["inputs", "mask"],
                                       ["inputs:0=b,1=n", "mask:0=b,1=n"], modes=TRACE)),
    ("bart_tied", lambda: Spec(BartTied(), [_ids(2, 7) % 50, _mask(2, 7, [7, 5]), _ids(2, 4, seed=2) % 50],
                               ["input_ids", "attention_mask", "decoder_input_ids"],
                               ["input_ids:0=b,1=s", "attention_mask:0=b,1=s", "decoder_input_ids:0=b,1=t"])),
    ("fastspeech2_length_reg", lambda: Spec(LengthRegulator(), ["1x6x16"], ["x"], ["x:1=t"])),
    ("encodec_rvq", lambda: Spec(ResidualVQ(), ["2x8x10"], ["x"], ["x:0=b,2=t"])),
    ("demucs", lambda: Spec(Demucs(), ["1x1x300"], ["mix"], ["mix:0=b,2=n"])),
    ("silero_vad_state", lambda: Spec(SileroVAD(), ["2x64", "2x2x16:float32:zeros"], ["x", "state"], ["x:0=b", "state:1=b"])),
    ("rnnt_joint", lambda: Spec(RNNTJoint(), ["2x6x16", _ids(2, 3) % 20], ["f", "targets"], ["f:0=b,1=t", "targets:0=b,1=u"])),
    ("emformer_chunk_mask", lambda: Spec(EmformerMask(), ["2x10x32", np.array([10, 7])], ["x", "lengths"],
                                         ["x:0=b,1=t", "lengths:0=b"])),
    ("logmel_cmvn", lambda: Spec(LogMelCMVN(), ["2x400"], ["wav"], ["wav:0=b,1=n"])),
    ("wav2vec2_pos_conv_wn", lambda: Spec(Wav2Vec2PosConv(), ["2x9x16", _mask(2, 9, [9, 6])], ["h", "mask"],
                                          ["h:0=b,1=t", "mask:0=b,1=t"], modes=TRACE)),
    ("bilstm_crf_viterbi", lambda: Spec(BiLSTMCRF(), [_ids(2, 6) % 50], ["input_ids"], ["input_ids:0=b,1=t"])),
    ("pointer_net", lambda: Spec(PointerNet(), ["2x6x2"], ["points"], ["points:0=b,1=n"])),
    ("crf_log_likelihood", lambda: Spec(CRFNormalizer(), ["6x2x5", _ids(6, 2) % 5, _mask(2, 6, [6, 4]).T.copy()],
                                        ["emissions", "tags", "mask"], ["emissions:0=t,1=b", "tags:0=t,1=b", "mask:0=t,1=b"])),
    ("espnet_conformer_relpos", lambda: Spec(EspnetConformerFront(), ["2x23x16", np.array([23, 17])], ["xs", "ilens"],
                                             ["xs:0=b,1=t", "ilens:0=b"], modes=TRACE)),
]
