import numpy as np
import torch

from optest import Fn, Npy, T, case

CASES = [
    case("kron_2d", Fn(torch.kron), [T(2, 3), T(3, 2, seed=1)], dynamic={0: [0, 1], 1: [0]}),
    case("kron_ranks_differ", Fn(torch.kron), [T(2, 2, 3, seed=2), T(4, seed=3)], opsets=(9, 11, 13, 17)),
    case("kron_int", Fn(torch.kron), [Npy(np.array([[1, -2], [3, 0]], dtype=np.int64)),
                                      Npy(np.array([[2, 5, -1]], dtype=np.int64))]),
    case("kron_empty", Fn(torch.kron), [T(0, 3), T(2, 2, seed=1)]),
    case("block_diag", Fn(lambda a, b, c: torch.block_diag(a, b, c)), [T(2, 3), T(4, seed=1), T(3, 1, seed=2)],
         opsets=(9, 11, 13, 17), dynamic={0: [0, 1], 2: [0]}),
    case("block_diag_scalar_int", Fn(lambda a, b: torch.block_diag(a, b, torch.tensor(7))),
         [Npy(np.array([[1, -2], [3, 4]], dtype=np.int64)), Npy(np.array([5, 6, -7], dtype=np.int64))]),
    case("block_diag_one", Fn(lambda a: torch.block_diag(a)), [T(2, 3)]),
    case("cartesian_prod", Fn(lambda a, b, c: torch.cartesian_prod(a, b, c)), [T(3), T(2, seed=1), T(4, seed=2)],
         opsets=(9, 11, 13, 17), dynamic={0: [0], 2: [0]}),
    case("cartesian_prod_int_one", Fn(lambda a, b: (torch.cartesian_prod(a, b), torch.cartesian_prod(a))),
         [Npy(np.array([1, -2, 3], dtype=np.int64)), Npy(np.array([0, 5], dtype=np.int64))]),
    # an empty factor: no rows, at every opset (ONNX Runtime folds an Expand of a 1 against a 0 to 1)
    case("cartesian_prod_empty", Fn(lambda a, b: torch.cartesian_prod(a, b)), [T(0), T(3)], opsets=(9, 11, 13, 17)),
    case("cartesian_prod_empty_middle", Fn(lambda a, b, c: torch.cartesian_prod(a, b, c)), [T(2), T(0), T(3, seed=1)],
         opsets=(9, 11, 17)),
    case("linalg_vander", Fn(lambda x: torch.linalg.vander(x)), [Npy(np.array([[0.5, -1.5, 2.0, 0.0],
                                                                          [1.0, -0.25, 1.25, 3.0]], dtype=np.float32))],
         opsets=(9, 11, 13, 17)),
    case("linalg_vander_dynamic_n", Fn(lambda x: torch.linalg.vander(x, N=3)), [T(3, 5)], dynamic={0: [0, 1]}),
    case("linalg_vander_default_dynamic", Fn(lambda x: torch.linalg.vander(x)), [T(2, 4, seed=4)], dynamic={0: [1]}),
    case("linalg_vander_int", Fn(lambda x: torch.linalg.vander(x)), [Npy(np.array([2, -3, 0, 5, -1], dtype=np.int64))]),
]
