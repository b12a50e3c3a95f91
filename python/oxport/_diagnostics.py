"""Diagnostics, the export error and the export result of the oxport Python API."""
import dataclasses
from typing import Any, Dict, List, Optional


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One diagnostic of the core: what went wrong, where in the model, and what to do."""

    severity: str = "error"       # "error", "warning" or "note"
    code: str = ""                # stable id: "unsupported-op", "baked-size", "cancelled", ...
    message: str = ""
    node_kind: str = ""           # TorchScript node kind (aten::view), when at a node
    module_path: str = ""         # module scope of that node (layer1.0.conv1)
    file: str = ""                # the model's Python source file
    line: int = 0                 # 1-based; 0 when unknown
    column: int = 0
    option: str = ""              # the export option at fault (dynamic_axes, input_names, ...)
    hint: str = ""                # what to do about it
    text: str = ""                # the whole diagnostic as the CLI prints it

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Diagnostic":
        """From the core's JSON of a diagnostic (the CLI's --json: the source place under "location")."""
        fields = {f.name for f in dataclasses.fields(cls)}
        flat = {k: v for k, v in d.items() if k in fields}
        for k, v in (d.get("location") or {}).items():
            if k in fields:
                flat[k] = v
        return cls(**flat)

    @classmethod
    def error(cls, code: str, message: str, hint: str = "", option: str = "") -> "Diagnostic":
        text = f"error[{code}]: {message}"
        if option:
            text += f"\n  option: {option}"
        if hint:
            text += f"\n  hint: {hint}"
        return cls("error", code, message, option=option, hint=hint, text=text)

    def __str__(self) -> str:
        return self.text or f"{self.severity}[{self.code}]: {self.message}"


class ExportError(RuntimeError):
    """The export failed. str(e) is the diagnostic text; e.diagnostics holds them structured
    (code, message, node_kind, module_path, file, line, option, hint). e.code is the first one's code.
    A failed export never writes (or damages an earlier file at) f."""

    def __init__(self, diagnostics: List[Diagnostic], result: Optional["ExportResult"] = None):
        self.diagnostics = list(diagnostics)
        self.result = result
        super().__init__("\n".join(str(d) for d in self.diagnostics) or "export failed")

    @property
    def code(self) -> str:
        return self.diagnostics[0].code if self.diagnostics else ""


class OxportWarning(UserWarning):
    """A warning of the export (baked sizes, ops kept in their own domain, ...), issued through
    Python's warnings module; the Diagnostic is its `.diagnostic`."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(str(diagnostic))
        self.diagnostic = diagnostic


@dataclasses.dataclass
class ExportResult:
    """What export_to_onnx returns (horizon's function returns None; ignoring this changes nothing)."""

    output: Optional[str]                 # the path written, None when f was a file object
    input_names: List[str]                # graph inputs as written
    output_names: List[str]
    stats: Dict[str, Any]                 # timings per phase and pass, op histograms, sizes, checks
    warnings: List[Diagnostic]
    notes: List[Diagnostic]               # notes of the export and of loading (op libraries)
    verify: Optional[Dict[str, Any]] = None   # the verification report (verify=True)
    verbose_log: str = ""                 # the graph printout (verbose=True)

    @property
    def diagnostics(self) -> List[Diagnostic]:
        return self.warnings + self.notes

    def __repr__(self) -> str:
        s = self.stats
        where = self.output if self.output is not None else "<file object>"
        v = "" if self.verify is None else (", verify passed" if self.verify.get("passed") else
                                             ", verify skipped" if self.verify.get("skipped") else ", verify FAILED")
        def names(ns, most=6):
            shown = ", ".join(ns[:most])
            return f"[{shown}, ... ({len(ns)})]" if len(ns) > most else f"[{shown}]"
        return (f"ExportResult({where}: {s.get('onnx_nodes', 0)} nodes, {s.get('initializers', 0)} initializers, "
                f"{s.get('file_bytes', 0)} bytes, inputs {names(self.input_names)}, "
                f"outputs {names(self.output_names)}, {len(self.warnings)} warning(s){v})")
