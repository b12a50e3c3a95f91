import numpy as np
import torch

from optest import Npy, T, case

ALL = (9, 11, 13, 17)
rs = np.random.RandomState(8)
# Positive, small, negative non-integer, near the poles, large; the poles themselves.
GAMMA_ARGS = Npy(np.concatenate([rs.uniform(0.05, 12, 12), rs.uniform(-6.9, -0.1, 8), [0.5, 1, 2, 3.5, 1e-3, 30, 250, 1e4],
                                 [-0.999, -2.001, 0.49, 0.51]]).astype(np.float32).reshape(4, 8))
POLES = Npy(np.array([0, -1, -2, -7, np.inf, 1, 4.5, np.nan], dtype=np.float32))
UNIT = Npy(np.concatenate([rs.uniform(-0.999, 0.999, 20), [0, 0.5, -0.5, 0.9999, -0.9999, 0.95, -0.99, 1e-5]])
           .astype(np.float32).reshape(4, 7))
EDGES = Npy(np.array([1, -1, 1.5, -2, np.nan, 0], dtype=np.float32))

CASES = [
    case("lgamma", lambda x: torch.lgamma(x), [GAMMA_ARGS], opsets=ALL),
    case("lgamma_poles_inf_nan", lambda x: torch.lgamma(x), [POLES], opsets=(9, 13)),
    case("lgamma_f64", lambda x: torch.lgamma(x.double()), [GAMMA_ARGS], opsets=(9, 13)),
    case("lgamma_int", lambda x: torch.lgamma(x), [T(2, 5, dtype="int64", fill="arange")], opsets=(9, 13)),
    case("lgamma_dynamic", lambda x: torch.lgamma(x.abs() + 0.1), [T(3, 4)], opsets=(11, 17), dynamic={0: [0, 1]}),
    case("digamma", lambda x: torch.digamma(x), [GAMMA_ARGS], opsets=ALL),
    case("digamma_poles_inf_nan", lambda x: torch.digamma(x), [POLES], opsets=(9, 13)),
    case("digamma_special_psi_f64", lambda x: torch.special.psi(x.double()), [GAMMA_ARGS], opsets=(9, 13)),
    case("erfinv", lambda x: torch.erfinv(x), [UNIT], opsets=ALL),
    case("erfinv_edges", lambda x: torch.erfinv(x), [EDGES], opsets=(9, 13)),
    case("erfinv_f64_special", lambda x: torch.special.erfinv(x.double()), [UNIT], opsets=(9, 13)),
    case("erfinv_roundtrip", lambda x: torch.erf(torch.erfinv(x)), [T(3, 4, fill="rand")], opsets=(11, 17), dynamic={0: [0]}),
]
