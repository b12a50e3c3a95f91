"""col2im (F.fold) as a one-hot grouped ConvTranspose (ops_fold.cpp): ONNX Col2Im is opset 18."""
import torch
import torch.nn.functional as F

from optest import Fn, T, case

ALL = (9, 11, 13, 17)


def fold(out, k, **kw):
    return Fn(lambda x: F.fold(x, out, k, **kw))


def unfold_fold(k, **kw):
    """unfold then fold: each pixel times the number of blocks covering it."""
    return Fn(lambda x: F.fold(F.unfold(x, k, **kw), x.shape[-2:], k, **kw))


CASES = [
    case("fold_k2_s2", fold((4, 6), 2, stride=2), [T(2, 3 * 4, 6)], opsets=ALL, dynamic={0: [0]}),
    case("fold_k3_overlap", fold((5, 5), 3), [T(1, 2 * 9, 9, seed=1)], opsets=ALL),
    case("fold_k2x3_stride_2x1", fold((6, 7), (2, 3), stride=(2, 1)), [T(2, 4 * 6, 15, seed=2)], opsets=(9, 17)),
    case("fold_dilation_padding", fold((7, 6), 3, dilation=2, padding=1, stride=1), [T(1, 9, 20, seed=3)],
         opsets=(9, 17)),
    # The last block leaves a row and a column uncovered: output_padding makes them up (zeros).
    case("fold_uncovered_edge", fold((5, 5), 2, stride=2), [T(1, 3 * 4, 4, seed=4)], opsets=(9, 17)),
    case("fold_unbatched", fold((4, 4), 2, stride=2), [T(8, 4, seed=5)], opsets=(9, 17)),
    case("fold_f64", fold((4, 4), 2, stride=1), [T(1, 4, 9, dtype="float64", seed=6)], opsets=(17,)),
    case("unfold_fold_roundtrip", unfold_fold(3, padding=1, stride=2), [T(2, 3, 9, 8, seed=7)], opsets=(11, 13, 17),
         dynamic={0: [0, 2, 3]}),
    case("fold_size_from_input_needs_11", unfold_fold(2, stride=2), [T(1, 2, 4, 4)], opsets=(10,),
         expect="error:opset-too-old", operator_export_type="ONNX"),
    case("unfold_fold_overlap_add", unfold_fold((4, 2), stride=(2, 1), dilation=(1, 2)), [T(1, 2, 10, 9, seed=8)],
         opsets=(11, 17)),
]
