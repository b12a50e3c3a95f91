import numpy as np
import torch

from optest import Npy, T, case

CASES = [
    case("add_tensor", lambda a, b: a + b, [T(2, 3), T(2, 3)], dynamic={0: [0], 1: [0]}),
    case("add_broadcast_alpha", lambda a, b: torch.add(a, b, alpha=0.5), [T(2, 3), T(3)]),
    case("add_scalar", lambda a: a + 2.5, [T(2, 3)]),
    case("add_int", lambda a: a + 3, [T(2, 3, dtype="int64", fill="arange")]),
    # bool + bool with alpha (found by the op property test): alpha * b is b or false, no bool Mul.
    case("add_bool_alpha", lambda a, b: (torch.add(a, b, alpha=2), torch.add(a, b, alpha=0)),
         [T(3, 4, dtype="bool"), T(3, 4, dtype="bool", seed=1)], opsets=(9, 11, 17)),
    case("add_int_float_promote", lambda a, b: a + b, [T(2, 3, dtype="int64", fill="arange"), T(2, 3)]),
    case("sub_rsub", lambda a: 1.0 - a - a * 2, [T(2, 3)]),
    case("mul_div", lambda a, b: a * b / (b.abs() + 1), [T(2, 3), T(2, 3)]),
    case("div_int_true", lambda a: a / 2, [T(2, 3, dtype="int64", fill="arange")]),
    case("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"), [T(2, 3), T(2, 3, fill="rand")]),
    case("div_trunc_int", lambda a: torch.div(a - 3, 2, rounding_mode="trunc"), [T(2, 3, dtype="int64", fill="arange")]),
    case("pow_scalar", lambda a: a.abs() ** 1.5, [T(2, 3)]),
    # Integer pow with negative exponents (found by the op property test at opset 9): 0^-n is 0.
    case("pow_int_negative_exponent", lambda a, b: torch.pow(a, b),
         [Npy(np.array([0, 0, 2, -2, 1, -1, 3, 0, 5], dtype=np.int64)),
          Npy(np.array([-1, -2, -1, -1, -3, -3, 2, 0, 3], dtype=np.int64))], opsets=(9, 11, 13, 17)),
    case("unary_math", lambda a: torch.exp(a).log() + a.abs().sqrt() + torch.sin(a) * torch.cos(a) + a.neg(),
         [T(3, 4)]),
    case("rsqrt_reciprocal", lambda a: torch.rsqrt(a + 1) + torch.reciprocal(a + 2), [T(3, 4, fill="rand")]),
    case("floor_ceil_round", lambda a: a.floor() + a.ceil() + (a * 3).round(), [T(3, 4)]),
    # round: half to even at every opset (Round from 11, Floor and a tie fix below); decimals.
    case("round_ties_even", lambda a: torch.round(a), [Npy(np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.2], dtype=np.float32))],
         opsets=(9, 10, 11, 17)),
    case("round_decimals", lambda a: torch.round(a, decimals=2), [T(3, 4)], opsets=(9, 11, 17), dynamic={0: [0]}),
    case("round_decimals_negative", lambda a: torch.round(a * 1000, decimals=-2), [T(3, 4)], opsets=(11, 17)),
    # ~x on integers below opset 18 (two's complement: -1 - x, 255 - x for uint8); the extreme values
    # of each type included, and mixed with & on masks as bit tricks write it.
    case("bitwise_not_int64", lambda a: ~a, [Npy(np.array([[0, 1, -1, 7], [-9223372036854775808, 9223372036854775807, 42, -42]], dtype=np.int64))],
         opsets=(9, 11, 17), dynamic={0: [0]}),
    case("bitwise_not_int32", lambda a: torch.bitwise_not(a.int()) * 2, [T(3, 4, dtype="int64", fill="arange")], opsets=(11, 17)),
    case("bitwise_not_int8_extremes", lambda a: ~a, [Npy(np.array([-128, -1, 0, 1, 127], dtype=np.int8))], opsets=(11, 17)),
    case("bitwise_not_uint8", lambda a: ~a, [Npy(np.array([0, 1, 128, 254, 255], dtype=np.uint8))], opsets=(9, 11, 17)),
    case("bitwise_not_mask_and_int", lambda a, b: (~(a > 0)) & (b > 0) | (~b.long() > -3), [T(3, 4), T(3, 4, seed=1)]),
    # Arithmetic and comparisons on int8/uint8/int16 tensors, which ONNX takes only from opset 14: below
    # it they run in int32 between Casts, and int8 overflow wraps as in libtorch (100 * 3 -> 44).
    case("int8_arith_wraps", lambda a: a.char() * 3 + 1 - (a.char() // 2), [T(3, 4, dtype="int64", fill="arange")],
         opsets=(9, 11, 13, 14, 17), dynamic={0: [0]}),
    case("int8_overflow_wraps", lambda a: a * 3 + a.abs() - (-a), [Npy(np.array([100, -100, 127, -128, 5], dtype=np.int8))],
         opsets=(11, 17)),
    case("uint8_image_threshold", lambda a: ((a > 128) & (a.abs() < 250)).float() + (a // 16).float(),
         [Npy(np.arange(0, 256, 7, dtype=np.uint8).reshape(1, 37))], opsets=(9, 11, 17), dynamic={0: [0]}),
    case("int16_sum_clamp", lambda a: torch.clamp(a.short() * 300, -1000, 1000).sum(-1), [T(2, 6, dtype="int64", fill="arange")],
         opsets=(11, 17)),
    case("compare", lambda a, b: (a > b) & (a <= 1.0) | (a == b), [T(3, 4), T(3, 4)]),
    case("compare_ne_lt_ge", lambda a, b: ((a != b) ^ (a < 0)) | (b >= 0.5), [T(3, 4), T(3, 4)], opsets=(9, 11, 13)),
    case("logical_not", lambda a: torch.logical_not(a > 0), [T(3, 4)]),
    case("where", lambda c, a, b: torch.where(c > 0, a, b), [T(3, 4), T(3, 4), T(4)]),
    case("clamp_scalar", lambda a: a.clamp(-0.5, 0.5), [T(3, 4)], opsets=(9, 11, 13)),
    case("clamp_min_only", lambda a: a.clamp(min=0.1), [T(3, 4)]),
    case("clamp_tensor", lambda a, lo: torch.clamp(a, min=lo), [T(3, 4), T(4)]),
    case("clamp_int", lambda a: a.clamp(1, 4), [T(2, 3, dtype="int64", fill="arange")]),
    case("maximum_minimum", lambda a, b: torch.maximum(a, b) - torch.minimum(a, b), [T(3, 4), T(3, 4)]),
]

# Found by tests/property/test_op_properties: ONNX Runtime has no Where kernel for bool values.
CASES += [
    case("where_bool_values", lambda c, a, b: torch.where(c, a, b),
         [T(3, 1, dtype="bool"), T(3, 4, dtype="bool"), T(4, dtype="bool")], opsets=(9, 11, 17)),
]

# Coverage: bool + bool is or, bool * bool is and, max/min of bools are or/and (ONNX has no
# Add/Mul/Max/Min for bool).
BOOL_A = Npy(np.array([[True, False, True], [False, False, True]]))
BOOL_B = Npy(np.array([[True, True, False], [False, True, True]]))
CASES += [
    case("bool_add_is_or", lambda a, b: a + b, [BOOL_A, BOOL_B], opsets=(9, 11, 17)),
    case("bool_mul_is_and", lambda a, b: a * b, [BOOL_A, BOOL_B], opsets=(9, 11, 17)),
    case("bool_max_min", lambda a, b: (torch.max(a, b), torch.min(a, b), torch.maximum(a, b), torch.minimum(a, b)),
         [BOOL_A, BOOL_B], opsets=(9, 11, 13, 17)),
]


# Found by the probe sweep (probe3n, VQ-VAE's traced loss): a Python number traced into add/sub/
# mul/div is a 0-dim float64/int64 constant; the loaded model runs it as a Scalar (libtorch's
# executor canonicalizes it), so `x.mean() * 0.25` and `int_ids * 0.5` are float32, not float64.
class ListRepeatCat(torch.nn.Module):
    def forward(self, x, t):
        return torch.cat([x] * 2), torch.cat([t, t] * 3), x.new_zeros([2] * 2)


CASES += [
    case("traced_number_constant_is_scalar",
         lambda x, i: (x.mean() * 0.25, x.sum() + 2.5, 1.5 - x.amax(), x.amin() / 3.0, i * 0.5, i.sum() - 2),
         [T(2, 3), T(2, 3, dtype="int64", fill="arange")], opsets=(9, 11, 17), dynamic={0: [0], 1: [0]}),
    # list * int (aten::mul.left_t), scripted: classifier-free guidance's torch.cat([x] * 2).
    case("list_repeat_cat_scripted", ListRepeatCat(), [T(2, 3), T(1, 3, seed=1)], script=True, opsets=(11, 17),
         dynamic={0: [0]}),
]


class ShortInvert(torch.nn.Module):
    def forward(self, x):
        return torch.bitwise_not(x.short() - 3).long() + 1


class Uint8Posterize(torch.nn.Module):
    def forward(self, img):
        inv = ~img
        keep = (img > 100) & (inv < 200) | (img == inv)
        return ((img // 32) * 32).float() + keep.float(), inv


CASES += [
    # Scripted, the comparisons keep their uint8 operands; ONNX Runtime has no uint8 Greater/Less/Equal
    # kernel although the schemas list uint8, so the file would not load.
    case("uint8_compare_scripted", Uint8Posterize(), [Npy(np.arange(0, 256, 5, dtype=np.uint8).reshape(1, 52))],
         opsets=(9, 11, 17), script=True, dynamic={0: [0, 1]}),
    case("bitwise_not_int16_scripted", ShortInvert(), [T(2, 5, dtype="int64", fill="arange")],
         opsets=(11,), script=True),
]


class Uint8HalveOrDouble(torch.nn.Module):
    def forward(self, x):
        y = (x * 60 + 128).clamp(0, 255).byte()
        for i in range(x.size(0)):
            if bool(y.max() > 128):
                y = y // 2 + 1
            else:
                y = y * 2 - 1
        return y


class Int8StepInBranch(torch.nn.Module):
    def forward(self, x):
        q = (x * 40).to(torch.int8)
        if bool(x.mean() > 0):
            q = q * 3 - 5
        else:
            q = -q + 7
        return q, q.abs() > 20


CASES += [
    # Narrow-integer arithmetic and comparisons inside Loop and If bodies: the legalize-types pass
    # widens them there too (ONNX Runtime refused to load the body's uint8 Add). The loop takes both
    # branches across its iterations, and the uint8 steps wrap around as in libtorch.
    case("uint8_loop_if_scripted", Uint8HalveOrDouble(), [T(3, 4)], opsets=(11, 13, 17), script=True,
         dynamic={0: [0, 1]}),
    case("int8_if_branch_scripted", Int8StepInBranch(), [T(3, 5)], opsets=(11, 13), script=True),
]


class TruncatedNonZero(torch.nn.Module):
    def forward(self, x):
        return torch.where((x * 3).long().to(torch.bool), x, -x)


# A float truncated to an integer, then tested for non-zero: ONNX Runtime 1.20 fuses the two Casts
# into one float -> bool Cast and loses the truncation (0 < |3x| < 1 gave true); oxport writes the
# second step as Not(Equal(x, 0)). About a quarter of these inputs lie in that range.
CASES += [
    case("cast_float_long_bool", lambda x: (x * 3).long().bool(), [T(4, 50)], opsets=(9, 11, 17), dynamic={0: [0]}),
    case("cast_float_int8_bool", lambda x: (x * 3).to(torch.int8).bool(), [T(4, 50)], opsets=(9, 11)),
    case("cast_float_int_logical_and", lambda x, m: (x * 3).int().logical_and(m), [T(4, 50), T(4, 50, dtype="bool")],
         opsets=(11, 17)),
    case("cast_float_long_where_scripted", TruncatedNonZero(), [T(4, 50)], opsets=(11,), script=True),
]


# &, |, ^ on integer tensors below opset 18 (bits by integer Div/Mod along a new axis; the top bit
# apart). Every pair of a grid of values with each type's extremes, sign patterns and alternating bits.
def _grid(dtype, values):
    v = np.array(values, dtype=dtype)
    return [Npy(v.reshape(-1, 1)), Npy(v.reshape(1, -1))]


_I64 = [0, 1, -1, 2, -2, 3, -3, 7, -8, 255, -256, 0x5555555555555555, -0x5555555555555556, 1 << 62, -(1 << 62),
        -(1 << 63), (1 << 63) - 1, -(1 << 63) + 1, 123456789012345, -987654321098765]
_I32 = [0, 1, -1, 2, -3, 0x55555555, -0x55555556, 1 << 30, -(1 << 30), -(1 << 31), (1 << 31) - 1, -(1 << 31) + 1,
        123456789, -98765432]
_I16 = [0, 1, -1, 5, -6, 0x5555, -0x5556, 1 << 14, -(1 << 14), -(1 << 15), (1 << 15) - 1, 1234, -4321]
_I8 = [0, 1, -1, 5, -6, 0x55, -0x56, 64, -64, -128, 127, -127, 42]
_U8 = [0, 1, 2, 85, 170, 127, 128, 129, 200, 254, 255, 64, 15]


def _all_ops(a, b):
    return a & b, a | b, a ^ b


class BitwiseScripted(torch.nn.Module):
    def forward(self, a, b):
        return a & b, torch.bitwise_or(a, b), a.bitwise_xor(b)


class BitwiseInplaceScripted(torch.nn.Module):
    def forward(self, a, b):
        y = a.clone()
        y &= b
        z = a.clone()
        z |= b
        z.bitwise_xor_(y)
        return y, z


class BitwiseMasksScripted(torch.nn.Module):
    def forward(self, x):
        return x & 0xFF, x & 1, x | (1 << 5), x ^ (1 << 3), x & -8, x | 7, x ^ 15, (x >> 4) & 0xF


def _masks64(x):
    return (x & 0xFF, x & 1, 1 | x, x | (1 << 5), x ^ (1 << 3), x & -8, x | 7, x ^ 15, x & 0, x | 0, x ^ -1,
            x | -1, x & -1, x & (1 << 62), x ^ (1 << 62), x | -(1 << 63), x ^ -(1 << 63), x & ((1 << 63) - 1),
            x | ((1 << 63) - 1), x & 0x1234)


def _masks8(x):
    return (x & 0x40, x ^ -128, x & 127, x | 127, x | 64, x & 0xF, x ^ 0x7F, x & -16, x & 0x35, x | -128)


def _masks_u8(x):
    return (x & 0x80, x ^ 0x80, x | 0x80, x & 0x7F, x | 0x7F, x ^ 0x40, x & 0xF0, x & 0x35, x ^ 0xFF, x | 0xFF)


CASES += [
    case("bitwise_int64_grid", _all_ops, _grid(np.int64, _I64), opsets=(9, 11, 17), dynamic={0: [0], 1: [1]}),
    case("bitwise_int32_grid_scripted", BitwiseScripted(), _grid(np.int32, _I32), opsets=(9, 11, 17), script=True,
         dynamic={0: [0]}),
    case("bitwise_int16_grid", _all_ops, _grid(np.int16, _I16), opsets=(9, 11, 17)),
    case("bitwise_int8_grid", _all_ops, _grid(np.int8, _I8), opsets=(9, 11, 17), dynamic={1: [1]}),
    case("bitwise_uint8_grid", lambda a, b: (torch.bitwise_and(a, b), torch.bitwise_or(a, b), torch.bitwise_xor(a, b)),
         _grid(np.uint8, _U8), opsets=(9, 11, 17)),
    case("bitwise_uint8_all_values", lambda a: (a & (a >> 1), a | 0x21, a ^ (a * 7)),
         [Npy(np.arange(256, dtype=np.uint8).reshape(16, 16))], opsets=(11, 17), dynamic={0: [0]}),
    case("bitwise_inplace_scripted", BitwiseInplaceScripted(), _grid(np.int64, _I64), opsets=(11, 17), script=True),
    case("bitwise_inplace_traced", lambda a, b: (a.clone().bitwise_and_(b), a.clone().bitwise_or_(3),
                                                 a.clone().__ixor__(b)),
         [Npy(np.array(_I32, dtype=np.int32)), Npy(np.array(_I32[::-1], dtype=np.int32))], opsets=(11,)),
    # A constant operand of a cheap form (0, all ones, one bit, a low or high mask) is a Mod or a Div.
    case("bitwise_masks_int64", _masks64, [Npy(np.array(_I64, dtype=np.int64).reshape(4, 5))], opsets=(9, 11, 17),
         dynamic={0: [0]}),
    case("bitwise_masks_scripted", BitwiseMasksScripted(), [Npy(np.array(_I64, dtype=np.int64).reshape(4, 5))],
         opsets=(9, 11, 17), script=True, dynamic={0: [0, 1]}),
    case("bitwise_masks_int32_scripted", BitwiseMasksScripted(), [Npy(np.array(_I32, dtype=np.int32))],
         opsets=(11,), script=True),
    case("bitwise_masks_int8", _masks8, [Npy(np.arange(-128, 128, dtype=np.int8).reshape(16, 16))], opsets=(9, 11, 17)),
    case("bitwise_masks_int16", lambda x: (x & 0x4000, x ^ -(1 << 15), x & 0x7FFF, x & 0xFF, x | 0x00F0),
         [Npy(np.array(_I16, dtype=np.int16))], opsets=(9, 11, 17)),
    case("bitwise_masks_uint8", _masks_u8, [Npy(np.arange(256, dtype=np.uint8).reshape(16, 16))], opsets=(9, 11, 17),
         dynamic={0: [0]}),
    # Promotion: int32 & int64 is int64, a bool mask & an integer tensor is the integer, a 0-d tensor operand.
    case("bitwise_mixed_types", lambda a, b, m: ((a.int() & b), (m > 0) | b, b ^ torch.tensor(6), a.short() & m.short()),
         [Npy(np.array(_I32, dtype=np.int64)), Npy(np.array(_I32[::-1], dtype=np.int64)),
          Npy(np.array(_I32, dtype=np.int64) % 7 - 3)], opsets=(9, 11, 17)),
    # Hashing as code writes it: a bucket index from ids with xor and a mask.
    case("bitwise_hash_bucket", lambda ids, seed: ((ids * 2654435761) ^ (ids >> 16) ^ seed) & 1023,
         [T(4, 6, dtype="int64", fill="arange"), Npy(np.array([0x1F3D5B79], dtype=np.int64))], opsets=(11, 17),
         dynamic={0: [0, 1]}),
]
