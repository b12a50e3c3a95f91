"""Scripted decoders and postprocessing with real control flow (probe round 6, gen_control.py's
LIST_CASES): a KV cache kept in a Dict[str, Tensor] by an incremental decoder's step loop (keys
absent at the first step, `if key in state`), dict entries written in data-dependent branches, a
beam cache dict reordered per beam, tuples returned from inside nested loops or carried by a loop,
and list slices of a split result.
"""
import math
from typing import Dict, List, Tuple

import torch
import torch.nn.functional as F
from torch import nn


class CachedAttention(nn.Module):
    """fairseq's incremental state: prev_key/prev_value under a per-layer prefix, grown by cat."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.heads, self.hd = heads, d // heads

    def forward(self, x, state: Dict[str, torch.Tensor], prefix: str):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4).unbind(0)
        if prefix + "prev_key" in state:
            k = torch.cat([state[prefix + "prev_key"], k], dim=2)
            v = torch.cat([state[prefix + "prev_value"], v], dim=2)
        state[prefix + "prev_key"] = k
        state[prefix + "prev_value"] = v
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.hd), dim=-1)
        return self.o((att @ v).transpose(1, 2).reshape(b, t, d))


class IncrementalKVDecoder(nn.Module):
    """Greedy decoding with a Dict[str, Tensor] KV cache per layer (keys absent at the first step),
    `torch.cat` growing the tokens, a break when every sequence has emitted EOS."""

    def __init__(self, vocab: int = 12, d: int = 8, layers: int = 2, eos: int = 11, max_len: int = 6):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([CachedAttention(d, 2) for _ in range(layers)])
        self.out = nn.Linear(d, vocab)
        self.eos, self.max_len = eos, max_len

    def forward(self, h):
        state = torch.jit.annotate(Dict[str, torch.Tensor], {})
        tokens = torch.zeros(h.size(0), 1, dtype=torch.long)
        finished = torch.zeros(h.size(0), dtype=torch.bool)
        for pos in range(self.max_len):
            x = self.emb(tokens[:, -1:]) + h.unsqueeze(1)
            for i, layer in enumerate(self.layers):
                x = x + layer(x, state, "layer" + str(i) + ".")
            nxt = self.out(x[:, -1]).argmax(-1).masked_fill(finished, self.eos)
            tokens = torch.cat([tokens, nxt.unsqueeze(1)], dim=1)
            finished = finished | (nxt == self.eos)
            if bool(finished.all()):
                break
        return tokens, state["layer1.prev_key"]


class DictBranchWrites(nn.Module):
    """Dict entries replaced and added under data-dependent ifs, then read (`in`, `[]`) and returned."""

    def forward(self, x) -> Dict[str, torch.Tensor]:
        d: Dict[str, torch.Tensor] = {"a": x}
        if x.sum() > 0:
            d["a"] = x * 2
        if x.max() > 1.5:
            d["big"] = x.clamp(min=1.5)
        y = d["a"] + 1
        if "big" in d:
            y = y + d["big"]
        d["y"] = y
        return {"y": d["y"], "a": d["a"]}


class BeamDictCache(nn.Module):
    """A `for` beam decoder whose cache is a Dict[str, Tensor] reordered with gather along the beam
    axis each step; tokens and back-pointers in lists, backtracked."""

    def __init__(self, vocab: int = 10, d: int = 6, beams: int = 2, steps: int = 4):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.cell = nn.GRUCell(d, d)
        self.out = nn.Linear(d, vocab)
        self.vocab, self.beams, self.steps = vocab, beams, steps

    def forward(self, h0):
        b, k = h0.size(0), self.beams
        cache: Dict[str, torch.Tensor] = {"h": h0.unsqueeze(1).expand(b, k, h0.size(1)).contiguous()}
        tok = torch.zeros(b, k, dtype=torch.long)
        score = torch.zeros(b, k)
        score[:, 1:] = -1e4
        toks: List[torch.Tensor] = []
        ptrs: List[torch.Tensor] = []
        for _ in range(self.steps):
            h = self.cell(self.emb(tok).view(b * k, -1), cache["h"].view(b * k, -1)).view(b, k, -1)
            cand = (score.unsqueeze(-1) + F.log_softmax(self.out(h), -1)).flatten(1)
            score, idx = cand.topk(k, dim=1)
            beam = idx // self.vocab
            tok = idx % self.vocab
            cache["h"] = h.gather(1, beam.unsqueeze(-1).expand(b, k, h.size(-1)))
            toks.append(tok)
            ptrs.append(beam)
        best = torch.zeros(b, 1, dtype=torch.long)
        seq: List[torch.Tensor] = []
        for t in range(len(toks) - 1, -1, -1):
            seq.append(toks[t].gather(1, best))
            best = ptrs[t].gather(1, best)
        seq.reverse()
        return torch.cat(seq, 1), score


class TupleReturnInNestedLoop(nn.Module):
    """`return (pos, row)` from the inner of two loops: TorchScript carries the tuple through both
    loops (first prim::Uninitialized) and picks it after them."""

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        for i in range(x.size(0)):
            for j in range(x.size(1)):
                if bool(x[i, j] > 1.0):
                    return torch.tensor([i, j]), x[i] * 2
        return torch.tensor([-1, -1]), x.sum(0)


class TupleCarriedState(nn.Module):
    """An LSTM-style `(h, c)` tuple reassigned each step, swapped on a data-dependent branch."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 8)

    def forward(self, xs):
        state: Tuple[torch.Tensor, torch.Tensor] = (torch.zeros(xs.size(1), 4), torch.ones(xs.size(1), 4))
        for t in range(xs.size(0)):
            g = self.lin(xs[t] + state[0])
            a, b = g.chunk(2, 1)
            if bool(a.mean() > 0):
                state = (torch.tanh(a), state[1] + b)
            else:
                state = (state[1] * 0.5, torch.sigmoid(b))
        return state[0] + state[1]


