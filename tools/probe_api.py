#!/usr/bin/python3
"""Probe of export_to_onnx's whole surface, as Python users call it: ~25 live models (vision, NLP,
QAT, scripted decoders with loops, ScriptFunctions, keyword/None/Optional arguments, dict/list/
namedtuple outputs, nested tuple inputs, dict arguments, training mode, buffers updated in forward,
half precision, a non-CPU device, shared weights) and every parameter of the spec with each of its
documented values. Each call is checked: ONNX checker + strict shape inference, ONNX Runtime
(node tools/ort_run.js) against the live module, errors are oxport diagnostics (no raw C++ or
pybind11 text) that leave an existing file at f untouched, and the user's model is unchanged
(training flags, parameters, buffers, requires_grad, hooks). Where torch.onnx 1.13 can export the
same call, the aspect under test is compared with it. Five models also go through the CLI and a
preset: the three surfaces must write the same bytes.

Prints one table row per call (probe, model, result, detail). Not part of the default suite (a
few minutes on two busy cores); the bugs it found are tests in tests/python/test_api_surface.py.

usage: PYTHONPATH=build/python /usr/bin/python3 tools/probe_api.py [-k SUBSTR] [--cli build/app/oxport]
"""
import argparse
import contextlib
import copy
import io
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import traceback
import warnings

import numpy
import onnx
import torch
import torch.nn as nn

import oxport

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.dirname(HERE)
OET = torch.onnx.OperatorExportTypes
TM = torch.onnx.TrainingMode


from probe_api_models import MODELS, Cnn, R, Zeta, make  # noqa: E402


# ---- checks ---------------------------------------------------------------------------------------

def snapshot(m):
    """What export_to_onnx must leave as it was."""
    if not isinstance(m, nn.Module):
        return None
    return {
        "training": [(n, s.training) for n, s in m.named_modules()],
        "state": {k: v.detach().clone() for k, v in m.state_dict(keep_vars=True).items()},
        "grad": [(n, p.requires_grad) for n, p in m.named_parameters()],
        "hooks": [(n, len(s._forward_hooks), len(s._forward_pre_hooks)) for n, s in m.named_modules()],
    }


def unchanged(before, m):
    if before is None:
        return ""
    after = snapshot(m)
    bad = [k for k in ("training", "grad", "hooks") if before[k] != after[k]]
    for k, v in before["state"].items():
        w = after["state"].get(k)
        if w is None or w.dtype != v.dtype or w.shape != v.shape or (v.device.type == "cpu" and not torch.equal(w, v)):
            bad.append("state:" + k)
    return ",".join(bad)


def flat(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, dict):
        return [t for x in v.values() for t in flat(x)]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in flat(x)]
    return []


def call(m, args):
    a = args if isinstance(args, tuple) else (args,)
    if a and isinstance(a[-1], dict) and not isinstance(m, torch.jit.ScriptFunction):
        return m(*a[:-1], **a[-1])
    return m(*a)


def reference(m, args, training="EVAL"):
    """The live module's outputs (on a copy, so buffers written in forward stay as they were)."""
    r = copy.deepcopy(m) if isinstance(m, nn.Module) else m
    if isinstance(r, nn.Module) and not isinstance(r, torch.jit.ScriptModule):
        r.train(training == "TRAINING" or (training == "PRESERVE" and m.training))
    if any(t.dtype in (torch.float16, torch.bfloat16) for t in input_tensors(args)) and isinstance(r, nn.Module):
        # libtorch has no CPU kernels for many half ops: the reference is the float32 model.
        r = copy.deepcopy(r).float()
        a = args if isinstance(args, tuple) else (args,)
        args = tuple(t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in a)
    with torch.no_grad():
        return [t.detach() for t in flat(call(r, args))]


def input_tensors(args):
    a = args if isinstance(args, tuple) else (args,)
    return flat(list(a))


def check_file(data):
    model = onnx.load_from_string(data)
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    return model


