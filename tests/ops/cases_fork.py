"""torch.jit.fork / torch.jit.wait: ensembles and parallel heads. The file runs each forked call
in line (an ONNX graph has no threads); traced and scripted forks, futures kept in a list, forks
of functions with keyword arguments and tuple results, forks inside forks."""
from typing import List, Tuple

import torch
import torch.nn as nn

from optest import T, case


class Head(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, k, padding=k // 2)

    def forward(self, x):
        return torch.relu(self.conv(x))


class ForkedEnsemble(nn.Module):
    """The futures go into a list; a comprehension waits on them."""

    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([Head(1), Head(3), Head(5)])

    def forward(self, x):
        futures: List[torch.jit.Future[torch.Tensor]] = []
        for head in self.heads:
            futures.append(torch.jit.fork(head, x))
        outs = [torch.jit.wait(f) for f in futures]
        return torch.stack(outs, 0).mean(0)


class TwoForks(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Head(3)
        self.b = Head(1)

    def forward(self, x):
        fa = torch.jit.fork(self.a, x)
        fb = torch.jit.fork(self.b, x * 2)
        return torch.jit.wait(fa) - torch.jit.wait(fb)


@torch.jit.script
def moments(x: torch.Tensor, dim: int, eps: float = 1e-5) -> Tuple[torch.Tensor, torch.Tensor]:
    mean = x.mean(dim, keepdim=True)
    return mean, (x - mean).pow(2).mean(dim, keepdim=True).add(eps).rsqrt()


@torch.jit.script
def two_level(x: torch.Tensor) -> torch.Tensor:
    inner = torch.jit.fork(moments, x, 1, eps=1e-3)
    m, r = torch.jit.wait(inner)
    return (x - m) * r


class ForkFunctions(nn.Module):
    """Forks of a scripted function with a keyword argument and a tuple result, and a fork of a
    function that forks again."""

    def forward(self, x):
        f1 = torch.jit.fork(moments, x, -1, eps=0.1)
        f2 = torch.jit.fork(two_level, x)
        m, r = torch.jit.wait(f1)
        return (x - m) * r + torch.jit.wait(f2)


class ForkInBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Head(3)

    def forward(self, x):
        fut = torch.jit.fork(self.head, x)
        y = x.sum(1, keepdim=True)
        if bool(y.mean() > 0):
            y = y + torch.jit.wait(fut)
        else:
            y = y - torch.jit.wait(fut)
        return y


CASES = [
    case("fork_list_of_futures_scripted", ForkedEnsemble(), [T(2, 3, 16, 16)], script=True,
         dynamic={0: [0, 2, 3]}),
    case("fork_two_heads_traced", TwoForks(), [T(1, 3, 12, 12)], dynamic={0: [0, 2, 3]}),
    case("fork_two_heads_scripted", TwoForks(), [T(1, 3, 12, 12)], script=True),
    case("fork_functions_nested_scripted", ForkFunctions(), [T(2, 5, 6)], script=True, dynamic={0: [0, 1, 2]}),
    case("fork_wait_in_branch_scripted", ForkInBranch(), [T(2, 3, 8, 8)], script=True, dynamic={0: [0, 2, 3]}),
]
