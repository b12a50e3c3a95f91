"""export_to_onnx's `args`: splitting them, tracing a live nn.Module on them, and writing them into
the preset the core reads (tensors as .npy files, everything else baked into the graph)."""
import inspect
import math
import os
from typing import Any, Dict, List, Tuple

import torch

from . import _oxport
from ._diagnostics import Diagnostic, ExportError

# torch dtype -> oxport's dtype name (core/include/oxport/tensor.h)
_DTYPES = {
    torch.float32: "float32", torch.float64: "float64", torch.float16: "float16", torch.bfloat16: "bfloat16",
    torch.int8: "int8", torch.uint8: "uint8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
    torch.bool: "bool",
}


def _error(code, message, hint="", option="args"):
    return ExportError([Diagnostic.error(code, message, hint, option)])


def split_args(args) -> Tuple[List[Any], Dict[str, Any]]:
    """The seed's three forms: a tensor (a 1-tuple), a tuple, a tuple ending in a dict of named
    arguments. A trailing empty dict means "no named arguments" (so a dict argument before it is
    positional), as in torch.onnx.export. Any other single value is a 1-tuple too."""
    if not isinstance(args, tuple):
        args = (args,)
    if args and isinstance(args[-1], dict):
        named = args[-1]
        for k in named:
            if not isinstance(k, str):
                raise _error("invalid-argument", f"the dictionary of named arguments has the key {k!r}, not a str",
                             "the last element of args, when a dict, maps forward()'s parameter names to values")
        return list(args[:-1]), dict(named)
    return list(args), {}


def is_tensor_tree(v) -> bool:
    if isinstance(v, torch.Tensor):
        return True
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(is_tensor_tree(e) for e in v)


def contains_tensor(v) -> bool:
    if isinstance(v, torch.Tensor):
        return True
    if isinstance(v, (list, tuple)):
        return any(contains_tensor(e) for e in v)
    if isinstance(v, dict):
        return any(contains_tensor(e) for e in v.values())
    return False


def _bind(model: torch.nn.Module, positional: List[Any], named: Dict[str, Any]):
    """forward()'s arguments in order, as torch.onnx.export binds them: the positional ones, then
    each further parameter from `named`, else its default, else None. Returns (slots, kw): slots is
    a list of (parameter name, value) passed positionally, kw the keyword-only ones."""
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        if named:
            raise _error("invalid-argument", "named arguments were given, but forward()'s signature cannot be read")
        return [(f"input_{i}", v) for i, v in enumerate(positional)], {}
    params = list(sig.parameters.values())
    P = inspect.Parameter
    slots, kw, rest = [], {}, dict(named)
    i = 0
    for p in params:
        if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD):
            if i < len(positional):
                slots.append((p.name, positional[i]))
                i += 1
            elif p.name in rest:
                slots.append((p.name, rest.pop(p.name)))
            else:
                slots.append((p.name, None if p.default is P.empty else p.default))
        elif p.kind == P.VAR_POSITIONAL:
            slots.extend((f"{p.name}_{j}", v) for j, v in enumerate(positional[i:]))
            i = len(positional)
        elif p.kind == P.KEYWORD_ONLY:
            kw[p.name] = rest.pop(p.name) if p.name in rest else (None if p.default is P.empty else p.default)
        elif p.kind == P.VAR_KEYWORD:
            kw.update(rest)
            rest = {}
    if i < len(positional):
        raise _error("too-many-arguments",
                     f"args has {len(positional)} positional arguments but {type(model).__name__}.forward() takes {i}")
    if rest:
        raise _error("unknown-argument", f"{type(model).__name__}.forward() has no parameter named "
                     + ", ".join(repr(k) for k in rest), f"its parameters: {', '.join(sig.parameters)}")
    return slots, kw