def ort_run(data, feeds):
    """feeds: list of (name or '', tensor). Returns the outputs as numpy arrays."""
    with tempfile.TemporaryDirectory(prefix="probe-ort-") as d:
        path = os.path.join(d, "m.onnx")
        with open(path, "wb") as fh:
            fh.write(data)
        req = {"model": path, "inputs": []}
        for i, (name, t) in enumerate(feeds):
            a = t.detach().cpu().numpy()
            numpy.save(os.path.join(d, f"in{i}.npy"), a)
            req["inputs"].append({"name": name, "file": f"in{i}.npy"})
        with open(os.path.join(d, "request.json"), "w") as fh:
            json.dump(req, fh)
        subprocess.run(["node", os.path.join(HERE, "ort_run.js"), d], capture_output=True, text=True)
        resp = json.load(open(os.path.join(d, "response.json")))
        if "error" in resp:
            raise RuntimeError("ORT: " + resp["error"][:200])
        return [numpy.load(os.path.join(d, o["file"])) for o in resp["outputs"]]


def max_err(ours, ref):
    if len(ours) != len(ref):
        return f"{len(ours)} outputs vs {len(ref)}"
    worst = 0.0
    for a, b in zip(ours, ref):
        b = b.float().numpy() if b.dtype in (torch.float16, torch.bfloat16) else b.numpy()
        if a.shape != b.shape:
            return f"shape {a.shape} vs {b.shape}"
        if a.dtype == numpy.bool_ or b.dtype == numpy.bool_:
            if not numpy.array_equal(a, b):
                return "bool mismatch"
            continue
        d = numpy.abs(a.astype(numpy.float64) - b.astype(numpy.float64))
        worst = max(worst, float((d / (1.0 + numpy.abs(b))).max()) if d.size else 0.0)
    return worst


def feeds_for(model_onnx, args, m, export_params=True):
    tensors = input_tensors(args)
    inits = {i.name for i in model_onnx.graph.initializer}
    user = [i.name for i in model_onnx.graph.input if i.name not in inits]
    feeds = list(zip(user[: len(tensors)], tensors))
    if not export_params:
        sd = m.state_dict()
        feeds += [(n, sd[n]) for n in user[len(tensors):]]
    return feeds


ROWS = []


def row(probe, model, result, detail=""):
    ROWS.append((probe, model, result, detail))
    print(f"{probe:<34} {model:<22} {result:<6} {detail}", flush=True)


def raw_text(e):
    """Whether an error shows libtorch/pybind11 internals rather than an oxport diagnostic."""
    s = str(e)
    return any(k in s for k in ("c10::", "Exception raised from", "pybind11", "TypeError: export(",
                                "incompatible function arguments", "at::", "torch::jit::"))


def run_export(m, args, f=None, **kw):
    """One call. Returns (bytes or None, result or exception, stdout)."""
    buf = io.BytesIO() if f is None else f
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            r = oxport.export_to_onnx(m, args, buf, **kw)
    except Exception as e:  # noqa: BLE001
        return None, e, out.getvalue()
    data = buf.getvalue() if isinstance(buf, io.BytesIO) else None
    return data, r, out.getvalue()


def probe_ok(probe, name, m, args, training="EVAL", numeric=True, extra=None, **kw):
    """Export, check, run in ORT against the live module, check the model is unchanged."""
    before = snapshot(m)
    data, r, _ = run_export(m, args, training=training, **kw)
    changed = unchanged(before, m)
    if data is None:
        code = getattr(r, "code", type(r).__name__)
        row(probe, name, "FAIL", f"{code}: {str(r).splitlines()[0][:110]}" + (" [RAW]" if raw_text(r) else "")
            + (f" [model changed: {changed}]" if changed else ""))
        return None, r
    try:
        om = check_file(data)
    except Exception as e:  # noqa: BLE001
        row(probe, name, "FAIL", f"checker/shape inference: {str(e)[:120]}")
        return None, r
    detail = f"{len(om.graph.node)} nodes"
    status = "ok"
    custom = sorted({n.domain for n in om.graph.node if n.domain})
    if numeric and custom:
        detail += f", not run: nodes in {custom}"
    elif numeric:
        try:
            ours = ort_run(data, feeds_for(om, args, m, kw.get("export_params", True)))
            err = max_err(ours, reference(m, args, training))
            tol = 1e-2 if any(t.dtype == torch.float16 for t in input_tensors(args)) else 1e-3
            if isinstance(err, str) or err > tol:
                status, detail = "FAIL", f"ORT vs live: {err}"
            else:
                detail += f", ORT max rel err {err:.1e}"
        except Exception as e:  # noqa: BLE001
            status, detail = "FAIL", str(e)[:140]
    if changed:
        status, detail = "FAIL", detail + f"; model changed: {changed}"
    if extra:
        more = extra(om, r)
        if more:
            status, detail = ("FAIL" if more.startswith("!") else status), detail + "; " + more.lstrip("!")
    row(probe, name, status, detail)
    return om, r


