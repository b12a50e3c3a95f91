#!/usr/bin/python3
"""Generates the per-op test fixtures: OUT/<case>/model.pt + preset.json, and OUT/manifest.json.

usage: gen_cases.py OUT_DIR
Run with /usr/bin/python3 (the Python that has torch).
"""
import glob
import importlib.util
import json
import os
import sys
import warnings

import torch

from optest import Fn, Npy, T

HERE = os.path.dirname(os.path.abspath(__file__))


def load_cases():
    cases = []
    for path in sorted(glob.glob(os.path.join(HERE, "cases_*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # inspect finds the source of @torch.jit.script classes through it
        spec.loader.exec_module(mod)
        for c in mod.CASES:
            c["family"] = os.path.basename(path)[len("cases_"):-3]
            cases.append(c)
    return cases


def arg_json(v, name, folder):
    if isinstance(v, (T, Npy)):
        return v.to_arg(name, folder)
    if isinstance(v, (list, tuple)):
        return [arg_json(e, f"{name}_{i}", folder) for i, e in enumerate(v)]
    return v


def example(v):
    if isinstance(v, (T, Npy)):
        return v.example()
    if isinstance(v, list):
        return [example(e) for e in v]
    if isinstance(v, tuple):
        return tuple(example(e) for e in v)
    return v


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    manifest = []
    seen = set()
    for c in load_cases():
        name = c["name"]
        if name in seen:
            raise SystemExit(f"duplicate case name {name}")
        seen.add(name)
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        module = c["module"]
        if not isinstance(module, torch.nn.Module):
            module = Fn(module)
        module.eval()
        torch.manual_seed(0)
        args = [example(v) for v in c["inputs"]]
        kwargs = {k: example(v) for k, v in c["kwargs"].items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if c["script"]:
                saved = torch.jit.script(module)
            elif kwargs:
                saved = torch.jit.trace(module, example_kwarg_inputs=kwargs) if not args else \
                    torch.jit.trace(module, tuple(args) + tuple(kwargs.values()))
            else:
                saved = torch.jit.trace(module, tuple(args), check_trace=False)
        saved.save(os.path.join(folder, "model.pt"))
        if c.get("reference") is not None:
            ref = Fn(c["reference"]).eval()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.jit.trace(ref, tuple(args), check_trace=False).save(os.path.join(folder, "reference.pt"))
        preset = {"format": "oxport-preset", "version": 1, "model": "model.pt",
                  "args": [arg_json(v, f"arg{i}", folder) for i, v in enumerate(c["inputs"])],
                  "kwargs": {k: arg_json(v, f"kw_{k}", folder) for k, v in c["kwargs"].items()}}
        # Name the tensor inputs in0, in1 ... so dynamic axes can refer to them.
        tensor_positions = [i for i, v in enumerate(c["inputs"]) if isinstance(v, (T, Npy))]
        names = c["input_names"] or [f"in{k}" for k in range(len(tensor_positions))]
        preset["input_names"] = names
        if c["output_names"]:
            preset["output_names"] = c["output_names"]
        if c["dynamic"]:
            dyn = {}
            for idx, axes in c["dynamic"].items():
                k = tensor_positions.index(idx)
                dyn[names[k]] = {str(a): f"{names[k]}_d{a}" for a in axes}
            preset["dynamic_axes"] = dyn
        if c["operator_export_type"]:
            preset["operator_export_type"] = c["operator_export_type"]
        if c["training"]:
            preset["training"] = c["training"]
        if not c.get("fold", True):
            preset["do_constant_folding"] = False
        with open(os.path.join(folder, "preset.json"), "w") as f:
            json.dump(preset, f, indent=2)
        manifest.append({"name": name, "family": c["family"], "dir": name, "opsets": c["opsets"],
                         "tolerance": c["tolerance"], "expect": c["expect"], "note": c["note"],
                         **({"reference": "reference.pt"} if c.get("reference") is not None else {})})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{len(manifest)} op cases in {out}")


if __name__ == "__main__":
    main()