def _leaves(v, path: str, out: List[Tuple[str, torch.Tensor]]):
    """The tensors of a (nested) dict/list/tuple argument with their input names (`feats_image`,
    `pair_0`), in order (dict values in insertion order, as torch.onnx flattens them)."""
    if isinstance(v, torch.Tensor):
        out.append((path, v))
    elif isinstance(v, dict):
        for k, e in v.items():
            _leaves(e, f"{path}_{k}", out)
    elif isinstance(v, (list, tuple)):
        for i, e in enumerate(v):
            _leaves(e, f"{path}_{i}", out)


def _rebuild(v, tensors):
    """`v` with each tensor leaf replaced by the next of `tensors` (an iterator); the rest as it is."""
    if isinstance(v, torch.Tensor):
        return next(tensors)
    if isinstance(v, dict):
        return type(v)((k, _rebuild(e, tensors)) for k, e in v.items())
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*[_rebuild(e, tensors) for e in v])
    if isinstance(v, (list, tuple)):
        return type(v)(_rebuild(e, tensors) for e in v)
    return v


def _identifier(name: str, taken) -> str:
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "input"
    if base[0].isdigit():
        base = "_" + base
    out, i = base, 1
    while out in taken:
        out, i = f"{base}_{i}", i + 1
    taken.add(out)
    return out


def trace_module(model: torch.nn.Module, positional: List[Any], named: Dict[str, Any]):
    """Traces a live nn.Module on the arguments (in the module's current mode), as torch.onnx.export
    does: strict=False, no check run. Tensor arguments (and lists/tuples of tensors) become the
    traced forward's inputs, in order; the tensors inside a dict or a mixed list/tuple argument
    become inputs of their own (`feats_image`), the structure around them is rebuilt in the trace;
    every other value is baked into the trace. Returns the TracedModule and the example inputs of
    its forward."""
    slots, kw = _bind(model, positional, named)
    inputs: List[Tuple[str, Any]] = []   # (the traced forward's parameter, its example)
    where: List[Tuple[str, bool]] = []   # per input: the argument it goes to, whether it is a leaf
    taken = set()
    for name, v in list(slots) + list(kw.items()):
        if is_tensor_tree(v):
            inputs.append((_identifier(name, taken), v))
            where.append((name, False))
        elif contains_tensor(v):
            leaves: List[Tuple[str, torch.Tensor]] = []
            _leaves(v, name, leaves)
            for leaf_name, t in leaves:
                inputs.append((_identifier(leaf_name, taken), t))
                where.append((name, True))
    if not inputs:
        raise _error("no-tensor-arguments", "args holds no tensor, so the exported graph would have no input",
                     "pass at least one example tensor in args")
    direct = not kw and all(is_tensor_tree(v) for _, v in slots) and not isinstance(model, torch.jit.ScriptModule)
    example = tuple(v for _, v in inputs)
    traced_obj = model if direct else _baking_wrapper(model, slots, kw, [n for n, _ in inputs], where)
    traced = torch.jit.trace(traced_obj, example, strict=False, check_trace=False)
    return traced, list(example)