def probe_error(probe, name, m, args, want_code=None, **kw):
    """The call must fail with an oxport diagnostic and leave an earlier file at f as it was."""
    before = snapshot(m)
    with tempfile.TemporaryDirectory(prefix="probe-err-") as d:
        path = os.path.join(d, "model.onnx")
        with open(path, "wb") as fh:
            fh.write(b"earlier")
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                oxport.export_to_onnx(m, args, path, **kw)
            row(probe, name, "FAIL", "no error raised")
            return
        except oxport.ExportError as e:
            ok = (want_code is None or e.code == want_code) and not raw_text(e)
            kept = open(path, "rb").read() == b"earlier" and os.listdir(d) == ["model.onnx"]
            changed = unchanged(before, m)
            bad = ("" if kept else " [f damaged]") + (f" [model changed: {changed}]" if changed else "") + \
                (" [RAW]" if raw_text(e) else "")
            row(probe, name, "ok" if ok and not bad else "FAIL",
                f"{e.code} (option {e.diagnostics[0].option or '-'}): {str(e.diagnostics[0].message)[:90]}{bad}")
        except Exception as e:  # noqa: BLE001
            row(probe, name, "FAIL", f"not an ExportError: {type(e).__name__}: {str(e).splitlines()[0][:100]}")


def torch_onnx(m, args, **kw):
    f = io.BytesIO()
    kw.setdefault("operator_export_type", OET.ONNX_FALLTHROUGH)
    kw.setdefault("opset_version", 11)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        torch.onnx.export(m, args, f, **kw)
    return onnx.load_from_string(f.getvalue())


def ops(om):
    return [(n.domain + "::" if n.domain else "") + n.op_type for n in om.graph.node if n.op_type not in ("Constant",)]


# ---- the probes -----------------------------------------------------------------------------------

# Models whose live export must fail with this diagnostic (and the way that works instead).
EXPECTED_ERRORS = {"half": "forward-failed"}


def probe_models():
    for name in MODELS:
        m, args = make(name)
        if name in EXPECTED_ERRORS:
            probe_error("defaults", name, m, args, EXPECTED_ERRORS[name])
        else:
            probe_ok("defaults", name, m, args)
    m, args = make("half")
    probe_ok("defaults, scripted", "half", torch.jit.script(m), args)


def probe_args_forms():
    m, x = make("cnn")
    a, _, _ = run_export(m, x)
    b, _, _ = run_export(m, (x,))
    row("args: tensor == 1-tuple", "cnn", "ok" if a and a == b else "FAIL")
    m, _ = make("keywords")
    x = R(2, 6)
    for label, args in [("dict with missing names", (x, {"flip": True})),
                        ("dict of only defaults", (x, {})),
                        ("positional baked values", (x, 3.0, None, 2, "max", True, [1])),
                        ("None for Optional tensor", (x, {"mask": None, "bias": None})),
                        ("keyword-only tensor", (x, {"bias": R(2, 6)}))]:
        probe_ok("args: " + label, "keywords", m, args)
    probe_error("args: unknown name", "keywords", m, (x, {"nope": 1}), "unknown-argument")
    probe_error("args: too many positional", "keywords", m, (x, 1.0, None, 1, "sum", False, None, 7, 8), "too-many-arguments")
    probe_error("args: no tensor", "keywords", m, (), None)
    probe_error("args: dict key not str", "keywords", m, (x, {1: 2}), "invalid-argument")
    m, _ = make("resizer_baked")
    probe_ok("args: baked list/str/bool/None", "resizer_baked", m, (R(1, 2, 5, 5), {"size": [3, 4], "mode": "nearest"}))
    probe_ok("args: baked float scale", "resizer_baked", m, (R(1, 2, 5, 5), [6, 6], "bilinear", False, 0.5))


