"""Scripted modules that keep state on self (prim::SetAttr in forward), for gen_control.py: a
counter, a cache written then read, a table rebuilt in a branch when the input grows, and
attributes written in loops. Each export is the first call from the saved state; the reference
runs are too (the model's attributes are restored after each)."""
from typing import List, Tuple

import torch


class CallCounter(torch.nn.Module):
    """An int and a tensor counter: the call reads their saved values (attribute-write-dropped)."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.register_buffer("steps", torch.zeros(()))

    def forward(self, x):
        self.calls += 1
        self.steps = self.steps + 1.0
        return x * self.calls + self.steps


class CacheThenRead(torch.nn.Module):
    """A cache written, then read back and extended in the same call (RAFT's correlation pyramid)."""

    def __init__(self):
        super().__init__()
        self.cache = torch.zeros(1)
        self.levels: List[torch.Tensor] = [torch.tensor(0)]
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        self.cache = self.proj(x).relu()
        self.levels = [self.cache]
        for _ in range(2):
            self.levels.append(self.levels[-1] * 0.5 + 1.0)
        y = self.cache + 1.0
        return y * self.cache + torch.cat(self.levels, 0).sum(0)


class GrowingTable(torch.nn.Module):
    """A positional table rebuilt when the sequence is longer than the cached one (a write in an if
    on sizes); the table cached beside it keeps the last length seen."""

    def __init__(self):
        super().__init__()
        self.table = torch.zeros(4, 6)
        self.length = 4

    def forward(self, x):
        if x.size(0) > self.table.size(0):
            pos = torch.arange(x.size(0), dtype=torch.float32).unsqueeze(1)
            self.table = torch.sin(pos * torch.linspace(0.1, 1.0, 6))
            self.length = x.size(0)
        return x + self.table[: x.size(0)] * self.length


class DataBranchWrite(torch.nn.Module):
    """An attribute written in one branch of an if on tensor values, read after the if."""

    def __init__(self):
        super().__init__()
        self.scale = torch.ones(())

    def forward(self, x):
        self.scale = torch.ones(())
        if bool(x.sum() > 0):
            self.scale = x.abs().max()
        else:
            self.scale = self.scale * 3.0
        return x / self.scale


class LoopWrites(torch.nn.Module):
    """Attributes written in a loop: a running sum from a fresh start, and a total from the saved value
    (written under an if on the data inside the loop)."""

    def __init__(self):
        super().__init__()
        self.acc = torch.zeros(1)
        self.register_buffer("total", torch.full((), 2.0))

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        self.acc = torch.zeros_like(x[0])
        for i in range(x.size(0)):
            self.acc = self.acc * 0.5 + x[i]
            if bool(x[i].mean() > 0):
                self.total = self.total + x[i].sum()
        return self.acc, self.total


class SliceWrittenBuffer(torch.nn.Module):
    """A static cache buffer written through a view of it from the input and read back through
    another (scripted: each read is a new GetAttr), and a counter buffer bumped in place."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, 8, 4))
        self.register_buffer("count", torch.ones(()))

    def forward(self, x):
        n = x.size(0)
        self.cache[0, :n] += x
        if n > 2:
            self.cache[0, n - 1] = x[0] * 3.0
        self.count.add_(1.0)
        return self.cache[0, :n] * 2.0 + self.count


class WriteOnlyRecord(torch.nn.Module):
    """A record kept on self through a view of it and never read for the result: nothing to warn."""

    def __init__(self):
        super().__init__()
        self.register_buffer("record", torch.zeros(2, 4))

    def forward(self, x):
        self.record[0, :2] += x[:, :2].mean(0)
        return x * 2.0
