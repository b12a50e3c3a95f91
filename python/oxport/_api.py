"""oxport.export_to_onnx: horizon_plugin_pytorch's export_to_onnx, exported by oxport's core."""
import enum
import io
import json
import os
import tempfile
import time
import traceback
import warnings
from typing import Any, Dict, Optional

import torch

from . import _oxport
from ._args import PresetArgs, split_args, trace_module
from ._diagnostics import Diagnostic, ExportError, ExportResult, OxportWarning

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class TrainingMode(enum.IntEnum):
    """As torch.onnx.TrainingMode (same names and values)."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """As torch.onnx.OperatorExportTypes (same names and values)."""
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def _option_error(option: str, message: str, hint: str = "") -> ExportError:
    return ExportError([Diagnostic.error("invalid-option", message, hint, option)])


def _enum_name(value, enum_type, option: str) -> str:
    """oxport's enum, torch.onnx's enum (anything with that member .name), or the member's name as
    a string ("EVAL", "TrainingMode.EVAL", case-insensitive)."""
    names = [m.name for m in enum_type]
    if isinstance(value, enum_type):
        return value.name
    if isinstance(value, str):
        name = value.rsplit(".", 1)[-1].strip().upper()
    elif not isinstance(value, (bool, int)) and isinstance(getattr(value, "name", None), str):
        name = value.name
    else:
        name = None
    if name not in names:
        raise _option_error(option, f"{option}={value!r} is not a {enum_type.__name__}",
                            f"use {enum_type.__name__}.{names[0]} (oxport's or torch.onnx's) or one of "
                            + ", ".join(repr(n) for n in names))
    return name


def _bool(value, option: str, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool):
        return value
    raise _option_error(option, f"{option}={value!r} is not a bool" + (" or None" if allow_none else ""))


def _names(value, option: str):
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise _option_error(option, f"{option} must be a list of str, not {type(value).__name__}")
    return list(value)


def _dynamic_axes(value):
    """Both forms, {name: {axis: axis_name}} and {name: [axis, ...]}; the core checks the rest (names
    that are neither input nor output names, axes out of range, ...), as the seed does."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _option_error("dynamic_axes", f"dynamic_axes must be a dict, not {type(value).__name__}",
                            "e.g. {'image': {0: 'batch'}} or {'image': [0]}")
    out = {}
    for key, axes in value.items():
        if isinstance(axes, dict):
            out[key] = {(str(a) if isinstance(a, int) and not isinstance(a, bool) else a): n for a, n in axes.items()}
        elif isinstance(axes, (list, tuple)):
            out[key] = list(axes)
        else:
            out[key] = axes  # the core's error names the key and the allowed forms
    return out


def _tensors_of(v):
    if isinstance(v, torch.Tensor):
        yield v
    elif isinstance(v, dict):
        for e in v.values():
            yield from _tensors_of(e)
    elif isinstance(v, (list, tuple)):
        for e in v:
            yield from _tensors_of(e)


def _has_dict(v) -> bool:
    if isinstance(v, dict):
        return True
    return isinstance(v, (list, tuple)) and any(_has_dict(e) for e in v)


def _check_device(model, positional, named):
    """oxport's core runs and exports on the CPU: a module or an example tensor elsewhere (CUDA)
    is refused with what to do, before anything runs (torch.onnx would trace it there)."""
    where = []
    if isinstance(model, torch.nn.Module):
        for kind, items in (("parameter", model.named_parameters()), ("buffer", model.named_buffers())):
            for name, t in items:
                if t.device.type != "cpu":
                    where.append(f"the {kind} {name} is on {t.device}")
                    break
    for i, v in enumerate(list(positional) + list(named.values())):
        t = next((t for t in _tensors_of(v) if t.device.type != "cpu"), None)
        if t is not None:
            where.append(f"an example tensor of args is on {t.device}")
            break
    if where:
        raise ExportError([Diagnostic.error(
            "unsupported-device", "oxport exports on the CPU, but " + " and ".join(where),
            "move them first: model.cpu() and the example tensors .cpu() (the ONNX file does not depend on "
            "the device the model was exported from)", "model" if "parameter" in where[0] or "buffer" in where[0]
            else "args")])