def probe_f():
    m, x = make("cnn")
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a.onnx")
        oxport.export_to_onnx(m, x, p)
        oxport.export_to_onnx(m, x, pathlib.Path(d) / "b.onnx")
        with open(os.path.join(d, "c.onnx"), "wb") as fh:
            oxport.export_to_onnx(m, x, fh)
        buf = io.BytesIO()
        oxport.export_to_onnx(m, x, buf)
        blobs = [open(os.path.join(d, n), "rb").read() for n in ("a.onnx", "b.onnx", "c.onnx")] + [buf.getvalue()]
        row("f: str/PathLike/open file/BytesIO", "cnn", "ok" if len(set(blobs)) == 1 else "FAIL",
            f"{len(blobs[0])} bytes each" if len(set(blobs)) == 1 else "bytes differ")
        # A file object positioned after a header: oxport appends, as torch.onnx does.
        buf = io.BytesIO()
        buf.write(b"HDR")
        oxport.export_to_onnx(m, x, buf)
        row("f: BytesIO written at its position", "cnn", "ok" if buf.getvalue()[:3] == b"HDR" and
            buf.getvalue()[3:] == blobs[0] else "FAIL")
        # A file opened for reading only.
        with open(p, "rb") as fh:
            try:
                oxport.export_to_onnx(m, x, fh)
                row("f: file opened read-only", "cnn", "FAIL", "no error")
            except oxport.ExportError as e:
                row("f: file opened read-only", "cnn", "ok", f"{e.code}: {e.diagnostics[0].message[:80]}")
            except Exception as e:  # noqa: BLE001
                row("f: file opened read-only", "cnn", "FAIL", f"{type(e).__name__}: {str(e)[:90]}")
        try:
            oxport.export_to_onnx(m, x, os.path.join(d, "no", "such", "dir", "m.onnx"))
            row("f: missing folder", "cnn", "FAIL", "no error")
        except oxport.ExportError as e:
            row("f: missing folder", "cnn", "ok" if not raw_text(e) else "FAIL", f"{e.code}: {e.diagnostics[0].message[:90]}")
        except Exception as e:  # noqa: BLE001
            row("f: missing folder", "cnn", "FAIL", f"{type(e).__name__}: {str(e)[:90]}")


def probe_export_params():
    for name in ("cnn", "tied_weights", "resnet18"):
        m, args = make(name)
        om, _ = probe_ok("export_params=False", name, m, args, export_params=False)
        if om is None:
            continue
        ref = torch_onnx(m, args, export_params=False)
        ours_in = [i.name for i in om.graph.input]
        ref_in = [i.name for i in ref.graph.input]
        row("export_params=False vs torch.onnx", name, "ok" if len(om.graph.initializer) == 0 and len(ours_in) >= 1 else "FAIL",
            f"inputs ours {len(ours_in)} {ours_in[:4]} / torch {len(ref_in)} {ref_in[:4]}; initializers ours "
            f"{len(om.graph.initializer)} torch {len(ref.graph.initializer)}")


def probe_verbose():
    m, x = make("cnn")
    data, r, out = run_export(m, x, verbose=True)
    ref_out = io.StringIO()
    with contextlib.redirect_stdout(ref_out), contextlib.redirect_stderr(io.StringIO()):
        torch.onnx.export(m, (x,), io.BytesIO(), verbose=True, opset_version=11)
    om = onnx.load_from_string(data) if data else None
    docs = sum(1 for n in om.graph.node if n.doc_string) if om else 0
    row("verbose=True", "cnn", "ok" if out.strip() and docs else "FAIL",
        f"prints {len(out.splitlines())} lines (torch.onnx {len(ref_out.getvalue().splitlines())}); "
        f"{docs}/{len(om.graph.node) if om else 0} nodes with doc_string; first: {out.splitlines()[0][:60] if out else ''}")
    data2, _, out2 = run_export(m, x, verbose=False)
    om2 = onnx.load_from_string(data2)
    row("verbose=False", "cnn", "ok" if not out2 and not any(n.doc_string for n in om2.graph.node) else "FAIL")


