import numpy as np
import torch
import torch.nn.functional as F

from optest import Npy, T, case

ALL = (9, 11, 13, 17)
POS = Npy(np.random.RandomState(4).uniform(0.1, 3.0, (3, 4)).astype(np.float32))
SMALL = Npy(np.random.RandomState(5).uniform(-0.9, 2.0, (3, 4)).astype(np.float32))
# Dividends and divisors of both signs, divisors away from zero.
NUM = Npy(np.array([[-7.5, -3.0, 0.0, 2.5], [7.0, -1.25, 5.5, -6.0]], dtype=np.float32))
DEN = Npy(np.array([[2.0, -2.0, 3.0, -1.5], [-4.0, 0.75, 2.0, 2.5]], dtype=np.float32))
INUM = Npy(np.array([[-7, -3, 0, 5], [7, -1, 6, -6]], dtype=np.int64))
IDEN = Npy(np.array([[2, -2, 3, -4], [-4, 3, 4, 5]], dtype=np.int64))
SPECIAL = Npy(np.array([[np.nan, np.inf, -np.inf, 1.5], [0.0, -2.0, np.nan, 3e38]], dtype=np.float32))


def well_conditioned(n, seed):
    r = np.random.RandomState(seed)
    return (r.randn(*n) * 0.3 + np.eye(n[-1])).astype(np.float32)


