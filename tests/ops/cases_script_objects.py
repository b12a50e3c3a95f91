"""TorchScript objects in forward: @torch.jit.script classes created and updated in forward (their
attributes become values, across If and Loop), submodules held through a torch.jit.interface
attribute, autocast regions, and the clear refusal of what cannot become values."""
from typing import List, Tuple

import torch
import torch.nn as nn

from optest import T, case


@torch.jit.script
class Box:
    def __init__(self, t: torch.Tensor, scale: float):
        self.t = t
        self.scale = scale

    def area(self) -> torch.Tensor:
        return (self.t[:, 2] - self.t[:, 0]) * (self.t[:, 3] - self.t[:, 1]) * self.scale

    def grow(self, d: float):
        self.t = self.t + torch.tensor([-d, -d, d, d])


@torch.jit.script
class RunningStats:
    def __init__(self, n: int):
        self.count = 0
        self.mean = torch.zeros(n)
        self.m2 = torch.zeros(n)

    def update(self, x: torch.Tensor):
        self.count += 1
        d = x - self.mean
        self.mean = self.mean + d / self.count
        self.m2 = self.m2 + d * (x - self.mean)

    def var(self) -> torch.Tensor:
        return self.m2 / max(self.count - 1, 1)


class BoxArea(nn.Module):
    def forward(self, x):
        b = Box(x, 2.0)
        b.grow(0.5)
        return b.area()


class Welford(nn.Module):
    """An object updated in a loop over the rows: its count and tensors are carried by the Loop."""

    def forward(self, xs):
        s = RunningStats(xs.size(1))
        for i in range(xs.size(0)):
            s.update(xs[i])
        return s.mean, s.var()


class BoxInBranch(nn.Module):
    """The object lives only in one branch; another is written in both."""

    def forward(self, x):
        outer = Box(x, 1.0)
        if bool(x.sum() > 0):
            b = Box(x, 0.5)
            b.grow(0.25)
            y = b.area()
            outer.grow(1.0)
        else:
            y = x.sum(1)
        return y + outer.area()


@torch.jit.interface
class HeadInterface(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pass


class LinearHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 3)

    def forward(self, x):
        return self.proj(x).tanh()


class SwappableHead(nn.Module):
    head: HeadInterface

    def __init__(self):
        super().__init__()
        self.head = LinearHead()
        self.norm = nn.LayerNorm(6)

    def forward(self, x):
        return self.head.forward(self.norm(x))


class Fp32Region(nn.Module):
    """`with autocast(enabled=False)` keeps a block in float32; a CUDA autocast does not touch the
    CPU run: both export as float32."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 6)
        self.b = nn.Linear(6, 2)

    def forward(self, x):
        with torch.cuda.amp.autocast(enabled=False):
            y = self.a(x.float()).relu()
        with torch.cuda.amp.autocast():
            z = self.b(y)
        return z


class CpuAutocast(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 2)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.a(x)
        return y.float()


class BoxesInList(nn.Module):
    def forward(self, x):
        boxes: List[Box] = [Box(x, 1.0), Box(x * 2, 1.0)]
        return boxes[1].area()


CASES = [
    case("script_class_object", BoxArea(), [T(5, 4)], script=True, dynamic={0: [0]}),
    case("script_class_updated_in_loop", Welford(), [T(7, 5)], script=True, dynamic={0: [0, 1]}),
    case("script_class_in_branch", BoxInBranch(), [T(3, 4, fill="rand")], script=True, dynamic={0: [0]}),
    case("script_class_in_branch_else", BoxInBranch(), [T(3, 4, fill="zeros")], script=True),
    case("script_interface_attribute", SwappableHead(), [T(4, 6)], script=True, dynamic={0: [0]}),
    case("script_autocast_float32_regions", Fp32Region(), [T(4, 6)], script=True, dynamic={0: [0]}),
    case("script_autocast_cpu_refused", CpuAutocast(), [T(4, 6)], script=True, opsets=(11,),
         expect="error:unsupported-object"),
    case("script_class_in_list_refused", BoxesInList(), [T(4, 4)], script=True, opsets=(11,),
         expect="error:unsupported-object"),
]
