"""Padding: constant (incl. negative = crop, dynamic amounts), reflect, replicate, circular."""
import torch
import torch.nn.functional as F

from optest import T, case

ALL = (9, 10, 11, 13, 17)

CASES = [
    case("pad_constant", lambda x: F.pad(x, (1, 2), value=1.5), [T(2, 3, 4)], opsets=ALL, dynamic={0: [0, 2]}),
    case("pad_constant_two_dims", lambda x: F.pad(x, (1, 0, 2, 3)), [T(1, 2, 3, 4)], opsets=ALL),
    case("pad_constant_negative", lambda x: F.pad(x, (-1, 2)), [T(2, 5)], opsets=ALL),
    case("pad_constant_int", lambda x: F.pad(x, (2, 1), value=7), [T(2, 3, dtype="int64")], opsets=(11, 13)),
    case("pad_constant_dynamic_amount", lambda x: F.pad(x, (0, x.size(0))), [T(2, 3)], opsets=(11, 13, 17),
         dynamic={0: [0]}),
    case("constant_pad_nd_nofold", lambda x: torch.constant_pad_nd(x, [1, 1, 1, 1], -2.0), [T(2, 3)], opsets=ALL),
    case("pad_reflect_1d", lambda x: F.pad(x, (2, 1), mode="reflect"), [T(1, 2, 5)], opsets=ALL, dynamic={0: [2]}),
    case("pad_reflect_2d", lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), [T(1, 2, 4, 5)], opsets=ALL),
    case("pad_reflect_3d", lambda x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="reflect"), [T(1, 1, 3, 3, 3)], opsets=(11, 13)),
    case("pad_replicate_1d", lambda x: F.pad(x, (0, 3), mode="replicate"), [T(1, 2, 4)], opsets=ALL),
    case("pad_replicate_2d", torch.nn.ReplicationPad2d((1, 0, 2, 1)), [T(1, 2, 3, 3)], opsets=ALL),
    case("pad_replicate_3d", torch.nn.ReplicationPad3d(1), [T(1, 1, 2, 3, 2)], opsets=(11, 13)),
    case("reflection_pad2d_module", torch.nn.ReflectionPad2d(2), [T(1, 1, 4, 4)], opsets=(9, 13)),
    case("pad_circular", lambda x: F.pad(x, (1, 2, 2, 0), mode="circular"), [T(1, 2, 3, 4)], opsets=ALL,
         dynamic={0: [2, 3]}),
    case("pad_circular_1d", lambda x: F.pad(x, (2, 2), mode="circular"), [T(2, 1, 5)]),
]

# Found by tests/property/test_op_properties: an integer tensor padded with a fractional value
# (PyTorch truncates it), a dim cropped at one end and padded at the other, integer padding at
# opsets 9/10 (Pad-2 takes floats only).
CASES += [
    case("pad_int_fractional_value_crop", lambda x: F.pad(x, (-1, 1, -1, 0), value=1.5),
         [T(2, 2, 3, dtype="int64", fill="arange")], opsets=(11, 13, 17)),
    case("pad_crop_and_pad_same_dim", lambda x: F.pad(x, (-2, 3), value=-0.5), [T(2, 5)], opsets=ALL),
    case("pad_crop_and_pad_two_dims", lambda x: F.pad(x, (1, -1, -1, 0), value=1.5), [T(2, 1)], opsets=ALL),
    case("pad_int32_opset9", lambda x: F.pad(x, (1, 2), value=7), [T(2, 3, dtype="int32", fill="arange")],
         opsets=(9, 10, 11)),
    case("pad_int64_opset9_refused", lambda x: F.pad(x, (1, 2)), [T(2, 3, dtype="int64", fill="arange")],
         opsets=(9,), expect="error:opset-too-old", operator_export_type="ONNX"),
]
