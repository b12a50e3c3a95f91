"""Antialiased resize (ops_resize_aa.cpp): F.interpolate(..., antialias=True) as two MatMuls with
PyTorch's separable aa weights (ONNX Resize's antialias is opset 18)."""
import torch
import torch.nn.functional as F

from optest import Fn, T, case

ALL = (9, 11, 13, 17)


def aa(mode, **kw):
    return Fn(lambda x: F.interpolate(x, mode=mode, antialias=True, **kw))


class ScriptedAa(torch.nn.Module):
    """A scripted F.interpolate records aten::__interpolate with its antialias argument."""

    def __init__(self, mode, size=None, scale=None):
        super().__init__()
        self.mode, self.size, self.scale = mode, size, scale

    def forward(self, x):
        if self.size is not None:
            return F.interpolate(x, size=self.size, mode=self.mode, antialias=True)
        return F.interpolate(x, scale_factor=self.scale, mode=self.mode, antialias=True)


X = T(2, 3, 17, 13)
CASES = [
    case("aa_bilinear_size_down", aa("bilinear", size=(5, 7)), [X], opsets=ALL, dynamic={0: [0, 1]}),
    case("aa_bilinear_scale_half", aa("bilinear", scale_factor=0.5), [T(1, 3, 32, 24, seed=1)], opsets=ALL),
    case("aa_bilinear_scale_odd", aa("bilinear", scale_factor=0.37), [X], opsets=(9, 17)),
    case("aa_bilinear_recompute", aa("bilinear", scale_factor=0.3, recompute_scale_factor=True), [X], opsets=(9, 17)),
    case("aa_bilinear_up", aa("bilinear", size=(30, 20)), [X], opsets=(9, 17)),
    case("aa_bilinear_align_corners", aa("bilinear", size=(6, 4), align_corners=True), [X], opsets=(9, 17)),
    case("aa_bilinear_mixed_scales", aa("bilinear", scale_factor=(0.3, 2.5)), [X], opsets=(9, 17)),
    case("aa_bilinear_f64", aa("bilinear", size=(7, 5)), [T(1, 2, 17, 13, dtype="float64", seed=2)], opsets=(17,),
         tolerance=1e-9),
    case("aa_bicubic_size_down", aa("bicubic", size=(5, 7)), [X], opsets=ALL),
    case("aa_bicubic_scale", aa("bicubic", scale_factor=0.25), [T(1, 3, 40, 36, seed=3)], opsets=(9, 17)),
    case("aa_bicubic_up", aa("bicubic", size=(30, 20)), [X], opsets=(9, 17)),
    case("aa_bicubic_align_corners", aa("bicubic", size=(6, 4), align_corners=True), [X], opsets=(9, 17)),
    case("aa_scripted_bilinear_size", ScriptedAa("bilinear", size=[5, 7]), [X], opsets=(9, 17), script=True,
         dynamic={0: [0, 2, 3]}),
    case("aa_scripted_bicubic_scale", ScriptedAa("bicubic", scale=0.4), [X], opsets=(11, 17), script=True,
         dynamic={0: [2, 3]}),
]
