"""Creation ops. Sizes come from an input (x.size(0)) or fold=False, else the frontend folds them.

Random ops are checked through a deterministic follow-up (x + 0 * rand(...): shape and dtype must
match) and through statistics that round to the same number in every run.
"""
from typing import Optional

import numpy as np
import torch

from optest import Npy, T, case

ALL = (9, 10, 11, 13, 15, 17)


def _multinomial_in_range(p):
    m = torch.multinomial(p, 5, replacement=True)
    return m.clamp(0, 3) - m  # zeros of the right shape and dtype when every index is a class


class TensorList(torch.nn.Module):
    def forward(self, x):
        return torch.tensor([x.size(0), 3])


class TensorNested(torch.nn.Module):
    def forward(self, x):
        return torch.tensor([[x.size(0), 3], [x.size(1), 4]], dtype=torch.float32)


CASES = [
    # zeros / ones / full / empty
    case("zeros_dynamic", lambda x: torch.zeros(x.size(0), 3), [T(2, 4)], opsets=ALL, dynamic={0: [0]}),
    case("ones_int_dynamic", lambda x: torch.ones(x.size(0), x.size(1), dtype=torch.int64), [T(2, 4)],
         dynamic={0: [0, 1]}),
    case("ones_bool", lambda x: torch.ones(x.size(1), dtype=torch.bool), [T(2, 4)]),
    case("full_static_nofold", lambda x: torch.full((2, 3), 1.5) + x, [T(2, 3)], opsets=ALL, fold=False),
    case("full_dynamic_value", lambda x: torch.full((x.size(0), 2), x.size(1)), [T(2, 4)], dynamic={0: [0, 1]}),
    case("empty_fill", lambda x: torch.empty(x.size(0), 4).fill_(2.0) + x, [T(2, 4)], dynamic={0: [0]}),
    case("zeros_empty_size", lambda x: torch.zeros(x.size(0), 0), [T(3, 2)]),
    case("zeros_scalar_nofold", lambda x: torch.zeros(()) + x, [T(3)], fold=False),
    # *_like
    case("zeros_like", lambda x: torch.zeros_like(x), [T(2, 3)], opsets=ALL, dynamic={0: [1]}),
    case("ones_like_bool", lambda x: torch.ones_like(x, dtype=torch.bool), [T(2, 3)]),
    case("full_like_int", lambda x: torch.full_like(x, 7, dtype=torch.int32), [T(2, 3)]),
    case("full_like_dynamic_value", lambda x: torch.full_like(x, x.size(1)), [T(2, 3)], dynamic={0: [1]}),
    case("empty_like_zero", lambda x: torch.empty_like(x).zero_() + x, [T(2, 3)]),
    case("full_like_int_input", lambda i: torch.full_like(i, 3), [T(2, 3, dtype="int64")]),
    # new_*
    case("new_zeros_dynamic", lambda x: x.new_zeros(x.size(0), 2), [T(3, 4)], dynamic={0: [0]}),
    case("new_ones_nofold", lambda x: x.new_ones((3,)) + x, [T(3)], fold=False),
    case("new_full", lambda x: x.new_full((x.size(1),), 2.5), [T(3, 4)]),
    case("new_full_int", lambda i: i.new_full((i.size(0), 2), 4), [T(3, dtype="int64")]),
    case("new_empty_fill", lambda x: x.new_empty(x.size(0), 4).fill_(1.0) * x, [T(3, 4)]),
    # fill_
    case("fill_scalar", lambda x: x.clone().fill_(2.0), [T(2, 3)], opsets=ALL),
    case("fill_tensor_value", lambda x: x.clone().fill_(x[0, 0]), [T(2, 3)]),
    case("fill_int", lambda i: i.clone().fill_(-3), [T(4, dtype="int64")]),
    # arange / linspace / eye
    case("arange_end", lambda x: torch.arange(x.size(1)), [T(2, 5)], opsets=ALL, dynamic={0: [1]}),
    case("arange_start_step", lambda x: torch.arange(1, x.size(1), 2), [T(2, 7)], opsets=ALL, dynamic={0: [1]}),
    case("arange_negative_step", lambda x: torch.arange(x.size(1), 0, -1), [T(2, 5)], opsets=ALL),
    case("arange_float_step", lambda x: torch.arange(0.5, x.size(1), 0.5), [T(2, 4)], opsets=ALL),
    case("arange_float_dtype", lambda x: torch.arange(x.size(0), dtype=torch.float32) * 1.5, [T(3, 2)]),
    case("arange_nofold", lambda x: torch.arange(2, 11, 3) + x, [T(3)], fold=False),
    case("linspace_dynamic", lambda x: torch.linspace(0, 1, x.size(1)), [T(2, 5)], opsets=ALL, dynamic={0: [1]}),
    case("linspace_nofold", lambda x: torch.linspace(-2, 3, 7) + x, [T(7)], fold=False),
    case("eye_square", lambda x: torch.eye(x.size(0)), [T(3, 2)], opsets=ALL, dynamic={0: [0]}),
    case("eye_rect_int", lambda x: torch.eye(x.size(0), x.size(1), dtype=torch.int64), [T(2, 4)]),
    case("scalar_tensor", lambda x: torch.scalar_tensor(x.size(0)) * x, [T(3, 2)], dynamic={0: [0]}),
    case("tensor_list_script", TensorList(), [T(5, 2)], script=True, dynamic={0: [0]}),
    case("tensor_nested_script", TensorNested(), [T(5, 2)], script=True),
    case("hann_window", lambda x: torch.hann_window(x.size(1)) * x, [T(2, 8)], opsets=ALL, dynamic={0: [1]}),
    case("hann_window_symmetric", lambda x: torch.hann_window(x.size(1), periodic=False) * x, [T(2, 6)],
         opsets=ALL),
    case("dim_arange", lambda x: torch._dim_arange(x, -1), [T(2, 6)], opsets=ALL, dynamic={0: [1]}),
    # random: shape and dtype via a deterministic follow-up, distributions via rounded statistics
    case("rand_dynamic_shape", lambda x: x + 0 * torch.rand(x.size(0), x.size(1)), [T(2, 3)], opsets=ALL,
         dynamic={0: [0]}),
    case("randn_static_shape", lambda x: x + 0 * torch.randn(2, 3), [T(2, 3)]),
    case("rand_like_dtype", lambda x: x + 0 * torch.rand_like(x, dtype=torch.float64), [T(2, 3)]),
    case("randn_like", lambda x: x + 0 * torch.randn_like(x), [T(2, 3)], opsets=ALL),
    case("rand_mean", lambda x: torch.round(torch.rand(x.size(0) * 1000, 100).mean() * 10), [T(2, 3)]),
    case("randn_moments", lambda x: torch.stack([torch.round(torch.randn(x.size(0) * 1000, 100).mean()).abs(),
                                                 torch.round((torch.randn(x.size(0) * 1000, 100) ** 2).mean() * 10)]),
         [T(2, 3)]),
    case("normal_tensor_float", lambda x: x + 0 * torch.normal(x, 2.0), [T(2, 3)]),
    case("normal_float_tensor", lambda x: x + 0 * torch.normal(0.0, x.abs() + 1), [T(2, 3)]),
    case("normal_size", lambda x: torch.normal(2.0, 3.0, (x.size(0), 3)) * 0, [T(2, 3)]),
    case("normal_mean", lambda x: torch.round(torch.normal(x.new_full((x.size(0) * 1000, 100), 3.0), 0.5).mean()),
         [T(2, 3)]),
    case("bernoulli", lambda x: x + 0 * torch.bernoulli(torch.sigmoid(x)), [T(2, 3)], opsets=(9, 11, 15, 17)),
    case("bernoulli_p_mean", lambda x: torch.round(torch.bernoulli(x.new_zeros(x.size(0) * 1000, 100), 0.3).mean() * 10),
         [T(2, 3)], opsets=(11, 15)),
    case("bernoulli_tensor_mean", lambda x: torch.round(torch.bernoulli(x.new_full((x.size(0) * 1000, 100), 0.7)).mean() * 10),
         [T(2, 3)], opsets=(11, 15)),
    case("multinomial_replacement", _multinomial_in_range,
         [Npy(np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.0, 0.0]], dtype=np.float32))]),
    case("multinomial_1d_one", lambda p: torch.multinomial(p, 1) * 0, [Npy(np.array([0.2, 0.8, 0.0], dtype=np.float32))]),
    case("multinomial_certain", lambda p: torch.multinomial(p, 3, replacement=True), [Npy(np.array([[0.0, 1.0, 0.0]], dtype=np.float32))]),
    case("multinomial_no_replacement", lambda p: torch.multinomial(p, 2), [Npy(np.array([[0.2, 0.8, 0.1]], dtype=np.float32))],
         expect="error:unsupported-form", operator_export_type="ONNX"),
]


