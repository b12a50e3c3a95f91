import numpy as np
import torch

from optest import Fn, Npy, T, case

# Complex values as (real, imag) pairs (ops_complex.cpp); the graphs take and return real tensors.
R = torch.view_as_real
C = torch.view_as_complex
OPS = (9, 11, 17)


class GlobalFilter(torch.nn.Module):
    """GFNet's global filter: a complex weight (a folded view_as_complex of a parameter)."""

    def __init__(self, h=6, w=4, dim=3):
        super().__init__()
        torch.manual_seed(0)
        self.complex_weight = torch.nn.Parameter(torch.randn(h, w, dim, 2) * 0.02)

    def forward(self, x):
        b, h, w, c = x.shape
        y = torch.fft.rfft2(x, dim=(1, 2), norm="ortho")
        y = y * torch.view_as_complex(self.complex_weight)
        return torch.fft.irfft2(y, s=(h, w), dim=(1, 2), norm="ortho")


CASES = [
    case("complex_mul_add_sub_div", Fn(lambda a, b: (R(C(a) * C(b)), R(C(a) + C(b)), R(C(a) - C(b)),
                                                   R(C(a) / C(b)))),
         [T(3, 4, 2), T(3, 4, 2, seed=1)], opsets=OPS, dynamic={0: [0], 1: [0]}),
    case("complex_mixed_real", Fn(lambda a, r: (R(C(a) * r), R(C(a) + r), R(r - C(a)), R(C(a) / (r.abs() + 1)))),
         [T(3, 4, 2), T(3, 4, seed=2)], opsets=OPS),
    case("complex_parts", Fn(lambda a: (C(a).real, C(a).imag, C(a).abs(), C(a).angle(), R(C(a).conj().resolve_conj()))),
         [T(5, 6, 2)], opsets=OPS),
    case("complex_polar_complex", Fn(lambda m, p: (R(torch.polar(m.abs(), p)), R(torch.complex(m, p)))),
         [T(4, 5), T(4, 5, seed=3)], opsets=OPS),
    case("complex_shape_ops", Fn(lambda a: R(torch.cat([C(a)[:, 1:3].transpose(0, 1),
                                                        C(a).permute(1, 0)[0:2].flip(0)], dim=1)
                                             .reshape(-1).unsqueeze(0))),
         [T(4, 5, 2)], opsets=OPS),
    case("complex_gfnet_filter", GlobalFilter(), [T(2, 6, 6, 3)], opsets=OPS, tolerance=1e-4),
    case("complex_reaches_unsupported", Fn(lambda a: R(torch.exp(C(a)))), [T(3, 2)], opsets=(11,),
         expect="error:complex-value"),
    case("complex_output_refused", Fn(lambda a: C(a) * 2), [T(3, 2)], opsets=(11,), expect="error:complex-value"),
]
CASES += [
    case("real_angle_of_real", Fn(lambda x: (torch.real(x), torch.angle(x))),
         [Npy(np.array([-2.0, -0.0, 0.0, 1.5, np.nan, -np.inf], dtype=np.float32))], opsets=OPS),
]
