"""The reference: torch.jit.load + torch.onnx.export of a saved TorchScript file, as a user runs it.

Usage: /usr/bin/python3 bench/torch_export.py MODEL.pt MODEL.json OUT.onnx OPSET TIMES.json

Same options as the oxport run: one float32 input of the model's example shape (randn, seed 0),
input/output names "input"/"output", dynamic batch (axis 0 of both), opset OPSET, constant
folding on, export_params on, operator_export_type ONNX. Writes its own phase times to TIMES.json.
"""
import json
import sys
import time

t0 = time.perf_counter()
import torch  # noqa: E402

t_import = time.perf_counter()


def main():
    model_path, meta_path, out_path, opset, times_path = sys.argv[1:6]
    with open(meta_path) as f:
        meta = json.load(f)
    t = time.perf_counter()
    module = torch.jit.load(model_path)
    t_load = time.perf_counter() - t
    x = torch.randn(*meta["shape"], generator=torch.Generator().manual_seed(0))
    t = time.perf_counter()
    torch.onnx.export(module, (x,), out_path, opset_version=int(opset),
                      input_names=[meta["input"]], output_names=[meta["output"]],
                      dynamic_axes={meta["input"]: {0: "batch"}, meta["output"]: {0: "batch"}},
                      do_constant_folding=True, export_params=True,
                      operator_export_type=torch.onnx.OperatorExportTypes.ONNX)
    t_export = time.perf_counter() - t
    with open(times_path, "w") as f:
        json.dump({"import_ms": (t_import - t0) * 1e3, "load_ms": t_load * 1e3,
                   "export_ms": t_export * 1e3}, f)


if __name__ == "__main__":
    main()
