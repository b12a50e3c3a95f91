"""In-place writes into views, as real models make them (swin's attention mask, y[:, i] = v,
x[idx] += 1, fill_/zero_/add_/mul_/masked_fill_/clamp_ on slices): rewritten into functional form
before the example run (core/src/frontend/pass_view_writes.cpp), then slice_scatter/select_scatter."""
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


class LoopWritesRows(torch.nn.Module):
    """A loop body writing into a tensor made outside it: the new value is carried by the loop."""

    def forward(self, x):
        y = torch.zeros_like(x)
        for i in range(x.size(0)):
            y[i] = x[i] * 2
        return y


class LoopAccumulates(torch.nn.Module):
    """In-place on the whole tensor made before the loop (no view): each iteration reads the last."""

    def forward(self, x):
        y = torch.zeros_like(x[0])
        for i in range(x.size(0)):
            y.add_(x[i])
            y.mul_(0.5)
        return y


class LoopSliceWindow(torch.nn.Module):
    """Slices with bounds from the loop counter, written and read in the same iteration."""

    def forward(self, x):
        y = x.clone()
        for i in range(x.size(1) - 2):
            y[:, i + 1:i + 3] += y[:, i:i + 1]
        return y


class NestedLoops(torch.nn.Module):
    def forward(self, x):
        m = torch.zeros_like(x)
        for i in range(x.size(0)):
            for j in range(x.size(1)):
                m[i, j] = x[i, j] * i + j
        return m


class BranchWrites(torch.nn.Module):
    """Both branches of a data-dependent if write into the same tensor, through different views."""

    def forward(self, x):
        y = x.clone()
        if x.sum() > 0:
            y[0] = 5.0
            y[1:, 0] *= 2.0
        else:
            y[:, 1] += 1.0
        return y


class LoopBranchOuterView(torch.nn.Module):
    """A row view made before a loop, written inside an if inside the loop; the base and the view
    are read after it; then the whole tensor is written while the view is alive."""

    def forward(self, x):
        y = torch.zeros_like(x)
        row = y[0]
        for i in range(x.size(0)):
            y[i] = x[i] * 2
            if i > 1:
                y[i, 0] += 1
            else:
                row[i + 1] -= 3
        y.add_(1)
        return y, row * 1


class BaseWriteReadThroughView(torch.nn.Module):
    """The base is written in place while a view made before is read after the write."""

    def forward(self, x):
        y = x.clone()
        row = y[0]
        col = y[:, -1]
        y.mul_(2)
        y.clamp_(max=1.0)
        return row + 0, col * 1


class MaskedWrites(torch.nn.Module):
    """y[mask] = v on the tensor and on a slice of it (index_put with a bool mask)."""

    def forward(self, x):
        y = x.clone()
        y[y > 0.5] = 0.0
        y[:, 1:][x[:, 1:] < -1] = 9.0
        return y


class EllipsisWrites(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y[..., 0] = y[..., 0] * 2
        y[..., -1] += 1
        return y


class FlatViewIndexWrite(torch.nn.Module):
    """index_put through a flat view of the tensor."""

    def forward(self, x):
        y = x.clone()
        y.view(-1)[torch.tensor([0, 3, 5])] = 7.0
        return y


class EmptyThenFill(torch.nn.Module):
    """torch.empty filled by slices (a hand-written cat)."""

    def forward(self, x):
        n, c = x.shape
        out = torch.empty(n, 2 * c)
        out[:, :c] = x
        out[:, c:] = x * 2
        return out


class StepAndListWrites(torch.nn.Module):
    def forward(self, x):
        y = x.clone()
        y[1::2] = 0.0
        y[:, ::3] *= -1
        y[[0, 2]] += 1.0
        y[:, [1, 3]] += x[:, [0, 2]]
        return y


class CopyIntoSlices(torch.nn.Module):
    def forward(self, x, z):
        y = x.clone()
        y[1:3].copy_(z)
        y[0].copy_(z[0])
        return y


class IntWrites(torch.nn.Module):
    """Writes into an int64 tensor: a float value is truncated as copy_ does; //= on a column."""

    def forward(self, x):
        y = (x * 10).long()
        y[0] = 3
        y[:, 1] //= 2
        y[1:, 2] -= y[:-1, 3]
        return y


class BufferRowWrite(torch.nn.Module):
    """A write into a row of a registered buffer, read in the same call."""

    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(4, 4))

    def forward(self, x):
        self.buf[0] = x[0]
        return self.buf * x


