import math

import numpy as np
import torch
import torch.nn.functional as F

from optest import Npy, T, case


class FormatsAFloat(torch.nn.Module):
    """An f-string of a float attribute, as nn.MultiheadAttention builds its fast-path reasons:
    aten::format takes its argument count on the stack (it failed with an internal assert)."""

    def __init__(self):
        super().__init__()
        self.p = 0.1

    def forward(self, x):
        msg = f"dropout was {self.p}, required {0}"
        if len(msg) > 3:
            return x * 2
        return x


class ShapeQueries(torch.nn.Module):
    def forward(self, x):
        return x * len(x) + x.dim() + x.numel() + int(x.is_floating_point())


class SamePadding(torch.nn.Module):
    """TF 'same' padding from the input size (EfficientDet, scripted): math.ceil / math.floor of
    int / int are ints computed in float."""

    def forward(self, x):
        h, w = x.shape[-2:]
        pw = (math.ceil(w / 3) - 1) * 3 - w + 3
        ph = max((math.ceil(h / 2) - 1) * 2 - h + 3, 0)
        return F.pad(x, [pw // 2, pw - pw // 2, ph // 2, ph - ph // 2]) * math.floor(w / 4)


def _longformer_chunk(x):
    """Longformer's _chunk: (b, s, d) viewed as windows of 4, then overlapping windows of 4 at stride 2."""
    x = x.view(x.size(0), torch.div(x.size(1), 4, rounding_mode="trunc"), 4, x.size(2))
    size = list(x.size())
    size[1] = size[1] * 2 - 1
    stride = list(x.stride())
    stride[1] = stride[1] // 2
    return x.as_strided(size=size, stride=stride) * 2


class ItemScript(torch.nn.Module):
    def forward(self, x):
        return x * x[0, 0].item() + x.sum().int().item()

CASES = [
    case("flatten_1", lambda x: torch.flatten(x, 1), [T(2, 3, 4, 5)], dynamic={0: [0]}),
    case("flatten_middle", lambda x: torch.flatten(x, 1, 2), [T(2, 3, 4, 5)], dynamic={0: [0, 3]}),
    case("flatten_all", lambda x: x.flatten(), [T(2, 3, 4)]),
    case("view_dynamic_batch", lambda x: x.view(x.size(0), -1), [T(2, 3, 4)], dynamic={0: [0]}),
    case("reshape_static", lambda x: x.reshape(6, 4), [T(2, 3, 4)]),
    case("permute", lambda x: x.permute(0, 2, 3, 1), [T(1, 2, 3, 4)]),
    case("transpose", lambda x: x.transpose(1, -1), [T(2, 3, 4)]),
    case("unsqueeze_squeeze", lambda x: x.unsqueeze(1).squeeze(1).unsqueeze(-1), [T(2, 3)], opsets=(11, 13)),
    case("squeeze_all", lambda x: x.squeeze(), [T(1, 3, 1, 4)], opsets=(11, 13)),
    case("cat", lambda a, b: torch.cat([a, b], dim=1), [T(2, 3), T(2, 5)], dynamic={0: [0], 1: [0]}),
    # 1-d parts whose size depends on the data, all empty in the example run (a detector's scores
    # for an image without detections): they are concatenated, not dropped.
    case("cat_data_dependent_empty", lambda x: torch.cat([x[x > 5], x[x < -5], x[x > 1.5]]),
         [T(4, 3)], opsets=(11, 17), dynamic={0: [0]}),
    case("stack", lambda a, b: torch.stack([a, b], dim=-1), [T(2, 3), T(2, 3)]),
    case("split_sizes", lambda x: torch.split(x, [2, 3], dim=1), [T(2, 5)], opsets=(11, 13)),
    case("chunk", lambda x: x.chunk(3, dim=-1)[1] * 2, [T(2, 9)], opsets=(11, 13)),
    # Two images stacked along a dynamic batch and chunked back (RAFT): equal parts at every size.
    case("chunk_dynamic_batch", lambda x, y: torch.cat(torch.cat([x, y], 0).chunk(2, 0), 1), [T(2, 3), T(2, 3, seed=1)],
         opsets=(9, 11, 13, 17), dynamic={0: [0], 1: [0]}),
    case("unbind", lambda x: torch.unbind(x, 1)[2], [T(2, 4, 3)], opsets=(11, 13)),
    case("slice_step", lambda x: x[:, 1:7:2], [T(2, 9)]),
    case("slice_negative", lambda x: x[..., -3:], [T(2, 9)], dynamic={0: [0]}),
    case("select", lambda x: x[:, 1], [T(2, 4, 3)]),
    case("narrow", lambda x: x.narrow(1, 1, 2), [T(2, 4, 3)]),
    case("narrow_dynamic_start", lambda x: x.narrow(1, x.size(1) - 2, 2) + x.narrow(1, -x.size(0), 1),
         [T(2, 5, 3)], opsets=(10, 11, 17), dynamic={0: [0, 1]}),
    case("expand", lambda x: x.expand(3, -1, 4), [T(1, 2, 1)]),
    case("size_arith", lambda x: x.reshape(x.shape[0] * x.shape[1], -1), [T(2, 3, 4)], dynamic={0: [0, 1]}),
    # flip / roll / repeat / tile / repeat_interleave
    case("flip", lambda x: x.flip(-1, 0), [T(2, 3, 4)], opsets=(9, 10, 11, 13, 17), dynamic={0: [0, 2]}),
    case("flip_int", lambda x: torch.flip(x, [1]), [T(2, 3, dtype="int64")]),
    case("flip_opset9", lambda x: x.flip(0).flip(1) * torch.flip(x > 0, [1]), [T(2, 3)], opsets=(9,)),  # a Gather per axis
    case("roll", lambda x: x.roll(2, -1), [T(2, 5)], opsets=(10, 11, 13, 17), dynamic={0: [1]}),
    case("roll_multi_negative", lambda x: torch.roll(x, (-1, 7), (0, 1)), [T(3, 4)]),
    case("roll_flat", lambda x: torch.roll(x, 3), [T(2, 3)]),
    case("roll_zero", lambda x: torch.roll(x, 4, 1), [T(2, 4)]),
    case("repeat", lambda x: x.repeat(2, 1, 3), [T(2, 3)], opsets=(9, 11, 13, 17), dynamic={0: [0, 1]}),
    case("repeat_dynamic", lambda x: x.repeat(x.size(0), 1), [T(2, 3)], dynamic={0: [0]}),
    case("repeat_bool", lambda x: x.repeat(2, 2), [T(2, 3, dtype="bool")]),
    case("tile", lambda x: x.tile((2,)), [T(2, 3)], opsets=(9, 13)),
    case("repeat_interleave_int", lambda x: x.repeat_interleave(2, dim=1), [T(2, 3)], opsets=(9, 11, 13),
         dynamic={0: [0, 1]}),
    case("repeat_interleave_flat", lambda x: torch.repeat_interleave(x, 3), [T(2, 2)]),
    case("repeat_interleave_negative_dim", lambda x: x.repeat_interleave(2, dim=-2), [T(2, 3, 2)]),
    case("repeat_interleave_tensor", lambda x, r: x.repeat_interleave(r, dim=0),
         [T(3, 2), Npy(np.array([1, 0, 3], dtype=np.int64))], opsets=(11, 13, 17)),
    case("repeat_interleave_counts_only", lambda r: torch.repeat_interleave(r), [Npy(np.array([2, 0, 1], dtype=np.int64))],
         opsets=(11, 13)),
    # movedim / numpy_T / meshgrid / broadcast_tensors
    case("movedim", lambda x: x.movedim(1, -1), [T(2, 3, 4)]),
    case("movedim_multi", lambda x: torch.movedim(x, (0, 3), (2, 0)), [T(2, 3, 4, 5)]),
    case("numpy_T", lambda x: x[0].T, [T(2, 3, 4, 5)]),
    case("meshgrid_ij", lambda a, b: torch.meshgrid(a, b, indexing="ij"), [T(3), T(4)], opsets=(9, 13),
         dynamic={0: [0], 1: [0]}),
    case("meshgrid_xy", lambda a, b, c: torch.meshgrid(a, b, c, indexing="xy"), [T(3), T(4), T(2)]),
    case("meshgrid_int", lambda a, b: torch.meshgrid(a, b, indexing="ij"), [T(2, dtype="int64"), T(3, dtype="int64")]),
    case("broadcast_tensors", lambda a, b, c: torch.broadcast_tensors(a, b, c), [T(3, 1), T(4), T(2, 1, 1)],
         opsets=(9, 13), dynamic={0: [0]}),
    # unfold / im2col / pixel shuffles / as_strided
    case("unfold", lambda x: x.unfold(1, 3, 2), [T(2, 7, 2)], opsets=(9, 11, 13), dynamic={0: [1]}),
    case("unfold_last_dim", lambda x: x.unfold(-1, 2, 1), [T(2, 5)]),
    case("im2col", lambda x: F.unfold(x, 3), [T(1, 2, 5, 6)], opsets=(9, 11, 13), dynamic={0: [0, 2, 3]}),
    case("im2col_stride_pad_dilation", lambda x: F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=2),
         [T(2, 3, 7, 8)], opsets=(10, 11, 13), dynamic={0: [2, 3]}),
    case("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), [T(1, 8, 3, 4)], opsets=(9, 11, 13), dynamic={0: [0, 2, 3]}),
    case("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), [T(1, 2, 4, 6)], opsets=(9, 11, 13), dynamic={0: [0]}),
    case("as_strided", lambda x: x.as_strided((3, 2), (1, 3), 1), [T(4, 3)]),
    # Longformer's _chunk: overlapping windows with sizes from x.size() (traced as aten::size, so
    # read at run time even with no dynamic axis); at other batch sizes too.
    case("as_strided_size_of_input", _longformer_chunk, [T(2, 8, 3)], opsets=(9, 10, 11, 13, 17)),
    case("as_strided_size_of_input_dyn", _longformer_chunk, [T(2, 8, 3)], dynamic={0: [0]}, opsets=(9, 11, 17)),
    # split variants and shape queries
    case("unsafe_split", lambda x: torch.unsafe_split(x, 2, 1)[1], [T(2, 5)], opsets=(11, 13)),
    case("unsafe_split_with_sizes", lambda x: x.unsafe_split_with_sizes([1, 3], 1)[1], [T(2, 4)], opsets=(11, 13)),
    case("shape_as_tensor", lambda x: torch._shape_as_tensor(x), [T(2, 3)], dynamic={0: [0]}),
    case("reshape_from_tensor", lambda x: torch._reshape_from_tensor(x, torch._shape_as_tensor(x).flip(0)), [T(2, 3)],
         dynamic={0: [0, 1]}),
    case("numel", lambda x: x * x.numel(), [T(2, 3)], dynamic={0: [0]}),
    case("shape_queries_script", ShapeQueries(), [T(3, 2)], script=True, dynamic={0: [0]}),
    case("format_float_script", FormatsAFloat(), [T(3, 2)], script=True, opsets=(11,)),
    case("item_script", ItemScript(), [T(3, 2)], script=True),
    case("ceil_floor_of_size_ratio_script", SamePadding(), [T(1, 2, 7, 8)], script=True, opsets=(11, 17),
         dynamic={0: [2, 3]}),
]


class ListConcatExpand(torch.nn.Module):
    def forward(self, x):
        return x.unsqueeze(0).expand([2] + x.shape)


# Found by tests/property/test_op_properties: `[2] + x.shape` (aten::add of two int lists) was an
# elementwise Add; a view to a literal 0 was a Reshape that copies the input's size.
CASES += [
    case("list_add_joins_lists_script", ListConcatExpand(), [T(3)], script=True, opsets=(9, 11, 17)),
    case("view_to_zero_size", lambda x: x.view(0) + 1, [T(1, 0, 2)], opsets=(9, 11, 13, 14, 17)),
    case("reshape_zero_keeps_zero", lambda x: x.reshape(2, 0, 3), [T(3, 0, 2)], opsets=(11, 14)),
]


class TensorSplit(torch.nn.Module):
    def __init__(self, arg, dim):
        super().__init__()
        self.arg, self.dim = arg, dim

    def forward(self, x):
        parts = torch.tensor_split(x, self.arg, self.dim)
        return torch.cat([parts[0] * 2, parts[1], parts[-1] * 3], self.dim)


CASES += [
    # tensor_split: sections (the first len % n pieces one longer) or split indices; every opset.
    case("tensor_split_sections", lambda x: torch.tensor_split(x, 3, dim=1), [T(2, 7)], opsets=(9, 11, 13, 17),
         dynamic={0: [0]}),
    case("tensor_split_indices", lambda x: torch.tensor_split(x, [1, 4], dim=-1), [T(2, 3, 7)], opsets=(9, 13, 17)),
    case("tensor_split_more_than_len", lambda x: torch.tensor_split(x, 4, 0)[1:3], [T(3, 2)], opsets=(11, 13)),
    case("tensor_split_script", TensorSplit(3, 0), [T(8, 2)], script=True, opsets=(11, 13, 17), dynamic={0: [1]}),
    case("tensor_split_indices_script", TensorSplit([2, 3], 1), [T(2, 6)], script=True, opsets=(11, 17)),
    # native_dropout in eval: the input and a mask of ones.
    case("native_dropout_eval", lambda x: torch.native_dropout(x, 0.5, False), [T(3, 4)], opsets=(9, 12, 17),
         dynamic={0: [0, 1]}),
]

# NumPy-style rearrangements (ops_rearrange.cpp), none of them in torch.onnx 1.13.
CASES += [
    case("rot90", lambda x: torch.rot90(x, 1, (1, 2)), [T(2, 3, 4)], opsets=(9, 11, 17), dynamic={0: [0, 1, 2]}),
    case("rot90_k2_k3", lambda x: torch.rot90(x, 2) + torch.rot90(x, -1).transpose(0, 1), [T(4, 4)], opsets=(9, 13)),
    case("fliplr_flipud", lambda x: torch.fliplr(x) * 2 + torch.flipud(x), [T(3, 4)], opsets=(9, 10, 17), dynamic={0: [0, 1]}),
    case("stacks", lambda a, b: torch.cat([torch.hstack([a, b]).flatten(), torch.vstack([a, b]).flatten(),
                                           torch.dstack([a, b]).flatten(), torch.column_stack([a, b]).flatten()]),
         [T(2, 3), T(2, 3, seed=1)], opsets=(9, 17)),
    case("stacks_1d", lambda a, b: torch.cat([torch.hstack([a, b]), torch.vstack([a, b]).flatten(),
                                              torch.column_stack([a, b]).flatten()]), [T(3), T(3, seed=1)], opsets=(11,)),
    case("atleast", lambda a: torch.atleast_3d(a).sum() + torch.atleast_2d(a).sum(0), [T(4)], opsets=(11,)),
    case("ravel_narrow_copy", lambda a: torch.narrow_copy(a, 1, 1, 2).ravel(), [T(3, 5)], opsets=(9, 17)),
    case("hsplit_vsplit_dsplit", lambda a: torch.stack([p.sum() for p in torch.hsplit(a, 2) + torch.vsplit(a, [1]) + torch.dsplit(a, 2)]),
         [T(2, 4, 6)], opsets=(11, 17)),
    case("channel_shuffle", lambda a: torch.nn.functional.channel_shuffle(a, 3), [T(2, 6, 3, 4)], opsets=(9, 17),
         dynamic={0: [0, 2, 3]}),
    case("native_channel_shuffle", lambda a: torch.native_channel_shuffle(a, 2), [T(1, 4, 5)], opsets=(11,)),
    case("take_along_dim", lambda a: torch.take_along_dim(a, a.argsort(1)[:, :2], 1), [T(3, 5)], opsets=(11, 17),
         dynamic={0: [0]}),
    case("take_along_dim_flat", lambda a, i: torch.take_along_dim(a, i),
         [T(3, 4), Npy(np.array([0, 11, 5]))], opsets=(11,)),
    case("take_along_dim_broadcast", lambda a, i: torch.take_along_dim(a, i, 2),
         [T(2, 3, 4), Npy(np.array([[[3, 0]]]))], opsets=(11,)),
]


class SplitBySize(torch.nn.Module):
    """Split sizes computed from a dynamic axis (Deformable DETR's per-level value.split): the pieces
    must follow the axis, not the example's sizes."""

    def forward(self, x):
        h = x.shape[1] // 3
        a, b = x.split([h, x.shape[1] - h], dim=1)
        return a * 2, b.sum(1)


CASES += [
    case("split_sizes_from_shape", SplitBySize(), [T(2, 9)], opsets=(11, 13, 17), dynamic={0: [1]}),
    case("split_sizes_from_shape_script", SplitBySize(), [T(2, 9)], script=True, opsets=(11, 17), dynamic={0: [1]}),
]


class LengthsToCpu(torch.nn.Module):
    """Scripted `.cpu()` (pack_padded_sequence's `lengths.cpu()`): the tensor itself."""

    def forward(self, x, lengths):
        return x * lengths.cpu().unsqueeze(1).to(x.dtype)


CASES += [
    case("cpu_is_identity_script", LengthsToCpu(), [T(3, 4), Npy(np.array([2, 1, 3], dtype=np.int64))], script=True,
         opsets=(9, 17)),
]


class NoGradBlock(torch.nn.Module):
    """Scripted `with torch.no_grad():` (F.gaussian_nll_loss has one): the context manager object
    failed the example run (prim::CreateObject); its block is what the file computes."""

    def forward(self, x):
        with torch.no_grad():
            y = x.clamp(min=0.1)
            if y.shape[0] > 1:
                y = y * 2
        return y + x


CASES += [
    case("no_grad_block_script", NoGradBlock(), [T(3, 4)], script=True, opsets=(11, 17), dynamic={0: [0]}),
]


class PadToLargest(torch.nn.Module):
    """GeneralizedRCNNTransform-style: the sizes of the inputs as int lists, max() and sum() of
    them, and list.index() of the largest. sum(list) reached the tensor sum's converter and kept the
    list as it was; list.index() was taken for tensor indexing."""

    def forward(self, x, y):
        sizes: List[int] = [x.size(0), y.size(0), 3]
        widths: List[int] = [x.size(1), y.size(1)]
        largest = max(sizes)
        total = sum(widths)
        first_largest = sizes.index(largest)
        out = x.new_zeros(largest, total)
        out[: x.size(0), : x.size(1)] = x
        out[: y.size(0), x.size(1):] = y
        return out + first_largest, torch.tensor(sum([float(s) for s in sizes]))


class SortsAList(torch.nn.Module):
    def forward(self, x):
        sizes: List[int] = [x.size(0), x.size(1), 4]
        sizes.sort()
        return x.new_zeros(sizes[0], sizes[2])


CASES += [
    case("int_list_max_sum_index_script", PadToLargest(), [T(4, 2), T(2, 5)], script=True, opsets=(11, 17),
         dynamic={0: [0, 1], 1: [0, 1]}),
    # Sorting a list in place has no conversion; it must not become a custom node without outputs
    # (the graph would read the unsorted list).
    case("int_list_sort_refused_script", SortsAList(), [T(5, 4)], script=True, opsets=(11,), dynamic={0: [0, 1]},
         expect="error:unsupported-list"),
]


class ResizeToMinSide(torch.nn.Module):
    """GeneralizedRCNNTransform.resize, scripted: torch.tensor(image.shape[-2:]) (a slice of the size
    list, with no ListConstruct to read elements from) was refused as unknown at export time."""

    def forward(self, image):
        im_shape = torch.tensor(image.shape[-2:])
        min_size = float(torch.min(im_shape).item())
        max_size = float(torch.max(im_shape).item())
        scale = min(24.0 / min_size, 40.0 / max_size)
        return F.interpolate(image[None], size=None, scale_factor=scale, mode="bilinear",
                             recompute_scale_factor=True, align_corners=False)[0], im_shape


CASES += [
    case("tensor_of_size_slice_script", ResizeToMinSide(), [T(3, 20, 30, fill="rand")], script=True, opsets=(11, 17),
         dynamic={0: [1, 2]}),
]
