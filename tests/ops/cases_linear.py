import torch
import torch.nn as nn

from optest import T, case

CASES = [
    case("linear_2d", nn.Linear(8, 4), [T(3, 8)], dynamic={0: [0]}),
    case("linear_3d", nn.Linear(8, 4), [T(2, 5, 8)], dynamic={0: [0, 1]}),
    case("linear_nobias", nn.Linear(6, 3, bias=False), [T(2, 6)]),
    case("addmm", lambda b, x, y: torch.addmm(b, x, y, beta=0.5, alpha=2.0), [T(3), T(2, 4), T(4, 3)]),
    case("matmul_batched", lambda a, b: a @ b, [T(2, 3, 4), T(2, 4, 5)], dynamic={0: [0], 1: [0]}),
    case("matmul_broadcast", lambda a, b: torch.matmul(a, b), [T(2, 3, 4), T(4, 5)]),
    case("mm", lambda a, b: torch.mm(a, b), [T(3, 4), T(4, 2)]),
    case("bmm", lambda a, b: torch.bmm(a, b), [T(2, 3, 4), T(2, 4, 2)]),
    case("t", lambda a: a.t() * 2, [T(3, 4)]),
]
