"""Probe round 6 (script7): scripted models with real control flow, written as their authors script
them (torch.jit.script, graph_mode `script`): decoders with loops and KV caches, postprocessing loops
(NMS, CTC collapse, greedy matching), sampling loops, trip counts read from tensors, ModuleList
iteration with enumerate/zip, export-time flags, and the leftovers of earlier rounds (EmbeddingBag with
per_sample_weights, list slices of a split). Random weights, fixed seed, small configs.
"""
import math
from typing import Dict, List, Optional, Tuple

import numpy
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec

SCRIPT = ("script",)


# ---------------------------------------------------------------- Transformer decoder, KV cache dict
class CachedSelfAttention(nn.Module):
    """fairseq-style incremental state: a Dict[str, Tensor] with prev_key/prev_value, grown by cat."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.heads = heads
        self.hd = d // heads

    def forward(self, x, state: Dict[str, torch.Tensor], prefix: str):
        b, t, d = x.shape
        q = self.q(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        v = self.v(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        if prefix + "prev_key" in state:
            k = torch.cat([state[prefix + "prev_key"], k], dim=2)
            v = torch.cat([state[prefix + "prev_value"], v], dim=2)
        state[prefix + "prev_key"] = k
        state[prefix + "prev_value"] = v
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.hd), dim=-1)
        return self.o((att @ v).transpose(1, 2).reshape(b, t, d))


class KVDictDecoder(nn.Module):
    """Greedy Transformer decoding: per step one token, a Dict[str, Tensor] KV cache per layer,
    Optional[Tensor] cross-attention memory, `torch.cat` growing the sequence, break on all-EOS."""

    def __init__(self, vocab=24, d=16, layers=2, eos=1, max_len=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(32, d)
        self.layers = nn.ModuleList([CachedSelfAttention(d) for _ in range(layers)])
        self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(layers)])
        self.cross = nn.Linear(d, d)
        self.out = nn.Linear(d, vocab)
        self.eos, self.max_len = eos, max_len

    def step(self, tok, pos: int, state: Dict[str, torch.Tensor], memory: Optional[torch.Tensor]):
        x = self.emb(tok) + self.pos.weight[pos]
        for i, (layer, norm) in enumerate(zip(self.layers, self.norms)):
            x = norm(x + layer(x, state, "layer" + str(i) + "."))
            if memory is not None:
                x = x + self.cross(memory.mean(1, keepdim=True))
        return self.out(x[:, -1])

    def forward(self, memory):
        bsz = memory.size(0)
        tokens = torch.zeros(bsz, 1, dtype=torch.long)
        state = torch.jit.annotate(Dict[str, torch.Tensor], {})
        finished = torch.zeros(bsz, dtype=torch.bool)
        for pos in range(self.max_len):
            logits = self.step(tokens[:, -1:], pos, state, memory)
            nxt = logits.argmax(-1)
            nxt = nxt.masked_fill(finished, self.eos)
            tokens = torch.cat([tokens, nxt.unsqueeze(1)], dim=1)
            finished = finished | (nxt == self.eos)
            if bool(finished.all()):
                break
        return tokens


# ---------------------------------------------------------------- beam search, KV cache reordered per beam
class BeamKVReorder(nn.Module):
    """HF-style beam search: topk over `(batch, beams * vocab)`, `beam_idx = idx // vocab`,
    the KV cache (a Tensor) reordered with index_select per beam, per-step scores appended to a
    List[Tensor] and stacked, a while loop with break when every beam is done."""

    def __init__(self, vocab=16, d=16, beams=3, max_len=6, eos=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.kproj = nn.Linear(d, d)
        self.qproj = nn.Linear(d, d)
        self.out = nn.Linear(d, vocab)
        self.vocab, self.beams, self.max_len, self.eos = vocab, beams, max_len, eos

    def forward(self, h0):
        bsz = h0.size(0)
        k = self.beams
        past = h0.unsqueeze(1).repeat_interleave(k, dim=0)  # (b*k, 1, d)
        input_ids = torch.zeros(bsz * k, 1, dtype=torch.long)
        beam_scores = torch.zeros(bsz, k)
        beam_scores[:, 1:] = -1e9
        beam_scores = beam_scores.view(-1)
        done = torch.zeros(bsz * k, dtype=torch.bool)
        step_scores: List[torch.Tensor] = []
        cur_len = 1
        while cur_len < self.max_len:
            x = self.emb(input_ids[:, -1])
            past = torch.cat([past, self.kproj(x).unsqueeze(1)], dim=1)
            att = torch.softmax((past @ self.qproj(x).unsqueeze(-1)).squeeze(-1), dim=-1)
            ctx = (att.unsqueeze(-1) * past).sum(1)
            logp = F.log_softmax(self.out(ctx), dim=-1)
            logp = torch.where(done.unsqueeze(1), torch.full_like(logp, -1e9), logp)
            logp[:, self.eos] = torch.where(done, torch.zeros_like(beam_scores), logp[:, self.eos])
            nxt = beam_scores.unsqueeze(1) + logp
            nxt = nxt.view(bsz, k * self.vocab)
            top_scores, top_idx = torch.topk(nxt, 2 * k, dim=1, largest=True, sorted=True)
            top_scores, top_idx = top_scores[:, :k], top_idx[:, :k]
            beam_idx = torch.div(top_idx, self.vocab, rounding_mode="floor")
            tok = top_idx % self.vocab
            batch_beam = (beam_idx + torch.arange(bsz).unsqueeze(1) * k).view(-1)
            past = past.index_select(0, batch_beam)
            done = done[batch_beam] | (tok.view(-1) == self.eos)
            input_ids = torch.cat([input_ids[batch_beam, :], tok.view(-1, 1)], dim=-1)
            beam_scores = top_scores.reshape(-1)
            step_scores.append(beam_scores)
            cur_len = cur_len + 1
            if bool(done.all()):
                break
        return input_ids, torch.stack(step_scores, 0)


# ---------------------------------------------------------------- gather-based beam cache reorder (Dict of caches)
class BeamGatherCache(nn.Module):
    """A `for` decoder whose caches live in a Dict[str, Tensor] reordered with `gather` along the
    beam axis; per-step tokens appended to a List[Tensor] then stacked; back-pointers by gather."""

    def __init__(self, vocab=12, d=8, beams=2, steps=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.cell = nn.GRUCell(d, d)
        self.out = nn.Linear(d, vocab)
        self.vocab, self.beams, self.steps = vocab, beams, steps

    def forward(self, h0):
        b = h0.size(0)
        k = self.beams
        cache: Dict[str, torch.Tensor] = {"h": h0.unsqueeze(1).expand(b, k, h0.size(1)).contiguous()}
        tok = torch.zeros(b, k, dtype=torch.long)
        score = torch.zeros(b, k)
        score[:, 1:] = -1e4
        toks: List[torch.Tensor] = []
        ptrs: List[torch.Tensor] = []
        for _ in range(self.steps):
            h = self.cell(self.emb(tok).view(b * k, -1), cache["h"].view(b * k, -1)).view(b, k, -1)
            logp = F.log_softmax(self.out(h), -1)
            cand = (score.unsqueeze(-1) + logp).flatten(1)
            score, idx = cand.topk(k, dim=1)
            beam = idx // self.vocab
            tok = idx % self.vocab
            cache["h"] = h.gather(1, beam.unsqueeze(-1).expand(b, k, h.size(-1)))
            toks.append(tok)
            ptrs.append(beam)
        # backtrack
        best = torch.zeros(b, 1, dtype=torch.long)
        seq: List[torch.Tensor] = []
        for t in range(len(toks) - 1, -1, -1):
            seq.append(toks[t].gather(1, best))
            best = ptrs[t].gather(1, best)
        seq.reverse()
        return torch.cat(seq, 1), score


# ---------------------------------------------------------------- scripted NMS, while over sorted boxes
def box_iou_one(box, boxes):
    lt = torch.max(box[:2], boxes[:, :2])
    rb = torch.min(box[2:], boxes[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[:, 0] * wh[:, 1]
    a1 = (box[2] - box[0]) * (box[3] - box[1])
    a2 = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return inter / (a1 + a2 - inter)


class ScriptedNMS(nn.Module):
    """py-faster-rcnn's nms as scripted by detection codebases: `order = scores.argsort(descending)`,
    `while order.numel() > 0`, keep.append(i), `order = order[1:][ovr <= thresh]`; then a mask loop
    (suppressed flags) variant for class-wise max detections."""

    def __init__(self, thresh: float = 0.5, max_det: int = 6):
        super().__init__()
        self.thresh, self.max_det = thresh, max_det

    def forward(self, boxes, scores):
        order = scores.argsort(descending=True)
        keep: List[torch.Tensor] = []
        while order.numel() > 0:
            i = order[0]
            keep.append(i)
            if len(keep) >= self.max_det:
                break
            ovr = box_iou_one(boxes[i], boxes[order[1:]])
            order = order[1:][ovr <= self.thresh]
        k = torch.stack(keep)
        return boxes[k], scores[k]


class MaskNMS(nn.Module):
    """torchvision-style CPU reference: a `for i in range(n)` over sorted boxes with a suppressed
    bool mask written in place, `continue` on suppressed, keep indices via nonzero."""

    def forward(self, boxes, scores):
        order = torch.sort(scores, descending=True)[1]
        b = boxes[order]
        n = b.size(0)
        suppressed = torch.zeros(n, dtype=torch.bool)
        for i in range(n):
            if bool(suppressed[i]):
                continue
            iou = box_iou_one(b[i], b)
            later = torch.arange(n) > i
            suppressed = suppressed | ((iou > 0.5) & later)
        keep = order[~suppressed]
        return keep, scores[keep]


# ---------------------------------------------------------------- CTC greedy collapse per utterance
class CTCCollapseBatch(nn.Module):
    """A per-utterance loop over `range(x.size(0))`: argmax, lengths cut with `[: int(lengths[b])]`,
    `unique_consecutive`, `!= blank`, then padded into a List[Tensor] and stacked."""

    def __init__(self, blank: int = 0, max_out: int = 10):
        super().__init__()
        self.blank, self.max_out = blank, max_out

    def forward(self, logits, lengths):
        best = logits.argmax(-1)
        outs: List[torch.Tensor] = []
        for b in range(best.size(0)):
            seq = best[b, : int(lengths[b])]
            seq = torch.unique_consecutive(seq)
            seq = seq[seq != self.blank]
            pad = torch.full((self.max_out,), -1, dtype=torch.long)
            n = min(seq.size(0), self.max_out)
            pad[:n] = seq[:n]
            outs.append(pad)
        return torch.stack(outs)


# ---------------------------------------------------------------- greedy matching (tracker)
class GreedyTracker(nn.Module):
    """SORT/ByteTrack-like greedy association without Hungarian: IoU cost, repeatedly take the
    global max, write -1 into its row and column, stop under the threshold; matches as a list of
    tuples turned into a tensor."""

    def __init__(self, thresh: float = 0.1):
        super().__init__()
        self.thresh = thresh

    def forward(self, tracks, dets):
        lt = torch.max(tracks[:, None, :2], dets[None, :, :2])
        rb = torch.min(tracks[:, None, 2:], dets[None, :, 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[..., 0] * wh[..., 1]
        at = ((tracks[:, 2] - tracks[:, 0]) * (tracks[:, 3] - tracks[:, 1]))[:, None]
        ad = ((dets[:, 2] - dets[:, 0]) * (dets[:, 3] - dets[:, 1]))[None, :]
        iou = inter / (at + ad - inter)
        pairs: List[Tuple[torch.Tensor, torch.Tensor]] = []
        n = min(iou.size(0), iou.size(1))
        for _ in range(n):
            v = iou.max()
            if bool(v < self.thresh):
                break
            flat = iou.argmax()
            r = flat // iou.size(1)
            c = flat % iou.size(1)
            pairs.append((r, c))
            iou[r, :] = -1.0
            iou[:, c] = -1.0
        out = torch.full((n, 2), -1, dtype=torch.long)
        for j, (r, c) in enumerate(pairs):
            out[j, 0] = r
            out[j, 1] = c
        return out


# ---------------------------------------------------------------- top-p sampling over steps (fixed noise)
class TopPSampler(nn.Module):
    """A `for step in range(steps)` sampler: temperature, sort, cumsum, shifted mask, scatter back,
    then Gumbel-max with noise given as an input (deterministic), token appended to a list."""

    def __init__(self, vocab=20, d=16, top_p: float = 0.8, temperature: float = 0.7):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.cell = nn.GRUCell(d, d)
        self.out = nn.Linear(d, vocab)
        self.top_p, self.temperature = top_p, temperature

    def forward(self, h, noise):  # noise: (steps, b, vocab) uniform in (0, 1)
        tok = torch.zeros(h.size(0), dtype=torch.long)
        toks = torch.jit.annotate(List[torch.Tensor], [])
        for step in range(noise.size(0)):
            h = self.cell(self.emb(tok), h)
            logits = self.out(h) / self.temperature
            sorted_logits, sorted_idx = torch.sort(logits, descending=True)
            cum = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
            remove = cum > self.top_p
            remove[..., 1:] = remove[..., :-1].clone()
            remove[..., 0] = False
            mask = remove.scatter(1, sorted_idx, remove)
            logits = logits.masked_fill(mask, -float("inf"))
            g = -torch.log(-torch.log(noise[step].clamp(1e-6, 1 - 1e-6)))
            tok = (logits + g).argmax(-1)
            toks.append(tok)
        return torch.stack(toks, 1)


# ---------------------------------------------------------------- nested loops with early return
class NestedEarlyReturn(nn.Module):
    """A search over rows and columns with an early `return` from the inner loop, a fallback after."""

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        for i in range(x.size(0)):
            for j in range(x.size(1)):
                if bool(x[i, j] > 2.0):
                    return torch.tensor([i, j]), x[i] * 2
        return torch.tensor([-1, -1]), x.sum(0)


# ---------------------------------------------------------------- trip counts read from tensors
class TensorTripCount(nn.Module):
    """`for _ in range(int(n))` and `while i < n.item()`: counts read from an int64 input."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, n):
        y = x
        for _ in range(int(n[0])):
            y = torch.tanh(self.lin(y))
        i = 0
        acc = torch.zeros_like(x)
        while i < n[1].item():
            acc = acc + y * float(i)
            i += 1
        return y, acc


