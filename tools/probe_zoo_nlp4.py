"""The probe sweep's models (tools/probe_models.py), round 4: language and speech models not probed before
(BLOOM ALiBi, NeoX/Falcon/Phi partial rotary, GPT-J interleaved rotary, Qwen2 GQA, Gemma, OPT, a KV-cache
step, logits processors; RoBERTa/DistilBERT/XLNet/Funnel/ELECTRA/sentence-transformers/ColBERT/Longformer/
Perceiver/BART encoders; FastSpeech2, EnCodec, Demucs, Silero VAD, RNN-T, Emformer, log-mel CMVN, wav2vec2
positional conv; BiLSTM-CRF and pointer networks). Written the way their authors write them, small configs."""
import math
from typing import List, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec
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


# ---------------------------------------------------------------- speech / audio
class LengthRegulator(nn.Module):
    """FastSpeech2: durations from the predictor (exp - 1, round, clamp), repeat_interleave per utterance."""

    def __init__(self, d=16):
        super().__init__()
        self.duration_predictor = nn.Sequential(nn.Conv1d(d, d, 3, padding=1), nn.ReLU(), nn.Conv1d(d, 1, 1))

    def forward(self, x):  # x: (1, T, d)
        log_d = self.duration_predictor(x.transpose(1, 2)).squeeze(1)
        durations = torch.clamp(torch.round(torch.exp(log_d) - 1), min=0).long()
        out = torch.repeat_interleave(x[0], durations[0], dim=0)
        return out.unsqueeze(0), durations


class ResidualVQ(nn.Module):
    """EnCodec: loop over codebooks, nearest code by the expanded squared distance, subtract, accumulate."""

    def __init__(self, n_q=4, bins=32, dim=8):
        super().__init__()
        self.codebooks = nn.ParameterList([nn.Parameter(torch.randn(bins, dim)) for _ in range(n_q)])

    def forward(self, x):  # x: (B, D, T)
        x = x.permute(0, 2, 1)
        shape = x.shape
        residual = x.reshape(-1, shape[-1])
        quantized_out = torch.zeros_like(residual)
        all_indices: List[torch.Tensor] = []
        for embed in self.codebooks:
            embed_t = embed.t()
            dist = -(residual.pow(2).sum(1, keepdim=True) - 2 * residual @ embed_t + embed_t.pow(2).sum(0, keepdim=True))
            embed_ind = dist.max(dim=-1).indices
            quantized = F.embedding(embed_ind, embed)
            residual = residual - quantized
            quantized_out = quantized_out + quantized
            all_indices.append(embed_ind.view(shape[:-1]))
        return quantized_out.view(shape).permute(0, 2, 1), torch.stack(all_indices)