class SplitListSlices(nn.Module):
    """Slices of a split result (`parts[1:]`, `parts[::2]`, `list(parts[-2:])`)."""

    def forward(self, x):
        parts = x.split(2, dim=1)
        rest = torch.cat(parts[1:], dim=1)
        even = torch.stack(parts[::2], 0).sum(0)
        last = list(parts[-2:])
        return parts[0] * 2 + even, rest, torch.cat(last, 1)


class GreedyMatcher(nn.Module):
    """A tracker's greedy association (no Hungarian): take the best IoU, stop under the threshold,
    `pairs.append((r, c))` into a List[Tuple[Tensor, Tensor]], blank the row and column; then
    `for j, (r, c) in enumerate(pairs)` writes the matches out."""

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
            if bool(iou.max() < 0.1):
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


def boxes(rows):
    return torch.tensor(rows, dtype=torch.float32)


def cases(T, A, R):
    """LIST_CASES rows: name, module factory, input names, input sets, dynamic axes, ONNX ops, out dtypes."""
    return [
        ("incremental_kv_decoder", lambda: IncrementalKVDecoder(), ["h"],
         [[R("ikv0", 2, 8, seed=0)], [R("ikv1", 3, 8, seed=1, scale=3.0)], [A("ikv2", torch.zeros(1, 8))],
          [R("ikv3", 4, 8, seed=3, scale=0.1)]],
         {"h": [0]}, ["Loop"], ["int64", "float32"]),
        # x > 0 and max > 1.5 in every combination
        ("dict_branch_writes", lambda: DictBranchWrites(), ["x"],
         [[A("dbw0", torch.tensor([[1., 2.], [0.5, 0.]]))], [A("dbw1", torch.tensor([[-1., -2.], [0.5, 0.]]))],
          [A("dbw2", torch.tensor([[-3., 2.], [0.5, 0.]]))], [A("dbw3", torch.tensor([[0.1, 0.2], [0.3, 0.4], [0., 1.]]))]],
         {"x": [0]}, ["If"]),
        # its loop of a constant count builds lists: unrolled once the dict is scalarized
        ("beam_dict_cache", lambda: BeamDictCache(), ["h0"],
         [[R("bdc0", 2, 6, seed=0)], [R("bdc1", 1, 6, seed=1, scale=3.0)], [R("bdc2", 3, 6, seed=2)]],
         {"h0": [0]}, [], ["int64", "float32"]),
        # found in the first row, a later row, and nowhere
        ("tuple_return_in_nested_loop", lambda: TupleReturnInNestedLoop(), ["x"],
         [[A("trn0", torch.tensor([[2., 0., 0.], [0., 3., 0.]]))], [A("trn1", torch.tensor([[0., 0.], [0., 0.], [0., 5.]]))],
          [A("trn2", torch.zeros(3, 4))]],
         {"x": [0, 1]}, ["Loop"], ["int64", "float32"]),
        ("tuple_carried_state", lambda: TupleCarriedState(), ["xs"],
         [[R("tcs0", 5, 2, 4, seed=0)], [R("tcs1", 1, 3, 4, seed=1)], [R("tcs2", 7, 2, 4, seed=2, scale=3.0)]],
         {"xs": [0, 1]}, ["Loop"]),
        # 2 of 3 matched, none matched, all 2 matched
        ("greedy_matcher", lambda: GreedyMatcher(), ["tracks", "dets"],
         [[A("gm_t0", boxes([[0, 0, 10, 10], [20, 20, 30, 30], [50, 50, 60, 60]])),
           A("gm_d0", boxes([[21, 21, 31, 31], [1, 1, 11, 11], [80, 80, 90, 90], [0, 40, 5, 45]]))],
          [A("gm_t1", boxes([[0, 0, 10, 10], [20, 20, 30, 30]])), A("gm_d1", boxes([[40, 40, 50, 50]]))],
          [A("gm_t2", boxes([[0, 0, 10, 10], [20, 20, 30, 30]])), A("gm_d2", boxes([[19, 19, 29, 29], [2, 0, 12, 10]]))]],
         {"tracks": [0], "dets": [0]}, ["Loop"], ["int64"]),
        ("split_list_slices", lambda: SplitListSlices(), ["x"], [[R("sls0", 2, 10, 3, seed=0)], [R("sls1", 3, 10, 5, seed=1)]],
         {"x": [0, 2]}, []),
    ]
