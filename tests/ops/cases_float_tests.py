"""Float predicates and special functions with exact elementwise forms (ops_float_tests.cpp)."""
import numpy as np
import torch

from optest import Npy, T, case

ALL = (9, 10, 11, 13, 17)
SPECIAL = Npy(np.array([[np.inf, -np.inf, np.nan, 0.0], [-0.0, 3.4e38, -3.4e38, 1.5]], dtype=np.float32))
XS = Npy(np.array([[0.0, 0.0, 2.0, -1.5], [0.0, 1.0, 0.5, 0.0]], dtype=np.float32))
YS = Npy(np.array([[np.nan, -1.0, 0.3, 4.0], [2.0, -0.5, 1e-3, 0.0]], dtype=np.float32))

CASES = [
    case("isposinf", lambda x: torch.isposinf(x), [SPECIAL], opsets=ALL),
    case("isneginf", lambda x: torch.isneginf(x), [SPECIAL], opsets=ALL),
    case("isneginf_f64", lambda x: torch.isneginf(x), [Npy(np.array([-np.inf, -1.7e308, np.nan, np.inf]))], opsets=(9, 17)),
    case("isposinf_int", lambda x: torch.isposinf(x), [T(3, 4, dtype="int64")], opsets=(9, 17)),
    case("isreal", lambda x: torch.isreal(x), [SPECIAL], opsets=(9, 17)),
    case("logaddexp2", lambda a, b: torch.logaddexp2(a, b), [T(3, 4, seed=1), T(3, 4, seed=2)], opsets=ALL,
         dynamic={0: [0], 1: [0]}),
    case("logaddexp2_far_apart", lambda a, b: torch.logaddexp2(a * 100, b), [T(3, 4, seed=3), T(4, seed=4)], opsets=(9, 17)),
    case("special_xlog1py", lambda x, y: torch.special.xlog1py(x, y), [XS, YS], opsets=ALL),
    case("special_ndtr", lambda x: torch.special.ndtr(x * 3), [T(2, 5, seed=5)], opsets=ALL, dynamic={0: [1]}),
]
