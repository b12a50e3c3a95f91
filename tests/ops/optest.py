"""Helpers for the per-op numeric tests.

A cases_<family>.py file defines CASES, a list built with case(). gen_cases.py traces (or scripts)
each module with PyTorch, saves it with torch.jit.save, and writes a preset and a manifest row.
The C++ side (test_ops.cpp) exports every case at each of its opsets with oxport, checks the
model, runs it in ONNX Runtime and compares with libtorch on the same inputs.
"""
import numpy as np
import torch


class T:
    """A tensor input made by oxport from a spec (so it can be resized for dynamic axes)."""

    def __init__(self, *shape, dtype="float32", fill="randn", seed=0):
        self.shape = list(shape)
        self.dtype = dtype
        self.fill = fill
        self.seed = seed

    def to_arg(self, name, folder):
        return {"tensor": {"shape": self.shape, "dtype": self.dtype, "fill": self.fill, "seed": self.seed}}

    def example(self):
        """The tensor PyTorch traces with: same shape and dtype (values do not matter for tracing)."""
        dt = getattr(torch, {"float32": "float32", "float64": "float64", "int64": "int64", "int32": "int32",
                             "bool": "bool", "uint8": "uint8", "int8": "int8", "float16": "float16",
                             "bfloat16": "bfloat16"}[self.dtype])
        if self.dtype == "bool":
            return torch.rand(self.shape) > 0.5
        if dt.is_floating_point:
            return torch.randn(self.shape).to(dt)
        return torch.arange(int(np.prod(self.shape)) if self.shape else 1).reshape(self.shape).to(dt)


class Npy:
    """A tensor input with exact values (indices, masks, positive values ...), stored as .npy."""

    def __init__(self, array):
        self.array = np.asarray(array)

    def to_arg(self, name, folder):
        path = f"{name}.npy"
        np.save(f"{folder}/{path}", self.array)
        return {"tensor": {"fill": {"npy": path}}}

    def example(self):
        return torch.from_numpy(self.array.copy())


def case(name, module, inputs, opsets=(11, 13, 17), script=False, dynamic=None, kwargs=None,
         tolerance=1e-4, expect="ok", operator_export_type=None, training=None, input_names=None,
         output_names=None, note="", fold=True, reference=None):
    """One numeric test.

    name:     unique, [a-z0-9_] (becomes the test name)
    module:   an nn.Module (or a function, wrapped) computing the op
    inputs:   list of T(...), Npy(...), or plain Python values (baked into the graph)
    dynamic:  {input_index: [axes]} to mark axes dynamic; verification then also runs at other sizes
    kwargs:   {name: T/Npy/value} passed as named arguments
    expect:   "ok", or "error:<code>" when the export must fail with that diagnostic code, or
              "verify-skipped" when the file must pass the checks but ONNX Runtime cannot run it
    fold:     False exports with do_constant_folding=false, so ops on static values (creation ops
              with constant sizes ...) reach their converters instead of being folded
    reference: a function of the same inputs that libtorch runs instead of `module` to give the
              expected outputs, for a case whose documented meaning libtorch itself does not keep on
              every CPU (baddbmm with beta=0 must ignore NaN in self; one libtorch kernel lets a NaN
              through on some machines)
    """
    return dict(name=name, module=module, inputs=list(inputs), opsets=list(opsets), script=script,
                dynamic=dynamic or {}, kwargs=kwargs or {}, tolerance=tolerance, expect=expect,
                operator_export_type=operator_export_type, training=training, input_names=input_names,
                output_names=output_names, note=note, fold=fold, reference=reference)


class Fn(torch.nn.Module):
    """Wraps a function of the inputs as a module: Fn(lambda x: x.relu())."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)
