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

# Products torch.onnx 1.13 lacks: fused add-products, multi_dot, matrix_power, nn.Bilinear.
CASES += [
    case("addmv", lambda c, m, v: torch.addmv(c, m, v, beta=0.5, alpha=2), [T(3), T(3, 4, seed=1), T(4, seed=2)],
         opsets=(9, 13, 17), dynamic={1: [0, 1], 0: [0], 2: [0]}),
    case("addr", lambda c, a, b: torch.addr(c, a, b), [T(3, 4), T(3, seed=1), T(4, seed=2)], opsets=(9, 17)),
    case("addbmm_beta0", lambda c, a, b: torch.addbmm(c, a, b, beta=0), [T(3, 3), T(2, 3, 4, seed=1), T(2, 4, 3, seed=2)],
         opsets=(11, 17)),
    case("addbmm", lambda c, a, b: torch.addbmm(c, a, b, alpha=0.5), [T(3, 3), T(2, 3, 4, seed=1), T(2, 4, 3, seed=2)],
         opsets=(9,)),
    case("multi_dot", lambda a, b, c: torch.linalg.multi_dot([a, b, c]), [T(4), T(4, 3, seed=1), T(3, 2, seed=2)],
         opsets=(9, 17)),
    case("matrix_power", lambda a: torch.linalg.matrix_power(a * 0.5, 5) + torch.matrix_power(a, 1), [T(2, 3, 3)],
         opsets=(9, 17), dynamic={0: [0]}),
    case("matrix_power_zero_refused", lambda a: torch.linalg.matrix_power(a, 0), [T(3, 3)], opsets=(11,),
         expect="error:unsupported-form", operator_export_type="ONNX"),
    case("bilinear", torch.nn.Bilinear(3, 4, 2), [T(2, 5, 3), T(2, 5, 4, seed=1)], opsets=(9, 11, 17), dynamic={0: [0, 1], 1: [0, 1]}),
    case("bilinear_nobias", torch.nn.Bilinear(3, 3, 4, bias=False), [T(6, 3), T(6, 3, seed=1)], opsets=(11,)),
]
