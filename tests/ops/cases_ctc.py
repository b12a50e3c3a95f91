import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from optest import Npy, T, case

ALL = (9, 11, 13, 17)
# Padded targets (blank 0 never a target); row 0 repeats a label (no skip between the repeats),
# row 1 is padded past its length with values that must not be read.
TARGETS = Npy(np.array([[1, 2, 2, 3], [4, 1, 9, 9], [3, 3, 1, 0]], dtype=np.int64))
IN_LEN = Npy(np.array([12, 9, 7], dtype=np.int64))
TGT_LEN = Npy(np.array([4, 2, 3], dtype=np.int64))
CONCAT = Npy(np.array([1, 2, 2, 3, 4, 1, 3, 3, 1], dtype=np.int64))


class Ctc(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.loss = nn.CTCLoss(**kw)

    def forward(self, x, targets, input_lengths, target_lengths):
        return self.loss(x.log_softmax(-1), targets, input_lengths, target_lengths)


class CtcIntLengths(nn.Module):
    """Lengths as Python ints (the ctc_loss.IntList overload)."""

    def forward(self, x, targets):
        return F.ctc_loss(x.log_softmax(-1), targets, [12, 9, 7], [4, 2, 3], blank=0, reduction="sum")


CASES = [
    case("ctc_loss_mean", Ctc(), [T(12, 3, 6), TARGETS, IN_LEN, TGT_LEN], opsets=ALL, tolerance=1e-5, dynamic={0: [0]}),
    case("ctc_loss_mean_scripted", Ctc(), [T(12, 3, 6), TARGETS, IN_LEN, TGT_LEN], opsets=(11, 17), tolerance=1e-5,
         script=True, dynamic={0: [0]}),
    case("ctc_loss_none_blank_last", Ctc(blank=9, reduction="none"),
         [T(12, 3, 10), Npy(np.array([[1, 2, 2, 3], [4, 1, 0, 0], [3, 3, 1, 0]], dtype=np.int64)), IN_LEN, TGT_LEN],
         opsets=(9, 13), tolerance=1e-5),
    case("ctc_loss_sum_concatenated", Ctc(reduction="sum"), [T(12, 3, 6), CONCAT, IN_LEN, TGT_LEN], opsets=(9, 11, 17),
         tolerance=1e-5),
    case("ctc_loss_int_lengths", CtcIntLengths(), [T(12, 3, 6), TARGETS], opsets=(11, 17), tolerance=1e-5),
    # Too short for its target (3 repeats need 5 steps): inf, or 0 with zero_infinity; an empty target.
    case("ctc_loss_zero_infinity", Ctc(reduction="none", zero_infinity=True),
         [T(6, 3, 5), Npy(np.array([[2, 2, 2], [1, 0, 0], [1, 2, 3]], dtype=np.int64)),
          Npy(np.array([4, 6, 6], dtype=np.int64)), Npy(np.array([3, 0, 3], dtype=np.int64))], opsets=(9, 17), tolerance=1e-5),
    case("ctc_loss_unbatched", Ctc(reduction="sum"), [T(8, 5), Npy(np.array([1, 3, 3], dtype=np.int64)),
                                                      Npy(np.array(8)), Npy(np.array(3))], opsets=(11, 17), tolerance=1e-5),
]