class Demucs(nn.Module):
    """Demucs v1/v2: Conv1d + ReLU + 1x1 Conv1d + GLU encoders, BiLSTM, ConvTranspose1d decoders with center trim."""

    def __init__(self, ch=4, depth=2, k=8, s=4):
        super().__init__()
        self.encoder, self.decoder = nn.ModuleList(), nn.ModuleList()
        cin, c = 1, ch
        for i in range(depth):
            self.encoder.append(nn.Sequential(nn.Conv1d(cin, c, k, s), nn.ReLU(), nn.Conv1d(c, 2 * c, 1), nn.GLU(1)))
            out = 1 if i == 0 else cin
            dec = [nn.Conv1d(c, 2 * c, 3), nn.GLU(1), nn.ConvTranspose1d(c, out, k, s)]
            if i > 0:
                dec.append(nn.ReLU())
            self.decoder.insert(0, nn.Sequential(*dec))
            cin, c = c, 2 * c
        self.lstm = nn.LSTM(cin, cin, 1, bidirectional=True)
        self.lstm_lin = nn.Linear(2 * cin, cin)

    @staticmethod
    def center_trim(tensor, reference: int):
        delta = tensor.size(-1) - reference
        return tensor[..., delta // 2: tensor.size(-1) - (delta - delta // 2)]

    def forward(self, mix):
        x = mix
        saved: List[torch.Tensor] = []
        for encode in self.encoder:
            x = encode(x)
            saved.append(x)
        x = x.permute(2, 0, 1)
        x = self.lstm_lin(self.lstm(x)[0]).permute(1, 2, 0)
        for decode in self.decoder:
            skip = self.center_trim(saved.pop(-1), x.size(-1))
            x = decode(x + skip)
        return x


class SileroVAD(nn.Module):
    """Silero-style streaming VAD: STFT-like conv front end, encoder, LSTMCell with (h, c) state in and out."""

    def __init__(self, n=64, hidden=16):
        super().__init__()
        self.stft = nn.Conv1d(1, 2 * 17, 32, stride=16, bias=False)
        self.encoder = nn.Sequential(nn.Conv1d(17, hidden, 3, padding=1), nn.ReLU(),
                                     nn.Conv1d(hidden, hidden, 3, stride=2, padding=1), nn.ReLU())
        self.rnn = nn.LSTMCell(hidden, hidden)
        self.decoder = nn.Sequential(nn.Dropout(0.1), nn.ReLU(), nn.Conv1d(hidden, 1, 1), nn.Sigmoid())

    def forward(self, x, state):  # x: (B, n), state: (2, B, hidden)
        x = F.pad(x.unsqueeze(1), (16, 16), mode="reflect")
        spec = self.stft(x)
        real, imag = spec[:, :17], spec[:, 17:]
        mag = torch.sqrt(real ** 2 + imag ** 2)
        x = self.encoder(mag)
        x = x.mean(-1)
        h, c = self.rnn(x, (state[0], state[1]))
        out = self.decoder(h.unsqueeze(-1)).squeeze(1).squeeze(-1)
        return out, torch.stack([h, c])


class RNNTJoint(nn.Module):
    """RNN-T: encoder (B,T,1,H) + predictor (B,1,U,H) broadcast, tanh, vocab projection, log_softmax."""

    def __init__(self, enc=16, pred=12, joint=24, vocab=20):
        super().__init__()
        self.lin_enc, self.lin_pred = nn.Linear(enc, joint), nn.Linear(pred, joint)
        self.embed = nn.Embedding(vocab, pred, padding_idx=0)
        self.pred_rnn = nn.LSTM(pred, pred, batch_first=True)
        self.joint_net = nn.Sequential(nn.Tanh(), nn.Linear(joint, vocab))

    def forward(self, f, targets):
        y = F.pad(targets, (1, 0), value=0.0)
        g, _ = self.pred_rnn(self.embed(y))
        f = self.lin_enc(f).unsqueeze(2)
        g = self.lin_pred(g).unsqueeze(1)
        return self.joint_net(f + g).log_softmax(dim=-1)


class EmformerMask(nn.Module):
    """Streaming conformer / Emformer-style chunk mask: each frame sees its chunk and `left` chunks before."""

    def __init__(self, d=32, chunk=4, left=1):
        super().__init__()
        self.chunk, self.left = chunk, left
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)

    def forward(self, x, lengths):
        T = x.size(1)
        idx = torch.arange(T, device=x.device)
        chunk_idx = torch.div(idx, self.chunk, rounding_mode="floor")
        diff = chunk_idx.unsqueeze(1) - chunk_idx.unsqueeze(0)
        mask = (diff < 0) | (diff > self.left)
        pad_mask = idx.unsqueeze(0) >= lengths.unsqueeze(1)
        out, _ = self.attn(x, x, x, attn_mask=mask, key_padding_mask=pad_mask, need_weights=False)
        return out.masked_fill(pad_mask.unsqueeze(-1), 0.0)


