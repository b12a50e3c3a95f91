import numpy as np
import torch

from optest import Npy, T, case

ALL = (9, 10, 11, 13, 16, 17)

POSITIVE = Npy(np.random.RandomState(3).uniform(0.5, 1.5, (2, 5, 3)).astype(np.float32))
# Ties (the index moves to the last one), NaNs (sticky, the index is the last NaN) and infinities.
TIES = Npy(np.array([[1, 3, 3, 2, 3, 0], [-1, -1, -2, -2, 5, 5]], dtype=np.float32))
NANS = Npy(np.array([[1, np.nan, 4, np.nan, 0, 7], [2, 1, 1, -np.inf, np.inf, np.nan]], dtype=np.float32))
INTS = Npy(np.array([[4, 2, 2, 7, -3, 7], [0, 0, -1, 5, 5, 1]], dtype=np.int64))
BIG = Npy(np.array([[-np.inf, -np.inf, 0.5, 100.0, 90.0], [1e3, -1e3, np.inf, 2.0, -np.inf]], dtype=np.float32))



class CumprodScripted(torch.nn.Module):
    def forward(self, x):
        return torch.cumprod(x, dim=-2)


class CummaxScripted(torch.nn.Module):
    def forward(self, x):
        v, i = torch.cummax(x, 1)
        return v + torch.logcumsumexp(x, 1), i


CASES = [
    # cumprod
    case("cumprod_dim1", lambda x: torch.cumprod(x, 1), [POSITIVE], opsets=ALL, dynamic={0: [0, 1, 2]}),
    case("cumprod_neg_dim", lambda x: torch.cumprod(x, -1), [POSITIVE], opsets=ALL),
    case("cumprod_dim0", lambda x: x.cumprod(0), [T(4, 3)], opsets=(9, 13)),
    case("cumprod_int", lambda x: torch.cumprod(x, 1), [INTS], opsets=ALL),
    case("cumprod_int32_promotes", lambda x: torch.cumprod(x, 1), [T(2, 4, dtype="int32", fill="arange")], opsets=(9, 13)),
    case("cumprod_bool", lambda x: torch.cumprod(x > 0, 1), [T(3, 5)], opsets=(9, 13)),
    case("cumprod_dtype_f64", lambda x: torch.cumprod(x, 0, dtype=torch.float64), [T(4, 2)], opsets=(9, 13)),
    case("cumprod_nan_zero", lambda x: torch.cumprod(x, 1), [Npy(np.array([[2, 0, np.nan, 3], [np.nan, 1, 2, 0]], dtype=np.float32))], opsets=(9, 13)),
    case("cumprod_scalar", lambda x: torch.cumprod(x, 0), [Npy(np.array(2.5, dtype=np.float32))], opsets=(9, 13)),
    case("cumprod_empty_other_dim", lambda x: torch.cumprod(x, 1), [T(0, 4)], opsets=(11, 13)),
    case("cumprod_inplace", lambda x: x.clone().cumprod_(1), [POSITIVE], opsets=(9, 13)),
    case("cumprod_scripted", CumprodScripted(), [POSITIVE], script=True, opsets=(9, 17)),
    # logcumsumexp
    case("logcumsumexp_dim1", lambda x: torch.logcumsumexp(x, 1), [T(2, 5, 3)], opsets=ALL, dynamic={0: [0, 1, 2]}),
    case("logcumsumexp_neg_dim", lambda x: torch.logcumsumexp(x, -1), [T(3, 6)], opsets=ALL),
    case("logcumsumexp_large_and_inf", lambda x: torch.logcumsumexp(x, 1), [BIG], opsets=(9, 11, 17)),
    case("logcumsumexp_nan", lambda x: torch.logcumsumexp(x, 1), [NANS], opsets=(9, 13)),
    case("logcumsumexp_f64", lambda x: torch.logcumsumexp(x.double(), 0), [T(5, 2)], opsets=(9, 13)),
    case("logcumsumexp_scalar", lambda x: torch.logcumsumexp(x, 0), [Npy(np.array(0.5, dtype=np.float32))], opsets=(9, 13)),
    # cummax / cummin
    case("cummax_dim1", lambda x: torch.cummax(x, 1), [T(2, 5, 3)], opsets=ALL, dynamic={0: [0, 1, 2]}),
    case("cummin_neg_dim", lambda x: torch.cummin(x, -1), [T(3, 6)], opsets=ALL),
    case("cummax_ties", lambda x: torch.cummax(x, 1), [TIES], opsets=ALL),
    case("cummin_ties", lambda x: torch.cummin(x, 1), [TIES], opsets=ALL),
    case("cummax_nan", lambda x: torch.cummax(x, 1), [NANS], opsets=ALL),
    case("cummin_nan", lambda x: torch.cummin(x, 1), [NANS], opsets=ALL),
    case("cummax_int", lambda x: torch.cummax(x, 1), [INTS], opsets=ALL),
    case("cummin_int_dim0", lambda x: torch.cummin(x, 0), [INTS], opsets=ALL),
    case("cummax_int32", lambda x: torch.cummax(x, 1), [Npy(np.array([[3, 1, 4, 1, 5]], dtype=np.int32))], opsets=(9, 13)),
    case("cummax_bool", lambda x: torch.cummax(x > 0, 1), [T(3, 5)], opsets=(9, 13)),
    case("cummin_f64", lambda x: torch.cummin(x.double(), 0), [T(5, 2)], opsets=(9, 13)),
    case("cummax_scalar", lambda x: torch.cummax(x, 0), [Npy(np.array(1.5, dtype=np.float32))], opsets=(9, 13)),
    case("cummax_values_only", lambda x: torch.cummax(x, 0).values * 2, [T(4, 3)], opsets=(9, 17)),
    case("cummax_logcumsumexp_scripted", CummaxScripted(), [T(2, 4, 3)], script=True, opsets=(9, 17)),
    case("cummin_empty_other_dim", lambda x: torch.cummin(x, 1), [T(0, 4)], opsets=(11, 13)),
]
