"""export_to_onnx's surface as Python users call it, on live modules: what tools/probe_api.py found
wrong, one test each (every one failed before its fix). The export leaves the user's model as it
was (buffers included), takes dict arguments (a live module's and a scripted one's), and turns
what used to escape as raw Python/libtorch errors (a half model on the CPU, a model on another
device, a file object that cannot be written) into oxport diagnostics that leave f untouched."""
import io
import warnings
from typing import Dict

import pytest
import torch
import torch.nn as nn

import oxport
from onnx_compare import load

warnings.filterwarnings("ignore", module="torch")


def export(model, args, f=None, **kw):
    f = io.BytesIO() if f is None else f
    r = oxport.export_to_onnx(model, args, f, **kw)
    return (load(f.getvalue()) if isinstance(f, io.BytesIO) else None), r


def state(m):
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def same_state(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# ---- the user's model is left as it was ------------------------------------------------------------

class ConvBnDrop(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        return self.drop(torch.relu(self.bn(self.conv(x))))


@pytest.mark.parametrize("training", ["TRAINING", "PRESERVE"])
def test_training_export_leaves_batch_norm_statistics_alone(training):
    torch.manual_seed(0)
    m = ConvBnDrop().train()
    before = state(m)
    a, _ = export(m, torch.randn(4, 3, 8, 8), training=training, opset_version=15)
    assert same_state(before, state(m)), "tracing in training mode moved running_mean/var and num_batches_tracked"
    assert m.training and all(s.training for s in m.modules())
    bn = next(n for n in a.graph.node if n.op_type == "BatchNormalization")
    assert any(x.name == "training_mode" and x.i == 1 for x in bn.attribute)


class Counter(nn.Module):
    """Buffers updated in forward (a running mean, a step counter)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("avg", torch.zeros(4))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        self.avg.mul_(0.9).add_(0.1 * x.mean(0))
        self.steps += 1
        return self.fc(x - self.avg)


def test_buffers_written_by_forward_are_restored():
    torch.manual_seed(0)
    m, x = Counter().eval(), torch.randn(3, 4)
    avg = m.avg
    before = state(m)
    export(m, x)
    assert same_state(before, state(m)) and m.avg is avg and m.steps.item() == 0


def test_a_traced_buffer_update_computes_the_first_call():
    torch.manual_seed(0)
    m, x = Counter().eval(), torch.randn(3, 4)
    _, r = export(m, x, verify=True)
    assert r.verify["passed"]


def test_a_scripted_buffer_update_verifies():
    torch.manual_seed(0)
    _, r = export(torch.jit.script(Counter().eval()), torch.randn(3, 4), verify=True)
    assert r.verify["passed"]


# ---- dict arguments ---------------------------------------------------------------------------------

class FeatureDict(nn.Module):
    def __init__(self):
        super().__init__()
        self.img = nn.Linear(8, 4)
        self.txt = nn.Linear(6, 4)

    def forward(self, feats: Dict[str, torch.Tensor], scale: float = 1.0):
        return (self.img(feats["image"]) + self.txt(feats["text"])) * scale


@pytest.mark.parametrize("scripted", [False, True], ids=["live", "scripted"])
def test_a_dict_argument_becomes_one_input_per_tensor(scripted):
    torch.manual_seed(0)
    m = FeatureDict().eval()
    if scripted:
        m = torch.jit.script(m)
    feats = {"image": torch.randn(2, 8), "text": torch.randn(2, 6)}
    a, r = export(m, (feats, 0.5, {}), verify=True, input_names=["image", "text"],
                  dynamic_axes={"image": {0: "batch"}, "text": {0: "batch"}})
    assert r.input_names[:2] == ["image", "text"]
    assert r.verify["passed"], r.verify
    assert a.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"


def test_dict_argument_default_input_names_say_where_each_tensor_was():
    torch.manual_seed(0)
    feats = {"image": torch.randn(2, 8), "text": torch.randn(2, 6)}
    _, r = export(FeatureDict().eval(), (feats, {}))
    assert r.input_names[:2] == ["feats_image", "feats_text"]


class MixedTuple(nn.Module):
    def forward(self, pair):
        t, n = pair
        return t * n


def test_a_tuple_mixing_a_tensor_and_an_int_bakes_the_int():
    x = torch.randn(2, 3)
    _, r = export(MixedTuple(), ((x, 3), {}), verify=True)
    assert r.input_names[0] == "pair_0" and r.verify["passed"]


# ---- diagnostics instead of raw errors -------------------------------------------------------------

class HalfGate(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(8))

    def forward(self, x):
        return torch.sigmoid(x * self.scale) * x


def test_a_half_model_that_cannot_run_on_the_cpu_says_to_script_it(tmp_path):
    torch.manual_seed(0)
    m, x = HalfGate().half().eval(), torch.randn(2, 8).half()
    target = tmp_path / "m.onnx"
    target.write_bytes(b"earlier")
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(m, x, target)
    assert e.value.code == "forward-failed" and "torch.jit.script" in e.value.diagnostics[0].hint
    assert target.read_bytes() == b"earlier"
    _, r = export(torch.jit.script(m), x, verify=True)  # the way the hint says works
    assert r.verify["passed"], r.verify


@pytest.mark.parametrize("where", ["model", "args"])
def test_a_model_or_tensor_off_the_cpu_is_refused_before_anything_runs(tmp_path, where):
    # CUDA is absent here; the meta device stands for any device that is not the CPU.
    torch.manual_seed(0)
    m = nn.Linear(4, 4, device="meta" if where == "model" else "cpu")
    x = torch.randn(2, 4, device="meta" if where == "args" else "cpu")
    target = tmp_path / "m.onnx"
    target.write_bytes(b"earlier")
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(m, x, target)
    d = e.value.diagnostics[0]
    assert d.code == "unsupported-device" and d.option == where and "meta" in d.message and ".cpu()" in d.hint
    assert target.read_bytes() == b"earlier"


@pytest.mark.parametrize("mode", ["rb", "w"])
def test_a_file_object_that_cannot_take_bytes_is_a_diagnostic(tmp_path, mode):
    p = tmp_path / "m.onnx"
    p.write_bytes(b"earlier")
    with open(p, mode) as fh, pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(nn.Linear(4, 2), torch.randn(1, 4), fh)
    assert e.value.code == "io.write-failed" and e.value.diagnostics[0].option == "f"
    assert "'wb'" in e.value.diagnostics[0].hint


# ---- export_params=False -----------------------------------------------------------------------------

class Tied(nn.Module):
    """The LM head shares the embedding's weight."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(40, 16)
        self.head = nn.Linear(16, 40, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids):
        return self.head(torch.tanh(self.emb(ids)))


def test_a_tied_weight_is_one_graph_input_without_params():
    torch.manual_seed(0)
    m = Tied().eval()
    a, _ = export(m, torch.randint(0, 40, (2, 5)), export_params=False)
    assert [i.name for i in a.graph.input] == ["ids", "emb.weight"]  # as torch.onnx: one input, named once
    assert not a.graph.initializer


# ---- the model's own error while traced ----------------------------------------------------------------

class WrongChannels(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        y = torch.relu(x)
        return self.conv(y)  # the failing line


def test_the_models_own_error_is_a_diagnostic_at_its_source_line(tmp_path):
    target = tmp_path / "m.onnx"
    target.write_bytes(b"earlier")
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(WrongChannels(), torch.randn(1, 5, 8, 8), target)
    d = e.value.diagnostics[0]
    assert d.code == "forward-failed" and d.option == "args" and "3 channels" in d.message
    assert d.file == __file__ and "the failing line" in open(__file__).read().splitlines()[d.line - 1]
    assert isinstance(e.value.__cause__, RuntimeError)  # torch's own error, chained
    assert "c10::" not in str(e.value) and "Exception raised from" not in str(e.value)
    assert target.read_bytes() == b"earlier"
