import numpy as np
import torch
import torch.nn.functional as F

from optest import Npy, T, case

ALL = (9, 11, 13, 17)
SIGN = Npy(np.array([1, -1, 1, -1, 1], dtype=np.float32))
SIGN_INT = Npy(np.array([[1, -1, 1, 1], [-1, -1, 1, -1], [1, 1, -1, 1]], dtype=np.int64))
CLASSES = Npy(np.array([0, 2, 1, 2], dtype=np.int64))
RATE = Npy(np.random.RandomState(4).uniform(0.2, 3, (3, 4)).astype(np.float32))
ML_TARGET = Npy(np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 1, 2, 0]], dtype=np.int64))  # padded; row 2 has none
COUNTS = Npy(np.array([[0, 1, 2, 5], [3, 0, 1, 7], [1, 1, 4, 0]], dtype=np.float32))

CASES = [
    case("margin_ranking_loss", lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=0.3), [T(5), T(5, seed=1), SIGN],
         opsets=ALL, dynamic={0: [0], 1: [0], 2: [0]}),
    case("margin_ranking_loss_none", lambda a, b, t: F.margin_ranking_loss(a, b, t, reduction="none"),
         [T(5), T(5, seed=1), SIGN], opsets=(9, 13)),
    case("hinge_embedding_loss", lambda x, t: F.hinge_embedding_loss(x, t, margin=0.5), [T(3, 4), SIGN_INT], opsets=ALL),
    case("hinge_embedding_loss_sum", lambda x, t: F.hinge_embedding_loss(x, t.float(), reduction="sum"),
         [T(3, 4), SIGN_INT], opsets=(9, 13)),
    case("soft_margin_loss", lambda x, t: F.soft_margin_loss(x, t.float()), [T(3, 4), SIGN_INT], opsets=ALL),
    case("soft_margin_loss_none", lambda x, t: F.soft_margin_loss(x, t.float(), reduction="none"),
         [T(3, 4), SIGN_INT], opsets=(9, 13)),
    case("cosine_embedding_loss", lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.2),
         [T(5, 4), T(5, 4, seed=1), SIGN], opsets=ALL, dynamic={0: [0, 1], 1: [0, 1], 2: [0]}),
    case("cosine_embedding_loss_none_zero_row", lambda a, b, t: F.cosine_embedding_loss(a * (a > -0.5), b, t, reduction="none"),
         [Npy(np.array([[0, 0, 0], [1, 2, 3], [-1, 0.5, 2]], dtype=np.float32)), T(3, 3, seed=1),
          Npy(np.array([1, -1, -1], dtype=np.int64))], opsets=(9, 13)),
    case("triplet_margin_loss", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=0.5), [T(4, 6), T(4, 6, seed=1), T(4, 6, seed=2)],
         opsets=ALL, dynamic={0: [0, 1], 1: [0, 1], 2: [0, 1]}),
    case("triplet_margin_loss_p1_swap", lambda a, p, n: F.triplet_margin_loss(a, p, n, p=1, swap=True, reduction="none"),
         [T(4, 6), T(4, 6, seed=1), T(4, 6, seed=2)], opsets=(9, 13)),
    case("triplet_margin_loss_p3_sum", lambda a, p, n: F.triplet_margin_loss(a, p, n, p=3, reduction="sum"),
         [T(4, 6), T(4, 6, seed=1), T(4, 6, seed=2)], opsets=(9, 13)),
    case("multi_margin_loss", lambda x, y: F.multi_margin_loss(x, y), [T(4, 3), CLASSES], opsets=ALL, dynamic={0: [0, 1], 1: [0]}),
    case("multi_margin_loss_p2_weight", lambda x, y, w: F.multi_margin_loss(x, y, p=2, margin=0.7, weight=w, reduction="none"),
         [T(4, 3), CLASSES, Npy(np.array([0.5, 2.0, 1.0], dtype=np.float32))], opsets=(9, 13)),
    case("multi_margin_loss_1d", lambda x: F.multi_margin_loss(x, torch.tensor(1), reduction="none"), [T(5)], opsets=(9, 13)),
    case("poisson_nll_loss_log_input", lambda x, t: F.poisson_nll_loss(x, t), [T(3, 4), COUNTS], opsets=ALL),
    case("poisson_nll_loss_rate_full", lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True, reduction="sum"),
         [RATE, COUNTS], opsets=ALL),
    case("poisson_nll_loss_none", lambda x, t: F.poisson_nll_loss(x, t, full=True, reduction="none"), [T(3, 4), COUNTS],
         opsets=(9, 13)),
    case("multilabel_margin_loss", lambda x, y: F.multilabel_margin_loss(x, y), [T(3, 4), ML_TARGET], opsets=ALL,
         dynamic={0: [0], 1: [0]}),
    case("multilabel_margin_loss_none", lambda x, y: F.multilabel_margin_loss(x, y, reduction="none"), [T(3, 4), ML_TARGET],
         opsets=(9, 11, 13, 17)),
    case("multilabel_margin_loss_sum_1d", lambda x: F.multilabel_margin_loss(x, torch.tensor([2, 4, -1, 0, 1]), reduction="sum"),
         [T(5)], opsets=(9, 13)),
    case("multilabel_margin_loss_1d_none", lambda x: F.multilabel_margin_loss(x, torch.tensor([1, -1, 0, 2]), reduction="none"),
         [T(4)], opsets=(9, 13)),
]