# ---------------------------------------------------------------- ModuleList idioms, flags, unused branches
class Block(nn.Module):
    def __init__(self, d, kind: str):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.kind = kind

    def forward(self, x):
        if self.kind == "gelu":
            return F.gelu(self.lin(x))
        elif self.kind == "relu":
            return F.relu(self.lin(x))
        return self.lin(x)


class ModuleListIdioms(nn.Module):
    """enumerate/zip over ModuleLists, a List[Tuple[str, Tensor]] of named features, string and int
    constants in branches, torch.jit.annotate, @torch.jit.unused, torch.jit.is_scripting(),
    `if self.training` (dropout path), a data-dependent if inside the loop."""

    def __init__(self, d=8):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d, k) for k in ("gelu", "relu", "none")])
        self.gates = nn.ModuleList([nn.Linear(d, 1) for _ in range(3)])
        self.skip_every = 2
        self.mode = "sum"

    @torch.jit.unused
    def debug_dump(self, x):
        import numpy as np  # noqa: F401  (never compiled)
        return x

    def forward(self, x):
        feats = torch.jit.annotate(List[Tuple[str, torch.Tensor]], [])
        for i, (blk, gate) in enumerate(zip(self.blocks, self.gates)):
            y = blk(x)
            if bool(torch.sigmoid(gate(y)).mean() > 0.5):
                y = y * 2
            if i % self.skip_every == 0:
                x = x + y
            else:
                x = y
            feats.append(("block" + str(i), x))
        if self.training:
            x = F.dropout(x, 0.5)
        if not torch.jit.is_scripting():
            x = self.debug_dump(x)
        out = torch.zeros_like(x)
        for name, f in feats:
            if self.mode == "sum" and name != "block1":
                out = out + f
        return out