def probe_training():
    def kinds(om):
        s = []
        for n in om.graph.node:
            if n.op_type == "Dropout":
                s.append(f"Dropout({len(n.input)} in)")
            elif n.op_type == "BatchNormalization":
                tm = [a.i for a in n.attribute if a.name == "training_mode"]
                s.append(f"BN(train={tm[0] if tm else 0},{len(n.output)} out)")
            elif n.domain:
                s.append(n.domain + "::" + n.op_type)
        return s

    for mode_name, train in (("eval model", False), ("train model", True)):
        for training in ("EVAL", "PRESERVE", "TRAINING"):
            for opset in (11, 15):
                torch.manual_seed(0)
                m = Cnn()
                m.train(train)
                x = R(4, 3, 8, 8)
                # Dropout in training mode is random: compare numerically only where it is off.
                numeric = not (training == "TRAINING" or (training == "PRESERVE" and train))
                om, r = probe_ok(f"training={training} op{opset} ({mode_name})", "cnn", m, x, training=training,
                                 opset_version=opset, numeric=numeric)
                try:
                    ref = torch_onnx(m, (x,), training=getattr(TM, training), opset_version=opset)
                    rk = kinds(ref)
                except Exception as e:  # noqa: BLE001
                    rk = [f"torch.onnx fails: {str(e)[:60]}"]
                if om is not None:
                    ok = kinds(om)
                    row(f"  vs torch.onnx", "cnn", "same" if ok == rk else "diff", f"ours {ok} / torch {rk}")
    # TRAINING with batch norm only (no dropout): numbers must match the live module in train mode.
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).train()
    probe_ok("training=TRAINING bn numerics op15", "conv_bn", m, R(4, 3, 8, 8), training="TRAINING", opset_version=15)
    probe_ok("training=TRAINING bn numerics op11", "conv_bn", m, R(4, 3, 8, 8), training="TRAINING", opset_version=11)


def probe_names():
    m, x = make("det_dict_out")
    probe_ok("input/output names", "det_dict_out", m, x, input_names=["image"], output_names=["scores", "boxes"],
             extra=lambda om, r: "" if [o.name for o in om.graph.output] == ["scores", "boxes"] and om.graph.input[0].name == "image" else "!names not applied")
    probe_ok("fewer output names", "det_dict_out", m, x, output_names=["scores"],
             extra=lambda om, r: "outputs " + str([o.name for o in om.graph.output]))
    probe_error("more input names", "det_dict_out", m, x, "too-many-input-names", input_names=["a", "b"])
    probe_error("more output names", "det_dict_out", m, x, "too-many-output-names", output_names=["a", "b", "c"])
    probe_error("duplicate output names", "det_dict_out", m, x, None, output_names=["a", "a"])
    m, args = make("nested_tuple_in")
    probe_error("duplicate input names", "nested_tuple_in", m, args, None, input_names=["a", "a", "c"])
    probe_error("input name = output name", "nested_tuple_in", m, args, None, input_names=["a"], output_names=["a"])
    probe_error("names as a str", "nested_tuple_in", m, args, "invalid-option", input_names="a")
    probe_error("names with a non-str", "nested_tuple_in", m, args, None, input_names=[1])


def probe_oet():
    m, x = make("cnn")
    torch.manual_seed(0)
    z, zx = Zeta().eval(), R(3, 5)
    for oet in ("ONNX", "ONNX_ATEN", "ONNX_ATEN_FALLBACK", "ONNX_FALLTHROUGH"):
        for form in (getattr(oxport.OperatorExportTypes, oet), getattr(OET, oet)):
            label = f"oet={oet} ({'torch' if isinstance(form, OET) else 'oxport'} enum)"
            data, r, _ = run_export(z, zx, operator_export_type=form)
            try:
                ref = ops(torch_onnx(z, (zx,), operator_export_type=getattr(OET, oet)))
            except Exception as e:  # noqa: BLE001
                ref = f"torch.onnx: {type(e).__name__}"
            if data is None:
                row(label, "zeta", "ok" if isinstance(r, oxport.ExportError) and oet == "ONNX" else "FAIL",
                    f"{getattr(r, 'code', type(r).__name__)}; torch.onnx {ref if isinstance(ref, str) else 'writes'}")
            else:
                om = check_file(data)
                ours = ops(om)
                row(label, "zeta", "same" if ours == ref else "diff", f"ours {ours} / torch {ref}")
        probe_ok(f"oet={oet} on a plain cnn", "cnn", m, x, operator_export_type=oet,
                 numeric=oet != "ONNX_ATEN")


