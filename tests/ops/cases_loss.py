import numpy as np
import torch
import torch.nn.functional as F

from optest import Npy, T, case

# Class-index targets (int64), one of them the ignored index in the *_ignore cases.
TARGET = Npy(np.array([1, 0, 3, 2, 3], dtype=np.int64))
TARGET_IGNORE = Npy(np.array([1, -100, 3, 2, -100], dtype=np.int64))
TARGET_2D = Npy(np.random.RandomState(3).randint(0, 4, (2, 3, 3)).astype(np.int64))
PROB = Npy(np.random.RandomState(4).uniform(0.05, 0.95, (3, 4)).astype(np.float32))
LABEL = Npy(np.random.RandomState(5).randint(0, 2, (3, 4)).astype(np.float32))
WEIGHT = Npy(np.array([0.5, 2.0, 1.0, 0.25], dtype=np.float32))

CASES = [
    case("mse_loss_mean", lambda a, b: F.mse_loss(a, b), [T(3, 4), T(3, 4, seed=1)], opsets=(9, 13, 17),
         dynamic={0: [0], 1: [0]}),
    case("mse_loss_sum_none", lambda a, b: (F.mse_loss(a, b, reduction="sum"), F.mse_loss(a, b, reduction="none")),
         [T(2, 3), T(2, 3, seed=1)]),
    case("mse_loss_broadcast_target", lambda a, b: F.mse_loss(a, b.expand_as(a)), [T(3, 4), T(4, seed=1)]),
    case("l1_loss", lambda a, b: (F.l1_loss(a, b), F.l1_loss(a, b, reduction="none")), [T(3, 4), T(3, 4, seed=1)],
         opsets=(9, 13)),
    case("smooth_l1_loss", lambda a, b: (F.smooth_l1_loss(a, b, beta=0.5), F.smooth_l1_loss(a, b, reduction="sum")),
         [T(4, 5), T(4, 5, seed=1)]),
    case("smooth_l1_loss_beta0", lambda a, b: F.smooth_l1_loss(a, b, beta=0.0, reduction="none"), [T(4, 5), T(4, 5, seed=1)]),
    case("huber_loss", lambda a, b: (F.huber_loss(a, b, delta=0.7), F.huber_loss(a, b, reduction="none")),
         [T(4, 5), T(4, 5, seed=1)]),
    case("bce_with_logits", lambda x, t: F.binary_cross_entropy_with_logits(x * 10, t), [T(3, 4), LABEL],
         opsets=(9, 13, 17)),
    case("bce_with_logits_dynamic", lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction="sum"),
         [T(3, 4), T(3, 4, seed=2, fill="rand")], opsets=(11, 17), dynamic={0: [0, 1], 1: [0, 1]}),
    case("bce_with_logits_weights", lambda x, t, w: F.binary_cross_entropy_with_logits(
        x, t, weight=w, pos_weight=w * 3, reduction="none"), [T(3, 4), LABEL, WEIGHT]),
    case("bce", lambda p, t: (F.binary_cross_entropy(p, t), F.binary_cross_entropy(p, t, reduction="sum")),
         [PROB, LABEL]),
    case("cross_entropy", lambda x, t: F.cross_entropy(x, t), [T(5, 4), TARGET], opsets=(9, 11, 12, 13, 17)),
    case("cross_entropy_weight_ignore", lambda x, t, w: (F.cross_entropy(x, t, weight=w),
                                                          F.cross_entropy(x, t, weight=w, reduction="none")),
         [T(5, 4), TARGET_IGNORE, WEIGHT], opsets=(9, 11, 12, 17)),
    case("cross_entropy_2d", lambda x, t: F.cross_entropy(x, t, reduction="sum"), [T(2, 4, 3, 3), TARGET_2D],
         opsets=(9, 11, 12, 17)),
    case("cross_entropy_2d_mean_dynamic", lambda x, t: F.cross_entropy(x * 3, t), [T(2, 4, 3, 3), TARGET_2D],
         opsets=(11, 17), dynamic={0: [0, 2, 3], 1: [0, 1, 2]}),
    case("cross_entropy_unbatched", lambda x, t: (F.cross_entropy(x, t), F.cross_entropy(x, t, reduction="none")),
         [T(4), Npy(np.array(2, dtype=np.int64))], opsets=(11, 12)),
    case("nll_loss", lambda x, t: (F.nll_loss(F.log_softmax(x, 1), t), F.nll_loss(x, t, reduction="none")),
         [T(5, 4), TARGET], opsets=(9, 11, 12, 17)),
    case("nll_loss_ignore_mean", lambda x, t: F.nll_loss(F.log_softmax(x, 1), t, ignore_index=-100),
         [T(5, 4), TARGET_IGNORE], opsets=(11, 12)),
    case("nll_loss_ignore_index_weight", lambda x, t, w: (F.nll_loss(x, t, weight=w, ignore_index=3),
                                                          F.nll_loss(x, t, weight=w, ignore_index=3, reduction="sum")),
         [T(5, 4), TARGET, WEIGHT], opsets=(10, 12)),
    case("nll_loss2d", lambda x, t: F.nll_loss(F.log_softmax(x, 1), t), [T(2, 4, 3, 3), TARGET_2D],
         opsets=(9, 11, 12, 17)),
]


class GaussianNLL(torch.nn.Module):
    """F.gaussian_nll_loss scripted: its `else: raise` on var's size sits under `if var.size() !=
    input.size()`, a branch on sizes the example may not take, and compares lists of sizes
    (`input.size()[:-1] == var.size()`), one bool and not an elementwise Equal."""

    def forward(self, x, t, var):
        return F.gaussian_nll_loss(x, t, var), F.gaussian_nll_loss(x, t, var, reduction="none")


CASES += [
    case("gaussian_nll_loss_script", GaussianNLL(), [T(4, 5), T(4, 5, seed=1), T(4, 5, seed=2, fill="rand")],
         script=True, opsets=(11, 17), dynamic={0: [0], 1: [0], 2: [0]}),
    case("gaussian_nll_loss_script_var_per_row", GaussianNLL(), [T(4, 5), T(4, 5, seed=1), T(4, seed=2, fill="rand")],
         script=True, opsets=(11, 17)),
    case("gaussian_nll_loss_script_var_last_1", GaussianNLL(),
         [T(3, 4, 5), T(3, 4, 5, seed=1), T(3, 4, 1, seed=2, fill="rand")], script=True, opsets=(11, 17)),
]
