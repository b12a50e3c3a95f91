"""In-place writes into views, as real models make them (swin's attention mask, y[:, i] = v,
x[idx] += 1, fill_/zero_/add_/mul_/masked_fill_/clamp_ on slices): rewritten into functional form
before the example run (core/src/torch/pass_view_writes.cpp), then slice_scatter/select_scatter."""
import numpy as np
import torch

from optest import Npy, T, case

I64 = np.int64


class RegionMask(torch.nn.Module):
    """swin_t's shifted-window mask: regions of a zeros tensor numbered in a loop."""

    def forward(self, x):
        mask = x.new_zeros((8, 8))
        count = 0
        for h in ((0, -4), (-4, -2), (-2, None)):
            for w in ((0, -4), (-4, -2), (-2, None)):
                mask[h[0]:h[1], w[0]:w[1]] = count
                count += 1
        return x + mask


class InplaceOnSlices(torch.nn.Module):
    def forward(self, x, m):
        y = x.clone()
        y[:, :2].fill_(3.0)
        y[1].zero_()
        y[:, 2:4].add_(10)
        y.narrow(1, 4, 2).mul_(-2)
        y[2:, 1:].masked_fill_(m[2:, 1:], -1.0)
        y[:, -1].clamp_(min=0.0)
        return y


class ViewOfSlice(torch.nn.Module):
    def forward(self, x, v):
        y = x.clone()
        y[:2].view(-1)[1:5] = v  # a view of a contiguous slice
        y[1:3][:, 2:4] = 0.5  # chained slices
        y.t()[0] = 7.0  # through a transpose
        y.unsqueeze(0)[0, 3, 1] = -3.0  # through an unsqueeze
        return y


class AliasReadAfter(torch.nn.Module):
    """A view taken before the write, read after it: it must see the write."""

    def forward(self, x):
        y = x * 1.0
        row = y[0]
        col = y[:, 1]
        y[0, 1] = 100.0
        return row + 1, col * 2, y


class IndexAccumulate(torch.nn.Module):
    def forward(self, x, idx):
        y = x.clone()
        y[1:][idx] += 1
        y[:, 0][idx] = -5.0
        return y


class ScriptedWrites(torch.nn.Module):
    def forward(self, x, v):
        y = x.clone()
        y[:, 1] = v
        y[0, :2] = 0.0
        y[2:, 2:] += 1.0
        return y


class LoopWritesOuter(torch.nn.Module):
    """A loop body writing into a tensor made outside it: the new value would have to be carried
    through the loop, which the rewrite does not do yet: refused, naming the write."""

    def forward(self, x):
        y = torch.zeros_like(x)
        for i in range(x.size(0)):
            y[i] = x[i] * 2
        return y


BOOL_MASK = Npy(np.random.RandomState(7).rand(4, 6) > 0.5)

CASES = [
    case("view_write_region_mask", RegionMask(), [T(2, 8, 8)], opsets=(9, 11, 17), dynamic={0: [0]}),
    case("view_write_inplace_ops", InplaceOnSlices(), [T(4, 6), BOOL_MASK], opsets=(9, 11, 17)),
    case("view_write_view_of_slice", ViewOfSlice(), [T(4, 5), T(4, seed=1)], opsets=(11, 17)),
    case("view_write_alias_read_after", AliasReadAfter(), [T(3, 4)], opsets=(11, 17), dynamic={0: [1]}),
    case("view_write_index_accumulate", IndexAccumulate(), [T(5, 3), Npy(np.array([0, 2], dtype=I64))],
         opsets=(11, 17)),
    case("view_write_scripted", ScriptedWrites(), [T(4, 5), T(4, seed=1)], script=True, opsets=(11, 17),
         dynamic={0: [0], 1: [0]}),
    case("view_write_loop_outer_refused", LoopWritesOuter(), [T(3, 4)], script=True, opsets=(11,),
         expect="error:inplace-view-write"),
]