def probe_opsets():
    for name in ("cnn", "tiny_bert", "greedy_decoder_script", "qat"):
        m, args = make(name)
        for opset in range(7, 18):
            if opset < 9:
                probe_error(f"opset {opset}", name, m, args, "options.opset", opset_version=opset)
            else:
                probe_ok(f"opset {opset}", name, m, args, opset_version=opset)
    probe_error("opset 18", "cnn", *make("cnn"), "options.opset", opset_version=18)
    probe_ok("opset None", "cnn", *make("cnn"), opset_version=None)


def probe_folding():
    for name in ("cnn", "tied_weights", "causal_lm"):
        m, args = make(name)
        for fold in (True, False):
            om, _ = probe_ok(f"do_constant_folding={fold}", name, m, args, do_constant_folding=fold)
            if om is not None:
                ref = torch_onnx(m, args, do_constant_folding=fold)
                row(f"  vs torch.onnx", name, "info", f"nodes ours {len(om.graph.node)} torch {len(ref.graph.node)}; "
                    f"initializers ours {len(om.graph.initializer)} torch {len(ref.graph.initializer)}")


def probe_dynamic_axes():
    m, x = make("cnn")
    x2 = R(5, 3, 24, 20)

    def at_other_size(names):
        def extra(om, r):
            out = ort_run(om.SerializeToString(), [("", x2)])
            err = max_err(out, reference(m, x2))
            dims = [d.dim_param or d.dim_value for d in om.graph.input[0].type.tensor_type.shape.dim]
            return ("" if not isinstance(err, str) and err < 1e-3 else "!") + f"at 5x3x24x20: {err}; input dims {dims}"
        return extra

    probe_ok("dynamic_axes dict of dicts", "cnn", m, x, input_names=["x"], output_names=["y"],
             dynamic_axes={"x": {0: "batch", 2: "h", 3: "w"}, "y": {0: "batch"}}, extra=at_other_size(None))
    probe_ok("dynamic_axes dict of lists", "cnn", m, x, input_names=["x"], output_names=["y"],
             dynamic_axes={"x": [0, 2, 3], "y": [0]}, extra=at_other_size(None))
    probe_ok("dynamic_axes by default name", "cnn", m, x, dynamic_axes={"x": [0, 2, 3]}, extra=at_other_size(None))
    ref = torch_onnx(m, (x,), input_names=["x"], output_names=["y"], dynamic_axes={"x": [0, 2, 3], "y": [0]})
    om, _ = probe_ok("dynamic_axes auto names", "cnn", m, x, input_names=["x"], output_names=["y"],
                     dynamic_axes={"x": [0, 2, 3], "y": [0]}, numeric=False)
    if om:
        d = lambda g: [[x.dim_param or x.dim_value for x in v.type.tensor_type.shape.dim] for v in list(g.input[:1]) + list(g.output)]
        row("  vs torch.onnx", "cnn", "same" if d(om.graph) == d(ref.graph) else "diff", f"ours {d(om.graph)} / torch {d(ref.graph)}")
    probe_error("dynamic_axes unknown name", "cnn", m, x, None, input_names=["x"], dynamic_axes={"image": [0]})
    probe_error("dynamic_axes axis out of range", "cnn", m, x, None, input_names=["x"], dynamic_axes={"x": [7]})
    probe_error("dynamic_axes bad value", "cnn", m, x, None, input_names=["x"], dynamic_axes={"x": 0})
    probe_ok("dynamic_axes axis as a str '0'", "cnn", m, x, input_names=["x"], dynamic_axes={"x": {"0": "b"}},
             extra=lambda om, r: str([d.dim_param or d.dim_value for d in om.graph.input[0].type.tensor_type.shape.dim]))
    probe_error("dynamic_axes axis not a number", "cnn", m, x, None, input_names=["x"], dynamic_axes={"x": {"b": "b"}})
    m, args = make("tiny_bert")
    probe_ok("dynamic_axes kwarg input (bert)", "tiny_bert", m, args, input_names=["ids", "mask"],
             dynamic_axes={"ids": {0: "b", 1: "t"}, "mask": {0: "b", 1: "t"}})


def probe_keep_init():
    for oet in ("ONNX_FALLTHROUGH", "ONNX"):
        for keep in (None, True, False):
            m, x = make("cnn")
            om, _ = probe_ok(f"keep_init={keep} {oet}", "cnn", m, x, keep_initializers_as_inputs=keep,
                             operator_export_type=oet)
            ref = torch_onnx(m, (x,), keep_initializers_as_inputs=keep, operator_export_type=getattr(OET, oet))
            if om is not None:
                a = (om.ir_version, len(om.graph.input))
                b = (ref.ir_version, len(ref.graph.input))
                row("  vs torch.onnx (ir, #inputs)", "cnn", "same" if a == b else "diff", f"ours {a} / torch {b}")


