import torch
import torch.nn as nn
import torch.nn.functional as F

from optest import T, case

CASES = [
    case("max_pool2d", nn.MaxPool2d(2), [T(1, 3, 8, 8)], dynamic={0: [0, 2, 3]}),
    case("max_pool2d_pad_stride", nn.MaxPool2d(3, stride=2, padding=1), [T(2, 3, 9, 9)]),
    case("max_pool2d_ceil", nn.MaxPool2d(3, stride=2, ceil_mode=True), [T(1, 2, 10, 10)], opsets=(10, 11, 17)),
    # Opset 9 has no ceil_mode: a -inf Pad and floor mode, exact at every size where no last window
    # can be dropped (kernel 3, stride 2); where one can and the example run says so, no form.
    case("max_pool2d_ceil_opset9", nn.MaxPool2d(3, stride=2, ceil_mode=True), [T(1, 2, 10, 10)], opsets=(9,),
         dynamic={0: [2, 3]}),
    case("avg_pool2d_ceil_opset9", nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True), [T(1, 2, 10, 9)], opsets=(9,),
         dynamic={0: [2, 3]}),
    case("max_pool1d_ceil_drop_opset9", lambda x: F.max_pool1d(x, 2, 3, ceil_mode=True), [T(1, 2, 7)], opsets=(9,),
         expect="error:opset-too-old", operator_export_type="ONNX"),
    case("max_pool1d", nn.MaxPool1d(2), [T(2, 3, 10)]),
    case("max_pool3d", nn.MaxPool3d(2), [T(1, 2, 4, 4, 4)]),
    case("avg_pool2d", nn.AvgPool2d(2), [T(1, 3, 8, 8)]),
    case("avg_pool2d_pad_exclude", nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False), [T(1, 2, 6, 6)]),
    case("avg_pool1d", nn.AvgPool1d(3, stride=2), [T(1, 2, 11)]),
    case("adaptive_avg_pool2d_global", nn.AdaptiveAvgPool2d(1), [T(2, 4, 7, 7)], dynamic={0: [0, 2, 3]}),
    case("adaptive_avg_pool2d_even", nn.AdaptiveAvgPool2d((2, 3)), [T(1, 4, 8, 9)]),
    case("adaptive_max_pool2d_global", nn.AdaptiveMaxPool2d(1), [T(1, 4, 5, 5)]),
    case("adaptive_avg_pool1d", nn.AdaptiveAvgPool1d(1), [T(2, 3, 10)]),
    # PSPNet's pyramid behind dynamic H, W: windows fixed at the example size (24 = 3 * 8 = 6 * 4)
    # are wrong at other sizes, where PyTorch's windows are uneven.
    case("adaptive_avg_pool2d_dynamic", nn.AdaptiveAvgPool2d((3, 6)), [T(1, 4, 24, 24)], dynamic={0: [0, 2, 3]}),
    case("adaptive_avg_pool1d_dynamic", nn.AdaptiveAvgPool1d(4), [T(2, 3, 16)], dynamic={0: [2]}),
    case("max_pool2d_with_indices", lambda x: F.max_pool2d(x, 2, return_indices=True), [T(1, 2, 6, 6)]),
]

# Found by tests/property/test_op_properties: ceil_mode windows PyTorch drops, average windows
# that run past the padding, dilated windows that see only padding (-inf in PyTorch).
CASES += [
    case("max_pool1d_ceil_drops_last_window", lambda x: F.max_pool1d(x, 1, 2, ceil_mode=True), [T(2, 2, 4)],
         opsets=(9, 11, 17)),
    case("avg_pool1d_ceil_partial_window", lambda x: F.avg_pool1d(x, 3, 2, ceil_mode=True), [T(1, 2, 4)],
         opsets=(10, 11, 17)),
    case("avg_pool2d_ceil_pad_partial_window", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), [T(1, 2, 6, 5)],
         opsets=(10, 11, 17)),
    case("max_pool1d_dilated_pad_only_window", lambda x: F.max_pool1d(x, 2, 1, 1, 2), [T(2, 1, 1)], opsets=(11, 17)),
    case("max_pool1d_ceil_kernel_past_input", lambda x: F.max_pool1d(x, 2, 2, ceil_mode=True), [T(2, 1, 1)],
         opsets=(11,), expect="error:unsupported-form", operator_export_type="ONNX"),
]

