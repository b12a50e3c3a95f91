"""Sequence-labelling decoders as their authors script them (issue 16, probe round 4): a CRF's Viterbi
backtrace collects the best tags from last to first, then list.reverse()s them before stacking."""
from typing import List

import torch
from torch import nn


class ViterbiBacktrace(nn.Module):
    """BiLSTM-CRF decoding over emissions [B, T, K]: a max over previous tags per step, the argmax
    history in a list, the backtrace appended in reverse and turned around with best_tags.reverse()."""

    def __init__(self, tags: int = 5):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(tags, tags))
        self.start_transitions = nn.Parameter(torch.randn(tags))

    def forward(self, emissions):
        score = self.start_transitions + emissions[:, 0]
        history: List[torch.Tensor] = []
        for i in range(1, emissions.size(1)):
            next_score, indices = (score.unsqueeze(2) + self.transitions + emissions[:, i].unsqueeze(1)).max(dim=1)
            score = next_score
            history.append(indices)
        best_score, best_last = score.max(dim=1)
        best_tags = [best_last]
        for hist in history[::-1]:
            best_last = hist.gather(1, best_last.unsqueeze(1)).squeeze(1)
            best_tags.append(best_last)
        best_tags.reverse()
        return best_score, torch.stack(best_tags, dim=1)