def probe_custom_opsets():
    z, zx = Zeta().eval(), R(3, 5)
    om, _ = probe_ok("custom_opsets used", "zeta", z, zx, custom_opsets={"org.pytorch.aten": 3}, numeric=False,
                     extra=lambda om, r: str(sorted((o.domain, o.version) for o in om.opset_import)))
    ref = torch_onnx(z, (zx,), custom_opsets={"org.pytorch.aten": 3})
    row("  vs torch.onnx", "zeta", "info", str(sorted((o.domain, o.version) for o in ref.opset_import)))
    m, x = make("cnn")
    probe_ok("custom_opsets unused", "cnn", m, x, custom_opsets={"com.vendor": 2},
             extra=lambda om, r: f"warnings {[d.code for d in r.warnings]}")
    probe_error("custom_opsets bad version", "cnn", m, x, None, custom_opsets={"com.vendor": "2"})
    probe_error("custom_opsets not a dict", "cnn", m, x, "invalid-option", custom_opsets=[("a", 1)])


def probe_enums_and_errors():
    m, x = make("cnn")
    for v in (TM.EVAL, oxport.TrainingMode.PRESERVE, "training", "TrainingMode.TRAINING"):
        probe_ok(f"training={v}", "cnn", m, x, training=v, numeric=False, opset_version=15)
    probe_error("training=True", "cnn", m, x, "invalid-option", training=True)
    probe_error("operator_export_type=3", "cnn", m, x, "invalid-option", operator_export_type=3)
    probe_error("opset_version=11.0", "cnn", m, x, "invalid-option", opset_version=11.0)
    probe_error("do_constant_folding=None", "cnn", m, x, "invalid-option", do_constant_folding=None)
    probe_error("verbose='yes'", "cnn", m, x, "invalid-option", verbose="yes")
    probe_error("model is a function", "-", lambda t: t, x, "unsupported-model")
    # A non-CPU model (CUDA is absent here: the meta device stands in for any device not the CPU).
    torch.manual_seed(0)
    mm = nn.Linear(4, 4, device="meta")
    probe_error("model on a non-CPU device", "linear(meta)", mm, torch.randn(2, 4), None)
    probe_error("args on a non-CPU device", "cnn", m, torch.randn(2, 3, 8, 8, device="meta"), None)
    probe_error("model raises in forward", "cnn", m, R(2, 5, 8, 8), None)