# ceil_mode at sizes other than the example's (squeezenet and googlenet pool in ceil mode; traced
# at a size where ceil and floor agree, the file must still pool in ceil mode at the others), and a
# last window PyTorch drops at some sizes only (kernel 2, stride 2, padding 1: dropped at odd sizes).
CASES += [
    case("max_pool2d_ceil_dynamic_odd_traced", nn.MaxPool2d(3, stride=2, ceil_mode=True), [T(2, 3, 9, 9)],
         opsets=(10, 11, 17), dynamic={0: [0, 2, 3]}),
    case("max_pool1d_ceil_drop_dynamic", lambda x: F.max_pool1d(x, 2, 2, 1, ceil_mode=True), [T(1, 2, 4)],
         opsets=(10, 11, 17), dynamic={0: [2]}),
    case("max_pool2d_ceil_drop_dynamic_indices", lambda x: F.max_pool2d(x, 2, 2, 1, ceil_mode=True, return_indices=True),
         [T(1, 2, 4, 5)], opsets=(11, 17), dynamic={0: [2, 3]}),
    case("avg_pool2d_ceil_dynamic", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), [T(1, 2, 7, 7)],
         opsets=(10, 11, 17), dynamic={0: [2, 3]}),
    case("avg_pool2d_ceil_dynamic_exclude_pad", lambda x: F.avg_pool2d(x, 2, 2, 1, ceil_mode=True, count_include_pad=False),
         [T(1, 2, 6, 7)], opsets=(11, 17), dynamic={0: [2, 3]}),
    case("avg_pool1d_ceil_drop_dynamic", nn.AvgPool1d(2, stride=2, padding=1, ceil_mode=True), [T(1, 2, 5)],
         opsets=(11, 17), dynamic={0: [2]}),
]

# max_unpool (SegNet/ENet decoders): ScatterElements into zeros, per (n, c) plane; opset 11.
CASES += [
    case("max_unpool2d", lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2), [T(2, 3, 4, 6)],
         opsets=(11, 13, 17), dynamic={0: [0, 1]}),
    case("max_unpool2d_output_size", lambda x: F.max_unpool2d(*F.max_pool2d(x, 3, 2, return_indices=True), 3, 2,
                                                              output_size=(7, 8)), [T(1, 2, 7, 8)], opsets=(11,)),
    case("max_unpool1d_3d", lambda x, y: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2).sum()
         + F.max_unpool3d(*F.max_pool3d(y, 2, return_indices=True), 2).sum(), [T(1, 2, 6), T(1, 2, 4, 4, 2, seed=1)],
         opsets=(11, 17)),
]

# Adaptive pooling with uneven windows (an input size the output size does not divide: VGG's
# AdaptiveAvgPool2d(7) at any size but multiples of 7), and adaptive max pooling behind dynamic
# axes (a kernel fixed at the example size is wrong at the others). Windows sliced one by one.
CASES += [
    case("adaptive_avg_pool2d_uneven", nn.AdaptiveAvgPool2d((3, 5)), [T(2, 4, 8, 7)]),
    case("adaptive_max_pool2d_uneven", nn.AdaptiveMaxPool2d(3), [T(2, 4, 8, 7)]),
    case("adaptive_avg_pool3d_uneven", nn.AdaptiveAvgPool3d((2, 3, 3)), [T(1, 2, 5, 7, 4)]),
    case("adaptive_max_pool1d_uneven_unbatched", nn.AdaptiveMaxPool1d(3), [T(4, 10)]),
    case("adaptive_max_pool2d_dynamic", nn.AdaptiveMaxPool2d((2, 3)), [T(1, 4, 8, 9)], dynamic={0: [0, 2, 3]}),
    case("adaptive_avg_pool3d_dynamic", nn.AdaptiveAvgPool3d(2), [T(1, 2, 4, 6, 4)], dynamic={0: [2, 3, 4]}),
]

