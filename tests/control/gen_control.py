"""Scripted-control-flow fixtures (torch.jit.script, saved with torch.jit.save) and, per model, the
input sets the test verifies with: chosen so that different runs take different branches or loop
counts. usage: gen_control.py OUT_DIR
"""
import json
import os
import sys
from typing import Dict, List, Optional, Tuple

import torch


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
    """Branches giving lists of different lengths: no ONNX If output can be a list."""

    def forward(self, x) -> List[torch.Tensor]:
        if x.sum() > 0:
            r = [x, x * 2]
        else:
            r = [x - 1]
        return r


class LoopCarriesList(torch.nn.Module):
    """A list reassigned in a loop is loop-carried: no ONNX Loop can carry a list."""

    def forward(self, x):
        outs: List[torch.Tensor] = [x]
        for i in range(x.size(0)):
            outs = outs + [x * i]
        return torch.cat(outs)


class SizesListArithmetic(torch.nn.Module):
    """List arithmetic on sizes, common in scripted code: x.shape[1:] (aten::slice.t) and
    list + list (aten::add.t); the sizes must stay dynamic."""

    def forward(self, x):
        y = x.reshape(x.shape[:1] + [-1])
        return y + torch.zeros(x.shape[1:]).sum()


class DictLookup(torch.nn.Module):
    """A dict of tensors mutated on a data-dependent branch, then read: refused in both modes."""

    def forward(self, x):
        d: Dict[str, torch.Tensor] = {"a": x}
        if x.sum() > 0:
            d["a"] = x * 2
        return d["a"] + 1


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


@torch.jit.script
def scripted_function(x, k: int):
    if k > 2:
        return x + k
    return x - k


def T(*shape, fill="randn", seed=0):
    return {"tensor": {"shape": list(shape), "dtype": "float32", "fill": fill, "seed": seed}}


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
    ("scripted_function", scripted_function, [[T(2, 3), 3], [T(2, 3, seed=4), 3]], {}, []),
    # Script exports that fail (the code the error must have); trace mode exports them.
    ("raises_on_data", RaisesOnData(), [[T(2, 3)]], {}, [], [], "unsupported-form"),
    ("if_may_give_none", IfMayGiveNone(), [[T(2, 3)]], {}, [], [], "unsupported-form"),
    ("if_gives_list", IfGivesList(), [[T(2, 3)]], {}, [], [], "unsupported-form"),
    ("loop_carries_list", LoopCarriesList(), [[T(2, 3)]], {"x": [0]}, [], [], "unsupported-form"),
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
                     "out_dtypes": rest[0] if rest else [], "script_error": rest[1] if len(rest) > 1 else ""})
    # Models for the error tests only (test_control.cpp names them).
    torch.jit.script(DictLookup()).save(os.path.join(out, "dict_lookup.pt"))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
