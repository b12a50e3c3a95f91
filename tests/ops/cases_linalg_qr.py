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
