"""The probe sweep's models, round 4 (probe_zoo_nlp4.py's list NLP4): speech and audio (FastSpeech2, EnCodec,
Demucs, Silero VAD, RNN-T, Emformer, log-mel CMVN, wav2vec2 positional conv, ESPnet conformer) and sequence
labelling (BiLSTM-CRF Viterbi, pytorch-crf likelihood, pointer networks), written as their authors write them."""
import math
from typing import List

import torch
import torch.nn.functional as F
from torch import nn

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
