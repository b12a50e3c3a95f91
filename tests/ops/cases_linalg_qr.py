"""Householder QR and the pseudo-inverse through it (ops_linalg_qr.cpp), unrolled for sizes up to
8. libtorch's results (LAPACK geqrf + orgqr) are the reference, signs of R's diagonal included."""
import numpy as np
import torch

from optest import Fn, Npy, T, case

ALL = (9, 10, 11, 13, 17)
rng = np.random.default_rng(61)


def hilbert(n, m=None):
    return np.array([[1.0 / (i + j + 1) for j in range(m or n)] for i in range(n)])


# Columns whose part below the diagonal is exactly zero: LAPACK reflects nothing (tau = 0) and keeps
# the diagonal's sign (R[0, 0] = -2 here, where Gram-Schmidt gives +2); a zero column (rank 2).
NO_REFLECT = Npy(np.array([[[-2.0, 1.0, 3.0], [0.0, 0.0, -1.0], [0.0, 0.0, 2.0]],
                           [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0], [0.0, -3.0, 0.0]]], dtype=np.float32))
# Rank 2 in 4x3 (third column = first + second): Q's last column and R[2, 2] come from rounding
# noise in any implementation, so the case compares what is determined: Q R and R's first two rows.
RANK2 = rng.standard_normal((2, 4, 2))
RANK_DEFICIENT = Npy(np.concatenate([RANK2, RANK2[..., :1] + RANK2[..., 1:]], -1).astype(np.float32))

CASES = [
    case("qr_reduced_tall", lambda a: torch.linalg.qr(a), [T(2, 5, 3, seed=1)], opsets=ALL, dynamic={0: [0]}),
    case("qr_complete_tall", lambda a: torch.linalg.qr(a, mode="complete"), [T(2, 5, 3, seed=2)], opsets=(9, 17)),
    case("qr_wide", lambda a: torch.linalg.qr(a), [T(3, 3, 5, seed=3)], opsets=(9, 17)),
    case("qr_square_8x8", lambda a: torch.linalg.qr(a), [T(2, 8, 8, seed=4)], opsets=(11, 17), dynamic={0: [0]}),
    case("qr_mode_r", lambda a: torch.linalg.qr(a, mode="r")[1], [T(4, 3, seed=5)], opsets=(9, 17)),
    case("qr_legacy_some_false", lambda a: torch.qr(a, some=False), [T(2, 4, 2, seed=6)], opsets=(9, 17)),
    case("qr_no_reflection_signs", lambda a: torch.linalg.qr(a), [NO_REFLECT], opsets=(9, 17)),
    case("qr_rank_deficient", Fn(lambda a: (torch.linalg.qr(a)[0] @ torch.linalg.qr(a)[1], torch.linalg.qr(a)[1][..., :2, :])),
         [RANK_DEFICIENT], opsets=(9, 17)),
    # Hilbert 6x6, condition number 1.5e7, in float64.
    case("qr_ill_conditioned_f64", lambda a: torch.linalg.qr(a), [Npy(hilbert(6))], opsets=(9, 17), tolerance=1e-9),
    case("qr_1xn", lambda a: torch.linalg.qr(a), [T(2, 1, 3, seed=7)], opsets=(9, 17)),
    case("qr_too_large", lambda a: torch.linalg.qr(a), [T(9, 4)], opsets=(17,), expect="error:unsupported-form",
         operator_export_type="ONNX"),
    case("pinv_tall", lambda a: torch.linalg.pinv(a), [T(2, 5, 3, seed=8)], opsets=ALL, dynamic={0: [0]}),
    case("pinv_wide", lambda a: torch.linalg.pinv(a), [T(4, 2, 5, seed=9)], opsets=(9, 17)),
    case("pinverse_square", lambda a: torch.pinverse(a), [T(3, 3, seed=10)], opsets=(9, 17)),
    case("pinv_f64_hilbert", lambda a: torch.linalg.pinv(a), [Npy(hilbert(5, 3))], opsets=(9, 17), tolerance=1e-8),
    case("pinv_8x8", lambda a: torch.linalg.pinv(a), [Npy((rng.standard_normal((2, 8, 8)) + 3 * np.eye(8)).astype(np.float32))],
         opsets=(11, 17)),
]


