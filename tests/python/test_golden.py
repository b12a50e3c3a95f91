"""Every export_to_onnx parameter and value, compared structurally with what torch.onnx.export (1.13)
writes for the same live module: the cases, models and aspects of tests/options/make_models.py (the
CLI's golden tests), run through oxport's Python API instead of a preset. Enum options rotate
through the three accepted forms (oxport's enum, torch.onnx's enum, the string) and f through a
path, an os.PathLike and a file object."""
import io
import os
import pathlib
import sys
import warnings

import pytest
import torch
from torch.onnx import OperatorExportTypes as OET
from torch.onnx import TrainingMode as TM

import oxport
from onnx_compare import compare, load

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "options"))
import make_models  # noqa: E402  (the golden cases of the CLI)

warnings.filterwarnings("ignore")
CASES = list(make_models.CASES.items())


@pytest.fixture(scope="module")
def eager(tmp_path_factory):
    return make_models.make_models(str(tmp_path_factory.mktemp("models")))


def enum_form(i, name, ours, theirs):
    return [ours[name], getattr(theirs, name), name][i % 3]


def example_args(c):
    torch.manual_seed(0)
    args = make_models.to_tuple_at([make_models.torch_value(a) for a in c["args"]], c["tuples"])
    kwargs = {k: make_models.torch_value(v) for k, v in c["kwargs"].items()}
    return args, kwargs


def torch_reference(model, c, args, kwargs):
    o = c["options"]
    ref_args = list(args)
    if isinstance(model, make_models.ArgsNet):  # torch.onnx would make graph inputs of the ints
        model = make_models.BakedArgs(model)
        ref_args = [args[0], args[5], args[6], args[7]]
    if kwargs:
        ref_args.append(kwargs)
    f = io.BytesIO()
    torch.onnx.export(
        model, tuple(ref_args), f, export_params=o.get("export_params", True), verbose=o.get("verbose", False),
        training=getattr(TM, o.get("training", "EVAL")), input_names=o.get("input_names"),
        output_names=o.get("output_names"),
        operator_export_type=getattr(OET, o.get("operator_export_type", "ONNX_FALLTHROUGH")),
        opset_version=o.get("opset_version", 11), do_constant_folding=o.get("do_constant_folding", True),
        dynamic_axes=dynamic_axes(o), keep_initializers_as_inputs=o.get("keep_initializers_as_inputs"),
        custom_opsets=o.get("custom_opsets"))
    return load(f.getvalue())


def dynamic_axes(o):
    if "dynamic_axes" not in o:
        return None
    return {k: ({int(a): n for a, n in v.items()} if isinstance(v, dict) else v) for k, v in o["dynamic_axes"].items()}


def oxport_kwargs(i, o):
    """The case's options as export_to_onnx arguments; only the options the case sets are passed."""
    kw = {}
    for key, value in o.items():
        if key == "training":
            value = enum_form(i, value, oxport.TrainingMode, TM)
        elif key == "operator_export_type":
            value = enum_form(i, value, oxport.OperatorExportTypes, OET)
        elif key == "dynamic_axes":
            value = dynamic_axes(o)
        kw[key] = value
    return kw


@pytest.mark.parametrize("i,name", [(i, n) for i, (n, _) in enumerate(CASES)], ids=[n for n, _ in CASES])
def test_matches_torch_onnx(eager, tmp_path, i, name, capsys):
    c = make_models.CASES[name]
    model = eager[c["model"]]
    args, kwargs = example_args(c)
    ref = torch_reference(model, c, args, kwargs)
    was_training = model.training
    # f: a str path, a pathlib.Path, a BytesIO, in turn.
    kind = i % 3
    path = tmp_path / "model.onnx"
    f = str(path) if kind == 0 else path if kind == 1 else io.BytesIO()
    call_args = tuple(args) + ((kwargs,) if kwargs else ())
    result = oxport.export_to_onnx(model, call_args, f, **oxport_kwargs(i, c["options"]), verify="runs" in c["compare"])
    assert model.training == was_training, "the module's mode was not restored"
    ours = load(f.getvalue() if kind == 2 else str(path))
    assert result.output == (None if kind == 2 else str(path))
    assert result.stats["checker_passed"]
    if "runs" in c["compare"]:
        assert result.verify["passed"] or result.verify["skipped"], result.verify
    diffs = compare(ours, ref, c["compare"])
    assert not diffs, "\n".join(diffs)
    if c["options"].get("verbose"):
        assert result.verbose_log and result.verbose_log in capsys.readouterr().out