class ScriptedPredicates(torch.nn.Module):
    """aten::conj, aten::__is__/__isnot__ on None, aten::is_pinned and aten::__not__, as a
    scripted model records them."""

    def forward(self, x, m: Optional[torch.Tensor] = None):
        y = x.conj()
        if m is None:
            y = y + 1
        if m is not None:
            y = y * 2
        if not x.is_pinned():
            y = y - 3
        return y


class NotOfData(torch.nn.Module):
    """aten::__not__ of a bool computed from the data (a dynamic condition)."""

    def forward(self, x):
        if not bool(x.sum() > 0):
            return x - 1
        return x + 1


CASES += [
    case("scripted_conj_is_none_is_pinned", ScriptedPredicates(), [T(3, 4)], script=True, opsets=(9, 11, 17)),
    case("scripted_not_of_data", NotOfData(), [T(3, 4)], script=True, opsets=(11, 17)),
]

# Refused on purpose (core/src/convert/refused.def): random Gamma/Dirichlet draws.
CASES += [
    case("standard_gamma_refused", lambda x: torch._standard_gamma(x.abs() + 1), [T(3)], opsets=(11,),
         expect="error:refused-op", operator_export_type="ONNX"),
    case("dirichlet_refused", lambda x: torch._sample_dirichlet(x.abs() + 1), [T(2, 3)], opsets=(17,),
         expect="error:refused-op", operator_export_type="ONNX"),
]

# triu_indices / tril_indices (pairwise terms, relative-position tables): host-computed constants.
CASES += [
    case("triu_indices", lambda x: x[torch.triu_indices(4, 4, 1)[0], torch.triu_indices(4, 4, 1)[1]], [T(4, 4)],
         opsets=(11, 17), fold=False),  # two index tensors: opset 11
    case("tril_indices_offset", lambda x: x + torch.tril_indices(3, 5, -1).sum(), [T(2)], opsets=(9, 11), fold=False),
]
