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

# Found by tests/property/test_op_properties: ONNX Runtime's MatMul fails over an empty inner dim
# and with an empty 1-D operand; PyTorch gives zeros / an empty result.
CASES += [
    case("matmul_empty_inner_dim", lambda a, b: a @ b, [T(3, 0), T(0, 2)], opsets=(9, 11, 17)),
    case("matmul_empty_matrix_vector", lambda a, b: a @ b, [T(0, 0), T(0)], opsets=(11, 17)),
    case("matmul_vector_empty_batch", lambda a, b: torch.matmul(a, b), [T(4), T(0, 4, 2)], opsets=(11, 17)),
]