def _baking_wrapper(model: torch.nn.Module, slots, kw, input_names: List[str], where) -> torch.nn.Module:
    """A module whose forward takes only the tensors and calls `model` with the others baked in
    (and dict/mixed arguments rebuilt around their tensors). It shares model's submodules,
    parameters and buffers (the same dicts), so the trace records the same module paths and
    parameter names as tracing `model` itself would. A ScriptModule is called as the wrapper's
    submodule `model`: the trace keeps its scripted forward (control flow included)."""
    pos_values = [v for _, v in slots]
    pos_index = {name: i for i, (name, _) in enumerate(slots)}
    scripted = isinstance(model, torch.jit.ScriptModule)

    def forward(self, *tensors):
        pos, kws = list(pos_values), dict(kw)
        leaves: Dict[str, List[torch.Tensor]] = {}
        for (name, is_leaf), t in zip(where, tensors):
            if is_leaf:
                leaves.setdefault(name, []).append(t)
            elif name in pos_index:
                pos[pos_index[name]] = t
            else:
                kws[name] = t
        for name, ts in leaves.items():
            if name in pos_index:
                pos[pos_index[name]] = _rebuild(pos[pos_index[name]], iter(ts))
            else:
                kws[name] = _rebuild(kws[name], iter(ts))
        target = self.model if scripted else model
        return target(*pos, **kws)

    P = inspect.Parameter
    forward.__signature__ = inspect.Signature(
        [P("self", P.POSITIONAL_OR_KEYWORD)] + [P(n, P.POSITIONAL_OR_KEYWORD) for n in input_names])
    name = getattr(model, "original_name", None) if scripted else type(model).__name__
    cls = type(name or "Model", (torch.nn.Module,), {"forward": forward, "__module__": type(model).__module__})
    w = cls()
    if scripted:
        w.model = model
    else:
        w._modules = model._modules
        w._parameters = model._parameters
        w._buffers = model._buffers
    w.training = model.training
    return w


def example_input(spec: str) -> torch.Tensor:
    """The example tensor oxport makes from a tensor spec (docs/PRESET.md, "Tensor specs":
    "1x3x320x320:smooth:seed=4"), as the CLI's --arg and a preset's {"tensor": ...} make it.
    Passed to export_to_onnx unchanged (not written in place), it goes into the preset as its spec
    rather than as its values, so verification at other sizes of a dynamic axis makes the same fill
    at that size, as the CLI does (a tensor of values is repeated along the longer axis instead)."""
    r = _oxport.example_tensor(spec)
    if not r["ok"]:
        raise ExportError([Diagnostic.from_dict(d) for d in r["errors"]])
    dtype = next(k for k, v in _DTYPES.items() if v == r["dtype"])
    data = r["data"]
    t = torch.frombuffer(bytearray(data), dtype=dtype).reshape(r["shape"]) if data else torch.empty(r["shape"], dtype=dtype)
    if r["fill"] != "npy":
        t._oxport_spec = ({"shape": list(r["shape"]), "dtype": r["dtype"], "fill": r["fill"], "seed": r["seed"]},
                          t._version)
    return t


class PresetArgs:
    """Writes argument values as preset JSON; tensors go to .npy files in `folder`."""

    def __init__(self, folder: str):
        self.folder = folder
        self.count = 0

    def value(self, v, where: str):
        if isinstance(v, torch.Tensor):
            return self.tensor(v, where)
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            if not math.isfinite(v):
                raise _error("unsupported-argument", f"{where} is {v}, which cannot be passed to a scripted model",
                             "pass a finite float")
            return v
        if isinstance(v, (list, tuple)):
            return [self.value(e, f"{where}[{i}]") for i, e in enumerate(v)]
        raise _error("unsupported-argument", f"{where} is a {type(v).__name__}; oxport takes tensors, bool, int, "
                     "float, str, None and lists/tuples of them", "")

    def tensor(self, t: torch.Tensor, where: str):
        dtype = _DTYPES.get(t.dtype)
        if dtype is None or t.is_quantized or t.layout != torch.strided:
            raise _error("unsupported-input-dtype", f"{where} is a {t.dtype} tensor ({t.layout}), which oxport cannot "
                         "take as an example input", "pass float, int, bool or bfloat16/float16 dense tensors")
        made = getattr(t, "_oxport_spec", None)
        if made is not None and made[1] == t._version and made[0]["shape"] == list(t.shape) and made[0]["dtype"] == dtype:
            return {"tensor": dict(made[0])}
        t = t.detach().to("cpu").contiguous()
        data = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        path = os.path.join(self.folder, f"arg{self.count}.npy")
        self.count += 1
        _oxport.write_npy(path, dtype, list(t.shape), data)
        return {"tensor": {"fill": {"npy": path}}}
