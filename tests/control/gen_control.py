"""Scripted-control-flow fixtures (torch.jit.script, saved with torch.jit.save) and, per model, the
input sets the test verifies with: chosen so that different runs take different branches or loop
counts. usage: gen_control.py OUT_DIR
"""
import json
import os
import sys
from typing import Dict, List, Optional, Tuple

import torch

from state_modules import (CacheThenRead, CallCounter, DataBranchWrite, GrowingTable, LoopWrites, SliceWrittenBuffer,
                           WriteOnlyRecord)
from script_patterns import (DataCheck, InterpPosEncoding, PerInstanceConv, PerLevelSplit, RelPosResize,
                             SizesInRankLoop)
from loop_modules import ShiftedWindowMask
from reverse_modules import ReverseLoopList
from rank_loops import RankWhileUnsqueeze
import decoder_loops


class DataIf(torch.nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            y = x * 2 + 1
        else:
            y = x.relu() - 3
        return y


class LoopOverSize(torch.nn.Module):
    def forward(self, x):
        acc = torch.zeros_like(x[0])
        for i in range(x.size(0)):
            acc = acc * 0.5 + x[i] * i
        return acc


class EarlyExit(torch.nn.Module):
    """A while loop with a data-dependent condition; returns the count as a tensor and a list."""

    def forward(self, x) -> List[torch.Tensor]:
        n = 0
        while bool(x.abs().max() > 1.0) and n < 20:
            x = x * 0.5
            n += 1
        return [x, torch.tensor(n)]


class LstmLikeCell(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ih = torch.nn.Linear(4, 32)
        self.hh = torch.nn.Linear(8, 32)

    def forward(self, xs, h: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        if h is None:
            h = torch.zeros(xs.size(1), 8)
        c = torch.zeros_like(h)
        for t in range(xs.size(0)):
            g = self.ih(xs[t]) + self.hh(h)
            i, f, gg, o = g.chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
            h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


class NestedIfInLoop(torch.nn.Module):
    def forward(self, x):
        y = x
        for i in range(x.size(0)):
            if y[i].sum() > 0:
                y = y - 1
            else:
                y = y + 2
        return y


class IfIntBool(torch.nn.Module):
    """Both branches give an int64 and a bool tensor: verification compares them exactly."""

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        if x.sum() > 0:
            k = (x > 0).sum()
            m = x > 0.5
        else:
            k = (x < 0).sum() * 2 + 1
            m = x < -0.5
        return k, m


class LoopIntBool(torch.nn.Module):
    """Loop-carried int64 count and bool mask over a dynamic length."""

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        count = torch.zeros([], dtype=torch.long)
        seen = torch.zeros(x.shape[1:], dtype=torch.bool)
        for i in range(x.size(0)):
            row = x[i] > 0
            seen = seen | row
            count = count + row.long().sum() * i
        return count, seen


class WhileNumbers(torch.nn.Module):
    """A while loop whose count comes out as a Python int and a bool (0-d int64 and bool outputs)."""

    def forward(self, x) -> Tuple[torch.Tensor, int, bool]:
        n = 0
        while bool(x.abs().max() > 1.0) and n < 20:
            x = x * 0.5
            n += 1
        return x, n, n > 2


class RaisesOnData(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 1000.0:
            raise ValueError("input too large")
        return x + 1


class IfMayGiveNone(torch.nn.Module):
    """An Optional that an if leaves None on one path: no ONNX If output can be None."""

    def forward(self, x):
        h: Optional[torch.Tensor] = None
        if x.sum() > 0:
            h = x * 2
        if h is None:
            return x - 1
        return h + 1


class IfGivesList(torch.nn.Module):
    """Branches giving lists of different lengths, returned: a sequence, which is no plain output."""

    def forward(self, x) -> List[torch.Tensor]:
        if x.sum() > 0:
            r = [x, x * 2]
        else:
            r = [x - 1]
        return r


class SizesListArithmetic(torch.nn.Module):
    """List arithmetic on sizes, common in scripted code: x.shape[1:] (aten::slice.t) and
    list + list (aten::add.t); the sizes must stay dynamic."""

    def forward(self, x):
        y = x.reshape(x.shape[:1] + [-1])
        return y + torch.zeros(x.shape[1:]).sum()


class DictLookup(torch.nn.Module):
    """A dict given a key on a data-dependent branch, then returned whole: refused in script mode,
    the example's path in trace mode. (Reads and writes at constant keys are scalarized instead:
    decoder_loops.py's dict_branch_writes.)"""

    def forward(self, x) -> Dict[str, torch.Tensor]:
        d: Dict[str, torch.Tensor] = {"a": x}
        if x.sum() > 0:
            d["b"] = x * 2
        return d


class ExportTimeFlags(torch.nn.Module):
    """Conditions fixed at export time, in the style of PyTorch's fast-path checks: no grad, no
    autocast, eval mode, a dense float32 CPU input of rank 3, a string flag, an Optional argument
    left None. The path libtorch takes without grad (the reference run's) is the one exported; the
    branches ruled out (a str leaving an if) must not reach the converters."""

    def __init__(self):
        super().__init__()
        self.mode = "fast"
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, bias: Optional[torch.Tensor] = None):
        why = ""
        if torch.is_grad_enabled() and any([p.requires_grad for p in [x, self.lin.weight]]):
            why = "grad"
        elif torch.is_autocast_enabled():
            why = "autocast"
        elif self.training:
            why = "training"
        elif x.is_nested or x.is_cuda or not all([x.device.type == "cpu", x.dtype == torch.float32]):
            why = f"device {x.device}"
        elif x.dim() != 3:
            why = f"rank {x.dim()}"
        elif self.mode != "fast":
            why = "mode " + self.mode
        elif bias is not None or isinstance(bias, torch.Tensor):
            why = "bias"
        if not why:
            return self.lin(x) * 2.0
        return self.lin(x) * 3.0 + float(len(why))


class OutputTwice(torch.nn.Module):
    """The same tensor returned twice (as a wrapper of nn.MultiheadAttention without weights might):
    two graph outputs, the second a copy of the first."""

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        y = x * 2 + 1
        return y, y


class GreedyDecoder(torch.nn.Module):
    """A GRUCell decoding greedily: each token appended to a list, break when every row is EOS."""

    def __init__(self, eos: int = 3):
        super().__init__()
        self.eos = eos
        self.emb = torch.nn.Embedding(8, 6)
        self.cell = torch.nn.GRUCell(6, 12)
        self.out = torch.nn.Linear(12, 8)

    def forward(self, h, max_len: int = 10):
        tok = torch.zeros(h.size(0), dtype=torch.long)
        outs: List[torch.Tensor] = []
        for i in range(max_len):
            h = self.cell(self.emb(tok), h)
            tok = self.out(h).argmax(-1)
            outs.append(tok)
            if bool((tok == self.eos).all()):
                break
        return torch.stack(outs, 1)


class BeamSearch(torch.nn.Module):
    """Beam search of width 3 over a small GRU decoder: topk over beams, back-pointers gathered,
    one list of tokens and one of back-pointers per step, final backtrack."""

    def __init__(self, vocab: int = 7, eos: int = 2, max_len: int = 8):
        super().__init__()
        self.vocab = vocab
        self.eos = eos
        self.max_len = max_len
        self.emb = torch.nn.Embedding(vocab, 6)
        self.cell = torch.nn.GRUCell(6, 10)
        self.out = torch.nn.Linear(10, vocab)

    def forward(self, h0) -> Tuple[torch.Tensor, torch.Tensor]:
        k = 3
        h = h0.expand(k, h0.size(1)).contiguous()
        scores = torch.tensor([0.0, -1e9, -1e9])
        tok = torch.zeros(k, dtype=torch.long)
        toks: List[torch.Tensor] = []
        backs: List[torch.Tensor] = []
        for step in range(self.max_len):
            h = self.cell(self.emb(tok), h)
            logp = torch.log_softmax(self.out(h), -1)
            cand = (scores.unsqueeze(1) + logp).reshape(-1)
            top, idx = cand.topk(k)
            back = torch.div(idx, self.vocab, rounding_mode="floor")
            tok = idx % self.vocab
            h = h.index_select(0, back)
            scores = top
            toks.append(tok)
            backs.append(back)
            if bool((tok == self.eos).all()):
                break
        best = torch.zeros([], dtype=torch.long)
        path: List[torch.Tensor] = []
        for t in range(len(toks) - 1, -1, -1):
            path.insert(0, toks[t][best])
            best = backs[t][best]
        return torch.stack(path), scores


class Nms(torch.nn.Module):
    """NMS-like loop: while boxes remain, keep the best, drop those overlapping it above a threshold."""

    def __init__(self, thr: float = 0.3):
        super().__init__()
        self.thr = thr

    def forward(self, boxes, scores):
        order = scores.argsort(descending=True)
        boxes = boxes[order]
        idxs = order
        keep: List[torch.Tensor] = []
        while boxes.size(0) > 0:
            keep.append(idxs[0])
            rest = boxes[1:]
            x1 = torch.maximum(boxes[0, 0], rest[:, 0])
            y1 = torch.maximum(boxes[0, 1], rest[:, 1])
            x2 = torch.minimum(boxes[0, 2], rest[:, 2])
            y2 = torch.minimum(boxes[0, 3], rest[:, 3])
            inter = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
            area0 = (boxes[0, 2] - boxes[0, 0]) * (boxes[0, 3] - boxes[0, 1])
            areas = (rest[:, 2] - rest[:, 0]) * (rest[:, 3] - rest[:, 1])
            iou = inter / (area0 + areas - inter)
            mask = iou <= self.thr
            boxes = rest[mask]
            idxs = idxs[1:][mask]
        return torch.stack(keep)


class Refine(torch.nn.Module):
    """Iterative refinement: while err > tol and it < max_it, with the error history as a list."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.tol = 1e-3
        self.max_it = 25

    def forward(self, b) -> Tuple[torch.Tensor, torch.Tensor, int]:
        x = torch.zeros_like(b)
        err = (b - x - 0.1 * self.lin(x)).abs().max()
        errs: List[torch.Tensor] = [err]
        it = 0
        while bool(err > self.tol) and it < self.max_it:
            x = x + 0.8 * (b - x - 0.1 * self.lin(x))
            err = (b - x - 0.1 * self.lin(x)).abs().max()
            errs.append(err)
            it += 1
        return x, torch.stack(errs).sum(), it


class DecodeDict(torch.nn.Module):
    """Returns Dict[str, Tensor]: the tokens of a greedy loop and how many steps it took."""

    def __init__(self):
        super().__init__()
        self.cell = torch.nn.GRUCell(5, 5)

    def forward(self, h) -> Dict[str, torch.Tensor]:
        outs: List[torch.Tensor] = []
        x = torch.zeros_like(h)
        while len(outs) < 12:
            h = self.cell(x, h)
            x = h
            outs.append(h.sum(1))
            if bool(h.mean() > 0.2):
                break
        return {"sums": torch.stack(outs, 1), "steps": torch.tensor(len(outs)), "last": outs[-1]}


class FeaturesAndState(torch.nn.Module):
    """Returns Tuple[List[Tensor], Tensor]: a list of static length (one entry per layer) and the
    result of a data-dependent while loop."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x) -> Tuple[List[torch.Tensor], torch.Tensor]:
        feats: List[torch.Tensor] = []
        for layer in self.layers:
            x = torch.relu(layer(x)) + x
            feats.append(x)
        n = 0
        while bool(x.abs().max() > 1.0) and n < 10:
            x = x * 0.5
            n += 1
        return feats, x


class ListOpsInLoops(torch.nn.Module):
    """Nested loops with continue; pop, insert, l[i] = t, del l[i], len, indexing and slicing of a list
    built in the loop; a range with a step."""

    def forward(self, x):
        rows: List[torch.Tensor] = []
        for i in range(x.size(0)):
            acc = torch.zeros_like(x[0, 0])
            for j in range(x.size(1)):
                if bool(x[i, j] < 0):
                    continue
                acc = acc + x[i, j]
            rows.append(acc)
            if len(rows) > 3:
                rows.pop(0)
        rows.insert(0, x.sum())
        rows[1] = rows[1] * 2.0
        rows[-1] = rows[-1] - 1.0
        if len(rows) > 2:
            del rows[1]
        last = rows.pop()
        tot = last + torch.stack(rows[:1]).sum() * 0.5 + torch.stack(rows[::-2]).sum()
        for k in range(len(rows) - 1, -1, -2):
            tot = tot + rows[k] * float(k + 1)
        return torch.stack(rows) * tot


class ListInsideBranch(torch.nn.Module):
    """A list made inside one branch and appended to in a loop there: it stays inside the branch."""

    def forward(self, x):
        if bool(x.sum() > 0):
            parts: List[torch.Tensor] = []
            for i in range(x.size(0)):
                parts.append(x[i] * float(i + 1))
            y = torch.stack(parts)
        else:
            y = x - 1.0
        return y


class EarlyReturnInLoop(torch.nn.Module):
    """return from inside a loop: the first row whose sum passes a threshold, else the last."""

    def forward(self, x):
        for i in range(x.size(0)):
            if bool(x[i].sum() > 1.0):
                return x[i] * 2.0
        return x[-1] - 1.0


class LoopCarriesList(torch.nn.Module):
    """A list reassigned in a loop (outs = outs + [y]) is loop-carried: a sequence."""

    def forward(self, x):
        outs: List[torch.Tensor] = [x]
        for i in range(x.size(0)):
            outs = outs + [x * i]
        return torch.cat(outs)


class IntListInLoop(torch.nn.Module):
    """A List[int] appended to in a data-dependent loop: not a sequence; refused, never folded."""

    def forward(self, x):
        keep: List[int] = []
        for i in range(x.size(0)):
            if bool(x[i].sum() > 0):
                keep.append(i)
        return x[torch.tensor(keep, dtype=torch.long)]


class ReturnsGrowingList(torch.nn.Module):
    """A list built in a data-dependent loop, returned as is: no plain-tensor form."""

    def forward(self, x) -> List[torch.Tensor]:
        outs: List[torch.Tensor] = []
        while len(outs) < 5 and bool(x.sum() > 0):
            x = x - 1.0
            outs.append(x)
        return outs



class ScriptedNorms(torch.nn.Module):
    """GroupNorm and InstanceNorm scripted: F._verify_batch_size loops over the sizes and raises if
    they multiply to 1, an assert on shapes that is left out together with its loop."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.gn = torch.nn.GroupNorm(4, 8)
        self.inorm = torch.nn.InstanceNorm2d(8, affine=True)

    def forward(self, x):
        y = self.gn(self.conv(x))
        return self.inorm(torch.relu(y))


class ProductOfSizes(torch.nn.Module):
    """A loop over the sizes whose result is used: s[i + 2] at the loop's counter."""

    def forward(self, x):
        s = x.size()
        p = s[0]
        for i in range(len(s) - 2):
            p *= s[i + 2]
        q = 0
        for i in range(len(s)):
            q += s[-1 - i] * (i + 1)
        return x * p + q


class LayerGetter(torch.nn.Module):
    """torchvision's IntermediateLayerGetter and segmentation heads, scripted: a dict filled at keys
    read from a dict attribute, read back by key, and returned."""

    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleDict({"a": torch.nn.Conv2d(3, 4, 3, padding=1),
                                           "b": torch.nn.Conv2d(4, 4, 3, stride=2, padding=1)})
        self.return_layers = {"a": "aux", "b": "out"}

    def forward(self, x) -> Dict[str, torch.Tensor]:
        features: Dict[str, torch.Tensor] = {}
        for name, module in self.layers.items():
            x = module(x)
            if name in self.return_layers:
                features[self.return_layers[name]] = x
        result: Dict[str, torch.Tensor] = {}
        result["out"] = torch.nn.functional.interpolate(features["out"], size=features["aux"].shape[-2:])
        result["aux"] = features["aux"] * 2.0
        result["out"] = result["out"] + 1.0
        return result


class ShapeOnlyOps(torch.nn.Module):
    """Ops libtorch 1.13 has no Meta kernel for in C++ whose results' shapes follow from their
    arguments' shapes (Swin's roll, MViT's and S3D's max_pool3d, RAFT's grid_sample): the example
    run stays on meta tensors."""

    def forward(self, x, grid):
        y = torch.roll(x, shifts=(1, -2), dims=(3, 4))
        y = torch.nn.functional.max_pool3d(y, kernel_size=3, stride=2, padding=1, ceil_mode=True)
        img = x.mean(2)
        s = torch.nn.functional.grid_sample(img, grid, align_corners=False)
        return y * 2.0, s + 1.0


class DataBranchSetsList(torch.nn.Module):
    """A list changed in place under a condition on tensor values: no ONNX form, refused."""

    def forward(self, x):
        s = [2, 3]
        if bool(x.sum() > 0):
            s[0] = 1
        return x.repeat(s)


@torch.jit.script
def make_anchors(feats: List[torch.Tensor], strides: List[int]) -> Tuple[torch.Tensor, torch.Tensor]:
    points, stride_tensor = [], []
    for i, stride in enumerate(strides):
        _, _, h, w = feats[i].shape
        sx = torch.arange(end=w, dtype=feats[0].dtype) + 0.5
        sy = torch.arange(end=h, dtype=feats[0].dtype) + 0.5
        sy, sx = torch.meshgrid(sy, sx, indexing="ij")
        points.append(torch.stack((sx, sy), -1).view(-1, 2))
        stride_tensor.append(torch.full((h * w, 1), stride, dtype=feats[0].dtype))
    return torch.cat(points), torch.cat(stride_tensor)


class GridLevels(torch.nn.Module):
    """YOLOv8's make_anchors: a loop over a constant list of strides builds lists of tensors whose
    shapes differ per level (no ONNX Loop can carry them below opset 13), then a comprehension over
    the levels."""

    def __init__(self):
        super().__init__()
        self.strides = [8, 16]

    def forward(self, x, y):
        feats = [x, y]
        points, strides = make_anchors(feats, self.strides)
        flat = torch.cat([f.flatten(2) for f in feats], 2)
        return flat.transpose(1, 2) * strides + points.sum(-1, keepdim=True)


class PastInner(torch.nn.Module):
    def forward(self, x, past: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        if past is not None:
            k, v = past
            x = torch.cat((k, x), 1) * v.mean()
        return x


class OptionalTupleArg(torch.nn.Module):
    """A KV-cache step: the past (k, v) passed as a tuple to an Optional[Tuple] argument."""

    def __init__(self):
        super().__init__()
        self.inner = PastInner()

    def forward(self, x, k, v):
        return self.inner(x, (k, v))


def scripted_function(x, k: int):
    if k > 2:
        return x + k
    return x - k


def T(*shape, fill="randn", seed=0):
    return {"tensor": {"shape": list(shape), "dtype": "float32", "fill": fill, "seed": seed}}


ARRAYS = {}


def A(name, t):
    """An input read from NAME.npy, written next to the fixtures (values chosen to take a path)."""
    ARRAYS[name] = t.float().numpy()
    return {"tensor": {"fill": {"npy": "@" + name}}}


def R(name, *shape, scale=1.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return A(name, torch.randn(*shape, generator=g) * scale)


NMS_BOXES = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 9, 9], [21, 21, 29, 31.]])
NMS_RANDOM = torch.rand(12, 2, generator=torch.Generator().manual_seed(3)).repeat(1, 2) * 20 + torch.tensor([0, 0, 6., 6])

# Lists built in loops (ONNX sequences): exported at opsets 11, 13 and 17 from the first input set,
# verified on every set (other loop counts: the EOS hit at once or never, other box counts).
LIST_OPSETS = [11, 13, 17]


CASES = [
    # name, module, input sets (each a list of args), dynamic axes {input name: [axes]}, expected ONNX ops,
    # optionally the dtypes of the flattened outputs (int and bool outputs are compared exactly) and the
    # error code the script export must fail with
    ("data_if", DataIf(), [[T(3, 4, fill="ones")], [T(3, 4, fill="zeros")], [T(3, 4, seed=1)], [T(3, 4, seed=2)]],
     {"x": [0]}, ["If"]),
    ("loop_over_size", LoopOverSize(), [[T(3, 4)], [T(1, 4, seed=1)], [T(6, 4, seed=2)]], {"x": [0]}, ["Loop"]),
    ("early_exit", EarlyExit(), [[T(3, 4, seed=3)], [T(3, 4, fill="zeros")], [T(3, 4, fill="arange")],
                                 [T(3, 4, fill="ones")]], {"x": [0]}, ["Loop"]),
    ("lstm_like_cell", LstmLikeCell(), [[T(5, 2, 4)], [T(1, 2, 4, seed=1)], [T(7, 3, 4, seed=2)]],
     {"x": [0, 1]}, ["Loop"]),
    ("nested_if_in_loop", NestedIfInLoop(), [[T(4, 3)], [T(2, 3, seed=1)], [T(5, 3, fill="ones")]],
     {"x": [0]}, ["Loop"]),
    ("if_int_bool", IfIntBool(), [[T(3, 4, seed=5)], [T(3, 4, fill="ones")], [T(3, 4, fill="zeros")],
                                  [T(2, 4, seed=6)]], {"x": [0]}, ["If"], ["int64", "bool"]),
    ("loop_int_bool", LoopIntBool(), [[T(3, 4)], [T(1, 4, seed=1)], [T(5, 6, seed=2)], [T(2, 3, fill="zeros")]],
     {"x": [0, 1]}, ["Loop"], ["int64", "bool"]),
    ("while_numbers", WhileNumbers(), [[T(3, 4, seed=3)], [T(3, 4, fill="zeros")], [T(3, 4, fill="arange")],
                                       [T(2, 4, fill="ones")]], {"x": [0]}, ["Loop"], ["float32", "int64", "bool"]),
    ("sizes_list_arithmetic", SizesListArithmetic(), [[T(2, 3, 4)], [T(3, 5, 2, seed=1)], [T(1, 1, 7, seed=2)]],
     {"x": [0, 1, 2]}, []),
    ("export_time_flags", ExportTimeFlags(), [[T(2, 3, 4)], [T(5, 3, 4, seed=1)]], {"x": [0]}, []),
    ("output_twice", OutputTwice(), [[T(2, 3)], [T(4, 3, seed=1)]], {"x": [0]}, []),
    ("scripted_norms", ScriptedNorms(), [[T(2, 3, 8, 8)], [T(1, 3, 5, 9, seed=1)], [T(3, 3, 12, 7, seed=2)]],
     {"x": [0, 2, 3]}, []),
    ("product_of_sizes", ProductOfSizes(), [[T(2, 3, 4)], [T(3, 5, 2, seed=1)], [T(1, 1, 7, seed=2)]],
     {"x": [0, 1, 2]}, ["Loop"]),
    ("layer_getter", LayerGetter(), [[T(1, 3, 8, 8)], [T(2, 3, 11, 6, seed=1)]], {"x": [0, 2, 3]}, []),
    ("scripted_function", scripted_function, [[T(2, 3), 3], [T(2, 3, seed=4), 3]], {}, []),
    ("grid_levels", GridLevels(), [[T(1, 4, 8, 8), T(1, 4, 4, 4, seed=1)], [T(2, 4, 12, 10, seed=2), T(2, 4, 6, 5, seed=3)]],
     {"x": [0, 2, 3], "y": [0, 2, 3]}, []),
    ("optional_tuple_arg", OptionalTupleArg(), [[T(2, 3), T(2, 4, seed=1), T(2, 4, seed=2)],
                                                [T(3, 2, seed=3), T(3, 5, seed=4), T(3, 1, seed=5)]],
     {"x": [0, 1], "k": [0, 1], "v": [0, 1]}, []),
    ("shifted_window_mask", ShiftedWindowMask(), [[T(1, 8, 8)], [T(2, 12, 7, seed=1)], [T(1, 5, 16, seed=2)]],
     {"x": [0, 1, 2]}, []),
    # State kept on self: each export and each reference run is a call from the saved state.
    ("state_counter", CallCounter(), [[T(2, 3)], [T(4, 3, seed=1)]], {"x": [0]}, []),
    # Its constant-count loop of appends is unrolled: no Loop in the file.
    ("state_cache_then_read", CacheThenRead(), [[T(3, 4)], [T(1, 4, seed=1)], [T(5, 4, seed=2)]],
     {"x": [0]}, []),
    ("state_growing_table", GrowingTable(), [[T(6, 6)], [T(3, 6, seed=1)], [T(4, 6, seed=2)], [T(9, 6, seed=3)]],
     {"x": [0]}, ["If"]),
    ("state_data_branch", DataBranchWrite(), [[T(2, 3, fill="ones")], [T(2, 3, fill="zeros")], [T(3, 3, seed=1)]],
     {"x": [0]}, ["If"]),
    # Scripted reads of self.cache after the write through its view read the written value.
    ("state_slice_written_buffer", SliceWrittenBuffer(), [[T(3, 4)], [T(1, 4, seed=1)], [T(5, 4, seed=2)]],
     {"x": [0]}, ["If"]),
    ("state_write_only_record", WriteOnlyRecord(), [[T(3, 4)], [T(1, 4, seed=1)]], {"x": [0]}, []),
    ("state_loop_writes", LoopWrites(), [[T(3, 4)], [T(1, 4, seed=1)], [T(6, 4, seed=2)], [T(2, 4, fill="zeros")]],
     {"x": [0]}, ["Loop"]),
    # A raise on a data-dependent branch the example inputs pass: left out (data-check-dropped).
    ("raises_on_data", RaisesOnData(), [[T(2, 3)], [T(4, 3, seed=1)]], {"x": [0]}, []),
    # Script exports that fail (the code the error must have); trace mode exports them.
    ("if_may_give_none", IfMayGiveNone(), [[T(2, 3)]], {}, [], [], "unsupported-form"),
    ("if_gives_list", IfGivesList(), [[T(2, 3)]], {}, [], [], "unsupported-output"),
    ("returns_growing_list", ReturnsGrowingList(), [[T(2, 3, fill="ones")]], {"x": [0]}, [], [], "unsupported-output"),
    ("int_list_in_loop", IntListInLoop(), [[T(4, 3)]], {"x": [0]}, [], [], "unsupported-form"),
]

# Cases whose If/Loop depend on the sizes' count only (the rank) or are asserts the inputs pass:
# trace mode unrolls them without a warning, and the traced file matches on every input set.
TRACE_EXACT = {"scripted_norms", "product_of_sizes", "layer_getter", "grid_levels", "optional_tuple_arg",
               "state_cache_then_read"}

# name, module factory (called after seeding), input names, input sets, dynamic axes, expected ONNX ops
# (of the main graph, not the loop bodies), output dtypes
LIST_CASES = [
    # eos=0: 1, 2, 4, 3, 10 and 10 steps (the last two never see EOS)
    ("greedy_decoder", lambda: GreedyDecoder(0), ["h"],
     [[R("gd0", 2, 12, seed=0)], [R("gd1", 2, 12, seed=3, scale=2.0)], [A("gd2", torch.ones(2, 12) * 2)],
      [A("gd3", -torch.ones(2, 12) * 2)], [R("gd4", 4, 12, seed=2)], [R("gd5", 3, 12, seed=3, scale=3.0)]],
     {"h": [0]}, ["Loop", "SequenceEmpty", "ConcatFromSequence"], ["int64"]),
    ("beam_search", lambda: BeamSearch(eos=0), ["h"],
     [[R("bs0", 1, 10, seed=0)], [R("bs1", 1, 10, seed=1, scale=3.0)], [A("bs2", torch.zeros(1, 10))],
      [A("bs3", -torch.ones(1, 10) * 2)], [A("bs4", torch.ones(1, 10) * 2)]],
     {}, ["Loop", "SequenceEmpty", "ConcatFromSequence"], ["int64", "float32"]),
    ("nms_loop", lambda: Nms(), ["boxes", "scores"],
     [[A("nms_b0", NMS_BOXES), A("nms_s0", torch.tensor([.9, .8, .7, .6, .95]))],
      [A("nms_b1", NMS_BOXES[:1]), A("nms_s1", torch.tensor([.5]))],
      [A("nms_b2", NMS_RANDOM), A("nms_s2", torch.rand(12, generator=torch.Generator().manual_seed(4)))],
      [A("nms_b3", NMS_BOXES[[0, 1, 3]]), A("nms_s3", torch.tensor([.1, .2, .3]))]],
     {"boxes": [0], "scores": [0]}, ["Loop", "SequenceEmpty", "ConcatFromSequence"], ["int64"]),
    ("refine_loop", lambda: Refine(), ["b"],
     [[R("rf0", 3, 4, seed=0)], [A("rf1", torch.zeros(2, 4))], [R("rf2", 5, 4, seed=2, scale=10.0)]],
     {"b": [0]}, ["Loop", "ConcatFromSequence"], ["float32", "float32", "int64"]),
    ("decode_dict", lambda: DecodeDict(), ["h"],
     [[R("dd0", 2, 5, seed=0)], [A("dd1", torch.zeros(3, 5))], [A("dd2", torch.ones(2, 5) * 3)]],
     {"h": [0]}, ["Loop", "SequenceLength"], ["float32", "int64", "float32"]),
    ("features_and_state", lambda: FeaturesAndState(), ["x"],
     [[R("fs0", 2, 4, seed=0, scale=3.0)], [A("fs1", torch.zeros(3, 4))], [R("fs2", 4, 4, seed=2, scale=10.0)]],
     {"x": [0]}, ["Loop"], ["float32"] * 4),
    ("list_ops_in_loops", lambda: ListOpsInLoops(), ["x"],
     [[R("lo0", 3, 4, seed=0)], [R("lo1", 6, 2, seed=1)], [R("lo2", 1, 5, seed=2)], [R("lo3", 5, 3, seed=3)]],
     {"x": [0, 1]}, ["Loop", "SequenceErase", "SequenceInsert"]),
    ("early_return_in_loop", lambda: EarlyReturnInLoop(), ["x"],
     [[R("er0", 3, 4, seed=0)], [A("er1", torch.zeros(2, 4))], [A("er2", torch.ones(4, 4))]],
     {"x": [0]}, ["Loop"]),
    ("list_inside_branch", lambda: ListInsideBranch(), ["x"],
     [[A("lb0", torch.ones(3, 2))], [A("lb1", -torch.ones(2, 2))], [A("lb2", torch.ones(5, 2) * 0.5)]],
     {"x": [0]}, ["If"]),
    ("loop_carries_list", lambda: LoopCarriesList(), ["x"], [[R("lc0", 2, 3, seed=0)], [R("lc1", 4, 3, seed=1)]],
     {"x": [0]}, ["Loop", "ConcatFromSequence"]),
]

LIST_CASES += decoder_loops.cases(T, A, R)

# Issue 16's scripted patterns (script_patterns.py), at opsets 11 and 17: name, module factory, input
# names, input sets, dynamic axes, warning codes the script export must give, optionally the ONNX ops
# the script export must have (an If: trace mode then warns and matches on the first input set only).
PATTERN_OPSETS = [11, 17]
PATTERN_CASES = [
    ("rel_pos_resize", RelPosResize, ["x"], [[T(1, 6, 6, 4)], [T(2, 5, 5, 4, seed=1)], [T(1, 9, 9, 4, seed=2)]],
     {"x": [0, 1, 2]}, []),
    ("sizes_in_rank_loop", SizesInRankLoop, ["x"], [[T(1, 3, 5, 7)], [T(2, 3, 4, 6, seed=1)]], {"x": [0, 2, 3]}, []),
    # Level sizes fixed (split sizes from the inputs' sizes are baked by Split: not dynamic here).
    ("per_level_split", PerLevelSplit, ["f0", "f1"], [[T(1, 4, 8, 8), T(1, 4, 4, 4, seed=1)],
                                                      [T(3, 4, 8, 8, seed=2), T(3, 4, 4, 4, seed=3)]],
     {"f0": [0], "f1": [0]}, []),
    ("data_check", DataCheck, ["x", "batch_sizes"],
     [[T(3, 4), A("dc_bs0", torch.tensor([3., 2., 1.]))], [T(3, 6, seed=1), A("dc_bs1", torch.tensor([3., 3.]))]],
     {"x": [1], "batch_sizes": [0]}, ["data-check-dropped"]),
    ("per_instance_conv", PerInstanceConv, ["feats", "inst"],
     [[T(1, 3, 8, 8), T(3, 6, seed=1)], [T(1, 3, 5, 9, seed=2), T(3, 6, seed=3)]], {"feats": [2, 3]}, []),
    # The instance count is a dynamic axis: its example value is baked into Conv's group, said.
    ("per_instance_conv_dyn_n", PerInstanceConv, ["feats", "inst"],
     [[T(1, 3, 8, 8), T(3, 6, seed=1)], [T(1, 3, 5, 9, seed=2), T(3, 6, seed=3)]], {"feats": [2, 3], "inst": [0]},
     ["baked-dynamic-size"]),
    # 24x20 and 20x28 take the branch that resizes; 16x16 the one that does not.
    # list.reverse() of a list appended in a loop over a dynamic length (a CRF's Viterbi backtrace).
    ("list_reverse", ReverseLoopList, ["x"], [[T(6, 2)], [T(9, 3, seed=1)], [T(1, 2, seed=2)]], {"x": [0, 1]}, [],
     ["Loop"]),
    ("interp_pos_encoding", InterpPosEncoding, ["x"], [[T(1, 3, 24, 20)], [T(2, 3, 20, 28, seed=1)], [T(1, 3, 16, 16, seed=2)]],
     {"x": [0, 2, 3]}, [], ["If"]),
    # while loops on ranks (rank_loops.py): unrolled at export time, no Loop left.
    ("rank_while_unsqueeze", RankWhileUnsqueeze, ["h", "emb"], [[T(2, 3, 5, 4), T(2, 4, seed=1)],
                                                               [T(3, 3, 2, 6, seed=2), T(3, 4, seed=3)]],
     {"h": [0, 2, 3], "emb": [0]}, []),
]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rows = []
    for name, module, input_sets, dynamic, ops, *rest in CASES:
        torch.manual_seed(0)
        s = module if isinstance(module, torch.jit.ScriptFunction) else torch.jit.script(module)
        s.save(os.path.join(out, name + ".pt"))
        rows.append({"name": name, "model": name + ".pt", "input_sets": input_sets, "dynamic": dynamic, "ops": ops,
                     "out_dtypes": rest[0] if rest else [], "script_error": rest[1] if len(rest) > 1 else "",
                     "trace_exact": name in TRACE_EXACT})
    import numpy
    for name, a in ARRAYS.items():
        numpy.save(os.path.join(out, name + ".npy"), a)

    def resolve(j):
        if isinstance(j, dict):
            return {k: resolve(v) for k, v in j.items()}
        if isinstance(j, list):
            return [resolve(v) for v in j]
        if isinstance(j, str) and j.startswith("@"):
            return os.path.join(os.path.abspath(out), j[1:] + ".npy")
        return j

    for name, factory, input_names, input_sets, dynamic, ops, *rest in LIST_CASES:
        torch.manual_seed(0)
        module = factory().eval()
        torch.jit.script(module).save(os.path.join(out, name + ".pt"))
        rows.append({"name": name, "model": name + ".pt", "input_sets": resolve(input_sets), "dynamic": dynamic,
                     "ops": ops, "out_dtypes": rest[0] if rest else [], "script_error": "",
                     "input_names": input_names, "opsets": LIST_OPSETS})
    for name, factory, input_names, input_sets, dynamic, warnings, *ops in PATTERN_CASES:
        torch.manual_seed(0)
        torch.jit.script(factory().eval()).save(os.path.join(out, name + ".pt"))
        rows.append({"name": name, "model": name + ".pt", "input_sets": resolve(input_sets), "dynamic": dynamic,
                     "ops": ops[0] if ops else [], "out_dtypes": [], "script_error": "",
                     "input_names": input_names, "opsets": PATTERN_OPSETS, "warnings": warnings})
    # Models for the error tests only (test_control.cpp names them).
    torch.jit.script(DictLookup()).save(os.path.join(out, "dict_lookup.pt"))
    torch.jit.script(DataBranchSetsList()).save(os.path.join(out, "data_branch_sets_list.pt"))
    torch.jit.script(ShapeOnlyOps()).save(os.path.join(out, "shape_only_ops.pt"))
    # Conv2d.forward calls self._conv_forward: scripted, a call on the module itself.
    torch.manual_seed(0)
    torch.jit.script(torch.nn.Sequential(torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()))).save(
        os.path.join(out, "nested_conv.pt"))
    # torchvision's shifted-window block: shift_size[i] = 0 when the window covers the feature map.
    from torchvision.models.swin_transformer import SwinTransformerBlock
    torch.manual_seed(0)
    block = SwinTransformerBlock(dim=8, num_heads=2, window_size=[4, 4], shift_size=[2, 2]).eval()
    torch.jit.script(block).save(os.path.join(out, "swin_block_shifted.pt"))
    # torchvision's RAFT (small): caches its correlation pyramid on self and builds it in a loop.
    from torchvision.models.optical_flow import raft_small
    torch.manual_seed(0)
    torch.jit.script(raft_small().eval()).save(os.path.join(out, "raft_small.pt"))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
