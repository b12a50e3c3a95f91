import torch
import torch.nn as nn

from optest import Npy, T, case
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class WithState(nn.Module):
    """Calls an RNN module with explicit initial state(s)."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, *state):
        return self.rnn(x, state if len(state) == 2 else state[0])


class Cell(nn.Module):
    """Runs a cell over a short sequence (unrolled by tracing), with or without initial state."""

    def __init__(self, cell, steps=3, lstm=False, with_state=True):
        super().__init__()
        self.cell = cell
        self.steps = steps
        self.lstm = lstm
        self.with_state = with_state

    def forward(self, x, *state):
        s = (state if self.lstm else state[0]) if self.with_state else None
        outs = []
        for t in range(self.steps):
            s = self.cell(x[t], s)
            outs.append(s[0] if self.lstm else s)
        return torch.stack(outs)


class CellOp(nn.Module):
    """Calls aten::lstm_cell/gru_cell/rnn_*_cell directly (scripted: tracing decomposes the cells)."""

    def __init__(self, cls, bias=True):
        super().__init__()
        self.cell = cls(8, 16, bias=bias)


class LstmCellOp(CellOp):
    def forward(self, x, h, c):
        c_ = self.cell
        h2, c2 = torch.lstm_cell(x, [h, c], c_.weight_ih, c_.weight_hh, c_.bias_ih, c_.bias_hh)
        return h2 * 2.0 + c2


class GruCellOp(CellOp):
    def forward(self, x, h):
        c_ = self.cell
        return torch.gru_cell(x, h, c_.weight_ih, c_.weight_hh, c_.bias_ih, c_.bias_hh)


class TanhCellOp(CellOp):
    def forward(self, x, h):
        c_ = self.cell
        return torch.rnn_tanh_cell(x, h, c_.weight_ih, c_.weight_hh, c_.bias_ih, c_.bias_hh)


class ReluCellOp(CellOp):
    def forward(self, x, h):
        c_ = self.cell
        return torch.rnn_relu_cell(x, h, c_.weight_ih, c_.weight_hh, c_.bias_ih, c_.bias_hh)


class Scripted(nn.Module):
    """An RNN module called on one tensor (scripted nn.LSTM itself has only forward overloads)."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)


def lstm(**kw):
    return nn.LSTM(8, 16, **kw)


class Packed(nn.Module):
    """pack_padded_sequence -> RNN -> pad_packed_sequence, as users write it for padded batches."""

    def __init__(self, rnn, batch_first=True, enforce_sorted=True, padding_value=0.0, with_state=False):
        super().__init__()
        self.rnn, self.bf, self.sorted, self.pad = rnn, batch_first, enforce_sorted, padding_value
        self.with_state = with_state

    def forward(self, x, lengths, *state):
        p = pack_padded_sequence(x, lengths, batch_first=self.bf, enforce_sorted=self.sorted)
        if self.with_state:
            y, h = self.rnn(p, state if len(state) == 2 else state[0])
        else:
            y, h = self.rnn(p)
        out, lens = pad_packed_sequence(y, batch_first=self.bf, padding_value=self.pad)
        return out, lens, h


