import numpy as np
import torch

from optest import Npy, T, case

# Distinct values: ONNX TopK is not stable, so ties could come back in another order.
D = Npy(np.random.RandomState(11).permutation(24).reshape(2, 3, 4).astype(np.float32) * 0.5 - 5)
DI = Npy(np.random.RandomState(12).permutation(20).reshape(4, 5).astype(np.int64) - 9)
# Where the sorted axis is dynamic: verification at other sizes repeats a .npy file's values along
# the axis (ties), so those cases draw fresh normal values at each size (distinct almost surely).
R = T(2, 3, 4, seed=11)



class TopkHalf(torch.nn.Module):
    """topk with k computed from the input's size (dynamic k)."""

    def forward(self, x):
        return torch.topk(x, x.size(2) // 2)


CASES = [
    case("sort_last", lambda x: torch.sort(x), [R], opsets=(10, 11, 13, 17), dynamic={0: [0, 2]}),
    case("sort_descending_dim", lambda x: torch.sort(x, 1, descending=True), [D], opsets=(10, 11, 13)),
    case("sort_stable_arg", lambda x: torch.sort(x, stable=True, dim=0), [D], opsets=(10, 13)),
    case("sort_int", lambda x: torch.sort(x, -1), [DI], opsets=(10, 11, 13)),
    case("sort_opset9_refused", lambda x: torch.sort(x), [D], opsets=(9,), expect="error:opset-too-old",
         operator_export_type="ONNX"),
    case("argsort", lambda x: torch.argsort(x, -1), [R], opsets=(10, 11, 13), dynamic={0: [2]}),
    case("argsort_descending_dim0", lambda x: torch.argsort(x, 0, descending=True), [DI]),
    case("topk", lambda x: torch.topk(x, 2), [D], opsets=(9, 10, 11, 13, 17), dynamic={0: [0, 1]}),
    case("topk_smallest_dim", lambda x: torch.topk(x, 2, dim=1, largest=False), [D], opsets=(9, 10, 11, 13)),
    case("topk_int", lambda x: torch.topk(x, 3, dim=0), [DI], opsets=(9, 11, 13)),
    case("topk_dynamic_k", TopkHalf(), [R], opsets=(10, 11, 13), dynamic={0: [2]}),
    case("bucketize", lambda x, b: torch.bucketize(x, b), [T(3, 4), Npy(np.array([-1.0, 0.0, 0.5, 1.0],
                                                                               dtype=np.float32))],
         opsets=(9, 11, 13), dynamic={0: [0, 1]}),
    case("bucketize_right_int32", lambda x, b: torch.bucketize(x, b, out_int32=True, right=True),
         [Npy(np.array([[-1, 0, 1, 2, 7]], dtype=np.int64)), Npy(np.array([-1, 1, 2, 5], dtype=np.int64))]),
    case("bucketize_ties_left", lambda x, b: torch.bucketize(x, b), [Npy(np.array([-1.0, 0.0, 0.5, 3.0], dtype=np.float32)),
                                                                    Npy(np.array([-1.0, 0.0, 0.5, 1.0], dtype=np.float32))]),
    case("topk_dynamic_k_opset9_refused", TopkHalf(), [D], opsets=(9,),
         expect="error:opset-too-old", operator_export_type="ONNX"),
]

# Found by tests/property/test_op_properties: ONNX Runtime's TopK dies (SIGFPE) on an empty input.
CASES += [
    case("sort_empty", lambda x: torch.sort(x, 1, descending=True), [T(0, 3, 2)], opsets=(11, 17)),
    case("argsort_empty", lambda x: torch.argsort(x, -1), [T(2, 0)], opsets=(11, 13)),
    case("topk_empty_k0", lambda x: torch.topk(x, 0, 1), [T(3, 0)], opsets=(10, 11, 17)),
]

# searchsorted (diffusion schedulers, piecewise-linear lookups): bucketize with the sequence first.
CASES += [
    case("searchsorted_1d", lambda s, v: torch.searchsorted(s, v), [Npy(np.array([-1.0, 0.0, 0.5, 2.0], dtype=np.float32)),
                                                                  Npy(np.array([[-2.0, 0.0, 0.7], [2.0, 3.0, 0.5]], dtype=np.float32))],
         opsets=(9, 11, 17)),
    case("searchsorted_rows_right", lambda s, v: torch.searchsorted(s, v, right=True),
         [Npy(np.array([[0, 1, 2, 3], [1, 1, 4, 9]], dtype=np.int64)), Npy(np.array([[1, 3], [1, 10]], dtype=np.int64))],
         opsets=(11, 17)),
    case("searchsorted_side_int32", lambda s, v: torch.searchsorted(s, v, side="right", out_int32=True),
         [Npy(np.array([0.0, 1.0, 1.0, 2.0], dtype=np.float32)), Npy(np.array([1.0, 1.5], dtype=np.float32))], opsets=(11,)),
]

# kthvalue / median (lower median): TopK of the smallest, the last one; distinct values so that
# the indices are unambiguous.
CASES += [
    case("kthvalue", lambda x: torch.kthvalue(x, 2, 1), [T(3, 5)], opsets=(11, 17), dynamic={0: [0]}),
    case("kthvalue_keepdim", lambda x: torch.kthvalue(x, 3, 0, keepdim=True), [T(4, 2, 3)], opsets=(11,)),
    case("median_dim", lambda x: torch.median(x, -1), [T(3, 6)], opsets=(11, 13, 17), dynamic={0: [0, 1]}),
    case("median_all", lambda x: torch.median(x), [T(3, 5)], opsets=(11, 17), dynamic={0: [0, 1]}),
]
