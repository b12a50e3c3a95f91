#!/usr/bin/python3
"""The nn sweep: every torch.nn 1.13 module (nn_sweep_modules.py) and torch.nn.functional function
(nn_sweep_functional.py) in a tiny module with its common argument variants, random weights, fixed
seed, saved traced and scripted, exported with the built CLI and DEFAULT options plus --verify, then
at opset 17, then with dynamic axes (batch, and spatial/sequence where the op allows) at the
default opset. With --torch-onnx, torch.onnx.export of the traced module at the same opsets is run
in ONNX Runtime on the same inputs, to note where one exporter beats the other.

Prints a table (name, mode, opset, dynamic, result, max rel error, diagnostic code) and the counts
by result. Not part of the default suite: a sweep, many minutes long.

usage: /usr/bin/python3 tools/nn_sweep.py [-k SUBSTR] [-j 2] [--cli build/app/oxport] [--out DIR]
                                           [--torch-onnx] [--json rows.json] [--configs 11,17,11d]
results: ok; unverified (exported, ONNX Runtime cannot run a kept custom node: verify-skipped);
refused (a clear diagnostic, code given); FAIL (exported but wrong numbers, or a crash or raw
error text); no-trace / no-script (PyTorch itself cannot save it that way: not ours).
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings

import numpy
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nn_sweep_functional  # noqa: E402
import nn_sweep_modules  # noqa: E402
from probe_zoo import cli_tensor_args, example  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def all_cases():
    return nn_sweep_modules.cases() + nn_sweep_functional.cases()


def save(case, mode, path):
    torch.manual_seed(0)
    model = case.make().eval()
    torch.manual_seed(0)
    inputs = [example(a) for a in case.args]
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = torch.jit.trace(model, tuple(inputs), check_trace=False) if mode == "trace" else torch.jit.script(model)
    ts.save(path)
    return model, inputs


def cli_args(case, pt):
    return cli_tensor_args(case.args, pt) + ["--input-names", ",".join(f"in{i}" for i in range(len(case.args)))]


def run_cli(cli, pt, case, opset, dynamic, timeout):
    onnx = pt[:-3] + f".{opset}{'d' if dynamic else ''}.onnx"
    cmd = [cli, "export", pt, "-o", onnx, "--verify", "--progress", "never"] + cli_args(case, pt)
    if opset != 11:
        cmd += ["--opset", str(opset)]
    for d in case.dyn if dynamic else []:
        cmd += ["--dynamic-axes", d]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "FAIL", None, "timeout"
    out = p.stdout + p.stderr
    rels = [float(x) for x in re.findall(r"max rel ([0-9.e+-]+|nan|inf)", out)]
    err = max(rels) if rels else None
    codes = re.findall(r"error\[([a-z0-9-]+)\]", out)
    if p.returncode == 0:
        return ("unverified" if "verify-skipped" in out else "ok"), err, ""
    if codes and codes[0] not in ("verify-mismatch", "internal", "verify-failed") and err is None:
        return "refused", err, codes[0]
    first = codes[0] if codes else (out.strip().splitlines() or ["rc %d" % p.returncode])[-1][:100]
    return "FAIL", err, first


def flatten(out):
    """A module's outputs as ONNX lists them: nested tuples and lists flattened in order."""
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for o in out for t in flatten(o)]


