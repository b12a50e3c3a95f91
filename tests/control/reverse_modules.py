"""Scripted list.reverse() (issue 16, probe round 4: a BiLSTM-CRF's Viterbi backtrace appends the best
tags from last to first, then reverses the list before torch.stack)."""
from typing import List

import torch
from torch import nn


class ReverseLoopList(nn.Module):
    """A list appended in a loop over a dynamic length, reversed in place, stacked; and a list of known
    length reversed too (its elements are reordered at export time)."""

    def forward(self, x):  # x: [T, B]
        steps: List[torch.Tensor] = []
        acc = torch.zeros_like(x[0])
        for i in range(x.size(0)):
            acc = torch.maximum(acc, x[i]) + i
            steps.append(acc)
        steps.reverse()
        pair = [x[0], x[-1] * 2]
        pair.reverse()
        return torch.stack(steps, dim=1), torch.cat(pair)
