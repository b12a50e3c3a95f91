#!/usr/bin/python3
"""The whole torchvision 0.14 zoo through oxport: every builder of torchvision.models.list_models()
but the detectors (classification, segmentation with its dict output, video, optical flow, the
quantizable models as float), random weights (torch.manual_seed(0), nothing downloaded), eval,
traced as users trace them. Each is exported with the seed's defaults at opset 17 and at the lowest
opset its ops allow (found with operator_export_type ONNX, so that no op silently falls through),
checked, and compared with libtorch in ONNX Runtime (`oxport export --verify`: the traced size and
traced+1 and 2x of every dynamic axis: batch, and height/width/time for the fully convolutional
ones). Results go to OUT/results.json as they come (a rerun skips models already there unless
--redo) and the table to docs/ZOO.md.

usage: tools/zoo-full.sh [--only a,b,...] [--redo] [--out DIR] [--oxport PATH] [--md FILE]
                         [--timeout S] [--table-only]
Run with /usr/bin/python3 (torch 1.13, torchvision 0.14) at low priority: it takes hours.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FAMILIES = ["classification", "segmentation", "video", "optical_flow", "quantization"]
# Classifiers that are not fully convolutional in the traced graph: sizes baked by tracing
# (position embeddings, window partitions and shifted-window masks, fixed-size adaptive pools
# that do not divide evenly): batch is their only dynamic axis, at the size they were built for.
FIXED_SIZE = re.compile(r"^(vit_|swin_|maxvit_|vgg|alexnet)")


def family_of(name):
    import torchvision.models as m
    for fam, mod in (("segmentation", m.segmentation), ("video", m.video), ("optical_flow", m.optical_flow),
                     ("quantization", m.quantization)):
        if name in m.list_models(module=mod):
            return fam
    return "classification"


# The heaviest (hundreds of millions of parameters, or video at 16x224x224) run last.
HEAVY = ["efficientnet_b7", "vit_l_16", "vit_l_32", "regnet_y_16gf", "regnet_y_32gf", "s3d", "mvit_v1_b",
         "mvit_v2_s", "raft_large", "vit_h_14", "regnet_y_128gf"]


def models():
    import torchvision.models as m
    det = set(m.list_models(module=m.detection))
    names = [n for n in m.list_models() if n not in det]
    return sorted(names, key=lambda n: HEAVY.index(n) + 1 if n in HEAVY else 0)


def spec(name, fam):
    """Inputs (name, shape, dynamic axes) the model is traced with and verified at."""
    batch = 2  # a dynamic axis traced at 1 lets PyTorch specialize broadcasts to 1
    if fam == "optical_flow":
        return [("image1", [batch, 3, 128, 128], [0]), ("image2", [batch, 3, 128, 128], [0])]
    if fam == "video":
        if name in ("r3d_18", "mc3_18", "r2plus1d_18"):
            return [("video", [batch, 3, 8, 64, 64], [0, 2, 3, 4])]
        return [("video", [batch, 3, 16, 224, 224], [0])]  # s3d's pool and mvit's positions bake T/H/W
    if fam == "segmentation":
        return [("image", [batch, 3, 64, 64], [0, 2, 3])]
    base = name[len("quantized_"):] if name.startswith("quantized_") else name
    if FIXED_SIZE.match(base):
        return [("image", [batch, 3, 224, 224], [0])]
    size = 75 if "inception" in base else 64
    return [("image", [batch, 3, size, size], [0, 2, 3])]


def build(name, fam):
    import torchvision.models as m
    kw = {"weights": None}
    if fam == "quantization":
        kw["quantize"] = False  # the quantizable architecture, as float
    if fam == "segmentation":
        kw["weights_backbone"] = None
    model = m.get_model(name, **kw)
    if name.startswith("vit_"):
        # torchvision zero-initializes ViT's head: all-zero logits would make the comparison vacuous.
        import torch.nn as nn
        nn.init.normal_(model.heads.head.weight, std=0.02)
        nn.init.normal_(model.heads.head.bias, std=0.02)
    return model.eval()


def make_fixture(name, fam, folder):
    """model.pt (traced) and preset.json (its inputs as oxport makes them) in folder."""
    import torch
    torch.manual_seed(0)
    model = build(name, fam)
    ins = spec(name, fam)
    args = []
    for i, (_, shape, _) in enumerate(ins):
        g = torch.Generator().manual_seed(i)
        args.append(torch.randn(shape, generator=g))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # strict=False: segmentation models return a dict, RAFT a list of flows.
        traced = torch.jit.trace(model, tuple(args), check_trace=False, strict=False)
    os.makedirs(folder, exist_ok=True)
    traced.save(os.path.join(folder, "model.pt"))
    preset = {"format": "oxport-preset", "version": 1, "model": "model.pt",
              "args": [{"tensor": {"shape": s, "dtype": "float32", "fill": "randn", "seed": i}}
                       for i, (_, s, _) in enumerate(ins)],
              "input_names": [n for n, _, _ in ins],
              "dynamic_axes": {n: {str(a): f"{n}_{a}" for a in axes} for n, _, axes in ins}}
    with open(os.path.join(folder, "preset.json"), "w") as f:
        json.dump(preset, f, indent=1)
    return sum(p.numel() for p in model.parameters())


def oxport(exe, folder, opset, extra, timeout):
    out = os.path.join(folder, f"opset{opset}.onnx")
    report = os.path.join(folder, f"opset{opset}.json")
    for p in (out, report):
        if os.path.exists(p):
            os.remove(p)
    cmd = [exe, "export", os.path.join(folder, "model.pt"), "--preset", os.path.join(folder, "preset.json"),
           "-o", out, "--opset", str(opset), "--report", report] + extra
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        text, rc = f"timed out after {timeout} s", 124
    wall = time.time() - t0
    rep = None
    if os.path.exists(report):
        try:
            with open(report) as f:
                rep = json.load(f)
        except ValueError:
            rep = None
    for p in [out, out + ".data"] + [os.path.join(folder, x) for x in os.listdir(folder) if x.endswith(".bin")]:
        if os.path.exists(p):
            os.remove(p)  # the large ones would fill the disk
    return rc, text, rep, wall


def first_error(text):
    """The line that says what failed: an error diagnostic, else the output that failed verification."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for key in ("error[", "FAILED -", "FAILED"):
        for line in lines:
            if key in line:
                return line
    return lines[-1] if lines else "(no output)"


def lowest_opset(exe, folder, timeout):
    """The lowest opset every op of the model converts at (no fallthrough)."""
    opset = 9
    while opset < 17:
        rc, text, _, _ = oxport(exe, folder, opset, ["--operator-export-type", "ONNX"], timeout)
        if rc == 0:
            return opset, None
        needed = [int(x) for x in re.findall(r"needs opset (\d+)", text)]
        opset = max([opset + 1] + needed)
    return 17, None


def verified(exe, folder, opset, timeout):
    rc, text, rep, wall = oxport(exe, folder, opset, ["--verify"], timeout)
    res = {"opset": opset, "rc": rc, "wall_s": round(wall, 1)}
    if rep:
        res["export_ms"] = rep.get("total_ms")
        res["example_run"] = rep.get("stats", {}).get("example_run")
        res["nodes"] = rep.get("stats", {}).get("onnx_nodes")
        v = rep.get("verify") or {}
        res["skipped"] = v.get("skipped", False)
        errs = [o.get("max_rel_error", 0.0) for r in v.get("runs", []) for o in r.get("outputs", [])]
        res["worst_rel"] = max(errs) if errs else None
        res["runs"] = [r.get("input_shapes") for r in v.get("runs", [])]
        res["passed"] = bool(v.get("passed")) and not v.get("skipped", False) and rc == 0
    else:
        res["passed"] = False
    if not res["passed"]:
        res["error"] = first_error(text)[:300]
    return res


def run_model(name, exe, out, timeout):
    fam = family_of(name)
    folder = os.path.join(out, name)
    row = {"model": name, "family": fam, "inputs": [[n, s, a] for n, s, a in spec(name, fam)]}
    t0 = time.time()
    try:
        row["params"] = make_fixture(name, fam, folder)
    except Exception as e:  # noqa: BLE001 - the model itself fails in PyTorch: recorded
        row.update(result="trace failed", error=f"{type(e).__name__}: {e}"[:300])
        return row
    row["trace_s"] = round(time.time() - t0, 1)
    r17 = verified(exe, folder, 17, timeout)
    row["opset17"] = r17
    low, _ = lowest_opset(exe, folder, timeout) if r17["rc"] == 0 else (17, None)
    row["lowest"] = low
    if low != 17:
        row["opset_low"] = verified(exe, folder, low, timeout)
    runs = [r17] + ([row["opset_low"]] if "opset_low" in row else [])
    row["result"] = "ok" if all(r["passed"] for r in runs) else "FAIL"
    os.remove(os.path.join(folder, "model.pt"))
    return row


def fmt_err(x):
    return "-" if x is None else f"{x:.1e}"


def table(results, md):
    order = {f: i for i, f in enumerate(FAMILIES)}
    rows = sorted(results.values(), key=lambda r: (order.get(r["family"], 9), r["model"]))
    ok = sum(1 for r in rows if r.get("result") == "ok")
    lines = ["# The torchvision 0.14 zoo", "",
             "Generated by `tools/zoo-full.sh` (tools/zoo_full.py): every builder of",
             "`torchvision.models.list_models()` but the detectors (see the `zoo` label for those),",
             "random weights, eval, traced with batch 2; exported with the seed's defaults at opset 17 and",
             "at the lowest opset its ops allow, checked, and compared with libtorch in ONNX Runtime at the",
             "traced size and at traced+1 and 2x of every dynamic axis (batch; time/height/width for the",
             "fully convolutional ones). Worst error: the largest error over every output and size, relative",
             "to the output's largest magnitude (the test passes under 1e-4). Export: wall time of the",
             "opset-17 export with its verification, on the shared 2-core build machine.", "",
             f"{ok} of {len(rows)} models pass.", "",
             "| family | model | input, dynamic axes | opsets | result | worst error | export (s) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        ins = "; ".join(f"{n} {'x'.join(map(str, s))} ({','.join(map(str, a))})" for n, s, a in r["inputs"])
        runs = [x for x in (r.get("opset_low"), r.get("opset17")) if x]
        opsets = ", ".join(str(x["opset"]) for x in runs) or "-"
        worst = max((x["worst_rel"] for x in runs if x.get("worst_rel") is not None), default=None)
        res = r.get("result", "?")
        if res != "ok":
            errs = [x.get("error") for x in runs if x.get("error")] + ([r["error"]] if r.get("error") else [])
            why = (errs[0] if errs else "").replace("|", "/")
            res = f"{res}: {why}" if why else res
        t = r.get("opset17", {}).get("wall_s")
        lines.append(f"| {r['family']} | {r['model']} | {ins} | {opsets} | {res} | {fmt_err(worst)} | "
                     f"{'-' if t is None else t} |")
    missing = [n for n in models() if n not in results]
    if missing:
        lines += ["", f"Not run in the run that wrote this table ({len(missing)}; the heaviest run last): "
                  + ", ".join(f"`{n}`" for n in missing) + ". `tools/zoo-full.sh` resumes where it stopped."]
    with open(md, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--redo", action="store_true")
    ap.add_argument("--out", default="/tmp/oxport-zoo-full")
    ap.add_argument("--oxport", default=os.path.join(REPO, "build", "app", "oxport"))
    ap.add_argument("--md", default=os.path.join(REPO, "docs", "ZOO.md"))
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--table-only", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    res_path = os.path.join(a.out, "results.json")
    results = json.load(open(res_path)) if os.path.exists(res_path) else {}
    names = [n for n in a.only.split(",") if n] or models()
    if not a.table_only:
        for name in names:
            if name in results and not a.redo:
                continue
            print(f"[zoo-full] {name} ...", flush=True)
            row = run_model(name, a.oxport, a.out, a.timeout)
            results[name] = row
            with open(res_path + ".tmp", "w") as f:
                json.dump(results, f, indent=1)
            os.replace(res_path + ".tmp", res_path)
            print(f"[zoo-full] {name}: {row.get('result')} opsets {row.get('lowest')},17 "
                  f"{row.get('opset17', {}).get('error', '')}", flush=True)
    table(results, a.md)
    print(f"wrote {a.md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