class LogMelCMVN(nn.Module):
    """Log-mel front end (STFT power @ mel matrix), log of clamp(1e-10), per-utterance mean/var normalisation."""

    def __init__(self, n_fft=64, hop=16, n_mels=12):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("mel", torch.rand(n_fft // 2 + 1, n_mels))

    def forward(self, wav):
        spec = torch.stft(wav, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec.abs() ** 2
        mel = torch.matmul(power.transpose(1, 2), self.mel)
        logmel = torch.log(torch.clamp(mel, min=1e-10))
        mean = logmel.mean(dim=1, keepdim=True)
        std = logmel.std(dim=1, keepdim=True)
        return (logmel - mean) / (std + 1e-5)


class Wav2Vec2PosConv(nn.Module):
    """wav2vec2 positional conv: weight_norm(dim=2), even kernel so one frame is removed, GELU; padded frames zeroed."""

    def __init__(self, d=16, k=8, groups=4):
        super().__init__()
        conv = nn.Conv1d(d, d, kernel_size=k, padding=k // 2, groups=groups)
        self.conv = nn.utils.weight_norm(conv, name="weight", dim=2)
        self.num_pad_remove = 1 if k % 2 == 0 else 0
        self.layer_norm = nn.LayerNorm(d)

    def forward(self, hidden_states, attention_mask):
        expand_attention_mask = attention_mask.unsqueeze(-1).repeat(1, 1, hidden_states.shape[2])
        hidden_states = hidden_states.clone()
        hidden_states[~expand_attention_mask.bool()] = 0
        x = self.conv(hidden_states.transpose(1, 2))
        if self.num_pad_remove > 0:
            x = x[:, :, : -self.num_pad_remove]
        x = F.gelu(x).transpose(1, 2)
        return self.layer_norm(hidden_states + x)


# ---------------------------------------------------------------- sequence labelling
class BiLSTMCRF(nn.Module):
    """BiLSTM-CRF (the PyTorch tutorial's shape, batched): emissions + Viterbi with a backtrace loop."""

    def __init__(self, vocab=50, emb=8, hidden=8, tags=5):
        super().__init__()
        self.tags = tags
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden // 2, bidirectional=True, batch_first=True)
        self.hidden2tag = nn.Linear(hidden, tags)
        self.transitions = nn.Parameter(torch.randn(tags, tags))
        self.start_transitions = nn.Parameter(torch.randn(tags))
        self.end_transitions = nn.Parameter(torch.randn(tags))

    def forward(self, input_ids):
        emissions = self.hidden2tag(self.lstm(self.embed(input_ids))[0])  # (B, T, K)
        seq_len = emissions.size(1)
        score = self.start_transitions + emissions[:, 0]
        history: List[torch.Tensor] = []
        for i in range(1, seq_len):
            next_score = score.unsqueeze(2) + self.transitions + emissions[:, i].unsqueeze(1)
            next_score, indices = next_score.max(dim=1)
            score = next_score
            history.append(indices)
        score = score + self.end_transitions
        best_score, best_last = score.max(dim=1)
        best_tags = [best_last]
        for hist in history[::-1]:
            best_last = hist.gather(1, best_last.unsqueeze(1)).squeeze(1)
            best_tags.append(best_last)
        best_tags.reverse()
        return best_score, torch.stack(best_tags, dim=1)


class PointerNet(nn.Module):
    """Pointer network decoder: attention over encoder states as the output, already-chosen inputs masked,
    the chosen input's embedding fed back (greedy)."""

    def __init__(self, d_in=2, h=16):
        super().__init__()
        self.embedding = nn.Linear(d_in, h)
        self.encoder = nn.LSTM(h, h, batch_first=True)
        self.decoder = nn.LSTMCell(h, h)
        self.W1, self.W2 = nn.Linear(h, h, bias=False), nn.Linear(h, h, bias=False)
        self.v = nn.Linear(h, 1, bias=False)
        self.decoder_start = nn.Parameter(torch.randn(h))

    def forward(self, points):
        B, N, _ = points.shape
        emb = self.embedding(points)
        enc, (hx, cx) = self.encoder(emb)
        h, c = hx[0], cx[0]
        mask = torch.zeros(B, N, dtype=torch.bool, device=points.device)
        dec_in = self.decoder_start.unsqueeze(0).expand(B, -1)
        pointers: List[torch.Tensor] = []
        logps: List[torch.Tensor] = []
        enc_proj = self.W1(enc)
        for _ in range(N):
            h, c = self.decoder(dec_in, (h, c))
            u = self.v(torch.tanh(enc_proj + self.W2(h).unsqueeze(1))).squeeze(-1)
            u = u.masked_fill(mask, float("-inf"))
            logp = F.log_softmax(u, dim=1)
            idx = logp.argmax(dim=1)
            mask = mask | (F.one_hot(idx, N) > 0)
            dec_in = emb[torch.arange(B), idx]
            pointers.append(idx)
            logps.append(logp)
        return torch.stack(pointers, 1), torch.stack(logps, 1)


class CRFNormalizer(nn.Module):
    """pytorch-crf's _compute_normalizer and _compute_score (the CRF log-likelihood a BiLSTM-CRF reports):
    logsumexp over the previous tag per step, masked steps keep the old score (torch.where)."""

    def __init__(self, tags=5):
        super().__init__()
        self.start_transitions = nn.Parameter(torch.randn(tags) * 0.1)
        self.end_transitions = nn.Parameter(torch.randn(tags) * 0.1)
        self.transitions = nn.Parameter(torch.randn(tags, tags) * 0.1)

    def forward(self, emissions, tags, mask):  # seq-first as pytorch-crf: (T, B, K), (T, B), (T, B) uint8
        mask = mask.to(torch.bool)
        seq_length, batch_size = tags.shape
        score = self.start_transitions[tags[0]] + emissions[0, torch.arange(batch_size), tags[0]]
        for i in range(1, seq_length):
            score = score + self.transitions[tags[i - 1], tags[i]] * mask[i]
            score = score + emissions[i, torch.arange(batch_size), tags[i]] * mask[i]
        seq_ends = mask.long().sum(dim=0) - 1
        last_tags = tags[seq_ends, torch.arange(batch_size)]
        score = score + self.end_transitions[last_tags]
        norm = self.start_transitions + emissions[0]
        for i in range(1, seq_length):
            next_score = norm.unsqueeze(2) + self.transitions + emissions[i].unsqueeze(1)
            next_score = torch.logsumexp(next_score, dim=1)
            norm = torch.where(mask[i].unsqueeze(1), next_score, norm)
        norm = torch.logsumexp(norm + self.end_transitions, dim=1)
        return (score - norm).sum()


def make_pad_mask(lengths: torch.Tensor, maxlen: int = 0) -> torch.Tensor:
    """ESPnet: True at padded frames; maxlen from the lengths themselves when not given."""
    batch_size = lengths.size(0)
    maxlen = maxlen if maxlen > 0 else int(lengths.max().item())
    seq_range = torch.arange(0, maxlen, dtype=torch.int64, device=lengths.device)
    seq_range_expand = seq_range.unsqueeze(0).expand(batch_size, maxlen)
    seq_length_expand = lengths.unsqueeze(-1)
    return seq_range_expand >= seq_length_expand


class EspnetConformerFront(nn.Module):
    """ESPnet conformer: Conv2dSubsampling (x4, lengths updated as ((l - 1) // 2 - 1) // 2), RelPositionalEncoding
    (positions T-1..-(T-1)), RelPositionMultiHeadedAttention with the newer rel_shift (pad on the last axis,
    view, drop a row, keep T + 1 // 2 columns)."""

    def __init__(self, idim=16, d=32, heads=4):
        super().__init__()
        self.h, self.d_k, self.d = heads, d // heads, d
        self.conv = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
        self.out = nn.Linear(d * (((idim - 1) // 2 - 1) // 2), d)
        self.linear_q, self.linear_k = nn.Linear(d, d), nn.Linear(d, d)
        self.linear_v, self.linear_out = nn.Linear(d, d), nn.Linear(d, d)
        self.linear_pos = nn.Linear(d, d, bias=False)
        self.pos_bias_u = nn.Parameter(torch.randn(heads, self.d_k) * 0.1)
        self.pos_bias_v = nn.Parameter(torch.randn(heads, self.d_k) * 0.1)
        self.register_buffer("pe", self._extend_pe(64, d), persistent=False)

    @staticmethod
    def _extend_pe(max_len: int, d: int):
        pe_positive = torch.zeros(max_len, d)
        pe_negative = torch.zeros(max_len, d)
        position = torch.arange(0, max_len, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float32) * -(math.log(10000.0) / d))
        pe_positive[:, 0::2] = torch.sin(position * div_term)
        pe_positive[:, 1::2] = torch.cos(position * div_term)
        pe_negative[:, 0::2] = torch.sin(-1 * position * div_term)
        pe_negative[:, 1::2] = torch.cos(-1 * position * div_term)
        pe_positive = torch.flip(pe_positive, [0]).unsqueeze(0)
        pe_negative = pe_negative[1:].unsqueeze(0)
        return torch.cat([pe_positive, pe_negative], dim=1)

    @staticmethod
    def rel_shift(x):
        zero_pad = torch.zeros((*x.size()[:3], 1), device=x.device, dtype=x.dtype)
        x_padded = torch.cat([zero_pad, x], dim=-1)
        x_padded = x_padded.view(*x.size()[:2], x.size(3) + 1, x.size(2))
        x = x_padded[:, :, 1:].view_as(x)[:, :, :, : x.size(-1) // 2 + 1]
        return x

    def forward(self, xs, ilens):
        x = self.conv(xs.unsqueeze(1))
        b, c, t, f = x.size()
        x = self.out(x.transpose(1, 2).contiguous().view(b, t, c * f)) * math.sqrt(self.d)
        olens = ((ilens - 1) // 2 - 1) // 2
        center = self.pe.size(1) // 2
        pos_emb = self.pe[:, center - t + 1: center + t]
        mask = ~make_pad_mask(olens, t)[:, None, :]
        q = self.linear_q(x).view(b, -1, self.h, self.d_k)
        k = self.linear_k(x).view(b, -1, self.h, self.d_k).transpose(1, 2)
        v = self.linear_v(x).view(b, -1, self.h, self.d_k).transpose(1, 2)
        p = self.linear_pos(pos_emb).view(1, -1, self.h, self.d_k).transpose(1, 2)
        q_with_bias_u = (q + self.pos_bias_u).transpose(1, 2)
        q_with_bias_v = (q + self.pos_bias_v).transpose(1, 2)
        matrix_ac = torch.matmul(q_with_bias_u, k.transpose(-2, -1))
        matrix_bd = self.rel_shift(torch.matmul(q_with_bias_v, p.transpose(-2, -1)))
        scores = (matrix_ac + matrix_bd) / math.sqrt(self.d_k)
        m = mask.unsqueeze(1).eq(0)
        min_value = float(torch.finfo(scores.dtype).min)
        attn = torch.softmax(scores.masked_fill(m, min_value), dim=-1).masked_fill(m, 0.0)
        out = torch.matmul(attn, v).transpose(1, 2).contiguous().view(b, -1, self.h * self.d_k)
        return self.linear_out(out), olens


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
