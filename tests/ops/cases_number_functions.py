import numpy as np
import torch

from optest import Fn, Npy, T, case

GCD_A = Npy(np.array([[0, 0, 12, -12, 7, 1071, -48, 2 ** 40 * 3, 832040],
                      [5, -9, 18, 18, 13, 462, -180, 2 ** 41 * 5, 514229]], dtype=np.int64))
GCD_B = Npy(np.array([0, 6, -8, 30, 0, 1029, 0, 2 ** 20 * 9, 1346269], dtype=np.int64))
I0_X = Npy(np.array([0.0, 1e-4, -0.5, 1.0, -3.25, 7.99, 8.0, 8.01, -15.0, 30.0, 80.0, -88.0, np.nan,
                     np.inf], dtype=np.float32))

CASES = [
    case("i0", Fn(torch.i0), [I0_X], opsets=(9, 11, 13, 17)),
    case("i0_random", Fn(torch.i0), [T(3, 40, seed=8)], dynamic={0: [0, 1]}),
    case("i0_double_int", Fn(lambda x, y: (torch.i0(x), torch.i0(y))),
         [Npy(np.linspace(-20, 20, 41)), Npy(np.array([-3, 0, 4, 9], dtype=np.int64))]),
    case("gcd", Fn(torch.gcd), [GCD_A, GCD_B], opsets=(9, 11, 13, 17)),
    case("lcm", Fn(torch.lcm), [GCD_A, GCD_B]),
    case("gcd_lcm_int32", Fn(lambda a, b: (torch.gcd(a, b), torch.lcm(a, b))),
         [Npy(np.array([[0, 4, -6, 2 ** 30, 17711], [9, -15, 35, 3 * 2 ** 20, 28657]], dtype=np.int32)),
          Npy(np.array([3, 10, 21, 2 ** 24, 10946], dtype=np.int32))]),
    case("gcd_dynamic", Fn(torch.gcd), [T(3, 4, dtype="int64"), T(3, 4, dtype="int64", seed=2)],
         dynamic={0: [0, 1], 1: [0, 1]}),
]


# i0e, i1, i1e, ndtri, erfcx and log_ndtr, each compared element by element (one 0-d output per
# point, so a tail value is not judged against the largest one): both sides of each branch's edge,
# the tails, 0, +-inf and NaN, in float32 (libtorch's float kernel) and float64.
def _each(fn):
    return Fn(lambda x: tuple(fn(x).unbind(0)))


_NAN, _INF = np.nan, np.inf
BESSEL_X = [0.0, 1e-4, -0.5, 1.0, -3.25, 7.99, 8.0, 8.01, -15.0, 30.0, 80.0, -88.0, 88.7, 88.75, 89.0, 92.0, 100.0,
            700.0, 1e30, _NAN, _INF, -_INF]
BESSEL_X64 = BESSEL_X + [709.0, 710.0, -720.0, 1e300]
NDTRI_Y = [0.0, 1.0, -0.1, 1.1, 1.4e-45, 1e-30, 1e-20, 1.2e-14, 1.3e-14, 1e-10, 1e-3, 0.1, 0.1353, 0.1354, 0.3, 0.5,
           0.7, 0.8646, 0.8647, 0.9, 0.999, 1 - 1e-7, _NAN, _INF, -_INF]
NDTRI_Y64 = NDTRI_Y + [1e-300, 1e-320, 1 - 1e-16]
ERFCX_X = [-30.0, -26.8, -26.6, -20.0, -9.4, -9.3, -6.2, -6.0, -1.0, -0.1, -1e-8, 0.0, 1e-8, 0.5, 1.0, 3.99, 4.0,
           10.0, 49.9, 50.0, 50.1, 100.0, 1e7, 5e7, 6e7, 1e30, _INF, -_INF, _NAN]
LOG_NDTR_X = [-1e30, -1e10, -1e3, -40.0, -38.5, -10.0, -5.0, -1.0001, -1.0, -0.9999, -0.5, 0.0, 0.5, 1.0, 3.0, 5.0,
              8.0, 10.0, 12.5, 40.0, _INF, -_INF, _NAN]


def _npy(values, dtype=np.float32):
    return [Npy(np.array(values, dtype=dtype))]


class SpecialScripted(torch.nn.Module):
    def forward(self, x, p):
        return (torch.special.i0e(x), torch.special.i1(x), torch.special.i1e(x), torch.special.erfcx(x),
                torch.special.log_ndtr(x), torch.special.ndtri(p))


CASES += [
    case("special_i0e_points", _each(torch.special.i0e), _npy(BESSEL_X), opsets=(9, 11, 17), tolerance=1e-6),
    # libtorch sums i1 and i1e in float for float32 (Clenshaw at |x| = 8 is off by 1e-6 there): 2e-6.
    case("special_i1_points", _each(torch.special.i1), _npy(BESSEL_X), opsets=(9, 11, 17), tolerance=2e-6),
    case("special_i1e_points", _each(torch.special.i1e), _npy(BESSEL_X), opsets=(9, 11, 17), tolerance=2e-6),
    case("special_bessel_float64_points", _each(lambda x: torch.stack([torch.special.i0e(x), torch.special.i1(x),
                                                                       torch.special.i1e(x)], 1)),
         _npy(BESSEL_X64, np.float64), opsets=(11,), tolerance=1e-12),
    case("special_ndtri_points", _each(torch.special.ndtri), _npy(NDTRI_Y), opsets=(9, 11, 17), tolerance=1e-6),
    case("special_ndtri_float64_points", _each(torch.special.ndtri), _npy(NDTRI_Y64, np.float64), opsets=(11,),
         tolerance=1e-12),
    case("special_erfcx_points", _each(torch.special.erfcx), _npy(ERFCX_X), opsets=(9, 11, 17), tolerance=1e-6),
    case("special_erfcx_float64_points", _each(torch.special.erfcx), _npy(ERFCX_X, np.float64), opsets=(11,),
         tolerance=1e-12),
    case("special_log_ndtr_points", _each(torch.special.log_ndtr), _npy(LOG_NDTR_X), opsets=(9, 11, 17), tolerance=1e-6),
    case("special_log_ndtr_float64_points", _each(torch.special.log_ndtr), _npy(LOG_NDTR_X, np.float64), opsets=(11,),
         tolerance=1e-12),
    # Dense sweeps with dynamic axes, and the integer inputs the ops promote to float32.
    case("special_bessel_random", Fn(lambda x: (torch.special.i0e(x * 6), torch.special.i1(x * 6), torch.special.i1e(x * 6))),
         [T(3, 40, seed=8)], dynamic={0: [0, 1]}),
    case("special_erfcx_log_ndtr_random", Fn(lambda x: (torch.special.erfcx(x * 4), torch.special.log_ndtr(x * 6))),
         [T(3, 40, seed=9)], dynamic={0: [0, 1]}),
    case("special_ndtri_random", Fn(torch.special.ndtri), [T(3, 40, fill="rand", seed=3)], dynamic={0: [0, 1]}),
    case("special_int_inputs", Fn(lambda k: (torch.special.i1(k), torch.special.erfcx(k), torch.special.log_ndtr(k))),
         [Npy(np.array([-3, 0, 2, 9], dtype=np.int64))]),
    case("special_scripted", SpecialScripted(), [T(2, 30, seed=4), T(2, 30, fill="rand", seed=5)], script=True,
         opsets=(9, 11, 17), dynamic={0: [0], 1: [0]}),
]
