"""Special and NaN-aware elementwise functions (ops_special.cpp) that torch.onnx 1.13 lacks."""
import numpy as np
import torch

from optest import Npy, T, case

F32 = np.float32
EDGES = Npy(np.array([-np.inf, -2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.inf, np.nan], dtype=F32))

CASES = [
    case("xlogy", lambda a, b: torch.xlogy(a, b),
         [Npy(np.array([0, 0, 1.5, 2, -1, 0], dtype=F32)), Npy(np.array([0.5, np.nan, 2, 0, 3, 0], dtype=F32))],
         opsets=(9, 11, 17)),
    case("logaddexp", lambda a, b: torch.logaddexp(a, b), [T(3, 4), T(4, seed=1)], opsets=(9, 17), dynamic={0: [0]}),
    case("logit_eps", lambda a: torch.logit(a, 1e-3), [T(3, 4, fill="rand")], opsets=(9, 17)),
    case("logit", lambda a: torch.logit(a * 0.9 + 0.05), [T(5, fill="rand")], opsets=(11,)),
    case("sinc", lambda a: torch.sinc(a), [Npy(np.array([0, 0.5, -1.5, 2.25, 1e-3], dtype=F32))], opsets=(9, 11, 17)),
    case("hypot", lambda a, b: torch.hypot(a, b), [T(3, 4), T(3, 4, seed=1)], opsets=(9, 17)),
    case("deg_rad", lambda a: torch.deg2rad(a) + torch.rad2deg(a), [T(5)], opsets=(9, 17)),
    case("signbit", lambda a: torch.signbit(a[:9]), [EDGES], opsets=(9, 11, 17)),
    case("sgn_real", lambda a: torch.sgn(a), [T(3, 4)], opsets=(9, 17)),
    case("copysign", lambda a, b: torch.copysign(a, b), [T(9), Npy(np.array([1, -1, -0.0, 0.0, -np.inf, 2, -3, 4, -5], dtype=F32))],
         opsets=(9, 11, 17)),
    case("fmax_fmin", lambda a, b: torch.fmax(a, b) + torch.fmin(a, b),
         [Npy(np.array([1, np.nan, 3, np.nan], dtype=F32)), Npy(np.array([2, 5, np.nan, np.nan], dtype=F32))],
         opsets=(9, 11, 17)),
    case("fmax_int", lambda a, b: torch.fmax(a, b), [T(4, dtype="int64", fill="arange"), Npy(np.array([3, 0, 5, 1]))],
         opsets=(11,)),
    case("heaviside", lambda a, b: torch.heaviside(a, b),
         [Npy(np.array([-1, 0, 2, 0, -0.0], dtype=F32)), Npy(np.array([0.5], dtype=F32))], opsets=(9, 11, 17)),
    case("isclose", lambda a, b: torch.isclose(a, b, rtol=1e-3, atol=1e-4),
         [Npy(np.array([1, 1, np.inf, np.nan, 0, -np.inf], dtype=F32)),
          Npy(np.array([1.0005, 1.1, np.inf, np.nan, 1e-5, np.inf], dtype=F32))], opsets=(9, 11, 17)),
    case("isclose_equal_nan", lambda a, b: torch.isclose(a, b, equal_nan=True),
         [Npy(np.array([np.nan, 1, np.nan], dtype=F32)), Npy(np.array([np.nan, 1, 2], dtype=F32))], opsets=(11,)),
    case("erfc_exp2", lambda a: torch.erfc(a) + torch.exp2(a), [T(3, 4)], opsets=(9, 17)),
    case("float_power", lambda a: torch.float_power(a, 2), [T(3, 4)], opsets=(9, 17)),
    case("special_entr", lambda a: torch.special.entr(a), [EDGES], opsets=(9, 11, 17)),
    case("nansum", lambda a: torch.nansum(a, 1) + torch.nansum(a),
         [Npy(np.array([[1, np.nan, 2], [np.nan, np.nan, 3]], dtype=F32))], opsets=(9, 11, 13, 17)),
    case("nanmean_keepdim", lambda a: torch.nanmean(a, 0, keepdim=True),
         [Npy(np.array([[1, np.nan, 2], [np.nan, 4, 3]], dtype=F32))], opsets=(11, 13, 17)),
    case("nansum_dyn", lambda a: torch.nansum(a, -1), [T(3, 5)], opsets=(13,), dynamic={0: [0, 1]}),
    case("isin_int", lambda a, b: torch.isin(a, b), [T(3, 4, dtype="int64", fill="arange"), Npy(np.array([2, 5, 11, 40]))],
         opsets=(9, 11, 17)),
    case("isin_float_invert", lambda a, b: torch.isin(a, b, invert=True),
         [Npy(np.array([0.5, 1, 2], dtype=F32)), Npy(np.array([[1, 3]], dtype=F32))], opsets=(11, 17)),
]

CASES += [
    case("diff", lambda a: torch.diff(a, dim=1) + torch.diff(a, n=2, dim=1, prepend=a[:, :1]) + torch.diff(a, dim=1, append=a[:, -1:])[:, 1:],
         [T(3, 5)], opsets=(9, 11, 17), dynamic={0: [0, 1]}),
    case("diff_bool", lambda a: torch.diff(a > 0), [T(6)], opsets=(11,)),
    case("ldexp", lambda a, e: torch.ldexp(a, e), [T(5), T(5, dtype="int64", fill="arange")], opsets=(9, 17)),
    case("dist", lambda a, b: torch.dist(a, b) + torch.dist(a, b, 3) + torch.dist(a, b, float("inf")) + torch.dist(a, b, 1),
         [T(3, 4), T(3, 4, seed=1)], opsets=(9, 13, 17)),
    case("renorm", lambda a: torch.renorm(a, 2, 0, 1.0) + torch.renorm(a, 1, 1, 0.5), [T(3, 4)], opsets=(9, 13, 17),
         dynamic={0: [0, 1]}),
    case("trapezoid", lambda y: torch.trapezoid(y) + torch.trapezoid(y, dx=0.5, dim=0).sum(), [T(3, 5)], opsets=(9, 13, 17)),
    case("trapezoid_x", lambda y, x: torch.trapezoid(y, x), [T(2, 5), T(5, seed=1)], opsets=(11,)),
]
