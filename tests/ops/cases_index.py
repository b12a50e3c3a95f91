"""Indexing: gather/scatter, index_*, masked_*, advanced indexing, nonzero, embeddings, unique."""
import numpy as np
import torch
import torch.nn.functional as F

from optest import Npy, T, case

ALL = (9, 10, 11, 13, 16, 17)
I64 = np.int64


def _setitem_mask_scalar(x):
    y = x.clone()
    y[y > 0] = 2.0
    return y


def _setitem_mask_rows(x, m):
    y = x.clone()
    y[m] = -1.0
    return y


def _setitem_mask_accumulate(x):
    return x.index_put((x > 0,), torch.tensor(10.0), accumulate=True)


# y[:, i] = v traces as an in-place index_put_ on a slice view of y, which the frontend does not
# carry back to y (an open frontend issue); these call the op with its None-holding index list.
def _setitem_index_middle(x, i):
    return torch.ops.aten.index_put(x, [None, i], torch.tensor(5.0))


def _setitem_index_values(x, i, v):
    y = x.clone()
    y[i] = v
    return y


def _setitem_two_indices(x, i, j, v):
    return torch.ops.aten.index_put(x, [None, i, j], v)


def _setitem_separated(x, i, j, v):
    return torch.ops.aten.index_put(x, [i, None, j], v)


def _setitem_accumulate(x, i):
    return x.index_put((i,), torch.ones(2, 4), accumulate=True)


def _setitem_mask_tensor_values(x, m, v):
    y = x.clone()
    y[m] = v
    return y


class UniqueAll(torch.nn.Module):
    def forward(self, x):
        out, inverse, counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
        return out, inverse, counts


class UniqueDim(torch.nn.Module):
    def forward(self, x):
        out, inverse, counts = torch.unique(x, dim=0, return_inverse=True, return_counts=True)
        return out, inverse, counts


IDX_ROWS = Npy(np.array([[0, 2, 1], [1, 0, 0]], dtype=I64))

