"""Accumulating scatters below opset 16 (scatter_add, index_add, index_put accumulate=True), where
ONNX has no reduction="add": exact forms with REPEATED indices, the case a plain ScatterElements
(torch.onnx's opset-11 form) gets wrong. Message passing in graph networks is the main user."""
import numpy as np
import torch

from optest import Npy, T, case

I64 = np.int64
OPSETS = (11, 13, 16, 17)


class GraphScatterAdd(torch.nn.Module):
    """Message passing: messages gathered at edge sources, summed at edge targets (scatter_add_)."""

    def forward(self, x, src, dst):
        msg = x.index_select(0, src) * 0.5
        return torch.zeros_like(x).scatter_add_(0, dst.view(-1, 1).expand_as(msg), msg)


class GraphIndexAdd(torch.nn.Module):
    def forward(self, x, src, dst):
        return torch.zeros_like(x).index_add_(0, dst, x[src], alpha=-1.5)


class PutAccumulate(torch.nn.Module):
    def forward(self, x, i, v):
        y = x.clone()
        y.index_put_((i,), v, accumulate=True)
        return y


class PutAccumulate2(torch.nn.Module):
    def forward(self, x, i, j, v):
        return torch.index_put(x, (i, j), v, accumulate=True)


class SetItemAdd(torch.nn.Module):
    """y[i] += v: PyTorch reads y[i], adds, writes back (index_put_ without accumulate)."""

    def forward(self, x, i, v):
        y = x.clone()
        y[i] += v
        return y


class SetItemAssign(torch.nn.Module):
    """y[i] = 1.0 then a read of y: the write must reach every later reader."""

    def forward(self, x, i):
        y = x * 2
        y[i] = 1.0
        return y + x


EDGES_SRC = Npy(np.array([0, 1, 2, 3, 1, 0, 2], dtype=I64))
EDGES_DST = Npy(np.array([1, 1, 0, 3, 1, 2, 0], dtype=I64))

CASES = [
    # scatter_add, any index: the Loop form (index with repeats down each column).
    case("scatter_add_repeated", lambda x, i, s: x.scatter_add(0, i, s),
         [T(3, 4), Npy(np.array([[0, 1, 2, 2], [0, 1, 2, 0], [0, 2, 2, 0]], dtype=I64)), T(3, 4, seed=1)], opsets=OPSETS),
    case("scatter_add_dim1_src_larger", lambda x, i, s: x.scatter_add(1, i, s),
         [T(2, 5), Npy(np.array([[4, 4, 0], [1, 1, 1]], dtype=I64)), T(3, 4, seed=1)], opsets=OPSETS),
    case("scatter_add_repeated_int64", lambda x, i, s: x.scatter_add(0, i, s),
         [T(3, 2, dtype="int64"), Npy(np.array([[1, 1], [1, 0], [1, 0]], dtype=I64)), T(3, 2, dtype="int64", fill="arange")],
         opsets=OPSETS),
    case("scatter_reduce_arg_add_repeated", lambda x, i, s: x.scatter(1, i, s, reduce="add"),
         [T(2, 4), Npy(np.array([[0, 0], [2, 2]], dtype=I64)), T(2, 2)], opsets=OPSETS),
    case("scatter_add_needs_opset11", lambda x, i, s: x.scatter_add(0, i, s),
         [T(3, 2), Npy(np.array([[0, 1], [0, 1]], dtype=I64)), T(2, 2)], opsets=(10,), expect="error:opset-too-old",
         operator_export_type="ONNX"),
    # scatter_add of a 1-D index expanded over the features: the one-hot MatMul form, every opset.
    case("scatter_add_graph", GraphScatterAdd(), [T(4, 3), EDGES_SRC, EDGES_DST], opsets=(9,) + OPSETS,
         dynamic={0: [0, 1]}),
    case("scatter_add_graph_int64", lambda x, d, m: x.scatter_add(0, d.unsqueeze(1).expand(-1, 2), m),
         [T(4, 2, dtype="int64"), EDGES_DST, T(7, 2, dtype="int64", fill="arange")], opsets=OPSETS),
    # index_add: the one-hot MatMul form, every opset; alpha, float and int64, dim 1.
    case("index_add_graph", GraphIndexAdd(), [T(4, 3), EDGES_SRC, EDGES_DST], opsets=(9,) + OPSETS,
         dynamic={0: [0, 1]}),
    case("index_add_dim1_repeated", lambda x, i, s: x.index_add(1, i, s, alpha=3),
         [T(2, 3, 2), Npy(np.array([2, 2, 0, 2], dtype=I64)), T(2, 4, 2, seed=1)], opsets=OPSETS),
    case("index_add_int64", lambda x, i, s: x.index_add(0, i, s),
         [T(3, dtype="int64"), Npy(np.array([1, 1, 1, 0], dtype=I64)), T(4, dtype="int64", fill="arange")],
         opsets=OPSETS),
    # index_put accumulate: one index tensor (negative and repeated), two, scripted, int64.
    case("index_put_accumulate_repeated", PutAccumulate(),
         [T(4, 3), Npy(np.array([1, -3, 3, -1, 1], dtype=I64)), T(5, 3, seed=1)], opsets=OPSETS, dynamic={0: [1], 2: [1]}),
    case("index_put_accumulate_repeated_scripted", PutAccumulate(),
         [T(4, 3), Npy(np.array([1, -3, 3, -1, 1], dtype=I64)), T(3, seed=1)], opsets=OPSETS, script=True),
    case("index_put_accumulate_two_indices", PutAccumulate2(),
         [T(3, 4, 2), Npy(np.array([0, 2, 0, -3], dtype=I64)), Npy(np.array([1, 3, 1, 1], dtype=I64)), T(4, 2, seed=1)],
         opsets=OPSETS),
    case("index_put_accumulate_int64", PutAccumulate(),
         [T(4, dtype="int64"), Npy(np.array([2, 2, 0], dtype=I64)), T(3, dtype="int64", fill="arange")], opsets=OPSETS),
    # y[i] += v is index + add + index_put_ WITHOUT accumulate in PyTorch (distinct indices here:
    # with repeats PyTorch itself keeps one write); it must export at the default opset too.
    case("setitem_add_rows", SetItemAdd(), [T(4, 3), Npy(np.array([3, 0], dtype=I64)), T(2, 3, seed=1)], opsets=OPSETS),
    # Scripted, libtorch's RemoveTensorMutation leaves index_put_ on the clone in place: the driver
    # points the clone's later readers (here the output) at the write's result.
    case("setitem_add_rows_scripted", SetItemAdd(), [T(4, 3), Npy(np.array([3, 0], dtype=I64)), T(2, 3, seed=1)],
         script=True, opsets=OPSETS),
    case("setitem_assign_rows_scripted", SetItemAssign(), [T(5, 3), Npy(np.array([4, 1, 2], dtype=I64))],
         script=True, opsets=OPSETS),
]