CASES = [
    case("addcmul", lambda a, b, c: torch.addcmul(a, b, c, value=0.5), [T(2, 3), T(2, 3, seed=1), T(3, seed=2)], opsets=(9, 13),
         dynamic={0: [0], 1: [0]}),
    case("addcdiv", lambda a, b, c: torch.addcdiv(a, b, c, value=-2), [T(2, 3), T(2, 3, seed=1), Npy(
        np.random.RandomState(6).uniform(0.5, 2, (2, 3)).astype(np.float32))]),
    case("addcmul_int", lambda a, b, c: torch.addcmul(a, b, c, value=2), [T(2, 3, dtype="int64", fill="arange")] * 3),
    case("baddbmm", lambda a, b, c: torch.baddbmm(a, b, c, beta=0.5, alpha=2), [T(2, 3, 5), T(2, 3, 4, seed=1), T(2, 4, 5, seed=2)],
         opsets=(9, 13), dynamic={0: [0], 1: [0], 2: [0]}),
    # beta=0 ignores self, NaN included (the documented meaning); the expected values come from bmm,
    # since libtorch's own baddbmm lets a NaN of self through on some CPUs (seen in CI).
    case("baddbmm_beta0_nan_self", lambda a, b, c: torch.baddbmm(a, b, c, beta=0),
         [Npy(np.full((2, 3, 5), np.nan, np.float32)), T(2, 3, 4, seed=1), T(2, 4, 5, seed=2)],
         reference=lambda a, b, c: torch.bmm(b, c)),
    case("dot", lambda a, b: torch.dot(a, b), [T(5), T(5, seed=1)], opsets=(9, 13), dynamic={0: [0], 1: [0]}),
    case("dot_int", lambda a, b: torch.dot(a, b), [T(4, dtype="int64", fill="arange"), T(4, dtype="int64", fill="arange", seed=1)]),
    case("mv", lambda a, b: torch.mv(a, b), [T(3, 4), T(4, seed=1)], opsets=(9, 13)),
    case("floor_divide", lambda a, b: torch.floor_divide(a, b), [NUM, DEN], opsets=ALL),
    case("floor_divide_int_scalar", lambda a: a // 3, [INUM], opsets=ALL),
    case("fmod", lambda a, b: torch.fmod(a, b), [NUM, DEN], opsets=ALL),
    case("fmod_int", lambda a, b: torch.fmod(a, b), [INUM, IDEN], opsets=ALL),
    case("fmod_scalar", lambda a: torch.fmod(a, 1.5), [NUM], opsets=(9, 11)),
    case("remainder", lambda a, b: a % b, [NUM, DEN], opsets=ALL),
    case("remainder_int", lambda a, b: torch.remainder(a, b), [INUM, IDEN], opsets=ALL),
    case("remainder_scalar", lambda a: torch.remainder(a, -2.0), [NUM], opsets=(9, 13)),
    case("lerp_scalar", lambda a, b: torch.lerp(a, b, 0.3), [T(2, 3), T(2, 3, seed=1)], opsets=(9, 13)),
    case("lerp_tensor", lambda a, b, w: torch.lerp(a, b, w), [T(2, 3), T(3, seed=1), T(2, 1, fill="rand", seed=2)]),
    case("square", lambda a: a.square(), [T(2, 3)], opsets=(9, 13)),
    case("square_int", lambda a: torch.square(a), [INUM]),
    case("log10_log2", lambda a: a.log10() + a.log2(), [POS], opsets=(9, 13)),
    case("log1p_expm1", lambda a: a.log1p() + a.expm1(), [SMALL], opsets=(9, 13), dynamic={0: [0]}),
    case("log2_int", lambda a: torch.log2(a), [Npy(np.array([1, 2, 8, 10], dtype=np.int64))]),
    case("trunc_frac", lambda a: a.trunc() * 10 + a.frac(), [NUM], opsets=(9, 13)),
    case("atan2", lambda a, b: torch.atan2(a, b), [NUM, DEN], opsets=(9, 11, 13)),
    case("atan2_zero", lambda a, b: torch.atan2(a, b), [Npy(np.array([0.0, 1.0, -1.0, 0.0], dtype=np.float32)),
                                                       Npy(np.array([0.0, 0.0, 0.0, 2.0], dtype=np.float32))]),
    case("isnan_isinf_isfinite", lambda a: torch.stack([a.isnan(), a.isinf(), a.isfinite()]), [SPECIAL], opsets=ALL),
    case("isfinite_int", lambda a: torch.isfinite(a) & ~torch.isnan(a) & ~torch.isinf(a), [INUM]),
    case("nan_to_num", lambda a: a.nan_to_num(), [SPECIAL], opsets=ALL),
    case("nan_to_num_values", lambda a: torch.nan_to_num(a, nan=1.0, posinf=9.0, neginf=-9.0), [SPECIAL]),
    case("lshift_rshift_int", lambda a: (a << 2) + (a >> 1), [INUM], opsets=ALL),
    case("shift_tensor", lambda a, s: (a << s) - (a >> s), [INUM, Npy(np.array([0, 1, 2, 3], dtype=np.int64))]),
    case("shift_uint8", lambda a: (a << 1, a >> 2),
         [Npy(np.array([1, 7, 64, 100], dtype=np.uint8))], opsets=(9, 11, 13)),
    # By a constant, shifts are exact integer steps: the float form lost int64 bits past 2^53
    # ((2^62 + 12345) >> 4, then & 0xF, was wrong), and << wraps as libtorch's does.
    case("shift_int64_extremes", lambda a: (a >> 4, a << 3, a >> 63, a << 63, a >> 0, (a >> 4) & 0xF, a >> 62),
         [Npy(np.array([2 ** 62 + 12345, -2 ** 63, 2 ** 63 - 1, -5, 0, 1, -(2 ** 53) - 3, 2 ** 53 + 1], dtype=np.int64))],
         opsets=ALL, dynamic={0: [0]}),
    # By amounts known at run time, the same integer steps with 2^s from a float64 power (exact).
    case("shift_tensor_int64_exact", lambda a, s: (a >> s, a << s),
         [Npy(np.array([[2 ** 62 + 12345, -2 ** 63, 2 ** 63 - 1, -5], [2 ** 53 + 1, -(2 ** 53) - 3, 7, -1]], dtype=np.int64)),
          Npy(np.array([4, 63, 62, 1], dtype=np.int64))], opsets=ALL, dynamic={0: [0]}),
    case("shift_tensor_narrow", lambda a, s, b, t: (a >> s, a << s, b >> t, b << t),
         [Npy(np.array([-128, -1, 0, 1, 127, -77, 100, 5], dtype=np.int8)), Npy(np.array([7, 8, 0, 9, 3, 1, 6, 2], dtype=np.int8)),
          Npy(np.array([-2 ** 31, 2 ** 31 - 1, -7, 123456789], dtype=np.int32)), Npy(np.array([31, 30, 1, 5], dtype=np.int32))],
         opsets=ALL),
    case("shift_narrow_extremes", lambda a, b: (a >> 7, a << 7, a >> 3, a << 2, b >> 7, b << 7, b >> 3, b << 3),
         [Npy(np.array([-128, -1, 0, 1, 127, -77], dtype=np.int8)), Npy(np.array([0, 1, 200, 255, 128], dtype=np.uint8))],
         opsets=ALL),
    # distances
    case("cosine_similarity", lambda a, b: F.cosine_similarity(a, b), [T(3, 4, 2), T(3, 4, 2, seed=1)], opsets=(9, 13),
         dynamic={0: [0, 2], 1: [0, 2]}),
    case("cosine_similarity_bcast_dim", lambda a, b: F.cosine_similarity(a, b, dim=-1), [T(3, 4), T(1, 4, seed=1)]),
    case("cosine_similarity_zero", lambda a, b: F.cosine_similarity(a, b * 0, dim=0), [T(3, 4), T(3, 4, seed=1)]),
    case("pairwise_distance", lambda a, b: F.pairwise_distance(a, b), [T(3, 4), T(3, 4, seed=1)], opsets=(9, 13)),
    case("pairwise_distance_p1_keepdim", lambda a, b: F.pairwise_distance(a, b, p=1, keepdim=True), [T(3, 4), T(4, seed=1)]),
    case("pairwise_distance_p3", lambda a, b: F.pairwise_distance(a, b, p=3.0), [T(2, 3, 4), T(2, 3, 4, seed=1)]),
    case("cdist", lambda a, b: torch.cdist(a, b), [T(2, 3, 4), T(2, 5, 4, seed=1)], opsets=(9, 13), dynamic={0: [1], 1: [1]}),
    case("cdist_p1", lambda a, b: torch.cdist(a, b, p=1), [T(3, 4), T(5, 4, seed=1)]),
    case("cdist_p_inf_and_3", lambda a, b: torch.cdist(a, b, p=float("inf")) + torch.cdist(a, b, p=3),
         [T(3, 4), T(5, 4, seed=1)]),
    case("cross", lambda a, b: torch.cross(a, b), [T(2, 3), T(2, 3, seed=1)], opsets=(9, 13)),
    case("linalg_cross_dim", lambda a, b: torch.linalg.cross(a, b, dim=0), [T(3, 4), T(3, 1, seed=1)]),
    case("kl_div_mean", lambda a, b: F.kl_div(a, b, reduction="mean"), [T(3, 4), Npy(
        np.array([[0, 0.5, 1, 2]] * 3, dtype=np.float32))], opsets=(9, 11, 13)),
    case("kl_div_batchmean_log_target", lambda a, b: F.kl_div(a, b, reduction="batchmean", log_target=True),
         [T(3, 4), T(3, 4, seed=1)]),
    case("kl_div_none_sum", lambda a, b: F.kl_div(a, b, reduction="none") + F.kl_div(a, b, reduction="sum"),
         [T(3, 4), T(3, 4, fill="rand", seed=1)]),
    case("linalg_det", lambda a: torch.linalg.det(a), [Npy(well_conditioned((2, 3, 3), 7))], opsets=(11, 13, 17),
         dynamic={0: [0]}),
    case("logdet", lambda a: torch.logdet(a), [Npy(well_conditioned((3, 3), 8))], opsets=(11, 13)),
    # Found by the probe sweep (probe3n: Gaussian log-likelihood, Glow): slogdet on a matrix from the
    # inputs, determinants of both signs.
    case("slogdet_signs", lambda a: tuple(torch.linalg.slogdet(a)) + tuple(torch.slogdet(a * 2)),
         [Npy(well_conditioned((3, 3, 3), 9) * np.array([1, -1, 1], np.float32).reshape(3, 1, 1) @
              np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], np.float32))], opsets=(11, 13, 17), dynamic={0: [0]}),
    # Below opset 11 (no Det) the elimination is unrolled (ops_linalg_small.cpp, cases_linalg_small.py).
    case("det_opset9", lambda a: torch.linalg.det(a), [T(3, 3)], opsets=(9,)),
    case("weight_norm", torch.nn.utils.weight_norm(torch.nn.Linear(4, 3)), [T(2, 4)], opsets=(9, 13)),
    case("weight_norm_dim_none", torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 3, 3), dim=None), [T(1, 2, 6)]),
    case("weight_norm_fn_dim1", lambda v, g: torch._weight_norm(v, g, 1), [T(3, 4), T(1, 4, fill="rand", seed=1)]),
    case("native_layer_norm", lambda x, w, b: torch.native_layer_norm(x, [3, 4], w, b, 1e-5),
         [T(2, 3, 4), T(3, 4, seed=1), T(3, 4, seed=2)], opsets=(9, 13), dynamic={0: [0]}),
    case("native_layer_norm_no_affine", lambda x: torch.native_layer_norm(x, [4], None, None, 1e-3)[0], [T(2, 3, 4)]),
    case("conv_tbc", lambda x, w, b: torch.conv_tbc(x, w, b, 1), [T(7, 2, 3), T(3, 3, 5, seed=1), T(5, seed=2)], opsets=(9, 13),
         dynamic={0: [0, 1]}),
]
