import numpy as np
import torch

from optest import Fn, Npy, T, case

NAN = np.nan
# NaN in some rows, a row of NaN only, negative numbers, ties.
WITH_NAN = Npy(np.array([[NAN, 1.0, -2.0, NAN, 3.5],
                         [NAN, NAN, NAN, NAN, NAN],
                         [4.0, -1.0, 2.0, 2.0, 0.5],
                         [-3.0, NAN, -3.0, 1.0, 7.0]], dtype=np.float32))
TIES = Npy(np.array([[1, 2, 2, 3, 3, 0], [5, 5, -1, -1, 7, 7], [4, 4, 4, 1, 1, 9]], dtype=np.int64))
TIES_F = Npy(np.array([[1.5, -2, -2, 3, 3, 0], [0.25, 0.25, -1, 8, 8, 8]], dtype=np.float32))
R = T(3, 5, 4, seed=21)
Q = Npy(np.array([0.0, 0.1, 0.5, 0.77, 1.0], dtype=np.float32))


class Nanmedian(torch.nn.Module):
    def __init__(self, dim, keepdim=False, values_only=False):
        super().__init__()
        self.dim, self.keepdim, self.values_only = dim, keepdim, values_only

    def forward(self, x):
        v, i = torch.nanmedian(x, self.dim, self.keepdim)
        return v if self.values_only else (v, i)


def quantile_cases(fn, name, data, forms=True):
    out = []
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        out.append(case(f"{name}_{interp}_dim", Fn(lambda x, q, i=interp: fn(x, q, dim=1, interpolation=i)),
                        [data, Q], dynamic={0: [0]}))
    if not forms:
        return out
    out += [
        case(f"{name}_scalar_none", Fn(lambda x: fn(x, 0.3)), [data]),
        case(f"{name}_scalar_keepdim", Fn(lambda x: fn(x, 0.25, dim=0, keepdim=True)), [data]),
        case(f"{name}_tensor_none_keepdim", Fn(lambda x, q: fn(x, q, keepdim=True)), [data, Q]),
        case(f"{name}_0d_q", Fn(lambda x, q: fn(x, q, dim=-1)), [data, Npy(np.array(0.6, dtype=np.float32))]),
    ]
    return out


CASES = [
    case("msort", Fn(torch.msort), [R], dynamic={0: [0, 1]}),
    case("msort_nan_int", Fn(lambda x, y: (torch.msort(x), torch.msort(y))), [Npy(WITH_NAN.array.T.copy()), TIES]),
    case("msort_empty", Fn(torch.msort), [T(0, 3)]),
    case("msort_opset10_refused", Fn(torch.msort), [R], opsets=(10,), expect="error:opset-too-old",
         operator_export_type="ONNX"),
    case("nanmedian_all", Fn(torch.nanmedian), [WITH_NAN]),
    case("nanmedian_all_random", Fn(torch.nanmedian), [R], dynamic={0: [0, 2]}),
    # Indices of a row of NaN only are PyTorch's kernel's choice: values only there.
    case("nanmedian_dim_nan", Nanmedian(1, values_only=True), [WITH_NAN]),
    case("nanmedian_dim_keepdim", Nanmedian(0, keepdim=True), [Npy(WITH_NAN.array[[0, 2, 3]].T.copy())]),
    case("nanmedian_dim_random", Nanmedian(-1), [R], dynamic={0: [0, 2]}),
    case("nanmedian_int", Nanmedian(1, values_only=True), [TIES]),
    case("mode", Fn(lambda x: torch.mode(x)), [TIES], opsets=(9, 11, 13, 17)),
    case("mode_float_dim0_keepdim", Fn(lambda x: torch.mode(x, 0, keepdim=True)), [Npy(TIES_F.array.T.copy())],
         opsets=(9, 11, 13)),
    case("mode_dynamic", Fn(lambda x: torch.mode(x, 1)), [T(2, 5, 3, dtype="int64")], dynamic={0: [0, 1]}),
    case("histc", Fn(lambda x: torch.histc(x, bins=7, min=-1.5, max=2.0)), [R], opsets=(9, 11, 13, 16, 17),
         dynamic={0: [0]}),
    case("histc_data_range", Fn(lambda x: torch.histc(x, bins=5)), [R], opsets=(11, 16), dynamic={0: [0, 1]}),
    case("histc_nan_edges", Fn(lambda x: torch.histc(x, bins=4, min=-3, max=4)), [WITH_NAN], opsets=(11, 16)),
    case("histc_constant_input", Fn(lambda x: torch.histc(x, bins=3)),
         [Npy(np.full((2, 3), 2.0, dtype=np.float32))], opsets=(11, 17)),
]
CASES += quantile_cases(torch.quantile, "quantile", WITH_NAN)
CASES += quantile_cases(torch.quantile, "quantile_r", T(4, 6, seed=5), forms=False)
CASES += quantile_cases(torch.nanquantile, "nanquantile", WITH_NAN)
