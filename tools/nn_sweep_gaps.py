"""What tools/nn_sweep.py found oxport does not yet export (or refuses) among torch.nn 1.13's modules
and torch.nn.functional, as docs/COVERAGE.md lists it (tools/coverage.py reads NN_SWEEP). Update it
with the sweep's table: (module or function, what happens today, why / what to do)."""

NN_SWEEP = [
    ("nn.FractionalMaxPool2d/3d", "refused, why", "random windows on every call (refused.def); use adaptive "
     "or plain max pooling for inference"),
    ("F.dropout / F.rrelu with training=True, F.gumbel_softmax", "random", "they draw random numbers on every "
     "call; the export cannot match libtorch's generator (dropout: ONNX Dropout in training mode; rrelu, "
     "gumbel: kept as custom nodes). Export the model in eval or pass the noise in as an input"),
    ("nn.CrossMapLRN2d, nn.SyncBatchNorm (CPU)", "PyTorch's limit", "CrossMapLRN2d is a Python autograd "
     "Function (neither traces nor scripts); SyncBatchNorm raises on CPU tensors. Use nn.LocalResponseNorm / "
     "nn.BatchNorm (torch.nn.SyncBatchNorm.convert_sync_batchnorm's inverse) for export"),
]


def markdown():
    lines = ["", "## torch.nn sweep: not yet, refused, why", "",
             "From `tools/nn_sweep.py` (every torch.nn 1.13 module and nn.functional function in a tiny module, traced "
             "and scripted, default options + --verify, opset 17, dynamic axes); the list is `tools/nn_sweep_gaps.py`.", "",
             "| module / function | status | why, what to do |", "| --- | --- | --- |"]
    for what, status, why in NN_SWEEP:
        lines.append(f"| {what} | {status} | {why} |")
    return lines
