import numpy as np
import torch

from optest import Npy, T, case

ALL = (9, 11, 13, 14, 17)


class UnflattenToGrid(torch.nn.Module):
    def forward(self, x):
        n = x.shape[-1]
        return x.unflatten(2, (n // 4, 4)).sum(-1)


class Unflatten(torch.nn.Module):
    def __init__(self, dim, sizes):
        super().__init__()
        self.dim, self.sizes = dim, sizes

    def forward(self, x):
        return x.unflatten(self.dim, self.sizes)


class CausalMask(torch.nn.Module):
    """A GPT block's causal mask: scores above the diagonal set to -inf, from a dynamic length."""

    def forward(self, q, k):
        s = q @ k.transpose(-2, -1)
        n = s.size(-1)
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=s.device), diagonal=1)
        return torch.softmax(s.masked_fill(mask, float("-inf")), -1)


CASES = [
    # Trilu from 14, a mask of col - row below it; dynamic rows and columns; every diagonal sign.
    case("tril", lambda x: torch.tril(x), [T(2, 4, 5)], opsets=ALL, dynamic={0: [1, 2]}),
    case("tril_k1", lambda x: torch.tril(x, 1), [T(4, 6)], opsets=ALL, dynamic={0: [0, 1]}),
    case("tril_kneg", lambda x: torch.tril(x, -2), [T(5, 3)], opsets=ALL),
    case("triu", lambda x: torch.triu(x), [T(3, 4)], opsets=ALL, dynamic={0: [0, 1]}),
    case("triu_k2", lambda x: torch.triu(x, 2), [T(2, 3, 6, 6)], opsets=ALL),
    case("triu_kneg_int", lambda x: torch.triu(x, -1), [T(4, 4, dtype="int64", fill="arange")], opsets=ALL),
    case("triu_int32", lambda x: torch.triu(x, 1), [T(4, 5, dtype="int32", fill="arange")], opsets=(11, 14, 17)),
    case("tril_bool", lambda x: torch.tril(x > 0), [T(4, 4)], opsets=(11, 14, 17)),
    # A diagonal that depends on the inputs: LLaMA's KV-cache causal mask `full((q, past + q)).triu(1 + past)`
    # (Trilu's k input from 14, the mask's k below it); the past length is a dynamic axis.
    case("triu_dynamic_diagonal", lambda x, past: torch.triu(x, 1 + past.shape[-1]), [T(3, 8), T(2, 5)],
         opsets=ALL, dynamic={0: [0, 1], 1: [1]}),
    case("tril_dynamic_diagonal", lambda x, past: torch.tril(x, -past.shape[0]), [T(6, 4), T(2, 3)],
         opsets=(11, 14), dynamic={1: [0]}),
    case("tril_inplace", lambda x: (x * 2).tril_(), [T(3, 3)], opsets=(11, 14)),
    case("causal_mask", CausalMask(), [T(2, 5, 8), T(2, 5, 8, seed=1)], opsets=(11, 14, 17),
         dynamic={0: [0, 1], 1: [0, 1]}),
    # Einsum from opset 12; below it Mul/ReduceSum over one common axis order.
    case("einsum_matmul", lambda a, b: torch.einsum("bij,bjk->bik", a, b), [T(2, 3, 4), T(2, 4, 5, seed=1)],
         opsets=(9, 11, 12, 13, 17), dynamic={0: [0], 1: [0]}),
    case("einsum_attention", lambda q, k: torch.einsum("b h i d, b h j d -> b h i j", q, k),
         [T(2, 3, 5, 4), T(2, 3, 6, 4, seed=1)], opsets=(9, 10, 11, 12, 17), dynamic={0: [0, 2], 1: [0, 2]}),
    case("einsum_ellipsis", lambda a, b: torch.einsum("...ij,...jk->...ik", a, b), [T(2, 2, 3, 4), T(2, 2, 4, 3, seed=1)],
         opsets=(9, 11, 12, 17)),
    case("einsum_trace_diag_sum", lambda a: torch.einsum("ii->", a) + torch.einsum("ij->j", a).sum(), [T(4, 4)],
         opsets=(9, 11, 12, 17), dynamic={0: [0, 1]}),
    case("einsum_outer_three", lambda a, b, c: torch.einsum("i,j,k->ijk", a, b, c), [T(2), T(3, seed=1), T(4, seed=2)],
         opsets=(9, 11, 12, 17)),
    case("einsum_int", lambda a, b: torch.einsum("ij,jk->ik", a, b),
         [T(2, 3, dtype="int64", fill="arange"), T(3, 2, dtype="int64", fill="arange")], opsets=(9, 11, 12, 17)),
    case("einsum_implicit_output", lambda a, b: torch.einsum("ji,kj", a, b), [T(2, 3), T(4, 2, seed=1)],
         opsets=(9, 11, 12)),
    case("einsum_diagonal_batch", lambda a, b: torch.einsum("bii,bi->bi", a, b), [T(2, 3, 3), T(2, 3, seed=1)],
         opsets=(9, 11, 13), dynamic={0: [0, 1, 2], 1: [0, 1]}),
    case("einsum_ellipsis_broadcast", lambda a, b: torch.einsum("...d,nd->...n", a, b), [T(2, 3, 4), T(5, 4, seed=1)],
         opsets=(9, 11, 13)),
    case("einsum_f64_sum_only", lambda a: torch.einsum("ijk->k", a), [T(2, 3, 4, dtype="float64")], opsets=(9, 13)),
    case("matrix_transpose_mT", lambda x: x.mT + x.mH.sin() + x.adjoint(), [T(2, 3, 4)], opsets=(9, 13, 17), dynamic={0: [0, 1, 2]}),
    case("matrix_transpose_2d_int", lambda x: x.mT, [T(3, 2, dtype="int64", fill="arange")], opsets=(9, 13)),
    case("outer", lambda a, b: torch.outer(a, b), [T(3), T(4, seed=1)], opsets=(9, 13), dynamic={0: [0], 1: [0]}),
    case("ger_int_float", lambda a, b: torch.outer(a, b), [T(3, dtype="int64", fill="arange"), T(2)], opsets=(11,)),
    # unflatten: scripted records aten::unflatten (tracing decomposes it into a view).
    case("unflatten_script", Unflatten(1, (2, -1)), [T(3, 8, 5)], script=True, opsets=(9, 11, 17), dynamic={0: [0, 2]}),
    case("unflatten_last_script", Unflatten(-1, (2, 2, 3)), [T(4, 12)], script=True, opsets=(11, 17), dynamic={0: [0]}),
    case("unflatten_first_script", Unflatten(0, (2, 3)), [T(6, 4)], script=True, opsets=(11,)),
    # Sizes from the input's shape (DPT's reassemble: tokens back to a patch grid).
    case("unflatten_sizes_from_shape_script", UnflattenToGrid(), [T(2, 4, 12)], script=True, opsets=(9, 11, 14, 17),
         dynamic={0: [0, 2]}),
]