# avg_pool with divisor_override: window sums over a fixed divisor (padding counts as zeros).
CASES += [
    case("avg_pool2d_divisor_override", nn.AvgPool2d(2, divisor_override=3), [T(2, 3, 6, 8)], dynamic={0: [0, 2, 3]}),
    case("avg_pool2d_divisor_pad_ceil", nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, divisor_override=5),
         [T(1, 2, 6, 7)], opsets=(10, 11, 17), dynamic={0: [2, 3]}),
    case("avg_pool3d_divisor_override", nn.AvgPool3d(2, stride=1, padding=1, divisor_override=2), [T(1, 2, 3, 4, 4)]),
]

# Fractional max pooling draws its windows at random on every call: refused, saying why.
CASES += [
    case("fractional_max_pool2d_refused", nn.FractionalMaxPool2d(2, output_size=3), [T(1, 2, 8, 8)], opsets=(11,),
         expect="error:refused-op", operator_export_type="ONNX"),
]


class PoolBehindOps(nn.Module):
    """Adaptive pooling after the ops that carry H and W from the input (convolution, pooling, a
    concatenation, interpolation, a view built from the input's sizes, a transpose and back): with
    H and W dynamic every one of them passes the dynamic size on, and the windows must follow it."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 4, 3, padding=1)
        self.b = nn.Conv2d(3, 2, 1)
        self.pool = nn.AdaptiveAvgPool2d((3, 5))

    def forward(self, x):
        n, c, h, w = x.shape
        y = torch.cat([F.max_pool2d(self.a(x), 2), F.avg_pool2d(self.b(x), 2)], 1)
        y = F.interpolate(y, scale_factor=2.0, mode="nearest")
        y = y.reshape(n, 6, -1).transpose(1, 2).transpose(1, 2).reshape(n, 6, y.size(2), -1)
        return self.pool(torch.relu(y) * torch.sigmoid(y.mean((2, 3), keepdim=True)))


# Adaptive pooling whose pooled axes stay at their example size although the batch is dynamic
# (VGG's AdaptiveAvgPool2d(7), AlexNet's (6, 6) on 13 x 13 features, exported with a dynamic batch
# only): a plain AveragePool, or windows sliced at fixed bounds; the batch still follows the input.
CASES += [
    case("adaptive_avg_pool2d_batch_dynamic_uneven", nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(),
                                                                   nn.AdaptiveAvgPool2d((6, 6))),
         [T(2, 3, 15, 15)], dynamic={0: [0]}),
    case("adaptive_max_pool2d_batch_dynamic_even", nn.Sequential(nn.Conv2d(3, 4, 3, padding=1),
                                                                 nn.AdaptiveMaxPool2d((2, 4))),
         [T(2, 3, 8, 8)], dynamic={0: [0]}),
    case("adaptive_avg_pool2d_behind_ops_dynamic", PoolBehindOps(), [T(1, 3, 12, 16)], opsets=(11, 17),
         dynamic={0: [0, 2, 3]}),
    case("adaptive_avg_pool2d_behind_ops_batch", PoolBehindOps(), [T(2, 3, 12, 16)], opsets=(11, 17),
         dynamic={0: [0]}),
]


class PoolOverOwnSize(nn.Module):
    """BiSeNet's attention refinement: `F.avg_pool2d(feat, feat.size()[2:])`, a window as large as the
    map, its sizes read when the graph runs (kernel_size was refused as a dynamic argument)."""

    def __init__(self, is_max=False, nd=2):
        super().__init__()
        self.is_max = is_max
        self.nd = nd

    def forward(self, x):
        if self.nd == 1:
            return F.avg_pool1d(x, x.size()[2:]) * 2 + F.max_pool1d(x, [x.size(-1)])
        if self.is_max:
            return F.max_pool2d(x, x.size()[2:], stride=(x.size(2), x.size(3))) - x
        return F.avg_pool2d(x, x.size()[2:]) * x


# Both the traced form (a list of aten::size(x, d)) and the scripted one (a slice of aten::size(x)),
# at the example size and at others of the dynamic axes: a global pool, not the example's window.
CASES += [
    case(f"pool_over_own_size_{kind}_{mode}", PoolOverOwnSize(kind == "max", 1 if kind == "1d" else 2),
         [T(2, 3, 6, 7) if kind != "1d" else T(2, 3, 9)], script=(mode == "script"),
         dynamic={0: [0, 2, 3]} if kind != "1d" else {0: [0, 2]})
    for kind in ("avg", "max", "1d") for mode in ("trace", "script")
]
