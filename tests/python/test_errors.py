"""Errors raise oxport.ExportError with structured diagnostics and leave an earlier file at f as it
was; a QAT module that torch.onnx 1.13 cannot export exports and verifies."""
import io
import os

import pytest
import torch
import torch.ao.quantization as tq

import oxport


class Search(torch.nn.Module):
    def forward(self, b, y):
        return torch.special.zeta(y, 2.0) + b.sum()  # no ONNX conversion in torch.onnx 1.13 nor in oxport


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.search = Search()

    def forward(self, b, x):
        return self.search(b, torch.relu(self.fc(x)))


ARGS = (torch.linspace(-1, 1, 5), torch.randn(2, 4))


def test_unsupported_op_names_node_module_and_source_line(tmp_path):
    target = tmp_path / "model.onnx"
    target.write_bytes(b"an earlier export")
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(Outer(), ARGS, target, operator_export_type="ONNX", report=tmp_path / "r.json")
    err = e.value
    assert isinstance(err, RuntimeError)
    d = next(d for d in err.diagnostics if d.code == "unsupported-op")
    assert d.node_kind == "aten::special_zeta" and d.module_path == "search"
    assert d.file.endswith("test_errors.py") and d.line > 0 and d.hint
    assert str(d) in str(err) and d.severity == "error"
    assert target.read_bytes() == b"an earlier export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx", "r.json"]  # no temporary left
    assert '"status": "failed"' in (tmp_path / "r.json").read_text()


def test_fallthrough_keeps_the_op_with_a_warning():
    with pytest.warns(oxport.OxportWarning):
        r = oxport.export_to_onnx(Outer(), ARGS, io.BytesIO())
    assert any("special_zeta" in d.message for d in r.warnings)


def test_a_model_that_fails_while_tracing_raises_its_own_error(tmp_path):
    class Bad(torch.nn.Module):
        def forward(self, x):
            return x @ torch.ones(3, 3)

    with pytest.raises(RuntimeError):  # torch's own error, raised by the trace as torch.onnx raises it
        oxport.export_to_onnx(Bad(), torch.randn(2, 4), tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()


class QatNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.bn = torch.nn.BatchNorm2d(8)
        self.relu = torch.nn.ReLU()
        self.fc = torch.nn.Linear(8, 4)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        y = self.relu(self.bn(self.conv(self.quant(x))))
        return self.dequant(self.fc(y.mean((2, 3))))


def qat_model():
    """conv-bn-relu fused for QAT under fbgemm's qconfig (FusedMovingAvgObsFakeQuantize, per-channel
    weights), calibrated, observers frozen: what a QAT training script hands to export_to_onnx."""
    torch.manual_seed(0)
    m = QatNet().train()
    tq.fuse_modules_qat(m, [["conv", "bn", "relu"]], inplace=True)
    m.qconfig = tq.get_default_qat_qconfig("fbgemm")
    tq.prepare_qat(m, inplace=True)
    with torch.no_grad():
        for _ in range(3):
            m(torch.randn(2, 3, 16, 16))
    m.apply(tq.disable_observer)
    return m


def test_qat_module_torch_onnx_cannot_export():
    m, x = qat_model(), torch.randn(1, 3, 16, 16)
    # torch.onnx 1.13 refuses it with ONNX, and under the seed's ONNX_FALLTHROUGH writes the fake
    # quantization as a node of its own domain that no runtime runs.
    with pytest.raises(Exception, match="fused_moving_avg_obs_fake_quant"):
        torch.onnx.export(m, (x,), io.BytesIO(), operator_export_type=torch.onnx.OperatorExportTypes.ONNX)
    ref = io.BytesIO()
    torch.onnx.export(m, (x,), ref, operator_export_type=torch.onnx.OperatorExportTypes.ONNX_FALLTHROUGH)
    assert b"fused_moving_avg_obs_fake_quant" in ref.getvalue()
    assert m.training  # torch.onnx restored it; the QAT model is still training
    f = io.BytesIO()
    r = oxport.export_to_onnx(m, (x,), f, input_names=["x"], dynamic_axes={"x": {0: "batch"}}, verify=True)
    assert m.training and all(mod.training for mod in m.modules())
    assert r.verify["passed"], r.verify
    ops = r.stats["onnx_op_histogram"]
    assert ops.get("QuantizeLinear", 0) >= 3 and ops.get("DequantizeLinear", 0) >= 3, ops
    assert not any(d.code == "unsupported-op" for d in r.warnings)