def _saved_buffers(model: torch.nn.Module):
    """Every buffer (the object and a copy of its values): tracing runs forward once, which moves
    batch norm's running statistics in training mode and whatever forward updates in place."""
    return [(m, name, b, b.detach().clone()) for m in model.modules() for name, b in m._buffers.items()
            if b is not None]


def _restore_buffers(saved):
    with torch.no_grad():
        for m, name, b, values in saved:
            m._buffers[name] = b
            if b.shape != values.shape or not torch.equal(b, values):
                b.set_(values) if b.shape != values.shape else b.copy_(values)


def _trace_error(e: Exception) -> ExportError:
    """The model's own error while it is traced, as a diagnostic at the model's source line (the
    innermost frame outside torch and oxport); the original stays chained (`raise ... from e`)."""
    first = (str(e).strip().splitlines() or [type(e).__name__])[0]
    where = None
    for frame in traceback.extract_tb(e.__traceback__):
        path = os.path.abspath(frame.filename)
        if not (path.startswith(_TORCH_DIR) or path.startswith(_PACKAGE_DIR)):
            where = frame
    low = next((t for t in ("Half", "BFloat16") if f"not implemented for '{t}'" in first), None)
    if low is not None:
        message = (f"the model cannot be traced on the CPU in {low.lower()}: {first} (libtorch's CPU kernel has no "
                   "such dtype; torch.onnx fails the same way)")
        hint, option = ("script the module instead (torch.jit.script(model)): oxport exports a scripted "
                        "half-precision model without running it in half; or export the float32 model"), "model"
    else:
        message = f"the model fails on the example inputs while it is traced: {type(e).__name__}: {first}"
        hint, option = ("check args against what forward() expects (shapes, dtypes, the number of arguments); "
                        "the original exception is chained as __cause__"), "args"
    text = f"error[forward-failed]: {message}"
    if where is not None:
        text = f"{where.filename}:{where.lineno}: " + text + (f"\n    {where.line}" if where.line else "")
    text += f"\n  option: {option}\n  hint: {hint}"
    return ExportError([Diagnostic("error", "forward-failed", message, file=where.filename if where else "",
                                   line=where.lineno if where else 0, option=option, hint=hint, text=text)])


