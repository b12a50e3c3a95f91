"""export_to_onnx's three kinds of model, three forms of args, both kinds of f, its enums, its return
value and warnings, the mode handling, report= and load_libraries=, each compared with torch.onnx
where torch.onnx can export the same thing."""
import io
import json
import os
import pathlib
import warnings

import pytest
import torch
import torch.nn.functional as F

import oxport
from onnx_compare import compare, load

warnings.filterwarnings("ignore", module="torch")
SAME = ["opsets", "ir_version", "input_count", "output_count", "ops", "input_dims", "output_dims",
        "initializer_count", "param_names"]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.drop = torch.nn.Dropout(0.5)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.drop(torch.relu(self.conv(x))).mean((2, 3)))


class Named(torch.nn.Module):
    """Positional, defaulted and keyword-only parameters, tensors and values."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x, scale: float = 2.0, y=None, *, bias=None):
        out = self.fc(x) * scale
        if y is not None:
            out = out + y
        if bias is not None:
            out = out - bias
        return out


@torch.jit.script
def script_fn(x, y, n: int):
    return torch.relu(x) * n + y


def torch_onnx(model, args, **kw):
    f = io.BytesIO()
    # The seed's defaults (torch.onnx.export's own operator_export_type default is ONNX).
    kw.setdefault("operator_export_type", torch.onnx.OperatorExportTypes.ONNX_FALLTHROUGH)
    torch.onnx.export(model, args, f, opset_version=kw.pop("opset_version", 11), **kw)
    return load(f.getvalue())


def ours(model, args, **kw):
    f = io.BytesIO()
    r = oxport.export_to_onnx(model, args, f, **kw)
    return load(f.getvalue()), r


def seeded(cls):
    torch.manual_seed(0)
    return cls().eval()


# ---- the three kinds of model ------------------------------------------------------------------

def test_nn_module_is_traced_like_torch_onnx():
    m, x = seeded(Net), torch.randn(1, 3, 8, 8)
    a, r = ours(m, (x,))
    assert not compare(a, torch_onnx(m, (x,)), SAME)
    assert r.stats["checker_passed"] and r.stats["onnx_nodes"] > 0


def test_script_module_passes_through():
    m, x = seeded(Net), torch.randn(1, 3, 8, 8)
    s = torch.jit.script(m)
    a, r = ours(s, (x,))
    assert not compare(a, torch_onnx(s, (x,)), SAME)


def test_traced_module_passes_through():
    m, x = seeded(Net), torch.randn(1, 3, 8, 8)
    t = torch.jit.trace(m, (x,))
    a, _ = ours(t, (x,))
    assert not compare(a, torch_onnx(m, (x,)), SAME)


def test_script_function_with_a_baked_int():
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    a, r = ours(script_fn, (x, y, 3), verify=True)
    assert [i.name for i in a.graph.input] == ["x", "y"]  # n is baked, not an input
    assert r.verify["passed"]
    assert sorted(n.op_type for n in a.graph.node if n.op_type != "Constant") == ["Add", "Mul", "Relu"]


def test_not_a_module_is_an_error():
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(lambda x: x, (torch.randn(1),), io.BytesIO())
    assert e.value.code == "unsupported-model"


# ---- the three forms of args -------------------------------------------------------------------

def test_args_a_tensor_equals_a_one_tuple():
    m, x = seeded(Net), torch.randn(1, 3, 8, 8)
    a, _ = ours(m, x)
    b, _ = ours(m, (x,))
    assert a == b


def test_args_tuple_ending_in_a_dict_of_named_arguments():
    m = seeded(Named)
    x, y, b = torch.randn(2, 4), torch.randn(2, 4), torch.randn(2, 4)
    a, r = ours(m, (x, {"y": y, "bias": b}), input_names=["x", "y", "bias"], verify=True)
    assert [i.name for i in a.graph.input if i.name in r.input_names][:3] == ["x", "y", "bias"]
    assert r.verify["passed"]
    # torch.onnx 1.13 cannot call a forward() with keyword-only parameters, nor bake a float: the
    # comparison uses tensor parameters only.
    class Pair(torch.nn.Module):
        def forward(self, x, y=None, z=None):
            return x + y if z is None else x + y + z
    a2, _ = ours(Pair(), (x, {"y": y}))
    assert not compare(a2, torch_onnx(Pair(), (x, {"y": y})), ["input_count", "ops", "input_dims", "output_dims"])


def test_args_non_tensors_are_baked():
    m = seeded(Named)
    x = torch.randn(2, 4)
    a, _ = ours(m, (x, 0.5))
    consts = [n for n in a.graph.node if n.op_type == "Mul"]
    assert len([i for i in a.graph.input if i.name not in {t.name for t in a.graph.initializer}]) == 1
    assert consts, "scale=0.5 is a constant of the graph"


def test_args_unknown_name_is_an_error():
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(seeded(Named), (torch.randn(2, 4), {"nope": 1}), io.BytesIO())
    assert e.value.code == "unknown-argument" and "nope" in str(e.value)


# ---- both kinds of f -----------------------------------------------------------------------------

def test_f_path_pathlike_and_file_objects_write_the_same_model(tmp_path):
    m, x = seeded(Net), torch.randn(1, 3, 8, 8)
    p1, p2, p3 = tmp_path / "a.onnx", tmp_path / "b.onnx", tmp_path / "c.onnx"
    r1 = oxport.export_to_onnx(m, (x,), str(p1))
    r2 = oxport.export_to_onnx(m, (x,), p2)
    with open(p3, "wb") as fh:
        r3 = oxport.export_to_onnx(m, (x,), fh)
    buf = io.BytesIO()
    oxport.export_to_onnx(m, (x,), buf)
    assert r1.output == str(p1) and r2.output == str(p2) and r3.output is None
    assert load(str(p1)) == load(str(p2)) == load(str(p3)) == load(buf.getvalue())


def test_f_of_another_type_is_an_error():
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(seeded(Net), torch.randn(1, 3, 8, 8), 42)
    assert e.value.diagnostics[0].option == "f"


# ---- enums, training mode, return value, warnings ------------------------------------------------

@pytest.mark.parametrize("training", [oxport.TrainingMode.TRAINING, torch.onnx.TrainingMode.TRAINING, "TRAINING",
                                      "TrainingMode.TRAINING"])
def test_training_forms_and_the_mode_is_restored(training):
    m = seeded(Net)
    m.fc.train()  # a mixed-mode model comes back exactly as it was
    seen = []
    m.drop.register_forward_hook(lambda mod, i, o: seen.append(mod.training))
    a, _ = ours(m, torch.randn(1, 3, 8, 8), training=training, opset_version=13)
    assert seen == [True]
    assert not m.training and m.fc.training and not m.drop.training
    assert any(n.op_type == "Dropout" for n in a.graph.node)


def test_eval_traces_in_eval_mode():
    m = seeded(Net).train()
    seen = []
    m.drop.register_forward_hook(lambda mod, i, o: seen.append(mod.training))
    a, _ = ours(m, torch.randn(1, 3, 8, 8))
    assert seen == [False] and m.training and m.drop.training
    assert not any(n.op_type == "Dropout" for n in a.graph.node)


@pytest.mark.parametrize("oet", [oxport.OperatorExportTypes.ONNX, torch.onnx.OperatorExportTypes.ONNX, "ONNX"])
def test_operator_export_type_forms(oet):
    class Uns(torch.nn.Module):
        def forward(self, b, y):
            return torch.special.zeta(y, 2.0) + b.sum()
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(Uns(), (torch.linspace(-1, 1, 5), torch.randn(3)), io.BytesIO(), operator_export_type=oet)
    assert any(d.code == "unsupported-op" and d.node_kind == "aten::special_zeta" for d in e.value.diagnostics)


@pytest.mark.parametrize("option,value", [("training", "SOMETIMES"), ("training", True), ("training", 0),
                                          ("operator_export_type", "ONNX_MAGIC"), ("opset_version", 99),
                                          ("opset_version", "11"), ("input_names", "x"), ("dynamic_axes", [0]),
                                          ("export_params", 1), ("graph_mode", "eager")])
def test_bad_option_values_name_the_option(option, value):
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(seeded(Net), torch.randn(1, 3, 8, 8), io.BytesIO(), **{option: value})
    assert isinstance(e.value, RuntimeError)
    assert e.value.diagnostics[0].option == option, str(e.value)


def test_dynamic_axes_key_that_names_nothing_is_checked():
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(seeded(Net), torch.randn(1, 3, 8, 8), io.BytesIO(), input_names=["x"],
                              dynamic_axes={"image": {0: "batch"}})
    assert e.value.diagnostics[0].option.startswith("dynamic_axes"), str(e.value)


class Baked(torch.nn.Module):
    def forward(self, x):
        return x.view(int(x.shape[0]), -1)


def test_warnings_go_through_python_warnings_and_the_result():
    with pytest.warns(oxport.OxportWarning) as w:
        r = oxport.export_to_onnx(Baked(), torch.randn(2, 3, 4), io.BytesIO(), input_names=["x"],
                                  dynamic_axes={"x": {0: "batch"}})
    codes = {d.code for d in r.warnings}
    assert codes and codes <= {x.message.diagnostic.code for x in w if isinstance(x.message, oxport.OxportWarning)}
    assert any("baked" in c for c in codes), codes


def test_result_statistics_and_report(tmp_path):
    rep = tmp_path / "report.json"
    r = oxport.export_to_onnx(seeded(Net), torch.randn(1, 3, 8, 8), tmp_path / "m.onnx", report=rep)
    doc = json.loads(rep.read_text())
    assert doc["status"] == "ok" and doc["stats"]["onnx_nodes"] == r.stats["onnx_nodes"] > 0
    assert r.stats["file_bytes"] == os.path.getsize(tmp_path / "m.onnx")
    assert doc["inputs"] == r.input_names and "Conv" in r.stats["onnx_op_histogram"]


def test_load_libraries_uses_torch_ops_load_library(tmp_path):
    import torchvision  # noqa: F401
    lib = pathlib.Path(torchvision.__file__).parent
    so = next(p for p in lib.glob("_C*.so"))
    r = oxport.export_to_onnx(seeded(Net), torch.randn(1, 3, 8, 8), io.BytesIO(), load_libraries=[so])
    assert r.stats["checker_passed"]
    with pytest.raises(oxport.ExportError) as e:
        oxport.export_to_onnx(seeded(Net), torch.randn(1, 3, 8, 8), io.BytesIO(),
                              load_libraries=[tmp_path / "missing.so"])
    assert e.value.code == "op-library-failed" and "missing.so" in str(e.value)


def test_example_input_is_the_tensor_oxport_makes_and_travels_as_its_spec(tmp_path):
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "zoo"))
    from fills import make_tensor  # the fills as tests/zoo/gen_zoo.py and tools/det_margins.py make them
    from oxport._args import PresetArgs
    for spec, fill, shape, seed in (("1x3x40x56:smooth:seed=4", "smooth", [1, 3, 40, 56], 4),
                                    ("7:smooth", "smooth", [7], 0), ("2x5:rand:seed=9", "rand", [2, 5], 9)):
        x = oxport.example_input(spec)
        assert torch.equal(x, make_tensor({"fill": fill, "dtype": "float32"}, shape, seed)), spec
    assert oxport.example_input("4x4:bool:smooth").dtype == torch.bool
    assert oxport.example_input("2x3:int64:arange").tolist() == [[0, 1, 2], [3, 4, 5]]
    # Unchanged, it goes into the preset as its spec (verification at other sizes then makes the
    # same fill at that size); written in place, as its values.
    x = oxport.example_input("1x3x40x56:smooth:seed=4")
    writer = PresetArgs(str(tmp_path))
    assert writer.value(x, "args[0]") == {"tensor": {"shape": [1, 3, 40, 56], "dtype": "float32", "fill": "smooth",
                                                     "seed": 4}}
    x.mul_(2)
    assert "npy" in writer.value(x, "args[0]")["tensor"]["fill"]
    with pytest.raises(oxport.ExportError) as e:
        oxport.example_input("1x3:flaot32")
    assert e.value.code == "tensor-spec.syntax"


def test_example_input_verified_at_other_sizes(tmp_path):
    """A smooth image with dynamic height and width: the export verifies at other sizes with the same
    fill made at each size."""
    r = oxport.export_to_onnx(seeded(Net), oxport.example_input("1x3x32x40:smooth:seed=2"), str(tmp_path / "m.onnx"),
                              input_names=["x"], dynamic_axes={"x": {2: "h", 3: "w"}}, verify=True)
    assert r.verify["passed"]
