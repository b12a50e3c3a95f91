"""Big models at the speed of the disk: a GPT-2-small-sized decoder, measured side by side.

Usage: /usr/bin/python3 bench/bigmodel.py [--build DIR] [--out DIR] [--runs N] [--opset N] [--no-torch]
                                          [--baseline OXPORT] [--size small|medium|2b] [--dtype float32|float16]
                                          [--torch-cap-gib G] [--verify]

Makes (once, kept in OUT/models) a traced GPT-2-small-sized decoder: 12 layers, d=768, 12 heads,
vocabulary 50257, 1024 positions, the token embedding tied to the output projection (an nn.Linear
head whose weight is the embedding's, as transformers ties them), random weights (seed 0); input
ids [1, 128] (int64, 0..127). Then measures, in this one run, each process on its own:

- the floor: bench/floor.cpp --write, torch::jit::load of the .pt and writing the weights' bytes
  (each tensor once) to a file (temporary file, fsync, rename, as oxport writes);
- `oxport export` (CLI), opset N, default options otherwise;
- torch.onnx.export (/usr/bin/python3: import torch, torch.jit.load, export with the same opset);
- with --baseline, another oxport binary (an earlier build) with the same arguments.

Wall time and peak RSS of each whole process come from /usr/bin/time -v (median of --runs runs).
Also: the bytes of the weights (each parameter once) and of each file's initializers. Prints a
Markdown table (also written to OUT/bigmodel.md, and the raw figures to OUT/bigmodel.json).
--size 2b is a 2.0B-parameter float16 model (24 layers, d=2560; 3.8 GiB of weights, made in float16
only): it needs ~13 GiB of disk (model, floor file, output) and ~5 GiB of memory per process, and
with --verify ONNX Runtime's session takes ~10 GiB more. torch.onnx.export runs under an
address-space cap (--torch-cap-gib, 16 by default) so that it fails instead of starving the machine.
Not part of ctest: it needs ~2 GiB of disk and a few minutes. docs/BENCHMARKS.md has the results.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PY = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
IDS = (1, 128)


SIZES = {"small": dict(layers=12, d=768, heads=12), "medium": dict(layers=24, d=1024, heads=16),
         "2b": dict(layers=24, d=2560, heads=32)}
# Sizes made directly in float16 (never in float32: 2b's float32 copy alone would take 8 GB).
HALF_ONLY = {"2b"}


def make_model(path, size="small", dtype="float32"):
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, d, heads, device=None):
            super().__init__()
            self.heads = heads
            self.ln_1 = nn.LayerNorm(d, device=device)
            self.c_attn = nn.Linear(d, 3 * d, device=device)
            self.c_proj = nn.Linear(d, d, device=device)
            self.ln_2 = nn.LayerNorm(d, device=device)
            self.c_fc = nn.Linear(d, 4 * d, device=device)
            self.c_fc_proj = nn.Linear(4 * d, d, device=device)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
            hd = c // self.heads
            q, k, v = (z.view(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, c)
            x = x + self.c_proj(y)
            return x + self.c_fc_proj(F.gelu(self.c_fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self, vocab=50257, positions=1024, d=768, layers=12, heads=12, device=None):
            super().__init__()
            self.wte = nn.Embedding(vocab, d, device=device)
            self.wpe = nn.Embedding(positions, d, device=device)
            self.h = nn.ModuleList([Block(d, heads, device) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d, device=device)
            self.lm_head = nn.Linear(d, vocab, bias=False, device=device)
            self.lm_head.weight = self.wte.weight  # tied

        def forward(self, ids):
            pos = torch.arange(ids.shape[1], device=ids.device)
            x = self.wte(ids) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            return self.lm_head(self.ln_f(x))

    ids = torch.arange(IDS[0] * IDS[1]).reshape(IDS)
    if size in HALF_ONLY:
        return make_half_model(GPT, path, size, ids)
    torch.manual_seed(0)
    m = GPT(**SIZES[size]).eval()
    with torch.no_grad():
        traced = torch.jit.trace(m, (ids,))
    if dtype == "float16":
        # libtorch 1.13 has no CPU kernels for half linear layers, so the model is traced in float32
        # and its weights converted afterwards, as a user's model.half() would hold them.
        traced = traced.half()
    traced.save(path + ".tmp")
    os.replace(path + ".tmp", path)


def make_half_model(GPT, path, size, ids):
    """A float16 model that never exists in float32. The module is built on the meta device (no
    bytes), each parameter is replaced by a float32 zero broadcast to its shape (one element of
    storage) and the model is traced so; then each parameter gets its float16 values, drawn
    directly in float16 (seed 0, GPT-2's initialisation: normal(0, 0.02), the residual
    projections scaled by 1/sqrt(2 * layers), biases 0, LayerNorm 1 and 0), one at a time, and the
    traced module is saved. The trace does not depend on the weights' values; it is the graph a
    float32 trace followed by .half() gives (the other sizes' float16 path)."""
    import torch
    import torch.nn as nn

    cfg = SIZES[size]
    m = GPT(**cfg, device="meta").eval()
    for mod in m.modules():
        for name, p in list(mod._parameters.items()):
            if p is not None and p.is_meta:
                cheap = torch.zeros(1).expand(p.shape)
                mod._parameters[name] = nn.Parameter(cheap, requires_grad=False)
    m.lm_head.weight = m.wte.weight  # tied again after the replacement
    # Traced on 4 tokens, not 128: every size in forward is read from the input (traced as
    # aten::size), so the graph is the same, and the run on 2B weights is 32x shorter; no second
    # run to check the trace.
    with torch.no_grad():
        traced = torch.jit.trace(m, (ids[:, :4],), check_trace=False)
    del m
    g = torch.Generator().manual_seed(0)
    resid = 0.02 / (2 * cfg["layers"]) ** 0.5
    with torch.no_grad():
        for name, p in traced.named_parameters():
            if p.dtype == torch.float16:
                continue  # tied: already given its values through the other name
            real = torch.empty(p.shape, dtype=torch.float16)
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "bias":
                real.zero_()
            elif name.split(".")[-2].startswith("ln_"):
                real.fill_(1.0)
            else:
                real.normal_(0.0, resid if name.endswith(("c_proj.weight", "c_fc_proj.weight")) else 0.02, generator=g)
            p.data = real
    traced.save(path + ".tmp")
    os.replace(path + ".tmp", path)


TORCH_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
model, out, opset, times = sys.argv[1:5]
t1 = time.perf_counter()
m = torch.jit.load(model)
t2 = time.perf_counter()
ids = torch.arange(%d * %d).reshape(%d, %d)
torch.onnx.export(m, (ids,), out, opset_version=int(opset), do_constant_folding=True)
t3 = time.perf_counter()
json.dump({"import_ms": (t1 - t0) * 1e3, "load_ms": (t2 - t1) * 1e3, "export_ms": (t3 - t2) * 1e3}, open(times, "w"))
""" % (IDS[0], IDS[1], IDS[0], IDS[1])


def timed(cmd):
    """Runs cmd under /usr/bin/time -v: (wall s, peak RSS bytes, stdout); raises on failure."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    rss = None
    for line in p.stderr.splitlines():
        if "Maximum resident set size" in line:
            rss = int(line.split(":")[1]) * 1024
    return wall, rss, p.stdout


def initializer_bytes(path):
    """Bytes of a file's initializers (each counted once), external data included, read without
    loading the data."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    total = 0
    for t in m.graph.initializer:
        n = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type].itemsize  # onnx 1.12
        for d in t.dims:
            n *= d
        total += n
    return total, len(m.graph.initializer)


def weight_bytes(path):
    import torch
    m = torch.jit.load(path)
    seen = {}
    for t in list(m.parameters()) + list(m.buffers()):
        seen[t.data_ptr()] = t.numel() * t.element_size()
    return sum(seen.values())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--opset", type=int, default=14)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--baseline", help="an earlier oxport binary, measured the same way")
    ap.add_argument("--size", choices=sorted(SIZES), default="small",
                    help="small: 12 layers, d=768 (124M); medium: 24 layers, d=1024 (355M); "
                         "2b: 24 layers, d=2560, 32 heads (2.0B, float16 only)")
    ap.add_argument("--dtype", choices=["float32", "float16"], default="float32")
    ap.add_argument("--torch-cap-gib", type=float, default=16.0,
                    help="address-space cap of the torch.onnx.export process (prlimit --as), so that it fails "
                         "cleanly instead of starving a shared machine; 0: none")
    ap.add_argument("--verify", action="store_true",
                    help="then run `oxport verify` on oxport's file (ONNX Runtime against libtorch), timed too")
    args = ap.parse_args()
    if args.size in HALF_ONLY:
        args.dtype = "float16"
    models = os.path.join(args.out, "models")
    work = os.path.join(args.out, f"bigmodel_{args.size}_{args.dtype}")
    os.makedirs(models, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    model = os.path.join(models, f"gpt2_{args.size}_tied" + ("" if args.dtype == "float32" else "_fp16") + ".pt")
    if not os.path.exists(model):
        print("bigmodel: making", model, flush=True)
        make_model(model, args.size, args.dtype)
    weights = weight_bytes(model)
    oxport = os.path.join(args.build, "app", "oxport")
    floor = os.path.join(args.build, "bench", "oxport-bench-floor")
    script = os.path.join(work, "torch_export_ids.py")
    with open(script, "w") as f:
        f.write(TORCH_SCRIPT)
    tools = {
        "floor": [floor, "--write", os.path.join(work, "floor.bin"), model],
        "oxport": [oxport, "export", model, "-o", os.path.join(work, "oxport.onnx"), "--arg",
                   f"{IDS[0]}x{IDS[1]}:int64:arange", "--opset", str(args.opset),
                   "--report", os.path.join(work, "oxport.report.json")],
        "torch": (["prlimit", f"--as={int(args.torch_cap_gib * 2**30)}"] if args.torch_cap_gib > 0 else []) + [PY, script, model, os.path.join(work, "torch.onnx"), str(args.opset), os.path.join(work, "torch.json")],
    }
    if args.baseline:
        tools["baseline"] = [args.baseline] + tools["oxport"][1:]
        tools["baseline"][4] = os.path.join(work, "baseline.onnx")
        tools["baseline"][-1] = os.path.join(work, "baseline.report.json")
    if args.no_torch:
        del tools["torch"]
    runs = {k: [] for k in tools}
    failed = {}
    for i in range(args.runs):
        order = list(tools) if i % 2 == 0 else list(reversed(list(tools)))
        for k in order:
            if k in failed:
                continue
            try:
                wall, rss, _ = timed(tools[k])
            except RuntimeError as e:
                if k != "torch":
                    raise
                # What torch.onnx.export does with the same file is a result too.
                errs = [ln.strip() for ln in str(e).splitlines() if "Error" in ln and "Command" not in ln]
                failed[k] = (errs[-1] if errs else str(e).strip().splitlines()[0])[:300]
                print(f"  {k}: failed: {failed[k]}", flush=True)
                continue
            runs[k].append((wall, rss))
            print(f"  {k}: {wall:.2f} s, peak RSS {rss / 2**20:.0f} MiB", flush=True)
    for k in failed:
        del runs[k]
    verify = None
    if args.verify:
        onnx_path = os.path.join(work, "oxport.onnx")
        vreport = os.path.join(work, "verify.report.json")
        wall, rss, _ = timed([oxport, "verify", model, onnx_path, "--arg", f"{IDS[0]}x{IDS[1]}:int64:arange",
                              "--report", vreport])
        with open(vreport) as f:
            v = json.load(f).get("verify", {})
        verify = {"wall": wall, "rss": rss, "passed": v.get("passed"), "notes": v.get("notes", []),
                  "runs": v.get("runs", [])}
        print(f"  verify: {wall:.2f} s, peak RSS {rss / 2**20:.0f} MiB, passed={verify['passed']}", flush=True)
    res = {"weights": weights, "opset": args.opset, "runs": runs, "load": os.getloadavg(), "failed": failed,
           "verify": verify}
    for k in runs:
        res[k] = {"wall": statistics.median(w for w, _ in runs[k]), "rss": statistics.median(r for _, r in runs[k])}
    res["oxport"]["init_bytes"], res["oxport"]["inits"] = initializer_bytes(os.path.join(work, "oxport.onnx"))
    res["oxport"]["file"] = os.path.getsize(os.path.join(work, "oxport.onnx"))
    data = os.path.join(work, "oxport.onnx.data")
    res["oxport"]["external_data"] = os.path.getsize(data) if os.path.exists(data) else 0
    with open(os.path.join(work, "oxport.report.json")) as f:
        res["oxport"]["phase_ms"] = json.load(f).get("stats", {}).get("phase_ms", {})
    if "baseline" in runs:
        res["baseline"]["init_bytes"], res["baseline"]["inits"] = initializer_bytes(os.path.join(work, "baseline.onnx"))
    if "torch" in runs:
        tpath = os.path.join(work, "torch.onnx")
        res["torch"]["init_bytes"], res["torch"]["inits"] = initializer_bytes(tpath)
        res["torch"]["file"] = os.path.getsize(tpath) + sum(
            os.path.getsize(os.path.join(work, f)) for f in os.listdir(work)
            if f not in ("torch.onnx", "oxport.onnx", "baseline.onnx", "floor.bin") and not f.endswith((".json", ".py")))
    mib = lambda b: f"{b / 2**20:.0f} MiB"
    fl = res["floor"]
    lines = [f"GPT-2-{args.size}-sized decoder ({args.dtype}), tied embedding, traced; weights {mib(weights)} (each parameter once); "
             f"opset {args.opset}; median of {args.runs} run(s); load average {' '.join(f'{x:.2f}' for x in res['load'])}.",
             "",
             "| tool | wall | wall / floor | peak RSS | peak RSS / weights | initializer bytes | initializers |",
             "| --- | --- | --- | --- | --- | --- | --- |",
             f"| floor (jit.load + write the weights) | {fl['wall']:.2f} s | 1.00x | {mib(fl['rss'])} | "
             f"{fl['rss'] / weights:.2f}x | - | - |"]
    names = {"baseline": "oxport export, baseline (--baseline)", "oxport": "oxport export", "torch": "torch.onnx.export"}
    for k in ("baseline", "oxport", "torch"):
        if k not in res:
            continue
        r = res[k]
        lines.append(f"| {names[k]} | {r['wall']:.2f} s | "
                     f"{r['wall'] / fl['wall']:.2f}x | {mib(r['rss'])} | {r['rss'] / weights:.2f}x | "
                     f"{mib(r['init_bytes'])} ({r['init_bytes'] / weights:.2f}x) | {r['inits']} |")
    if "torch" in failed:
        lines.append(f"| torch.onnx.export | failed: {failed['torch']} | | | | | |")
    if "torch" in res:
        lines += ["", f"oxport / torch: wall {res['oxport']['wall'] / res['torch']['wall']:.2f}x, "
                      f"peak RSS {res['oxport']['rss'] / res['torch']['rss']:.2f}x."]
    if res["oxport"]["external_data"]:
        lines += ["", f"oxport.onnx: {res['oxport']['file']} bytes, external data oxport.onnx.data: "
                      f"{res['oxport']['external_data']} bytes."]
    if verify:
        lines += ["", f"oxport verify ({IDS[0]}x{IDS[1]} ids): {'passed' if verify['passed'] else 'FAILED'}, "
                      f"{verify['wall']:.2f} s, peak RSS {mib(verify['rss'])} ({verify['rss'] / weights:.2f}x the weights)."]
        lines += [f"  note: {n}" for n in verify["notes"]]
    ph = res["oxport"]["phase_ms"]
    if ph:
        lines += ["", "oxport phases (ms, in process): " + ", ".join(f"{k} {v:.0f}" for k, v in ph.items())]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.out, f"bigmodel_{args.size}_{args.dtype}.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, f"bigmodel_{args.size}_{args.dtype}.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