def torch_onnx(model, inputs, opset, folder):
    """torch.onnx.export of the module at `opset`, run in ONNX Runtime: ok / FAIL / refused and max rel error."""
    path = os.path.join(folder, f"torch{opset}.onnx")
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, tuple(inputs), path, opset_version=opset,
                              input_names=[f"in{i}" for i in range(len(inputs))])
            expected = model(*inputs)
    except Exception as e:  # torch.onnx refuses: note its reason's first line
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        return "refused", None, (lines[-1] if lines else type(e).__name__)[:70]
    expected = flatten(expected)
    req = {"model": path, "inputs": []}
    for i, t in enumerate(inputs):
        numpy.save(os.path.join(folder, f"t{i}.npy"), t.numpy())
        req["inputs"].append({"name": f"in{i}", "file": f"t{i}.npy"})
    with open(os.path.join(folder, "request.json"), "w") as f:
        json.dump(req, f)
    p = subprocess.run(["node", os.path.join(HERE, "ort_run.js"), folder], capture_output=True, text=True)
    if p.returncode != 0:
        return "FAIL", None, "ort: " + p.stdout[-60:] + p.stderr[-60:]
    rel = 0.0
    for i, e in enumerate(expected):
        got = numpy.load(os.path.join(folder, f"out{i}.npy"))
        e = e.detach().numpy()
        if got.shape != e.shape:
            return "FAIL", None, f"shape {got.shape} vs {e.shape}"
        if e.size:
            scale = max(float(numpy.abs(e.astype(numpy.float64)).max()), 1e-6)
            rel = max(rel, float(numpy.abs(got.astype(numpy.float64) - e.astype(numpy.float64)).max()) / scale)
    return ("ok" if rel <= 1e-3 else "FAIL"), rel, ""


def sweep_one(case, mode, configs, a):
    rows = []
    folder = tempfile.mkdtemp(prefix=f"{case.name}.{mode}.", dir=a.out)
    pt = os.path.join(folder, "m.pt")
    try:
        model, inputs = save(case, mode, pt)
    except Exception as e:  # PyTorch cannot trace/script it: the model's limit, noted
        msg = " ".join(line.strip() for line in str(e).splitlines() if line.strip())[:80]
        return [(case.name, mode, "-", "-", "no-" + mode, None, msg, "")]
    for cfg in configs:
        dyn = cfg.endswith("d")
        opset = int(cfg.rstrip("d"))
        if dyn and not case.dyn:
            continue
        res, err, code = run_cli(a.cli, pt, case, opset, dyn, a.timeout)
        ref = ""
        if a.torch_onnx and mode == "trace" and not dyn:
            try:
                tres, terr, tcode = torch_onnx(model, inputs, opset, folder)
            except Exception as e:  # the comparison must not end the sweep
                tres, terr, tcode = "FAIL", None, f"{type(e).__name__}: {e}"[:60]
            ref = tres + ("" if terr is None else f" {terr:.1g}") + (f" ({tcode})" if tcode else "")
        rows.append((case.name, mode, str(opset), "dyn" if dyn else "static", res, err, code, ref))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "app", "oxport"))
    ap.add_argument("--out", default="/tmp/oxport-nn-sweep")
    ap.add_argument("-k", default="", help="only cases whose name contains this (comma: any of several)")
    ap.add_argument("--start", default="", help="skip the cases listed before this one (resume a sweep)")
    ap.add_argument("-j", type=int, default=1, help="cases exported at once")
    ap.add_argument("--configs", default="11,17,11d", help="opsets, 'd' suffix: with the case's dynamic axes")
    ap.add_argument("--modes", default="trace,script")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--torch-onnx", action="store_true", help="also run torch.onnx.export (traced, static)")
    ap.add_argument("--json", default="", help="write the rows here")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    a.cli = os.path.abspath(a.cli)
    keys = [k for k in a.k.split(",") if k]
    cases = [c for c in all_cases() if not keys or any(k in c.name for k in keys)]
    if a.start:
        cases = cases[[c.name for c in cases].index(a.start):]
    configs = a.configs.split(",")
    jobs = [(c, m) for c in cases for m in c.modes if m in a.modes.split(",")]
    rows = []
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        for got in pool.map(lambda job: sweep_one(job[0], job[1], configs, a), jobs):
            for r in got:
                print(" | ".join("" if x is None else (f"{x:.2g}" if isinstance(x, float) else x) for x in r), flush=True)
            rows += got
    print("\n| name | mode | opset | dynamic | result | max rel err | diagnostic | torch.onnx |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        cells = ["" if x is None else (f"{x:.2g}" if isinstance(x, float) else x) for x in r]
        print("| " + " | ".join(cells) + " |")
    counts = {}
    for r in rows:
        counts[r[4]] = counts.get(r[4], 0) + 1
    print(f"\n{len(cases)} cases, {len(rows)} exports in {time.time() - t0:.0f} s: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=0)
    return 1 if counts.get("FAIL") else 0


if __name__ == "__main__":
    sys.exit(main())