class WriteThroughDiagonal(torch.nn.Module):
    """A write through the diagonals of a batch of matrices: written back with diagonal_scatter
    (it was refused, inplace-view-write)."""

    def forward(self, x):
        y = x.clone()
        y.diagonal(0, 1, 2).fill_(0.0)
        return y


class WriteThroughAsStrided(torch.nn.Module):
    """A write through as_strided (any memory layout): no functional form in ONNX; refused."""

    def forward(self, x):
        y = x.clone()
        y.as_strided((2, 2), (4, 1)).fill_(1.0)
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
    case("view_write_loop_rows", LoopWritesRows(), [T(3, 4)], script=True, opsets=(11, 13, 17), dynamic={0: [0, 1]}),
    case("view_write_loop_accumulate", LoopAccumulates(), [T(3, 4)], script=True, opsets=(11, 17),
         dynamic={0: [0, 1]}),
    case("view_write_loop_slice_window", LoopSliceWindow(), [T(3, 6)], script=True, opsets=(11, 13, 17),
         dynamic={0: [0, 1]}),
    case("view_write_nested_loops", NestedLoops(), [T(3, 4)], script=True, opsets=(11, 17), dynamic={0: [0, 1]}),
    case("view_write_branches", BranchWrites(), [T(3, 4)], script=True, opsets=(11, 17), dynamic={0: [0]}),
    case("view_write_loop_branch_outer_view", LoopBranchOuterView(), [T(4, 5)], script=True, opsets=(11, 17),
         dynamic={0: [0]}),
    case("view_write_base_read_through_view", BaseWriteReadThroughView(), [T(3, 4)], opsets=(9, 11, 17),
         dynamic={0: [0, 1]}),
    case("view_write_base_read_through_view_scripted", BaseWriteReadThroughView(), [T(3, 4)], script=True,
         opsets=(11, 17), dynamic={0: [0, 1]}),
    case("view_write_masked", MaskedWrites(), [T(4, 5)], opsets=(9, 11, 17), dynamic={0: [0, 1]}),
    case("view_write_ellipsis", EllipsisWrites(), [T(2, 3, 4)], opsets=(9, 11, 17), dynamic={0: [0, 1, 2]}),
    case("view_write_flat_view_index", FlatViewIndexWrite(), [T(3, 4)], opsets=(11, 17), dynamic={0: [0]}),
    case("view_write_empty_then_fill", EmptyThenFill(), [T(3, 4)], opsets=(11, 17), dynamic={0: [0, 1]}),
    case("view_write_step_and_list", StepAndListWrites(), [T(6, 7)], opsets=(11, 13, 17), dynamic={0: [1]}),
    case("view_write_copy_into_slices", CopyIntoSlices(), [T(4, 5), T(2, 5, seed=1)], opsets=(9, 11, 17),
         dynamic={0: [1], 1: [1]}),
    case("view_write_int", IntWrites(), [T(4, 5)], opsets=(9, 11, 17), dynamic={0: [0, 1]}),
    case("view_write_buffer_row", BufferRowWrite(), [T(4, 4)], opsets=(11, 17)),
    case("view_write_batched_diagonal", WriteThroughDiagonal(), [T(2, 3, 3)], opsets=(11, 17), dynamic={0: [0]}),
    case("view_write_as_strided_refused", WriteThroughAsStrided(), [T(3, 4)], opsets=(11,),
         expect="error:inplace-view-write"),
]


class InplaceCompareKeepsDtype(torch.nn.Module):
    """YOLACT's `masks.gt_(0.5)`: an in-place comparison keeps the tensor's float dtype (0./1.), where
    the out-of-place op makes bool; on a whole tensor, on a slice of one, and a logical op on ints.
    (TorchScript's RemoveTensorMutation rewrote gt_ to gt: a bool output, 'dtype mismatch'.)"""

    def forward(self, x):
        m = x * 2
        m.gt_(0.5)
        y = x.clone()
        y[:, 1:].le_(0.0)
        k = (x > 0.5).long() * 3  # not (x * 10).long(): ONNX Runtime fuses Cast(float->int64) + Cast(->bool)
        k.logical_and_(x < 1.0)
        return m, y, k