CASES = [
    # Full layers: ONNX LSTM/GRU/RNN, one node per layer and direction pair.
    case("lstm_1layer", lstm(), [T(5, 3, 8)], dynamic={0: [0, 1]}),
    case("lstm_2layer_bidir", lstm(num_layers=2, bidirectional=True), [T(5, 3, 8)], dynamic={0: [0, 1]}),
    case("lstm_batch_first_state", WithState(lstm(num_layers=2, bidirectional=True, batch_first=True)),
         [T(3, 5, 8), T(4, 3, 16), T(4, 3, 16)], dynamic={0: [0, 1], 1: [1], 2: [1]}),
    case("lstm_nobias", lstm(bias=False, num_layers=3), [T(4, 2, 8)], dynamic={0: [0, 1]}),
    case("lstm_dropout_eval", lstm(num_layers=2, dropout=0.5), [T(4, 2, 8)], dynamic={0: [0]}),
    case("lstm_unbatched", lstm(num_layers=2, bidirectional=True), [T(5, 8)], dynamic={0: [0]}),
    # proj_size > 0: a Loop over time per layer and direction (ONNX LSTM has no projection).
    case("lstm_proj", lstm(proj_size=4), [T(5, 3, 8)], opsets=(9, 11, 13, 17), dynamic={0: [0, 1]}),
    case("lstm_proj_scripted", Scripted(lstm(proj_size=4, num_layers=2)), [T(5, 3, 8)], script=True, opsets=(11, 17), dynamic={0: [0, 1]}),
    case("lstm_proj_2layer_bidir", lstm(num_layers=2, bidirectional=True, proj_size=5), [T(6, 2, 8)],
         opsets=(9, 11, 13, 17), dynamic={0: [0, 1]}),
    case("lstm_proj_batch_first_state", WithState(lstm(num_layers=2, bidirectional=True, batch_first=True, proj_size=3)),
         [T(3, 5, 8), T(4, 3, 3), T(4, 3, 16)], opsets=(11, 17), dynamic={0: [0, 1], 1: [1], 2: [1]}),
    case("lstm_proj_nobias_3layer", lstm(bias=False, num_layers=3, proj_size=2), [T(4, 2, 8)], opsets=(9, 13)),
    case("lstm_proj_unbatched", lstm(bidirectional=True, proj_size=4), [T(5, 8)], opsets=(11, 17), dynamic={0: [0]}),
    case("lstm_proj_packed_refused", Packed(nn.LSTM(4, 6, batch_first=True, proj_size=3)), [T(3, 5, 4), Npy([5, 3, 2])],
         opsets=(11,), expect="error:unsupported-form", operator_export_type="ONNX"),
    case("gru_2layer_bidir", nn.GRU(8, 16, num_layers=2, bidirectional=True), [T(5, 3, 8)], dynamic={0: [0, 1]}),
    case("gru_batch_first_state", WithState(nn.GRU(8, 16, num_layers=2, batch_first=True)),
         [T(3, 5, 8), T(2, 3, 16)], dynamic={0: [0, 1], 1: [1]}),
    case("gru_nobias", nn.GRU(8, 16, bias=False), [T(4, 2, 8)], dynamic={0: [0, 1]}),
    case("rnn_tanh_bidir", nn.RNN(8, 16, num_layers=2, bidirectional=True), [T(5, 3, 8)], dynamic={0: [0, 1]}),
    case("rnn_relu", nn.RNN(8, 16, nonlinearity="relu", batch_first=True), [T(3, 5, 8)], dynamic={0: [0, 1]}),
    # Packed sequences: the RNN runs on the padded tensor with sequence_lens (ONNX's own lengths),
    # batch_sizes is computed from the lengths; outputs and final states stop at each length.
    case("lstm_packed", Packed(nn.LSTM(4, 6, batch_first=True)), [T(3, 5, 4), Npy([5, 3, 2])],
         opsets=(9, 11, 14, 17)),
    case("lstm_packed_bidir_2layer_unsorted", Packed(nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True),
                                                     enforce_sorted=False),
         [T(4, 6, 4), Npy([2, 6, 3, 5])], opsets=(11, 17)),
    case("lstm_packed_shorter_than_pad", Packed(nn.LSTM(4, 6), batch_first=False, padding_value=-1.0),
         [T(7, 3, 4), Npy([5, 4, 1])], opsets=(11, 17)),
    case("lstm_packed_state", Packed(nn.LSTM(4, 6, batch_first=True), with_state=True),
         [T(2, 5, 4), Npy([5, 3]), T(1, 2, 6), T(1, 2, 6, seed=1)], opsets=(11,)),
    case("gru_packed_bidir", Packed(nn.GRU(4, 6, bidirectional=True, batch_first=True), enforce_sorted=False,
                                    padding_value=0.5),
         [T(3, 5, 4), Npy([3, 5, 1])], opsets=(10, 11, 17)),  # unsorted lengths: a sort (TopK, opset 10)
    case("rnn_packed", Packed(nn.RNN(4, 6, num_layers=2), batch_first=False), [T(5, 3, 4), Npy([5, 5, 2])], opsets=(11,)),
    # Cells (aten::*_cell, scripted): MatMul/Add and the gate activations.
    case("lstm_cell", LstmCellOp(nn.LSTMCell), [T(2, 8), T(2, 16), T(2, 16)], script=True,
         dynamic={0: [0], 1: [0], 2: [0]}),
    case("gru_cell", GruCellOp(nn.GRUCell), [T(2, 8), T(2, 16)], script=True, dynamic={0: [0], 1: [0]}),
    case("gru_cell_nobias", GruCellOp(nn.GRUCell, bias=False), [T(2, 8), T(2, 16)], script=True),
    case("rnn_tanh_cell", TanhCellOp(nn.RNNCell), [T(2, 8), T(2, 16)], script=True, dynamic={0: [0], 1: [0]}),
    case("rnn_relu_cell", ReluCellOp(nn.RNNCell), [T(2, 8), T(2, 16)], script=True),
    # Cells traced through nn.*Cell: tracing records them decomposed (linear, chunk, activations).
    case("lstm_cell_traced", Cell(nn.LSTMCell(8, 16), lstm=True), [T(3, 2, 8), T(2, 16), T(2, 16)],
         dynamic={0: [1], 1: [0], 2: [0]}),
    case("gru_cell_traced_nostate", Cell(nn.GRUCell(8, 16), with_state=False), [T(3, 2, 8)], dynamic={0: [1]}),
]
