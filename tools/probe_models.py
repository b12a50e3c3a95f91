#!/usr/bin/python3
"""Probe sweep: models written the way their authors write them (HuggingFace BERT/GPT-2/T5, YOLO,
CenterNet, DETR, UNet/PSP/HRNet, SlowFast, Conformer, CRNN, diffusion UNet bits, StyleGAN, timm-style
ViTs, PointNet/DGCNN, QAT), random weights, fixed seed. Each is saved traced and (where it scripts)
scripted, exported with the built CLI and DEFAULT options plus --verify, then again with the dynamic
axes a deployer would set. Prints a table (model, mode, static result, dynamic result, max rel error,
first diagnostic). Not part of the default suite: a sweep, minutes long.

usage: /usr/bin/python3 tools/probe_models.py [--cli build/app/oxport] [--out /tmp/probe] [-k SUBSTR]
"""
import argparse
import os
import re
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_zoo import NLP_DET, cli_tensor_args  # noqa: E402
from probe_zoo_vision import VISION  # noqa: E402
from probe_zoo_ops5 import OPS5  # noqa: E402
from probe_zoo_seq2 import SEQ2  # noqa: E402
from probe_zoo_spectral import SPECTRAL  # noqa: E402
from probe_zoo_vision2 import VISION2  # noqa: E402
from probe_zoo_gen3 import GEN3  # noqa: E402
from probe_zoo_vision3 import VISION3  # noqa: E402
from probe_zoo_nlp4 import NLP4  # noqa: E402
from probe_zoo_quant5 import QUANT5  # noqa: E402
from probe_zoo_vision5 import VISION5  # noqa: E402
from probe_zoo_vision5_b import VISION5_B  # noqa: E402
from probe_zoo_vision5_seg import VISION5_SEG  # noqa: E402
from probe_zoo_vision5_tokens import VISION5_TOKENS  # noqa: E402
from probe_zoo_vision5_gen import VISION5_GEN  # noqa: E402
from probe_zoo_script7 import SCRIPT7  # noqa: E402
from probe_zoo_views6 import VIEWS6  # noqa: E402

MODELS = NLP_DET + VISION + OPS5 + SEQ2 + SPECTRAL + VISION2 + GEN3
MODELS += VISION3
MODELS += NLP4
MODELS += QUANT5
MODELS += VISION5 + VISION5_TOKENS + VISION5_B + VISION5_GEN + VISION5_SEG
MODELS += SCRIPT7
MODELS += VIEWS6


def save(model, mode, inputs, path):
    model.eval()
    with torch.no_grad():
        if mode == "trace":
            ts = torch.jit.trace(model, tuple(inputs), check_trace=False)
        else:
            ts = torch.jit.script(model)
    ts.save(path)


def run_cli(cli, pt, onnx, spec, dynamic, timeout):
    cmd = [cli, "export", pt, "-o", onnx, "--verify", "--progress", "never"]
    cmd += cli_tensor_args(spec.args, pt)
    cmd += ["--input-names", ",".join(spec.names)]
    if dynamic:
        for d in spec.dynamic:
            cmd += ["--dynamic-axes", d]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "TIMEOUT", None, "", time.time() - t0
    out = p.stdout + p.stderr
    rels = [float(x) for x in re.findall(r"max rel ([0-9.e+-]+|nan|inf)", out)]
    first = ""
    for line in out.splitlines():
        if line.startswith("error[") or "mismatch" in line or "FAILED" in line or line.startswith("warning["):
            first = line.strip()[:150]
            if line.startswith("error["):
                break
    status = "ok" if p.returncode == 0 else "FAIL"
    if status == "ok" and "verify-skipped" in out:
        status = "unverified"  # an op kept as a custom-domain node (FALLTHROUGH): ONNX Runtime cannot run it
    return status, (max(rels) if rels else None), first, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(os.path.dirname(__file__), "..", "build", "app", "oxport"))
    ap.add_argument("--out", default="/tmp/oxport-probe")
    ap.add_argument("-k", default="")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--static-only", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for name, make in MODELS:
        if a.k and a.k not in name:
            continue
        torch.manual_seed(0)
        spec = make()
        for mode in spec.modes:
            torch.manual_seed(0)
            spec = make()  # a fresh instance per mode: a failed script leaves a module half-compiled
            pt = os.path.join(a.out, f"{name}.{mode}.pt")
            try:
                torch.manual_seed(0)
                save(spec.model, mode, spec.inputs, pt)
            except Exception as e:  # a model that does not trace/script is the author's problem, noted
                rows.append((name, mode, "no-" + mode, "", None, " ".join(l.strip() for l in str(e).splitlines() if l.strip())[:150]))
                print(rows[-1], flush=True)
                continue
            onnx = pt[:-3] + ".onnx"
            s, err, first, dt = run_cli(a.cli, pt, onnx, spec, False, a.timeout)
            d, derr, dfirst = "-", None, ""
            if spec.dynamic and not a.static_only:
                d, derr, dfirst, _ = run_cli(a.cli, pt, pt[:-3] + ".dyn.onnx", spec, True, a.timeout)
            errs = [e for e in (err, derr) if e is not None]
            rows.append((name, mode, s, d, max(errs) if errs else None, first or dfirst))
            print(rows[-1], f"{dt:.1f}s", flush=True)
    print("\n| model | mode | default | dynamic | max rel err | first diagnostic |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n, m, s, d, e, f in rows:
        print(f"| {n} | {m} | {s} | {d} | {'' if e is None else f'{e:.2g}'} | {f} |")
    bad = [r for r in rows if r[2] != "ok" or r[3] not in ("ok", "-")]  # no-script rows: the model's own limit
    print(f"\n{len(rows) - len(bad)}/{len(rows)} pass")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
