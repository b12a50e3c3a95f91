"""Ops whose output length follows the values (ops_unique.cpp): unique_consecutive, bincount,
pdist."""
import math

import numpy as np
import torch
import torch.nn.functional as F

from optest import Fn, Npy, T, case

ALL = (11, 13, 17)
CTC = Npy(np.array([3, 3, 0, 0, 5, 5, 5, 0, 3, 1, 1], dtype=np.int64))
EMPTY = Npy(np.zeros((0,), dtype=np.int64))


def uc(**kw):
    return Fn(lambda x: torch.unique_consecutive(x, **kw))


class CtcGreedy(torch.nn.Module):
    """CTC greedy decoding: best class per frame, repeats collapsed, blanks (0) dropped."""

    def forward(self, logits):
        best = logits.argmax(-1).flatten()
        collapsed = torch.unique_consecutive(best)
        return collapsed[collapsed != 0]


CASES = [
    case("unique_consecutive_all_outputs", uc(return_inverse=True, return_counts=True), [CTC], opsets=ALL),
    case("unique_consecutive_values", uc(), [CTC], opsets=(9, 10, 11, 17)),
    case("unique_consecutive_counts", uc(return_counts=True), [CTC], opsets=(9, 11, 17)),
    case("unique_consecutive_inverse_needs_11", uc(return_inverse=True), [CTC], opsets=(10,),
         expect="error:opset-too-old", operator_export_type="ONNX"),
    case("unique_consecutive_empty", uc(return_inverse=True, return_counts=True), [EMPTY], opsets=ALL),
    case("unique_consecutive_single", uc(return_inverse=True, return_counts=True),
         [Npy(np.array([7], dtype=np.int64))], opsets=ALL),
    case("unique_consecutive_all_equal", uc(return_inverse=True, return_counts=True),
         [Npy(np.full((6,), 2.5, dtype=np.float32))], opsets=ALL),
    case("unique_consecutive_2d_flat", uc(return_inverse=True, return_counts=True),
         [Npy(np.array([[1, 1, 2], [2, 2, 0]], dtype=np.int32))], opsets=ALL),
    case("unique_consecutive_float_below_11", uc(return_counts=True),
         [Npy(np.array([0.5, 0.5, -1.0, 2.0, 2.0, 2.0], dtype=np.float32))], opsets=(9, 10, 11)),
    case("unique_consecutive_dim0", uc(return_inverse=True, return_counts=True, dim=0),
         [Npy(np.array([[1, 2], [1, 2], [3, 4], [1, 2], [1, 2]], dtype=np.int64))], opsets=ALL),
    case("unique_consecutive_dim1", uc(return_counts=True, dim=1),
         [Npy(np.array([[1, 1, 2, 2, 1], [0, 0, 3, 3, 1]], dtype=np.int64))], opsets=(9, 11, 17)),
    case("unique_consecutive_dynamic", uc(return_inverse=True, return_counts=True), [T(12, dtype="int64")],
         opsets=(11, 17), dynamic={0: [0]}),
    case("ctc_greedy", CtcGreedy(), [T(1, 20, 5, seed=2)], opsets=(11, 17), dynamic={0: [1]}),
    case("bincount", lambda x: torch.bincount(x), [CTC], opsets=(9, 11, 17)),
    case("bincount_minlength", lambda x: torch.bincount(x, minlength=10), [CTC], opsets=(9, 11, 17)),
    case("bincount_weights", lambda x, w: torch.bincount(x, w), [CTC, T(11, seed=3)], opsets=(9, 11, 17)),
    case("bincount_weights_f64", lambda x, w: torch.bincount(x, w, minlength=2),
         [CTC, T(11, dtype="float64", seed=4)], opsets=(11,)),
    case("bincount_empty", lambda x: torch.bincount(x), [EMPTY], opsets=(9, 11, 17)),
    case("bincount_empty_minlength", lambda x: torch.bincount(x, minlength=3), [EMPTY], opsets=(11,)),
    case("bincount_dynamic", Fn(lambda x: torch.bincount(x.abs())), [T(9, dtype="int64", seed=5)], opsets=(11, 17),
         dynamic={0: [0]}),
    case("pdist", lambda x: F.pdist(x), [T(5, 3)], opsets=(9, 11, 17), dynamic={0: [0]}),
    case("pdist_p1", lambda x: F.pdist(x, 1.0), [T(4, 6, seed=1)], opsets=(9, 17)),
    case("pdist_p3", lambda x: F.pdist(x, 3.0), [T(4, 6, seed=2)], opsets=(9, 17)),
    case("pdist_p0", lambda x: F.pdist(x, 0.0), [Npy(np.array([[1, 0, 2], [1, 5, 2], [0, 0, 0]], dtype=np.float32))],
         opsets=(9, 17)),
    case("pdist_inf", lambda x: F.pdist(x, math.inf), [T(4, 6, seed=3)], opsets=(9, 17)),
    case("pdist_single_row", lambda x: F.pdist(x), [T(1, 3)], opsets=(11,)),
]