# ---------------------------------------------------------------- leftovers
class EmbBagPSW(nn.Module):
    """DLRM's sparse arch: nn.EmbeddingBag(mode='sum') with offsets and per_sample_weights, scripted
    (its forward's error message branch calls str.format)."""

    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(30, 8, mode="sum")

    def forward(self, idx, offsets, w):
        return self.bag(idx, offsets, per_sample_weights=w)


class SplitListSlice(nn.Module):
    """List slicing of a split result: `parts[1:]`, `parts[::2]`, `parts[-2:]`, joined back."""

    def forward(self, x):
        parts = x.split(2, dim=1)
        head = parts[0]
        rest = torch.cat(parts[1:], dim=1)
        even = torch.stack(parts[::2], 0).sum(0)
        last = list(parts[-2:])
        return head * 2 + even, rest, torch.cat(last, 1)


class ChunkLoopAccum(nn.Module):
    """`for c in x.chunk(...)` with a running state, and `zip(a.unbind(0), b.unbind(0))`."""

    def forward(self, x, y):
        s = torch.zeros_like(x[:, :2])
        for c in x.split(2, dim=1):
            s = torch.tanh(s + c[:, : s.size(1)])
        tot = torch.zeros_like(x[0])
        for a, b in zip(x.unbind(0), y.unbind(0)):
            tot = tot + a * b
        return s, tot