CASES += [
    case("view_write_inplace_compare_dtype", InplaceCompareKeepsDtype(), [T(3, 4)], opsets=(9, 11, 17),
         dynamic={0: [0, 1]}),
    case("view_write_inplace_compare_dtype_scripted", InplaceCompareKeepsDtype(), [T(3, 4)], script=True,
         opsets=(11, 17), dynamic={0: [0, 1]}),
]


class ListPieceWrites(torch.nn.Module):
    """Pieces of unbind/chunk/split written in place, the tensor and a sibling piece read after
    (YOLO-style `xy, wh = y.chunk(2, 1); xy.sigmoid_()`): each piece aliases its tensor. The write was
    dropped: the file returned y unchanged."""

    def forward(self, x):
        y = x.clone()
        a, b = y.unbind(1)[:2]
        a.mul_(2.0)
        b.add_(a)  # reads the written sibling
        z = x.clone()
        xy, wh = z.chunk(2, 0)  # uneven: ceil(n / 2) rows, then the rest
        xy.sigmoid_()
        wh.exp_()
        w = x.clone()
        p, q, r = w.split([1, 2, 1], dim=1)
        p.zero_()
        r.fill_(3.0)
        return y, z, w, q + 0.0


class WriteThenOtherView(torch.nn.Module):
    """A write through one view of y, then a write through another view of y, then the first view
    read: it sees both (it read the first write's scattered value, without the second)."""

    def forward(self, x):
        y = x.clone()
        rows = y[1:]
        cols = y[:, 1:]
        rows[:, 0] = -1.0
        cols.mul_(2.0)
        r = y[0]
        r.add_(1.0)
        y.mul_(3.0)  # r is a view of y: tripled too
        return rows + 0.0, y.t()[0] + 0.0, r + 0.0


class NarrowFromSize(torch.nn.Module):
    """narrow(...).copy_(src) at a start computed from the sizes (the converter wanted a constant)."""

    def forward(self, x, src):
        y = x.clone()
        y.narrow(1, x.size(1) - src.size(1), src.size(1)).copy_(src)
        return y


CASES += [
    case("view_write_list_pieces", ListPieceWrites(), [T(5, 4)], opsets=(11, 13, 17), dynamic={0: [0]}),
    case("view_write_list_pieces_scripted", ListPieceWrites(), [T(5, 4)], script=True, opsets=(11, 17),
         dynamic={0: [0]}),
    case("view_write_then_other_view", WriteThenOtherView(), [T(3, 4)], opsets=(9, 11, 17), dynamic={0: [0, 1]}),
    case("view_write_then_other_view_scripted", WriteThenOtherView(), [T(3, 4)], script=True, opsets=(11, 17),
         dynamic={0: [0, 1]}),
    case("view_write_narrow_from_size", NarrowFromSize(), [T(3, 6), T(3, 2, seed=1)], opsets=(11, 17),
         dynamic={0: [0, 1], 1: [0, 1]}),
    case("view_write_narrow_from_size_scripted", NarrowFromSize(), [T(3, 6), T(3, 2, seed=1)], script=True,
         opsets=(11, 17), dynamic={0: [0, 1], 1: [0, 1]}),
]


class MatrixDiagonalWrites(torch.nn.Module):
    """Writes through a matrix's diagonals (cov.diagonal().add_(eps), fill_diagonal_, offsets, the
    transposed form), wide and tall: diagonal_scatter. They were refused (inplace-view-write), and
    fill_diagonal_ was kept as an ATen node (unverified)."""

    def forward(self, x):
        y = x.clone()
        y.diagonal().add_(10.0)
        y.diagonal(1).mul_(-2.0)
        y.diagonal(-1).fill_(7.0)
        y.diagonal(1, 1, 0).sub_(100.0)  # the transposed matrix's first superdiagonal: x[i + 1, i]
        t = x.t().clone()
        t.fill_diagonal_(-5.0)
        return y, t


CASES += [
    case("view_write_matrix_diagonals", MatrixDiagonalWrites(), [T(3, 5)], opsets=(11, 13, 17),
         dynamic={0: [0, 1]}),
    case("view_write_matrix_diagonals_tall", MatrixDiagonalWrites(), [T(5, 3)], opsets=(11, 17),
         dynamic={0: [0, 1]}),
    case("view_write_matrix_diagonals_scripted", MatrixDiagonalWrites(), [T(4, 4)], script=True, opsets=(11, 17),
         dynamic={0: [0, 1]}),
]