# Triangular solves, unrolled row by row in LAPACK's order. The coefficients get 4 on the diagonal
# in the model (well conditioned at every size the dynamic axes try); only their triangle is read,
# so the other triangle holds noise that must not matter.
def _eye(n):
    return 4 * torch.eye(n)


def _spd_factor(a, upper=False):
    # A Cholesky factor with a positive diagonal, as torch.linalg.cholesky gives it.
    f = torch.tril(a, -1) + torch.diag_embed(a.diagonal(dim1=-2, dim2=-1).abs() + 1)
    return f.transpose(-2, -1) if upper else f


class SolveTriangularScripted(torch.nn.Module):
    def forward(self, a, b):
        a = a + 4 * torch.eye(3)
        x = torch.linalg.solve_triangular(a, b, upper=False)
        y = torch.linalg.solve_triangular(a, b.transpose(-2, -1), upper=True, left=False, unitriangular=True)
        return x, y


CASES += [
    case("solve_triangular_upper", lambda a, b: torch.linalg.solve_triangular(a + _eye(4), b, upper=True),
         [T(2, 4, 4, seed=11), T(2, 4, 3, seed=12)], opsets=ALL, dynamic={0: [0], 1: [0, 2]}),
    case("solve_triangular_lower_unit", lambda a, b: torch.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
         [T(5, 5, seed=13), T(3, 5, 2, seed=14)], opsets=(9, 11, 17)),
    case("solve_triangular_right_broadcast", lambda a, b: torch.linalg.solve_triangular(a + _eye(3), b, upper=False, left=False),
         [T(3, 3, seed=15), T(2, 4, 3, seed=16)], opsets=(9, 11, 17), dynamic={1: [0, 1]}),
    case("solve_triangular_8x8_and_1x1", lambda a, b, c, d: (torch.linalg.solve_triangular(a + _eye(8), b, upper=True),
                                                             torch.linalg.solve_triangular(c + 4, d, upper=False)),
         [T(8, 8, seed=17), T(8, 8, seed=18), T(2, 1, 1, seed=19), T(2, 1, 3, seed=20)], opsets=(11, 17)),
    case("solve_triangular_float64", lambda a, b: torch.linalg.solve_triangular(a + _eye(4).double(), b, upper=False),
         [Npy(rng.standard_normal((4, 4))), Npy(rng.standard_normal((4, 2)))], tolerance=1e-10),
    case("triangular_solve_transpose", lambda b, a: torch.triangular_solve(b, a + _eye(4), upper=False, transpose=True),
         [T(2, 4, 3, seed=21), T(2, 4, 4, seed=22)], opsets=(9, 11, 17), dynamic={0: [0], 1: [0]}),
    case("triangular_solve_defaults_unit", lambda b, a: torch.triangular_solve(b, a, unitriangular=True)[0],
         [T(4, 2, seed=23), T(4, 4, seed=24)], opsets=(11,)),
    case("cholesky_solve_lower_upper", lambda b, a: (torch.cholesky_solve(b, _spd_factor(a)),
                                                     torch.cholesky_solve(b, _spd_factor(a, True), upper=True)),
         [T(2, 4, 3, seed=25), T(2, 4, 4, seed=26)], opsets=(9, 11, 17), dynamic={0: [0], 1: [0]}),
    case("cholesky_inverse", lambda a: (torch.cholesky_inverse(_spd_factor(a)), torch.cholesky_inverse(_spd_factor(a, True), upper=True)),
         [T(3, 3, seed=27)], opsets=(9, 11, 17)),
    case("cholesky_solve_of_cholesky", lambda a, b: torch.cholesky_solve(b, torch.linalg.cholesky(a @ a.transpose(-2, -1) + _eye(3))),
         [T(2, 3, 3, seed=28), T(2, 3, 1, seed=29)], opsets=(11, 17), dynamic={0: [0], 1: [0]}),
    case("solve_triangular_scripted", SolveTriangularScripted(), [T(2, 3, 3, seed=30), T(2, 3, 4, seed=31)], script=True,
         opsets=(11, 17), dynamic={0: [0], 1: [0, 2]}),
]