class Tensordot(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, a, b):
        return torch.tensordot(a, b, dims=self.dims)


class Diagonal(torch.nn.Module):
    def __init__(self, offset=0, dim1=0, dim2=1):
        super().__init__()
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2

    def forward(self, x):
        return torch.diagonal(x, self.offset, self.dim1, self.dim2)


CASES += [
    # tensordot: Flatten + MatMul + Reshape at every opset (torch.onnx: an Einsum from 12).
    case("tensordot_dims_list", Tensordot(([1, 2], [0, 1])), [T(2, 3, 4), T(3, 4, 5, seed=1)], opsets=ALL,
         dynamic={0: [0], 1: [2]}),
    case("tensordot_int_dims", Tensordot(2), [T(2, 3, 4), T(3, 4, 5, seed=1)], opsets=(9, 12, 17)),
    case("tensordot_swapped_order", Tensordot(([2, 0], [0, 2])), [T(3, 2, 4), T(4, 5, 3, seed=1)], opsets=(11, 17)),
    case("tensordot_full", Tensordot(([0, 1], [0, 1])), [T(3, 4), T(3, 4, seed=1)], opsets=(11,)),
    case("tensordot_outer", Tensordot(0), [T(2, 3), T(4, seed=1)], opsets=(11,)),
    case("tensordot_int64", Tensordot(1), [T(2, 3, dtype="int64", fill="arange"), T(3, 2, dtype="int64", fill="arange")],
         opsets=(11,)),
    case("tensordot_script", Tensordot(([1], [0])), [T(2, 3), T(3, 5, seed=1)], script=True, opsets=(11, 17)),
    # diagonal: a Gather of flat positions, sizes may be dynamic; every opset (torch.onnx: from 13).
    case("diagonal", Diagonal(), [T(4, 5)], opsets=ALL, dynamic={0: [0, 1]}),
    case("diagonal_offset_last_axes", Diagonal(1, -2, -1), [T(2, 4, 5)], opsets=ALL, dynamic={0: [0, 1, 2]}),
    case("diagonal_negative_offset_swapped", Diagonal(-2, 2, 0), [T(5, 3, 4)], opsets=(9, 13, 17), dynamic={0: [0, 2]}),
    case("diagonal_offset_past_end", Diagonal(7), [T(3, 4)], opsets=(11, 17)),
    case("diagonal_int", Diagonal(0, 1, 2), [T(2, 3, 3, dtype="int64", fill="arange")], opsets=(11,)),
    case("diagonal_script", Diagonal(1, 0, 1), [T(4, 4)], script=True, opsets=(11, 17), dynamic={0: [0, 1]}),
    case("trace_of_batch", lambda x: torch.diagonal(x, 0, -2, -1).sum(-1), [T(2, 4, 4)], opsets=(11, 17)),
]

CASES += [
    case("diag_matrix_and_vector", lambda m, v: torch.diag(m, 1).sum() + torch.diag(v, -1), [T(4, 5), T(3, seed=1)],
         opsets=(9, 11, 17), dynamic={0: [0, 1], 1: [0]}),
    case("diag_embed", lambda v: torch.diag_embed(v), [T(2, 3)], opsets=(9, 11, 17), dynamic={0: [0, 1]}),
    case("diag_embed_offset_inf", lambda v: torch.diag_embed(v, 2),
         [Npy(np.array([[1, np.inf, -np.inf]], dtype=np.float32))], opsets=(11,)),
    case("trace", lambda m: torch.trace(m), [T(4, 3)], opsets=(9, 11, 17), dynamic={0: [0, 1]}),
]
