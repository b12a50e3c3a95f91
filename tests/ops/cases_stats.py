# Torch calls that ended as custom nodes until ops16b: statistics (cov, corrcoef, segment_reduce,
# histogram), products (inner, linalg_vecdot, vander, combinations), diagonals (diagflat,
# diagonal_scatter), argwhere, cumulative_trapezoid and mvlgamma. Traced and scripted, at opsets
# 11 and 17 (lower where the form allows), dynamic axes verified at other sizes.
import numpy as np
import torch

from optest import Fn, Npy, T, case

O = (11, 17)


class CovScripted(torch.nn.Module):
    def forward(self, x, fw, aw):
        return torch.cov(x, correction=0, fweights=fw, aweights=aw), torch.corrcoef(x)


class SegmentScripted(torch.nn.Module):
    def forward(self, d):
        lengths = torch.tensor([2, 0, 3])
        return (torch.segment_reduce(d, "max", lengths=lengths),
                torch.segment_reduce(d, "mean", lengths=lengths, initial=1.5))


class ProductsScripted(torch.nn.Module):
    def forward(self, a, b, v):
        return (torch.inner(a, b), torch.linalg.vecdot(a, b), torch.vander(v, 4, True),
                torch.combinations(v, 3, True))


class DiagScripted(torch.nn.Module):
    def forward(self, x, s, v):
        return torch.diagonal_scatter(x, s, 1, 0, 2), torch.diagflat(v, -1), torch.argwhere(x > 0)


class MiscScripted(torch.nn.Module):
    def forward(self, y, x, p):
        h = torch.histogram(x, bins=4)
        return (torch.cumulative_trapezoid(y, x, dim=-1), torch.cumulative_trapezoid(y, dx=0.5),
                torch.mvlgamma(p, 3), h[0], h[1])


POS = Npy(np.array([[2.5, 3.0, 1.75], [4.0, 6.5, 2.25]], dtype=np.float32))
WEIGHTS_F = Npy(np.array([1, 3, 2, 1, 2], dtype=np.int64))
WEIGHTS_A = Npy(np.array([0.5, 1.0, 2.0, 0.25, 1.5], dtype=np.float32))
HIST_X = Npy(np.array([0.0, 0.25, 1.0, 1.5, 2.0, 3.0, -1.0, 4.0, 2.5], dtype=np.float32))