def _model_file(model, positional, named, training: str, folder: str):
    """Saves what the core loads. Returns (path, preset args, preset kwargs, example inputs)."""
    path = os.path.join(folder, "model.pt")
    if not isinstance(model, (torch.nn.Module, torch.jit.ScriptFunction)):
        raise ExportError([Diagnostic.error(
            "unsupported-model", f"model is a {type(model).__name__}, not a torch.nn.Module, "
            "torch.jit.ScriptModule or torch.jit.ScriptFunction",
            "pass the module itself; for a plain function, script it with torch.jit.script")])
    _check_device(model, positional, named)
    dict_args = _has_dict(positional) or _has_dict(list(named.values()))
    if isinstance(model, torch.jit.ScriptFunction) or (isinstance(model, torch.jit.ScriptModule) and not dict_args):
        torch.jit.save(model, path)
        return path, positional, named
    # As torch.onnx.export: the module is traced in the mode `training` asks for, restored afterwards
    # (each submodule's own flag, so a mixed-mode model comes back exactly as it was), and so are
    # its buffers, which torch.onnx leaves as the traced forward wrote them. A ScriptModule reaches
    # here only for a dict argument, which the core takes from a trace around it.
    modes = {m: m.training for m in model.modules()}
    buffers = _saved_buffers(model)
    try:
        if training == "EVAL":
            model.train(False)
        elif training == "TRAINING":
            model.train(True)
        traced, example = trace_module(model, positional, named)
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001  (the model's own error, raised by its forward while traced)
        raise _trace_error(e) from e
    finally:
        for m, mode in modes.items():
            m.training = mode
        _restore_buffers(buffers)
    torch.jit.save(traced, path)
    return path, example, {}


def _write_atomically(path: str, text: str):
    folder = os.path.dirname(os.path.abspath(path)) or "."
    fd, tmp = tempfile.mkstemp(prefix=".oxport-report-", dir=folder)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def export_to_onnx(model, args, f, export_params=True, verbose=False, training=TrainingMode.EVAL,
                   input_names=None, output_names=None,
                   operator_export_type=OperatorExportTypes.ONNX_FALLTHROUGH, opset_version=11,
                   do_constant_folding=True, dynamic_axes=None, keep_initializers_as_inputs=None,
                   custom_opsets=None, *, verify=False, report=None, load_libraries=(), graph_mode="script"):
    """Export a (float or QAT) model to ONNX: horizon_plugin_pytorch.utils.onnx_helper.export_to_onnx's
    parameters, order, defaults and meaning, exported by oxport (docs/PYTHON.md).

    model: an nn.Module (traced on args in the mode `training` asks for, restored afterwards), a
      torch.jit.ScriptModule or a torch.jit.ScriptFunction.
    args: a tensor, a tuple, or a tuple ending in a dict of named arguments; non-tensors are baked.
    f: a path (str or os.PathLike; written atomically) or a binary file object.
    Keyword-only extras: verify (ONNX Runtime vs libtorch, also at other sizes of the dynamic axes),
    report (path of a JSON report), load_libraries (op libraries, torch.ops.load_library),
    graph_mode ("script": control flow as If/Loop; "trace": re-traced on args).

    Returns an ExportResult (statistics, warnings, the verification). Warnings are also issued
    through Python's warnings (OxportWarning). Raises ExportError (a RuntimeError) whose
    .diagnostics hold the structured diagnostics; a failed export leaves f untouched."""
    t0 = time.monotonic()
    report_doc: Dict[str, Any] = {"model": type(model).__name__}

    def finish(status: str):
        if report is None:
            return
        report_doc["status"] = status
        report_doc["total_ms"] = (time.monotonic() - t0) * 1000.0
        _write_atomically(os.fspath(report), json.dumps(report_doc, indent=2) + "\n")

    try:
        return _export(model, args, f, dict(
            export_params=export_params, verbose=verbose, training=training, input_names=input_names,
            output_names=output_names, operator_export_type=operator_export_type, opset_version=opset_version,
            do_constant_folding=do_constant_folding, dynamic_axes=dynamic_axes,
            keep_initializers_as_inputs=keep_initializers_as_inputs, custom_opsets=custom_opsets,
            graph_mode=graph_mode), verify, load_libraries, report_doc, finish)
    except ExportError as e:
        report_doc.setdefault("errors", [d.__dict__ for d in e.diagnostics])
        finish(report_doc.pop("status_if_failed", "failed"))
        raise
    except KeyboardInterrupt:
        report_doc["errors"] = [Diagnostic.error("interrupted", "the export was interrupted (Ctrl+C)").__dict__]
        finish("interrupted")
        raise


def _export(model, args, f, o, verify, load_libraries, report_doc, finish):
    training = _enum_name(o["training"], TrainingMode, "training")
    oet = _enum_name(o["operator_export_type"], OperatorExportTypes, "operator_export_type")
    opset = 11 if o["opset_version"] is None else o["opset_version"]
    if isinstance(opset, bool) or not isinstance(opset, int):
        raise _option_error("opset_version", f"opset_version={opset!r} is not an int")
    graph_mode = o["graph_mode"]
    if not isinstance(graph_mode, str) or graph_mode.lower() not in ("script", "trace"):
        raise _option_error("graph_mode", f"graph_mode={graph_mode!r} is neither 'script' nor 'trace'")
    custom = {} if o["custom_opsets"] is None else o["custom_opsets"]
    if not isinstance(custom, dict):
        raise _option_error("custom_opsets", "custom_opsets must be a dict {domain: version}")
    options = {
        "export_params": _bool(o["export_params"], "export_params"),
        "verbose": _bool(o["verbose"], "verbose"),
        "training": training,
        "input_names": _names(o["input_names"], "input_names"),
        "output_names": _names(o["output_names"], "output_names"),
        "operator_export_type": oet,
        "opset_version": opset,
        "do_constant_folding": _bool(o["do_constant_folding"], "do_constant_folding"),
        "dynamic_axes": _dynamic_axes(o["dynamic_axes"]),
        "keep_initializers_as_inputs": _bool(o["keep_initializers_as_inputs"], "keep_initializers_as_inputs", True),
        "custom_opsets": dict(custom),
        "graph_mode": graph_mode.lower(),
    }
    verify = _bool(verify, "verify")
    if isinstance(f, (str, os.PathLike)):
        target: Optional[str] = os.path.abspath(os.fspath(f))
        report_doc["output"] = target
    elif callable(getattr(f, "write", None)):
        target = None
    else:
        raise ExportError([Diagnostic.error("invalid-output", f"f is a {type(f).__name__}, neither a path nor a "
                                            "file object", "pass a file name or a binary file object (io.BytesIO)",
                                            "f")])
    if isinstance(load_libraries, (str, os.PathLike)):
        load_libraries = [load_libraries]
    for lib in load_libraries:
        try:
            torch.ops.load_library(os.fspath(lib))
        except (OSError, RuntimeError) as e:
            raise ExportError([Diagnostic.error(
                "op-library-failed", f"the op library {os.fspath(lib)} could not be loaded: {e}",
                "pass the path of a shared library built against this torch", "load_libraries")]) from None

    positional, named = split_args(args)
    with tempfile.TemporaryDirectory(prefix="oxport-") as folder:
        model_path, pos, kw = _model_file(model, positional, named, training, folder)
        writer = PresetArgs(folder)
        preset = dict(options, model=model_path,
                      args=[writer.value(v, f"args[{i}]") for i, v in enumerate(pos)],
                      kwargs={k: writer.value(v, f"args[-1][{k!r}]") for k, v in kw.items()})
        output = target if target is not None else os.path.join(folder, "model.onnx")
        r = _oxport.export(json.dumps(preset), output, verify)
        notes = [Diagnostic.from_dict(d) for d in r.get("load_notes", [])]
        if not r["ok"]:
            raise ExportError([Diagnostic.from_dict(d) for d in r["errors"]])
        diags = [Diagnostic.from_dict(d) for d in r["diagnostics"]]
        result = ExportResult(output=target, input_names=list(r["input_names"]), output_names=list(r["output_names"]),
                              stats=r["stats"], warnings=[d for d in diags if d.severity == "warning"],
                              notes=notes + [d for d in diags if d.severity != "warning"],
                              verify=json.loads(r["verify"]) if r["verify"] else None, verbose_log=r["verbose_log"])
        if target is None:
            if result.stats.get("external_data"):
                raise ExportError([Diagnostic.error(
                    "external-data-needs-path", "the model is past protobuf's 2 GiB limit, so its weights go to "
                    "external data files, which a file object cannot hold", "pass a file name as f", "f")])
            with open(output, "rb") as src:
                data = src.read()
            try:
                f.write(data)
            except (OSError, io.UnsupportedOperation, TypeError) as e:
                raise ExportError([Diagnostic.error(
                    "io.write-failed", f"the ONNX file could not be written to f ({type(e).__name__}: {e})",
                    "pass a file opened for binary writing (open(path, 'wb')) or an io.BytesIO", "f")]) from None
    report_doc.update(stats=result.stats, inputs=result.input_names, outputs=result.output_names,
                      warnings=[d.__dict__ for d in result.diagnostics])
    if options["verbose"] and result.verbose_log:
        print(result.verbose_log)
    for d in result.warnings:
        warnings.warn(OxportWarning(d), stacklevel=3)
    if verify:
        if r["verify_errors"]:
            report_doc["verify"] = {"error": "\n".join(d["text"] for d in r["verify_errors"])}
            raise ExportError([Diagnostic.from_dict(d) for d in r["verify_errors"]], result)
        report_doc["verify"] = result.verify
        if result.verify.get("skipped"):
            d = Diagnostic("warning", "verify-skipped", "verification was not run: " + result.verify.get("skip_reason", ""))
            result.warnings.append(d)
            warnings.warn(OxportWarning(d), stacklevel=3)
        elif not result.verify.get("passed"):
            report_doc["status_if_failed"] = "verify-failed"
            raise ExportError([Diagnostic.error(
                "verify-failed", "the exported model's outputs in ONNX Runtime differ from libtorch's "
                f"(the file was written to {target if target is not None else 'f'}):\n" + r["verify_text"],
                "see the runs above: a size baked into the graph shows as a mismatch at other sizes of a dynamic axis")],
                result)
    finish("ok")
    return result
