import torch
import torch.nn.functional as F

from optest import T, case

ALL = (9, 11, 13, 17)


class Area(torch.nn.Module):
    """F.interpolate(mode='area') with a scale factor: adaptive_avg_pool to floor(in * s)."""

    def __init__(self, scale, recompute=None):
        super().__init__()
        self.scale = scale
        self.recompute = recompute

    def forward(self, x):
        return F.interpolate(x, scale_factor=self.scale, mode="area", recompute_scale_factor=self.recompute)


class AreaOfOther(torch.nn.Module):
    """Area interpolation to another input's spatial size (adaptive pooling to y's H, W)."""

    def forward(self, x, y):
        return F.adaptive_avg_pool2d(x, y.shape[2:])


CASES = [
    # The window sizes change with the input's size: checked at the +1 and x2 sizes.
    case("interpolate_area_half", Area(0.5), [T(1, 3, 8, 8)], opsets=ALL, dynamic={0: [0, 2, 3]}),
    case("interpolate_area_uneven", Area((0.37, 0.6)), [T(2, 2, 11, 9)], opsets=ALL, dynamic={0: [0, 2, 3]}),
    case("interpolate_area_upscale_recompute", Area(1.7, recompute=True), [T(1, 2, 5, 6)], opsets=(11, 17),
         dynamic={0: [2, 3]}),
    case("interpolate_area_scripted", Area(0.45), [T(1, 2, 9, 7)], opsets=(11, 17), script=True, dynamic={0: [2, 3]}),
    case("interpolate_area_1d", Area(0.3), [T(2, 3, 10)], opsets=(9, 17), dynamic={0: [2]}),
    case("interpolate_area_3d", Area(0.5), [T(1, 2, 5, 6, 4)], opsets=(11, 17), dynamic={0: [2, 3, 4]}),
    case("interpolate_area_static", Area(0.6), [T(1, 2, 7, 7)], opsets=(9, 17)),
    case("adaptive_avg_pool_to_other_size", AreaOfOther(), [T(1, 2, 9, 11), T(1, 1, 4, 3)], opsets=(11, 17),
         dynamic={0: [2, 3], 1: [2, 3]}),
]