def probe_surfaces(cli):
    """Five models through Python, the CLI and a preset: the same bytes."""
    cases = [("cnn", dict(opset_version=13, input_names=["image"], output_names=["logits"],
                          dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})),
             ("tiny_bert", dict(input_names=["ids", "mask"], dynamic_axes={"ids": [0, 1], "mask": [0, 1]})),
             ("greedy_decoder_script", dict(opset_version=14)),
             ("qat", dict(opset_version=13, do_constant_folding=False)),
             ("keywords", dict(keep_initializers_as_inputs=False, training="PRESERVE"))]
    for name, kw in cases:
        m, args = make(name)
        with tempfile.TemporaryDirectory(prefix="probe-surf-") as d:
            py_path = os.path.join(d, "py.onnx")
            try:
                oxport.export_to_onnx(m, args, py_path, **kw)
            except Exception as e:  # noqa: BLE001
                row("surfaces: python", name, "FAIL", str(e)[:100])
                continue
            # What the CLI user has: the module saved as TorchScript (traced as oxport traces it).
            a = args if isinstance(args, tuple) else (args,)
            pos, named = (list(a[:-1]), a[-1]) if a and isinstance(a[-1], dict) else (list(a), {})
            pt = os.path.join(d, "m.pt")
            if isinstance(m, torch.jit.ScriptModule):
                m.save(pt)
                cli_pos, cli_kw = pos, named
            else:
                from oxport._args import trace_module
                was = {s: s.training for s in m.modules()}
                if kw.get("training", "EVAL") == "EVAL":
                    m.eval()
                traced, example = trace_module(m, pos, named)
                for s, t in was.items():
                    s.training = t
                traced.save(pt)
                cli_pos, cli_kw = example, {}

            def spec(v, i):
                if isinstance(v, torch.Tensor):
                    p = os.path.join(d, f"a{i}.npy")
                    numpy.save(p, v.numpy())
                    return "npy=" + p
                return str(v)
            flags = []
            for i, v in enumerate(cli_pos):
                flags += ["--arg", spec(v, i)]
            for k, v in cli_kw.items():
                flags += ["--kwarg", f"{k}={spec(v, k)}"]
            if "opset_version" in kw:
                flags += ["--opset", str(kw["opset_version"])]
            if kw.get("input_names"):
                flags += ["--input-names", ",".join(kw["input_names"])]
            if kw.get("output_names"):
                flags += ["--output-names", ",".join(kw["output_names"])]
            for k, axes in kw.get("dynamic_axes", {}).items():
                items = axes.items() if isinstance(axes, dict) else [(a, None) for a in axes]
                flags += ["--dynamic-axes", f"{k}:" + ",".join(f"{a}={n}" if n else str(a) for a, n in items)]
            if "do_constant_folding" in kw:
                flags += ["--do-constant-folding", str(kw["do_constant_folding"]).lower()]
            if "keep_initializers_as_inputs" in kw:
                flags += ["--keep-initializers-as-inputs", str(kw["keep_initializers_as_inputs"]).lower()]
            if "training" in kw:
                flags += ["--training", kw["training"]]
            cli_path = os.path.join(d, "cli.onnx")
            p = subprocess.run([cli, "export", pt, "-o", cli_path, "--progress", "never"] + flags,
                               capture_output=True, text=True)
            if p.returncode != 0:
                row("surfaces: cli", name, "FAIL", (p.stderr or p.stdout).strip().splitlines()[0][:120] + " " + " ".join(flags)[:80])
                continue

            def pv(v, i):
                if isinstance(v, torch.Tensor):
                    path = os.path.join(d, f"a{i}.npy")
                    numpy.save(path, v.numpy())
                    return {"tensor": {"fill": {"npy": path}}}
                return v
            preset = {"format": "oxport-preset", "version": 1, "model": pt,
                      "args": [pv(v, i) for i, v in enumerate(cli_pos)],
                      "kwargs": {k: pv(v, k) for k, v in cli_kw.items()}}
            preset.update({k: ({a: ({str(x): n for x, n in ax.items()} if isinstance(ax, dict) else ax)
                                for a, ax in v.items()} if k == "dynamic_axes" else v) for k, v in kw.items()})
            preset_path = os.path.join(d, "p.json")
            with open(preset_path, "w") as fh:
                json.dump(preset, fh)
            pre_path = os.path.join(d, "preset.onnx")
            p3 = subprocess.run([cli, "export", "-o", pre_path, "--progress", "never", "--preset", preset_path],
                                capture_output=True, text=True)
            blobs = [open(x, "rb").read() for x in (py_path, cli_path) if os.path.exists(x)]
            if p3.returncode == 0:
                blobs.append(open(pre_path, "rb").read())
            same = len(blobs) == 3 and len(set(blobs)) == 1
            row("surfaces: python == cli == preset", name, "ok" if same else "FAIL",
                f"{[len(b) for b in blobs]} bytes" + ("" if p3.returncode == 0 else
                                                     f"; preset: {p3.stderr.strip()[:100]}"))


PROBES = [probe_models, probe_args_forms, probe_f, probe_export_params, probe_verbose, probe_training, probe_names,
          probe_oet, probe_opsets, probe_folding, probe_dynamic_axes, probe_keep_init, probe_custom_opsets,
          probe_enums_and_errors]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="", help="run only the probe groups whose name contains this")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "oxport"))
    a = ap.parse_args()
    for p in PROBES + [lambda: probe_surfaces(a.cli)]:
        name = getattr(p, "__name__", "probe_surfaces")
        if name == "<lambda>":
            name = "probe_surfaces"
        if a.k and a.k not in name:
            continue
        try:
            p()
        except Exception:  # noqa: BLE001
            row(name, "-", "CRASH", traceback.format_exc().splitlines()[-1][:140])
    bad = [r for r in ROWS if r[2] in ("FAIL", "CRASH")]
    print(f"\n{len(ROWS)} rows, {len(bad)} failing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
