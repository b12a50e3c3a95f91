import numpy as np
import torch

from optest import Npy, T, case

ALL = (9, 11, 13, 17)


class ScriptedReductions(torch.nn.Module):
    def forward(self, x):
        v, i = x.max(1)
        return x.sum(1, keepdim=True).squeeze(1) + x.std(-1) + x.amin(-1) + v + i + x.norm(p=1, dim=1)
# Distinct values (no ties) for argmax/argmin and max/min indices.
DISTINCT = Npy(np.random.RandomState(1).permutation(24).reshape(2, 3, 4).astype(np.float32) - 11.5)
DISTINCT_INT = Npy(np.random.RandomState(2).permutation(24).reshape(2, 3, 4).astype(np.int64) - 7)
POSITIVE = Npy(np.random.RandomState(3).uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32))

CASES = [
    # sum
    case("sum_all", lambda x: x.sum(), [T(2, 3, 4)], opsets=ALL, dynamic={0: [0, 1]}),
    case("sum_dims_keepdim", lambda x: x.sum((0, -1), keepdim=True), [T(2, 3, 4)], opsets=ALL, dynamic={0: [0, 2]}),
    case("sum_neg_dim", lambda x: x.sum(-2), [T(2, 3, 4)], opsets=ALL),
    case("sum_empty_dims_keepdim", lambda x: torch.sum(x, [], keepdim=True), [T(2, 3)], opsets=(11, 13)),
    case("sum_int32_promotes", lambda x: x.sum(1), [T(2, 3, dtype="int32", fill="arange")], opsets=(11, 13)),
    case("sum_bool", lambda x: (x > 0).sum(0), [T(3, 4)], opsets=(11, 13)),
    case("sum_dtype_f64", lambda x: x.sum(1, dtype=torch.float64), [T(2, 3)], opsets=(11, 13)),
    case("sum_empty_tensor", lambda x: x.sum(0), [T(0, 3)], opsets=(11, 13)),
    # mean / prod
    case("mean_all", lambda x: x.mean(), [T(2, 3, 4)], opsets=(9, 13)),
    case("mean_dims", lambda x: x.mean((1, 2), keepdim=True) + x.mean(-1).sum(), [T(2, 3, 4)], opsets=ALL,
         dynamic={0: [0, 1, 2]}),
    case("prod_all", lambda x: x.prod(), [POSITIVE], opsets=(9, 13)),
    case("prod_dim_keepdim", lambda x: x.prod(-1, keepdim=True), [POSITIVE], opsets=(11, 17)),
    case("prod_int", lambda x: x.prod(1), [T(2, 3, dtype="int64", fill="arange")], opsets=(11, 13)),
    # amax / amin / aminmax
    case("amax_dims", lambda x: x.amax((0, -1)), [T(2, 3, 4)], opsets=ALL, dynamic={0: [1]}),
    case("amin_all_keepdim", lambda x: x.amin(keepdim=True), [T(2, 3, 4)]),
    case("amax_int", lambda x: x.amax(1), [DISTINCT_INT]),
    case("amax_bool", lambda x: (x > 0).amax(1), [T(3, 4)]),
    case("aminmax_dim", lambda x: torch.aminmax(x, dim=-1, keepdim=True), [T(2, 3, 4)]),
    case("aminmax_all", lambda x: torch.aminmax(x), [T(2, 3, 4)]),
    # max / min overloads
    case("max_all", lambda x: x.max(), [T(2, 3, 4)], opsets=ALL),
    case("min_all_int", lambda x: x.min(), [DISTINCT_INT]),
    case("max_dim", lambda x: x.max(1), [DISTINCT], opsets=ALL, dynamic={0: [0, 2]}),
    case("min_dim_keepdim_neg", lambda x: x.min(-1, keepdim=True), [DISTINCT], opsets=(9, 11, 13)),
    case("max_dim_int", lambda x: x.max(0), [DISTINCT_INT]),
    case("max_other", lambda a, b: torch.max(a, b), [T(2, 3), T(3, seed=1)], opsets=ALL),
    case("min_other_int", lambda a, b: torch.min(a, b), [T(2, 3, dtype="int64", fill="arange"), Npy(np.array([[2, 0, 5]], dtype=np.int64))], opsets=(9, 11, 13)),
    # argmax / argmin
    case("argmax_all", lambda x: x.argmax(), [DISTINCT], opsets=ALL),
    case("argmax_all_keepdim", lambda x: torch.argmax(x, keepdim=True), [DISTINCT]),
    case("argmax_dim", lambda x: x.argmax(-1, keepdim=True), [DISTINCT], dynamic={0: [0]}),
    case("argmin_dim", lambda x: x.argmin(1), [DISTINCT], opsets=ALL),
    case("argmin_int", lambda x: x.argmin(2), [DISTINCT_INT]),
    case("argmax_ties_first", lambda x: x.argmax(1), [Npy(np.array([[1, 3, 3, 0], [2, 2, 2, 2]], dtype=np.float32))]),
    # all / any / count_nonzero
    case("all_any", lambda x: torch.stack([(x > -1).all(), (x > 1).any()]), [T(3, 4)], opsets=ALL),
    case("all_any_dim", lambda x: (x > 0).all(1, keepdim=True) | (x > 1).any(-1, keepdim=True), [T(3, 4)],
         opsets=(9, 13)),
    case("any_float", lambda x: x.any(0), [Npy(np.array([[0, 0, 1.5], [0, 0, 0]], dtype=np.float32))]),
    case("all_uint8", lambda x: x.all(), [Npy(np.array([1, 2, 0], dtype=np.uint8))]),
    case("all_empty", lambda x: (x > 0).all(), [T(0, 3)]),
    case("count_nonzero", lambda x: torch.count_nonzero(x, 1),
         [Npy(np.array([[0, 1, 2], [0, 0, 3]], dtype=np.float32))], opsets=(9, 13)),
    case("count_nonzero_all", lambda x: torch.count_nonzero(x), [Npy(np.array([[0, 1, 2], [0, 0, 3]], dtype=np.int64))]),
    # std / var / *_mean
    case("std_all", lambda x: x.std(), [T(3, 4)], opsets=ALL, dynamic={0: [0, 1]}),
    case("std_dims_biased", lambda x: x.std((0, 2), unbiased=False), [T(2, 3, 4)], opsets=ALL),
    case("var_dim_keepdim", lambda x: x.var(-1, keepdim=True), [T(2, 3, 4)], dynamic={0: [2]}),
    case("var_correction", lambda x: torch.var(x, 1, correction=2), [T(2, 5, 3)]),
    case("std_mean_dim", lambda x: torch.std_mean(x, 1), [T(2, 3, 4)], opsets=ALL),
    case("var_mean_all", lambda x: torch.var_mean(x), [T(3, 4)]),
    case("var_mean_keepdim", lambda x: torch.var_mean(x, (0, 1), keepdim=True, unbiased=False), [T(3, 4, 2)]),
    # norms
    case("norm_default", lambda x: x.norm(), [T(3, 4)], opsets=ALL),
    case("norm_p1_dim", lambda x: x.norm(p=1, dim=1), [T(3, 4)]),
    case("norm_p3_keepdim", lambda x: x.norm(p=3, dim=-1, keepdim=True), [T(3, 4)], dynamic={0: [0]}),
    case("norm_inf", lambda x: torch.norm(x, p=float("inf"), dim=0) + torch.norm(x, p=float("-inf"), dim=0), [T(3, 4)]),
    case("norm_fro_dims", lambda x: torch.norm(x, p="fro", dim=(0, 1)), [T(3, 4, 2)], opsets=ALL),
    case("frobenius_norm_keepdim", lambda x: torch.frobenius_norm(x, (1, 2), True), [T(3, 4, 2)]),
    case("linalg_vector_norm", lambda x: torch.linalg.vector_norm(x, 3, dim=(0, 1)), [T(3, 4, 2)]),
    case("linalg_vector_norm_p0", lambda x: torch.linalg.vector_norm(x, 0, dim=1),
         [Npy(np.array([[0, 1, 2], [0, 0, 3]], dtype=np.float32))]),
    case("linalg_norm_default", lambda x: torch.linalg.norm(x), [T(3, 4, 2)]),
    case("linalg_norm_vec_dim", lambda x: torch.linalg.norm(x, 1, dim=-1), [T(3, 4)]),
    case("linalg_norm_matrix_inf", lambda x: torch.linalg.norm(x, float("inf")), [T(3, 4)]),
    case("linalg_matrix_norm_fro", lambda x: torch.linalg.matrix_norm(x), [T(2, 3, 4)], dynamic={0: [0, 1]}),
    case("linalg_matrix_norm_1", lambda x: torch.linalg.matrix_norm(x, 1, keepdim=True), [T(2, 3, 4)]),
    case("linalg_matrix_norm_neg_inf_dims", lambda x: torch.linalg.matrix_norm(x, float("-inf"), dim=(0, 2)),
         [T(2, 3, 4)]),
    case("linalg_matrix_norm_2_refused", lambda x: torch.linalg.matrix_norm(x, 2), [T(3, 4)],
         expect="error:unsupported-form", opsets=(13,), operator_export_type="ONNX"),
    case("linalg_matrix_norm_nuc_refused", lambda x: torch.linalg.matrix_norm(x, "nuc"), [T(3, 4)],
         expect="error:unsupported-form", opsets=(13,), operator_export_type="ONNX"),
    # logsumexp / cumsum
    case("logsumexp", lambda x: x.logsumexp(1), [T(2, 3, 4)], opsets=ALL),
    case("logsumexp_dims_keepdim", lambda x: torch.logsumexp(x * 30, (0, -1), keepdim=True), [T(2, 3, 4)]),
    case("cumsum", lambda x: x.cumsum(-1), [T(2, 3, 4)], opsets=(11, 13, 17), dynamic={0: [2]}),
    case("cumsum_int_dtype", lambda x: x.cumsum(0, dtype=torch.float64) + x.cumsum(1), [T(3, 4, dtype="int32", fill="arange")]),
    case("cumsum_bool", lambda x: (x > 0).cumsum(0), [T(3, 4)]),
    case("cumsum_opset9_refused", lambda x: x.cumsum(0), [T(3, 4)], opsets=(9,), expect="error:opset-too-old",
         operator_export_type="ONNX"),
    case("sum_float16", lambda x: x.sum(-1), [T(3, 4, dtype="float16")], opsets=(11, 13)),
    case("max_other_bool", lambda a, b: torch.max(a > 0, b > 0), [T(3, 4), T(3, 4, seed=1)], opsets=(9, 13)),
    case("norm_dtype_f64", lambda x: torch.linalg.vector_norm(x, 2, dim=1, dtype=torch.float64), [T(3, 4)]),
    case("reductions_scripted", ScriptedReductions(), [T(3, 4)], script=True, opsets=(9, 13), dynamic={0: [0, 1]}),
]

# Found by tests/property/test_op_properties: over no elements PyTorch's mean/var/std are NaN,
# ONNX Runtime's ReduceMean is 0.
CASES += [
    case("mean_empty_is_nan", lambda x: x.mean(0), [T(0, 3)], opsets=ALL),
    case("mean_all_empty_is_nan", lambda x: x.mean(), [T(0, 2)], opsets=(11, 17)),
    case("var_empty_biased_is_nan", lambda x: torch.var(x, [0, 2], unbiased=False), [T(0, 1, 0)], opsets=(11, 13)),
    case("std_empty_unbiased_is_nan", lambda x: torch.std(x, 0, keepdim=True), [T(0, 3)], opsets=(11, 13)),
]
