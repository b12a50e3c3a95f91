import numpy as np
import torch

from optest import Npy, T, case

ALL = (9, 11, 13, 16, 17)

# Index along dim 0 of a [4, 3] self: duplicates, and a position nothing reaches (2).
IDX = Npy(np.array([[0, 1, 0], [3, 3, 1], [0, 3, 1], [1, 0, 0], [3, 1, 0]], dtype=np.int64))
SRC = Npy(np.random.RandomState(5).uniform(-2, 2, (5, 3)).astype(np.float32))
SELF = Npy(np.random.RandomState(6).uniform(-2, 2, (4, 3)).astype(np.float32))
SRC_INT = Npy(np.array([[5, -3, 2], [7, 1, -4], [-6, 2, 9], [3, 3, -1], [0, -8, 4]], dtype=np.int64))
SELF_INT = Npy(np.array([[1, -2, 3], [-4, 5, -6], [7, 0, 1], [2, -7, 8]], dtype=np.int64))
SRC_NAN = Npy(np.array([[1, np.nan, 2], [3, 4, 5], [np.nan, 6, 7], [8, 9, np.nan], [1, 2, 3]], dtype=np.float32))
# Along dim 1 of a [2, 5] self.
IDX1 = Npy(np.array([[4, 0, 4], [1, 1, 2]], dtype=np.int64))


def scatter(reduce, include_self, dim=0):
    return lambda s, i, x: s.scatter_reduce(dim, i, x, reduce, include_self=include_self)


CASES = [
    case(f"scatter_reduce_{r}_{'self' if inc else 'noself'}", scatter(r, inc), [SELF, IDX, SRC], opsets=ALL)
    for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)
] + [
    case(f"scatter_reduce_int_{r}_{'self' if inc else 'noself'}", scatter(r, inc), [SELF_INT, IDX, SRC_INT], opsets=ALL)
    for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)
] + [
    case(f"scatter_reduce_nan_{r}", scatter(r, True), [SELF, IDX, SRC_NAN], opsets=(9, 13, 17))
    for r in ("amax", "amin", "sum")
] + [
    # NaN and inf in self must not leak into the positions without include_self.
    case(f"scatter_reduce_self_nan_inf_{r}", scatter(r, False),
         [Npy(np.array([[np.nan, 1, np.inf], [2, -np.inf, 3], [np.nan, 0, 1], [4, 5, np.inf]], dtype=np.float32)), IDX, SRC],
         opsets=(9, 16, 17))
    for r in ("sum", "prod", "mean", "amax")
] + [
    case("scatter_reduce_dim_neg", lambda s, i, x: s.scatter_reduce(-1, i, x, "amax", include_self=False),
         [T(2, 5), IDX1, T(2, 3, seed=1)], opsets=ALL),
    case("scatter_reduce_src_larger", lambda s, i, x: s.scatter_reduce(1, i, x, "sum"),
         [T(2, 5), IDX1, T(2, 4, seed=1)], opsets=(11, 16, 17)),
    case("scatter_reduce_inplace", lambda s, i, x: s.clone().scatter_reduce_(0, i, x, "mean", include_self=False),
         [SELF, IDX, SRC], opsets=(9, 17)),
    # A graph-style aggregation: per-node max over incoming edges, index expanded over features.
    case("scatter_reduce_graph_amax",
         lambda x, e: torch.zeros(4, x.size(1)).scatter_reduce(0, e.unsqueeze(1).expand_as(x), x, "amax",
                                                              include_self=False),
         [T(6, 3), Npy(np.array([0, 2, 2, 3, 0, 2], dtype=np.int64))], opsets=ALL, dynamic={0: [1]}),
    case("scatter_reduce_int32_mean", scatter("mean", True),
         [Npy(SELF_INT.array.astype(np.int32)), IDX, Npy(SRC_INT.array.astype(np.int32))], opsets=(9, 16)),
    case("scatter_reduce_smaller_index_amax", lambda s, i, x: s.scatter_reduce(0, i, x, "amax"),
         [T(4, 5), IDX, SRC], opsets=(13,), expect="error:unsupported-form", operator_export_type="ONNX"),
    case("scatter_reduce_smaller_index_sum16", lambda s, i, x: s.scatter_reduce(0, i, x, "sum"),
         [T(4, 5), IDX, SRC], opsets=(16, 17)),
    # index_reduce: a 1-D index along dim, source shaped like self elsewhere.
    case("index_reduce_prod", lambda s, i, x: s.index_reduce(0, i, x, "prod"),
         [SELF, Npy(np.array([0, 3, 0, 1, 3], dtype=np.int64)), SRC], opsets=ALL),
    case("index_reduce_mean_noself", lambda s, i, x: s.index_reduce(1, i, x, "mean", include_self=False),
         [T(3, 4), Npy(np.array([3, 0, 3, 3, 1], dtype=np.int64)), T(3, 5, seed=2)], opsets=ALL),
    case("index_reduce_amax", lambda s, i, x: s.index_reduce(0, i, x, "amax"),
         [SELF, Npy(np.array([2, 2, 0, 3, 3], dtype=np.int64)), SRC], opsets=ALL),
    case("index_reduce_amin_int", lambda s, i, x: s.index_reduce(0, i, x, "amin", include_self=False),
         [SELF_INT, Npy(np.array([2, 2, 0, 1, 2], dtype=np.int64)), SRC_INT], opsets=ALL),
]