def nms_boxes():
    g = torch.Generator().manual_seed(3)
    xy = torch.rand(10, 2, generator=g) * 10
    wh = torch.rand(10, 2, generator=g) * 8 + 4
    return torch.cat([xy, xy + wh], 1).numpy()


def trk_boxes(seed, n):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 20
    return torch.cat([xy, xy + 6], 1).numpy()


def bag_inputs():
    idx = numpy.array([1, 4, 7, 2, 9, 3, 3, 0, 12, 5], dtype=numpy.int64)
    offsets = numpy.array([0, 3, 4, 8], dtype=numpy.int64)
    return idx, offsets


SCRIPT7 = [
    ("s6_kvdict_decoder", lambda: Spec(KVDictDecoder(), ["2x5x16"], ["memory"], ["memory:0=b,1=s"], modes=SCRIPT)),
    ("s6_beam_kv_reorder", lambda: Spec(BeamKVReorder(), ["2x16"], ["h0"], ["h0:0=b"], modes=SCRIPT)),
    ("s6_beam_gather_cache", lambda: Spec(BeamGatherCache(), ["2x8"], ["h0"], ["h0:0=b"], modes=SCRIPT)),
    ("s6_nms_while", lambda: Spec(ScriptedNMS(), [nms_boxes(), "10:float32:rand"], ["boxes", "scores"],
                                  ["boxes:0=n", "scores:0=n"], modes=SCRIPT)),
    ("s6_nms_mask_for", lambda: Spec(MaskNMS(), [nms_boxes(), "10:float32:rand"], ["boxes", "scores"],
                                     ["boxes:0=n", "scores:0=n"], modes=SCRIPT)),
    ("s6_ctc_collapse_batch", lambda: Spec(CTCCollapseBatch(), ["2x12x6", numpy.array([12, 7], dtype=numpy.int64)],
                                           ["logits", "lengths"], ["logits:0=b,1=t", "lengths:0=b"], modes=SCRIPT)),
    ("s6_greedy_tracker", lambda: Spec(GreedyTracker(), [trk_boxes(1, 4), trk_boxes(2, 5)], ["tracks", "dets"],
                                       ["tracks:0=n", "dets:0=m"], modes=SCRIPT)),
    ("s6_top_p_steps", lambda: Spec(TopPSampler(), ["2x16", "5x2x20:float32:rand"], ["h", "noise"],
                                    ["h:0=b", "noise:0=steps,1=b"], modes=SCRIPT)),
    ("s6_nested_early_return", lambda: Spec(NestedEarlyReturn(), ["4x5"], ["x"], ["x:0=r,1=c"], modes=SCRIPT)),
    ("s6_tensor_trip_count", lambda: Spec(TensorTripCount(), ["2x8", numpy.array([3, 4], dtype=numpy.int64)],
                                          ["x", "n"], ["x:0=b"], modes=SCRIPT)),
    ("s6_modulelist_idioms", lambda: Spec(ModuleListIdioms(), ["3x8"], ["x"], ["x:0=b"])),
    ("s6_embbag_psw", lambda: Spec(EmbBagPSW(), [bag_inputs()[0], bag_inputs()[1], "10:float32:rand"],
                                   ["idx", "offsets", "w"], ["idx:0=n", "w:0=n"])),
    ("s6_split_list_slice", lambda: Spec(SplitListSlice(), ["2x10x3"], ["x"], ["x:0=b,2=w"])),
    ("s6_chunk_loop_accum", lambda: Spec(ChunkLoopAccum(), ["3x8", "3x8"], ["x", "y"], ["x:0=b", "y:0=b"], modes=SCRIPT)),
]
