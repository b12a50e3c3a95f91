"""Small dense linear algebra unrolled into elementwise ops (ops_linalg_small.cpp): inverse,
solve, cholesky, and det/logdet below opset 11 (ONNX Det is 11+)."""
import numpy as np
import torch

from optest import Fn, Npy, T, case

ALL = (9, 10, 11, 13, 17)
rng = np.random.default_rng(16)


def poses(batch, n=4):
    """Rigid transforms (rotation and translation) in homogeneous form, as BEV models invert them."""
    out = np.zeros((batch, n, n), dtype=np.float32)
    for b in range(batch):
        q, _ = np.linalg.qr(rng.standard_normal((n - 1, n - 1)))
        out[b, :n - 1, :n - 1] = q
        out[b, :n - 1, n - 1] = rng.standard_normal(n - 1) * 10
        out[b, n - 1, n - 1] = 1
    return out


def intrinsics(batch):
    k = np.zeros((batch, 3, 3), dtype=np.float32)
    k[:, 0, 0] = rng.uniform(500, 1500, batch)
    k[:, 1, 1] = k[:, 0, 0]
    k[:, 0, 2] = rng.uniform(300, 900, batch)
    k[:, 1, 2] = rng.uniform(200, 500, batch)
    k[:, 2, 2] = 1
    return k


def hilbert(n):
    return np.array([[1.0 / (i + j + 1) for j in range(n)] for i in range(n)])


# Zero on the diagonal: every step needs a row swap (no pivot-free elimination works).
PERM = Npy(np.array([[[0, 1, 0], [0, 0, 1], [1, 0, 0]], [[0, 2, 1], [3, 0, 1], [1, 1, 0]]], dtype=np.float32))
BATCHED = Npy((rng.standard_normal((2, 3, 5, 5)) + 2 * np.eye(5)).astype(np.float32))
SINGULAR = Npy(np.array([[[1, 2], [2, 4]], [[0, 0], [0, 0]], [[2, 1], [1, 3]]], dtype=np.float32))


def well_posed(fn, n):
    """fn of a random batch made diagonally dominant inside the module, so any size of the dynamic
    batch axis is invertible."""
    return Fn(lambda a: fn(a + (n + 1) * torch.eye(n)))


CASES = [
    case("inverse_pose_4x4", lambda a: torch.inverse(a), [Npy(poses(6))], opsets=ALL),
    case("inverse_intrinsics_3x3", lambda a: torch.linalg.inv(a), [Npy(intrinsics(4))], opsets=ALL),
    case("inverse_pivoting", lambda a: torch.inverse(a), [PERM], opsets=ALL),
    case("inverse_batched_5x5", lambda a: torch.inverse(a), [BATCHED], opsets=(9, 11, 17)),
    case("inverse_2x2_single", lambda a: torch.inverse(a), [Npy(np.array([[4.0, 7.0], [2.0, 6.0]], dtype=np.float32))],
         opsets=(9, 17)),
    case("inverse_1x1", lambda a: torch.inverse(a), [Npy(np.array([[[2.0]], [[-0.5]]], dtype=np.float32))], opsets=(9, 17)),
    case("inverse_8x8", lambda a: torch.inverse(a), [Npy((rng.standard_normal((3, 8, 8)) + 3 * np.eye(8)).astype(np.float32))],
         opsets=(9, 17)),
    # Hilbert matrices: condition numbers 1.5e4 (4x4) and 1.5e7 (6x6). float32 at 4x4 is compared
    # with libtorch's own float32 result; float64 at 6x6 to 1e-7 of the largest entry (3e6).
    case("inverse_hilbert4_f32", lambda a: torch.inverse(a), [Npy(hilbert(4).astype(np.float32))], opsets=(9, 17),
         tolerance=2e-3),
    case("inverse_hilbert6_f64", lambda a: torch.inverse(a), [Npy(hilbert(6))], opsets=(9, 17), tolerance=1e-7),
    case("inverse_dynamic_batch", well_posed(torch.inverse, 3), [T(4, 3, 3, seed=3)], opsets=(9, 11, 17),
         dynamic={0: [0]}),
    case("inverse_too_large", lambda a: torch.inverse(a), [T(9, 9)], opsets=(17,), expect="error:unsupported-form",
         operator_export_type="ONNX"),
    case("inv_ex", Fn(lambda a: torch.linalg.inv_ex(a)), [PERM], opsets=(9, 17)),
    case("solve_matrix", lambda a, b: torch.linalg.solve(a, b), [BATCHED, T(2, 3, 5, 2, seed=4)], opsets=ALL),
    case("solve_vector_batch", lambda a, b: torch.linalg.solve(a, b), [PERM, T(2, 3, seed=5)], opsets=(9, 17)),
    case("solve_vector_1d", lambda a, b: torch.linalg.solve(a, b), [PERM, T(3, seed=5)], opsets=(9, 17)),
    case("solve_right", lambda a, b: torch.linalg.solve(a, b, left=False), [PERM, T(2, 4, 3, seed=6)], opsets=(9, 17)),
    case("solve_broadcast_a", lambda a, b: torch.linalg.solve(a, b), [Npy(intrinsics(1)[0]), T(5, 3, 7, seed=7)],
         opsets=(9, 17)),
    case("det_below_11", lambda a: torch.det(a), [BATCHED], opsets=(9, 10, 11)),
    case("det_pivoting_sign", lambda a: torch.linalg.det(a), [PERM], opsets=(9, 10, 11)),
    case("det_singular", lambda a: torch.linalg.det(a), [SINGULAR], opsets=(9, 10, 11)),
    case("det_pose", lambda a: torch.linalg.det(a), [Npy(poses(3))], opsets=(9, 10)),
    case("det_dynamic_batch", well_posed(torch.det, 4), [T(3, 4, 4, seed=8)], opsets=(9, 10), dynamic={0: [0]}),
    case("logdet_below_11", lambda a: torch.logdet(a), [Npy(intrinsics(3))], opsets=(9, 10)),
    case("slogdet_below_11", lambda a, b: (torch.linalg.slogdet(a), torch.slogdet(b)), [BATCHED, PERM], opsets=(9, 10, 11)),
    case("slogdet_singular_dynamic", lambda a, b: (torch.linalg.slogdet(a), well_posed(torch.slogdet, 4)(b)),
         [SINGULAR, T(3, 4, 4, seed=9)], opsets=(9, 10), dynamic={1: [0]}),
    case("det_f64", lambda a: torch.det(a), [Npy(hilbert(5))], opsets=(9, 10), tolerance=1e-9),
    case("cholesky", Fn(lambda a: torch.linalg.cholesky(a @ a.transpose(-1, -2) + torch.eye(4))),
         [T(2, 4, 4, seed=9)], opsets=ALL, dynamic={0: [0]}),
    case("cholesky_upper", Fn(lambda a: torch.linalg.cholesky(a @ a.transpose(-1, -2) + torch.eye(3), upper=True)),
         [T(3, 3, seed=10)], opsets=(9, 17)),
    case("cholesky_f64", lambda a: torch.linalg.cholesky(a), [Npy(hilbert(5))], opsets=(9, 17), tolerance=1e-9),
]
