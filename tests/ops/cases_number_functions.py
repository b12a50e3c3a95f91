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