CASES = [
    case("argwhere", Fn(lambda x: torch.argwhere(x > 0)), [T(3, 4)], opsets=(9, 11, 17), dynamic={0: [0, 1]}),
    case("argwhere_int", Fn(lambda x: torch.argwhere(x)), [Npy(np.array([[0, 2], [-1, 0]], dtype=np.int64))], opsets=O),
    case("cumulative_trapezoid_dx", Fn(lambda y: torch.cumulative_trapezoid(y, dx=0.5, dim=0)), [T(5, 3)],
         opsets=O, dynamic={0: [0, 1]}),
    case("cumulative_trapezoid_default", Fn(lambda y: torch.cumulative_trapezoid(y)), [T(2, 6)], opsets=O, dynamic={0: [1]}),
    case("cumulative_trapezoid_x", Fn(lambda y, x: torch.cumulative_trapezoid(y, x)), [T(2, 5), T(5, seed=1)], opsets=O,
         dynamic={0: [1], 1: [0]}),
    case("vander", Fn(lambda x: torch.vander(x)), [T(4)], opsets=(9, 11, 17), dynamic={0: [0]}),
    case("vander_n_increasing_int", Fn(lambda x: torch.vander(x, N=3, increasing=True)),
         [Npy(np.array([2, -3, 0, 5], dtype=np.int64))], opsets=O),
    case("inner", Fn(lambda a, b: torch.inner(a, b)), [T(2, 3, 4), T(5, 4, seed=1)], opsets=(9, 11, 17),
         dynamic={0: [0, 1], 1: [0]}),
    case("inner_1d_scalar", Fn(lambda a, b: (torch.inner(a, b), torch.inner(a, torch.tensor(2.0)))), [T(4), T(4, seed=1)],
         opsets=O),
    case("linalg_vecdot", Fn(lambda a, b: torch.linalg.vecdot(a, b, dim=1)), [T(2, 4, 3), T(4, 1, seed=1)],
         opsets=(9, 11, 17), dynamic={0: [0]}),
    case("combinations", Fn(lambda v: torch.combinations(v)), [T(5)], opsets=(9, 11, 17), dynamic={0: [0]}),
    case("combinations_r3_replacement", Fn(lambda v: (torch.combinations(v, 3, with_replacement=True),
                                                      torch.combinations(v, 1))), [T(4)], opsets=O, dynamic={0: [0]}),
    case("diagflat", Fn(lambda x: (torch.diagflat(x), torch.diagflat(x, 2))), [T(2, 3)], opsets=(9, 11, 17),
         dynamic={0: [0]}),
    case("diagonal_scatter", Fn(lambda x, s: torch.diagonal_scatter(x, s)), [T(4, 3), T(3, seed=1)], opsets=O),
    case("diagonal_scatter_offset_dims", Fn(lambda x, s: torch.diagonal_scatter(x, s, -1, 2, 0)),
         [T(4, 2, 3), T(2, 2, seed=1)], opsets=O),
    case("cov", Fn(lambda x: torch.cov(x)), [T(3, 6)], opsets=(9, 11, 17), dynamic={0: [1]}),
    case("cov_weights", Fn(lambda x, fw, aw: torch.cov(x, correction=2, fweights=fw, aweights=aw)),
         [T(3, 5), WEIGHTS_F, WEIGHTS_A], opsets=O),
    case("cov_1d_corrcoef", Fn(lambda x, y: (torch.cov(x), torch.corrcoef(y), torch.corrcoef(x))),
         [T(6), T(4, 7, seed=1)], opsets=O, dynamic={1: [1]}),
    case("cov_scripted", CovScripted(), [T(3, 5), WEIGHTS_F, WEIGHTS_A], script=True, opsets=O),
    case("mvlgamma", Fn(lambda x: (torch.mvlgamma(x, 1), torch.mvlgamma(x, 4), torch.special.multigammaln(x, 2))),
         [POS], opsets=(9, 11, 17)),
    case("histogram_bins", Fn(lambda x: torch.histogram(x, bins=5)), [HIST_X], opsets=O),
    case("histogram_range_weight_density",
         Fn(lambda x, w: torch.histogram(x, bins=3, range=(0.0, 3.0), weight=w, density=True)),
         [HIST_X, Npy(np.linspace(0.5, 2.0, 9).astype(np.float32))], opsets=O),
    case("histogram_edges", Fn(lambda x, e: torch.histogram(x, e)),
         [HIST_X, Npy(np.array([-0.5, 0.5, 1.0, 2.5, 3.0], dtype=np.float32))], opsets=O),
    case("histogram_random", Fn(lambda x: torch.histogram(x, bins=7)), [T(4, 50)], opsets=O),
    case("segment_reduce", Fn(lambda d: tuple(torch.segment_reduce(d, r, lengths=torch.tensor([2, 0, 1, 3]))
                                              for r in ("sum", "mean", "max", "min"))), [T(6, 3)], opsets=O),
    case("segment_reduce_offsets_initial",
         Fn(lambda d: torch.segment_reduce(d, "sum", offsets=torch.tensor([0, 3, 3, 5]), initial=2.0)), [T(5)], opsets=O),
    case("segment_scripted", SegmentScripted(), [T(5, 2)], script=True, opsets=O),
    case("products_scripted", ProductsScripted(), [T(3, 4), T(3, 4, seed=1), T(5, seed=2)], script=True, opsets=O,
         dynamic={2: [0]}),
    case("diag_scripted", DiagScripted(), [T(3, 4, 3), T(4, 2, seed=1), T(3, seed=2)], script=True, opsets=O),
    case("misc_scripted", MiscScripted(), [T(2, 9), HIST_X, POS], script=True, opsets=O),
]