CASES = [
    # gather / scatter
    case("gather", lambda x, i: torch.gather(x, 1, i), [T(2, 3), IDX_ROWS], opsets=(11, 13, 17),
         expect="ok"),
    case("gather_negative_dim_smaller_index", lambda x, i: torch.gather(x, -1, i),
         [T(3, 4), Npy(np.array([[3, 0], [1, 1]], dtype=I64))]),
    case("gather_int", lambda x, i: torch.gather(x, 0, i), [T(3, 2, dtype="int64"), Npy(np.array([[2, 0]], dtype=I64))]),
    case("gather_opset9", lambda x, i: torch.gather(x, 1, i), [T(2, 3), IDX_ROWS], opsets=(9,),
         expect="error:opset-too-old", operator_export_type="ONNX"),
    case("scatter_src", lambda x, i, s: x.scatter(1, i, s), [T(2, 4), Npy(np.array([[0, 3], [2, 1]], dtype=I64)), T(2, 2)],
         opsets=ALL),
    case("scatter_src_larger", lambda x, i, s: x.scatter(0, i, s), [T(3, 4), Npy(np.array([[2, 0, 1]], dtype=I64)), T(2, 5)],
         opsets=(10, 11, 13)),
    case("scatter_value", lambda x, i: x.scatter(-1, i, 7.5), [T(2, 4), Npy(np.array([[0], [3]], dtype=I64))], opsets=ALL),
    case("scatter_reduce_add", lambda x, i, s: x.scatter(1, i, s, reduce="add"),
         [T(2, 4), Npy(np.array([[0, 0], [2, 2]], dtype=I64)), T(2, 2)], opsets=(11, 16, 17)),
    case("scatter_reduce_multiply", lambda x, i: x.scatter(1, i, 3.0, reduce="multiply"),
         [T(2, 4), Npy(np.array([[0, 0], [2, 1]], dtype=I64))], opsets=(16, 17)),
    case("scatter_add", lambda x, i, s: x.scatter_add(0, i, s), [T(3, 2), Npy(np.array([[0, 1], [0, 1], [2, 0]], dtype=I64)),
                                                                  T(3, 2)], opsets=(11, 16, 17)),
    case("scatter_int", lambda x, i: x.scatter(0, i, 9), [T(3, 2, dtype="int64"), Npy(np.array([[2, 0]], dtype=I64))]),
    # index_select / take / index_fill / index_copy / index_add
    case("index_select", lambda x, i: x.index_select(1, i), [T(2, 5), Npy(np.array([4, 0, 0], dtype=I64))], opsets=ALL,
         dynamic={0: [0]}),
    case("index_select_negative_dim", lambda x, i: torch.index_select(x, -1, i), [T(2, 3, 4), Npy(np.array([3, 1], dtype=I64))]),
    case("index_select_bool_data", lambda x, i: x.index_select(0, i), [T(4, 2, dtype="bool"), Npy(np.array([3, 1], dtype=I64))]),
    case("take", lambda x, i: x.take(i), [T(3, 4), Npy(np.array([[0, 11], [5, -1]], dtype=I64))], opsets=ALL),
    case("index_fill", lambda x, i: x.index_fill(1, i, -2.0), [T(2, 5), Npy(np.array([0, 3, -1], dtype=I64))], opsets=ALL,
         dynamic={0: [0, 1]}),
    case("index_fill_int", lambda x, i: x.index_fill(0, i, 7), [T(3, 2, dtype="int64"), Npy(np.array([2], dtype=I64))]),
    case("index_copy", lambda x, i, s: x.index_copy(1, i, s), [T(2, 5), Npy(np.array([4, 0], dtype=I64)), T(2, 2)],
         opsets=(9, 11, 13, 17)),
    case("index_add", lambda x, i, s: x.index_add(0, i, s, alpha=2.0),
         [T(4, 3), Npy(np.array([1, 1, 3], dtype=I64)), T(3, 3)], opsets=(9, 11, 16, 17)),
    # masks
    case("masked_fill", lambda x: x.masked_fill(x > 0, 0.5), [T(2, 3, 4)], opsets=ALL, dynamic={0: [0]}),
    case("masked_fill_broadcast_mask", lambda x, m: x.masked_fill(m, -1.0),
         [T(2, 3), Npy(np.array([True, False, True]))], opsets=ALL),
    case("masked_fill_tensor_value", lambda x: x.masked_fill(x < 0, x.max()), [T(2, 3)]),
    case("masked_fill_int", lambda x: x.masked_fill(x > 2, -1), [T(2, 3, dtype="int64")]),
    case("masked_select", lambda x: x.masked_select(x > 0), [T(3, 4)], opsets=ALL, dynamic={0: [0]}),
    case("masked_select_broadcast", lambda x, m: torch.masked_select(x, m), [T(2, 3), Npy(np.array([False, True, True]))]),
    case("masked_scatter", lambda x, s: x.masked_scatter(x > 0, s), [T(3, 4), T(20)], opsets=(11, 13, 17)),
    case("masked_scatter_broadcast", lambda x, m, s: x.masked_scatter(m, s),
         [T(2, 3), Npy(np.array([True, False, True])), T(2, 3)]),
    case("nonzero", lambda x: torch.nonzero(x > 0), [T(3, 4)], opsets=ALL, dynamic={0: [0, 1]}),
    case("nonzero_int", lambda x: torch.nonzero(x), [Npy(np.array([[0, 3], [2, 0]], dtype=I64))]),
    case("nonzero_numpy", lambda x: torch.nonzero(x > 0, as_tuple=True), [T(3, 4)], opsets=ALL),
    case("nonzero_empty", lambda x: torch.nonzero(x > 100), [T(3, 4)]),
    # torch.where(cond) with one argument, as torchvision's box filtering writes it.
    case("where_one_argument", lambda x: torch.where(x > 0), [T(3, 4)], opsets=(9, 11, 17), dynamic={0: [0, 1]}),
    case("where_one_argument_gather", lambda x, s: s[torch.where(s > 0.2)[0]] * 2, [T(3, 4), T(6, fill="rand")],
         opsets=(11, 17), dynamic={1: [0]}),
    # advanced indexing
    case("index_tensor", lambda x, i: x[i], [T(4, 3), Npy(np.array([3, 0, -1], dtype=I64))], opsets=ALL, dynamic={0: [1]}),
    case("index_tensor_2d", lambda x, i: x[:, i], [T(2, 5, 3), Npy(np.array([[0, 4], [-2, 1]], dtype=I64))], opsets=ALL),
    case("index_two_tensors", lambda x, i, j: x[i, j], [T(4, 5), Npy(np.array([0, 3], dtype=I64)),
                                                        Npy(np.array([[1], [4]], dtype=I64))], opsets=(11, 13, 17)),
    case("index_two_adjacent_middle", lambda x, i, j: x[:, i, j], [T(2, 4, 5, 3), Npy(np.array([0, 3, 1], dtype=I64)),
                                                                   Npy(np.array([4, -1, 0], dtype=I64))], opsets=(11, 13)),
    case("index_separated", lambda x, i, j: x[i, :, j], [T(4, 2, 5), Npy(np.array([0, 3, 1], dtype=I64)),
                                                         Npy(np.array([4, 2, 0], dtype=I64))], opsets=(11, 13)),
    case("index_two_opset10", lambda x, i, j: x[i, j], [T(4, 5), Npy(np.array([0], dtype=I64)), Npy(np.array([1], dtype=I64))],
         opsets=(10,), expect="error:opset-too-old", operator_export_type="ONNX"),
    case("index_mask", lambda x: x[x > 0], [T(3, 4)], opsets=(11, 13, 17), dynamic={0: [0]}),
    case("index_mask_rows", lambda x, m: x[m], [T(4, 3), Npy(np.array([True, False, True, True]))], opsets=ALL),
    case("index_mask_middle", lambda x, m: x[:, m], [T(2, 4, 3), Npy(np.array([True, False, True, True]))], opsets=ALL),
    case("index_put_mask_scalar", _setitem_mask_scalar, [T(3, 4)], opsets=ALL, dynamic={0: [0]}),
    case("index_put_mask_rows", _setitem_mask_rows, [T(4, 3), Npy(np.array([True, False, False, True]))], opsets=ALL),
    case("index_put_mask_accumulate", _setitem_mask_accumulate, [T(3, 4)], opsets=ALL),
    case("index_put_mask_tensor_values", _setitem_mask_tensor_values,
         [T(4, 3), Npy(np.array([True, False, False, True])), T(2, 3)], opsets=(11, 13)),
    case("index_put_index_middle", _setitem_index_middle, [T(3, 4), Npy(np.array([0, -1], dtype=I64))],
         opsets=(11, 13, 17)),
    case("index_put_values", _setitem_index_values, [T(4, 3), Npy(np.array([2, 0], dtype=I64)), T(2, 3)],
         opsets=(11, 13, 17), dynamic={0: [0]}),
    case("index_put_broadcast_values", _setitem_index_values, [T(4, 3), Npy(np.array([2, 0], dtype=I64)), T(3)]),
    case("index_put_two_indices", _setitem_two_indices, [T(2, 4, 5), Npy(np.array([0, 3], dtype=I64)),
                                                         Npy(np.array([4, 1], dtype=I64)), T(2, 2)], opsets=(11, 13)),
    case("index_put_separated", _setitem_separated, [T(4, 2, 5), Npy(np.array([0, 3], dtype=I64)),
                                                     Npy(np.array([4, -1], dtype=I64)), T(2, 1)], opsets=(11, 13)),
    case("index_put_accumulate", _setitem_accumulate, [T(3, 4), Npy(np.array([1, 1], dtype=I64))], opsets=(11, 16, 17)),
    # one_hot / embedding / embedding_bag
    case("one_hot", lambda i: F.one_hot(i, 5), [Npy(np.array([[0, 4], [2, 2]], dtype=I64))], opsets=ALL),
    case("one_hot_inferred", lambda i: F.one_hot(i), [Npy(np.array([0, 3, 1], dtype=I64))], opsets=(11, 13)),
    # The class count read from another input's size (a pointer network's mask over its N inputs),
    # traced as aten::size: OneHot's depth from the graph, with or without dynamic axes.
    case("one_hot_size_classes", lambda x, i: F.one_hot(i, x.shape[1]).float() + x.sum(-1)[:, None],
         [T(2, 6, 3), Npy(np.array([[0, 5, 2, 1, 1, 3], [4, 4, 0, 2, 5, 1]], dtype=I64))], opsets=ALL),
    case("one_hot_size_classes_dyn", lambda x, i: F.one_hot(i, x.shape[1]).float() + x.sum(-1)[:, None],
         [T(2, 6, 3), Npy(np.array([[0, 5, 2, 1, 1, 3], [4, 4, 0, 2, 5, 1]], dtype=I64))], dynamic={0: [0], 1: [0]}),
    case("embedding", torch.nn.Embedding(10, 4, padding_idx=0), [Npy(np.array([[0, 9, 3], [3, 3, 1]], dtype=I64))],
         opsets=ALL),
    case("embedding_bag_sum_offsets", torch.nn.EmbeddingBag(10, 3, mode="sum"),
         [Npy(np.array([1, 2, 4, 5, 4, 3, 2, 9], dtype=I64)), Npy(np.array([0, 4, 4], dtype=I64))], opsets=ALL),
    case("embedding_bag_mean_offsets", torch.nn.EmbeddingBag(10, 3, mode="mean"),
         [Npy(np.array([1, 2, 4, 5, 4, 3, 2, 9], dtype=I64)), Npy(np.array([0, 3, 3], dtype=I64))], opsets=(11, 13)),
    case("embedding_bag_max_offsets", torch.nn.EmbeddingBag(10, 3, mode="max"),
         [Npy(np.array([1, 2, 4, 5, 4, 3, 2, 9], dtype=I64)), Npy(np.array([0, 2, 2, 5], dtype=I64))], opsets=(11, 13)),
    case("embedding_bag_2d_mean", torch.nn.EmbeddingBag(10, 3, mode="mean"),
         [Npy(np.array([[1, 2, 4], [5, 4, 3]], dtype=I64))], opsets=(11, 13)),
    case("embedding_bag_2d_max", torch.nn.EmbeddingBag(10, 3, mode="max"),
         [Npy(np.array([[1, 2, 4], [5, 4, 3]], dtype=I64))], opsets=(11, 13)),
    case("embedding_bag_weights_last_offset", torch.nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True),
         [Npy(np.array([1, 2, 4, 5, 4, 3], dtype=I64)), Npy(np.array([0, 2, 6], dtype=I64))],
         kwargs={"per_sample_weights": Npy(np.array([1.0, 0.5, 2.0, -1.0, 0.0, 3.0], dtype=np.float32))}),
    case("embedding_bag_padding_idx", torch.nn.EmbeddingBag(10, 3, mode="mean", padding_idx=2),
         [Npy(np.array([1, 2, 4, 2, 4, 3], dtype=I64)), Npy(np.array([0, 2, 3], dtype=I64))]),
    # unique
    case("unique", UniqueAll(), [Npy(np.array([[3, 1, 3], [2, 1, 7]], dtype=I64))], script=False, opsets=(11, 13, 17)),
    case("unique_float", lambda x: torch.unique(x), [Npy(np.array([2.5, -1.0, 2.5, 0.0], dtype=np.float32))]),
    case("unique_dim", UniqueDim(), [Npy(np.array([[1, 2], [0, 5], [1, 2]], dtype=I64))], opsets=(11, 13)),
    case("unique_opset10", lambda x: torch.unique(x), [Npy(np.array([2, 1, 2], dtype=I64))], opsets=(10,),
         expect="error:opset-too-old", operator_export_type="ONNX"),
]

