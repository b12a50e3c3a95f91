"""oxport: TorchScript to ONNX, as a drop-in for horizon_plugin_pytorch's export_to_onnx.

    from oxport import export_to_onnx     # instead of horizon_plugin_pytorch.utils.onnx_helper
    export_to_onnx(model, (x,), "model.onnx")

See docs/PYTHON.md. The package is a thin binding over oxport's C++ core; it needs Debian's
python3-torch (the libtorch the core links), which it imports first.
"""
import torch  # noqa: F401  (loads libtorch the way torch does, before the core's extension)

from ._api import OperatorExportTypes, TrainingMode, export_to_onnx
from ._args import example_input
from ._diagnostics import Diagnostic, ExportError, ExportResult, OxportWarning
from . import _oxport

__version__ = _oxport.versions()["oxport"]

__all__ = ["export_to_onnx", "example_input", "TrainingMode", "OperatorExportTypes", "ExportError", "ExportResult", "Diagnostic",
           "OxportWarning", "versions"]


def versions():
    """Versions of oxport and of the libraries its core was built with (libtorch, onnx, protobuf)."""
    return dict(_oxport.versions())