# Found by tests/property/test_op_properties: ONNX Runtime has no Where kernel for bool values.
CASES += [
    case("masked_fill_bool_self", lambda b, m: b.masked_fill(m, 1), [T(3, 4, dtype="bool"), T(4, dtype="bool")],
         opsets=(9, 11, 17)),
]


class ViewWrite(torch.nn.Module):
    def forward(self, x, v):
        y = x.clone()
        y[:, 1] = v
        return y


class ViewWriteIndexed(torch.nn.Module):
    def forward(self, x, i, v):
        y = x.clone()
        y[:, i] = v
        return y


# y[:, i] = v traces as copy_/index_put_ on a view of y: rewritten into select_scatter /
# slice_scatter of the functional op (cases_view_writes.py has the rest of the family).
CASES += [
    case("inplace_view_write", ViewWrite(), [T(2, 3), T(2)], opsets=(9, 11, 17), dynamic={0: [0], 1: [0]}),
    case("inplace_view_index_put", ViewWriteIndexed(), [T(2, 4), Npy(np.array([0, 2], dtype=I64)), T(2, 2)],
         opsets=(11, 17), dynamic={0: [0], 2: [0]}),
]


class EmbeddingMaxNorm(torch.nn.Module):
    """nn.Embedding(max_norm=...): the looked-up rows are renormalised before the lookup."""

    def __init__(self, norm_type=2.0):
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(10, 4, max_norm=1.0, norm_type=norm_type)

    def forward(self, i):
        return self.emb(i)


CASES += [
    # embedding_renorm_: every row's norm and a membership mask of the looked-up rows (no scatter).
    case("embedding_renorm", lambda w, i: torch.embedding_renorm_(w * 1.0, i, 1.5, 2.0),
         [T(10, 4), Npy(np.array([1, 3, 3, 7], dtype=I64))], opsets=ALL, dynamic={0: [0]}),
    case("embedding_renorm_p1", lambda w, i: torch.embedding_renorm_(w * 1.0, i, 1.0, 1.0),
         [T(6, 3), Npy(np.array([[0, 5], [2, 2]], dtype=I64))], opsets=(11, 17)),
    case("embedding_renorm_p3", lambda w, i: torch.embedding_renorm_(w * 1.0, i, 0.5, 3.0),
         [T(6, 3), Npy(np.array([4, 1], dtype=I64))], opsets=(9, 11)),
    case("embedding_max_norm", EmbeddingMaxNorm(), [Npy(np.array([[1, 3, 3], [9, 0, 1]], dtype=I64))],
         opsets=(9, 11, 17)),
]
