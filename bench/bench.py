"""oxport vs torch.onnx.export, measured side by side in one run; writes docs/BENCHMARKS.md.

Run through bench/run.sh (which builds the programs and makes the models first).
Every figure is the median of --runs runs; the two tools alternate (which goes first alternates
too). Wall time and peak RSS are those of the whole child process (os.wait4's rusage).
"""
import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

PY = "/usr/bin/python3"
DONE = []  # finished export measurements (the floor is measured with the first opset of a model)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_rusage(cmd, timeout=None):
    """Runs cmd; returns (wall seconds, peak RSS bytes of this very child from wait4's ru_maxrss,
    returncode or "timeout", stdout, stderr)."""
    out_path = os.path.join(ARGS.out, "child.out")
    err_path = os.path.join(ARGS.out, "child.err")
    with open(out_path, "wb") as so, open(err_path, "wb") as se:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=so, stderr=se)
        deadline = None if timeout is None else t + timeout
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if deadline and time.perf_counter() > deadline:
                p.kill()
                os.wait4(p.pid, 0)
                p.returncode = -9
                return None, None, "timeout", "", ""
            time.sleep(0.002)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
    with open(out_path, errors="replace") as f:
        out = f.read()
    with open(err_path, errors="replace") as f:
        err = f.read()
    return wall, ru.ru_maxrss * 1024, p.returncode, out, err


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_s(x):
    return "-" if x is None else f"{x:.2f} s"


def fmt_ms(x):
    return "-" if x is None else (f"{x:.0f} ms" if x >= 10 else f"{x:.1f} ms")


def fmt_mib(x):
    return "-" if x is None else f"{x / 2**20:.0f} MiB"


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def cross_ratio(ox, dot):
    if dot is None:
        return "-"
    if dot == 0:
        return "equal (0)" if ox == 0 else f"{ox} vs 0"
    return f"{ox / dot:.2f}x"


def load():
    return open("/proc/loadavg").read().split()[:3]


# ------------------------------------------------------------------------------------------------
# Export


def oxport_cmd(model, meta, opset, out, report):
    shape = "x".join(str(d) for d in meta["shape"])
    return [os.path.join(ARGS.build, "app", "oxport"), "export", model, "-o", out,
            "--arg", f"{shape}:float32:randn", "--input-names", meta["input"],
            "--output-names", meta["output"], "--dynamic-axes", f"{meta['input']}:0=batch",
            "--dynamic-axes", f"{meta['output']}:0=batch", "--opset", str(opset),
            "--operator-export-type", "ONNX", "--report", report]


def torch_cmd(model, meta_path, opset, out, times):
    return [PY, os.path.join(HERE, "torch_export.py"), model, meta_path, out, str(opset), times]


def floor_cmd(model, meta):
    return [os.path.join(ARGS.build, "bench", "oxport-bench-floor"), model,
            "x".join(str(d) for d in meta["shape"])]


def bench_export(name, opset):
    model = os.path.join(ARGS.models, name + ".pt")
    meta_path = os.path.join(ARGS.models, name + ".json")
    with open(meta_path) as f:
        meta = json.load(f)
    work = os.path.join(ARGS.out, "export")
    os.makedirs(work, exist_ok=True)
    ox_out = os.path.join(work, f"{name}_{opset}.oxport.onnx")
    th_out = os.path.join(work, f"{name}_{opset}.torch.onnx")
    report = os.path.join(work, f"{name}_{opset}.report.json")
    times = os.path.join(work, f"{name}_{opset}.torch.json")
    r = {"name": name, "opset": opset, "ox": [], "th": [], "fl": [], "phases": [], "th_phases": [],
         "fl_phases": [], "errors": []}
    tools = ["ox", "th", "fl"]
    for i in range(ARGS.runs):
        order = tools if i % 2 == 0 else list(reversed(tools))
        for tool in order:
            if tool == "ox":
                wall, rss, rc, out, err = run_rusage(oxport_cmd(model, meta, opset, ox_out, report), timeout=600)
                if rc != 0:
                    r["errors"].append("oxport: " + (err.strip().splitlines() or ["rc %s" % rc])[-1][:300])
                    r["ox"].append((None, None))
                    continue
                with open(report) as f:
                    rep = json.load(f)
                r["phases"].append(dict(rep.get("stats", {}).get("phase_ms", {}), total=rep.get("total_ms")))
                r["ox"].append((wall, rss))
            elif tool == "th":
                wall, rss, rc, out, err = run_rusage(torch_cmd(model, meta_path, opset, th_out, times), timeout=900)
                if rc != 0:
                    r["errors"].append("torch: " + (err.strip().splitlines() or ["rc %s" % rc])[-1][:300])
                    r["th"].append((None, None))
                    continue
                with open(times) as f:
                    r["th_phases"].append(json.load(f))
                r["th"].append((wall, rss))
            elif i < ARGS.floor_runs or i < 1:
                if any(x["name"] == name and x["fl"] for x, _ in DONE):
                    continue  # the floor does not depend on the opset: measured once per model
                wall, rss, rc, out, err = run_rusage(floor_cmd(model, meta), timeout=600)
                if rc == 0:
                    r["fl"].append((wall, rss))
                    r["fl_phases"].append(json.loads(out.strip().splitlines()[-1]))
    # oxport's file sizes and node counts next to torch's
    for key, path in (("ox_bytes", ox_out), ("th_bytes", th_out)):
        r[key] = os.path.getsize(path) if os.path.exists(path) else None
    return r


def summarize_export(r):
    s = {}
    for tool in ("ox", "th", "fl"):
        s[tool + "_wall"] = med([w for w, _ in r[tool]])
        s[tool + "_rss"] = med([m for _, m in r[tool]])
    keys = ["passes+trace", "convert", "optimize", "serialize+check"]
    s["phases"] = {k: med([p.get(k) for p in r["phases"]]) for k in keys}
    tot = med([p.get("total") for p in r["phases"]])
    if tot is not None:
        s["phases"]["load+other"] = tot - sum(v or 0 for v in s["phases"].values())
        s["phases"]["total (in process)"] = tot
    s["th_export"] = med([p["export_ms"] for p in r["th_phases"]])
    s["th_load"] = med([p["load_ms"] for p in r["th_phases"]])
    s["th_import"] = med([p["import_ms"] for p in r["th_phases"]])
    s["fl_load"] = med([p["load_ms"] for p in r["fl_phases"]])
    s["fl_forward"] = med([p["forward_ms"] for p in r["fl_phases"]])
    return s


# ------------------------------------------------------------------------------------------------
# Big models: peak memory and external data


def bench_big(name):
    import shutil
    model = os.path.join(ARGS.models, name + ".pt")
    meta_path = os.path.join(ARGS.models, name + ".json")
    with open(meta_path) as f:
        meta = json.load(f)
    res = {"name": name, "weights": os.path.getsize(model), "runs": []}
    for i in range(ARGS.big_runs):
        for tool in (("ox", "th") if i % 2 == 0 else ("th", "ox")):
            if tool == "th" and not ARGS.big_torch:
                continue
            # each tool writes into a folder of its own (torch puts external tensors beside the model)
            work = os.path.join(ARGS.out, "big", tool)
            shutil.rmtree(work, ignore_errors=True)
            os.makedirs(work)
            out = os.path.join(work, name + ".onnx")
            if tool == "ox":
                cmd = oxport_cmd(model, meta, 17, out, os.path.join(ARGS.out, "big", name + ".report.json"))
            else:
                cmd = torch_cmd(model, meta_path, 17, out, os.path.join(ARGS.out, "big", name + ".torch.json"))
            wall, rss, rc, _, err = run_rusage(cmd, timeout=1800)
            files = os.listdir(work)
            res["runs"].append({"tool": tool, "wall": wall, "rss": rss, "rc": rc, "external": len(files) > 1,
                                "onnx_bytes": os.path.getsize(out) if os.path.exists(out) else None,
                                "error": "" if rc == 0 else (err.strip().splitlines() or [""])[-1][:300]})
            shutil.rmtree(work, ignore_errors=True)  # several GiB: do not keep
    return res


# ------------------------------------------------------------------------------------------------
# Layout: oxport's layoutGraph vs dot on the same drawn graph


def count_crossings(polys):
    """Proper crossings between segments of different polylines (grid-bucketed; each crossing
    counted once, in the cell holding the crossing point)."""
    segs = []
    for pid, pts in enumerate(polys):
        for k in range(len(pts) - 1):
            (x1, y1), (x2, y2) = pts[k], pts[k + 1]
            if (x1, y1) != (x2, y2):
                segs.append((x1, y1, x2, y2, pid))
    if not segs:
        return 0
    lens = sorted(max(abs(s[2] - s[0]), abs(s[3] - s[1])) for s in segs)
    cell = max(lens[len(lens) // 2] * 2, 1.0)
    grid = {}
    for i, (x1, y1, x2, y2, _) in enumerate(segs):
        cx0, cx1 = sorted((int(math.floor(x1 / cell)), int(math.floor(x2 / cell))))
        cy0, cy1 = sorted((int(math.floor(y1 / cell)), int(math.floor(y2 / cell))))
        for cx in range(cx0, cx1 + 1):
            for cy in range(cy0, cy1 + 1):
                grid.setdefault((cx, cy), []).append(i)

    def orient(ax, ay, bx, by, cx, cy):
        v = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        return (v > 1e-9) - (v < -1e-9)

    n = 0
    for (cx, cy), ids in grid.items():
        for a in range(len(ids)):
            x1, y1, x2, y2, pa = segs[ids[a]]
            for b in range(a + 1, len(ids)):
                x3, y3, x4, y4, pb = segs[ids[b]]
                if pa == pb:
                    continue
                if max(x1, x2) < min(x3, x4) or max(x3, x4) < min(x1, x2) or \
                   max(y1, y2) < min(y3, y4) or max(y3, y4) < min(y1, y2):
                    continue
                o1 = orient(x1, y1, x2, y2, x3, y3)
                o2 = orient(x1, y1, x2, y2, x4, y4)
                o3 = orient(x3, y3, x4, y4, x1, y1)
                o4 = orient(x3, y3, x4, y4, x2, y2)
                if o1 * o2 >= 0 or o3 * o4 >= 0:
                    continue  # no proper crossing (touching at an end point is not one)
                d = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
                t = ((x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4)) / d
                px, py = x1 + t * (x2 - x1), y1 + t * (y2 - y1)
                if int(math.floor(px / cell)) == cx and int(math.floor(py / cell)) == cy:
                    n += 1
    return n


def dot_polylines(plain):
    polys = []
    for line in plain.splitlines():
        f = line.split()
        if not f or f[0] != "edge":
            continue
        k = int(f[3])
        c = [(float(f[4 + 2 * i]) * 72, -float(f[5 + 2 * i]) * 72) for i in range(k)]
        pts = [c[0]]
        for j in range(0, k - 3, 3):  # cubic Bezier pieces, sampled
            p0, p1, p2, p3 = c[j:j + 4]
            for t in (0.25, 0.5, 0.75, 1.0):
                u = 1 - t
                pts.append((u ** 3 * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t ** 3 * p3[0],
                            u ** 3 * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t ** 3 * p3[1]))
        polys.append(pts)
    return polys


def bench_layout(label, args):
    work = os.path.join(ARGS.out, "layout")
    os.makedirs(work, exist_ok=True)
    prefix = os.path.join(work, label)
    cmd = [os.path.join(ARGS.build, "bench", "oxport-bench-layout")] + args + [prefix, "--runs", str(ARGS.runs)]
    wall, rss, rc, out, err = run_rusage(cmd, timeout=1800)
    res = {"label": label, "error": None}
    if rc != 0:
        res["error"] = (err.strip().splitlines() or ["rc %s" % rc])[-1][:300]
        return res
    with open(prefix + ".json") as f:
        j = json.load(f)
    res.update(nodes=j["nodes"], items=j["items"], routes=j["routes"], stubs=j["stubs"],
               ox_ms=med(j["layout_ms"]), ox_stats=j["stats"], inspect_ms=j["inspect_ms"])
    res["ox_cross"] = count_crossings([[(p[2][2 * i], p[2][2 * i + 1]) for i in range(len(p[2]) // 2)]
                                       for p in j["polylines"]])
    dot_times = []
    for i in range(ARGS.dot_runs):
        t = time.perf_counter()
        try:
            p = subprocess.run(["dot", "-Tplain", prefix + ".dot"], capture_output=True, text=True,
                               timeout=ARGS.dot_timeout)
        except subprocess.TimeoutExpired:
            dot_times = None
            break
        dot_times.append(time.perf_counter() - t)
        plain = p.stdout
    if dot_times is None:
        res["dot_s"] = None
        res["dot_cross"] = None
    else:
        res["dot_s"] = med(dot_times)
        res["dot_cross"] = count_crossings(dot_polylines(plain))
    return res


# ------------------------------------------------------------------------------------------------
# Studio: the event loop's longest stall during an export, from the UI's own QtTest


def bench_studio():
    """The UI's own QtTests, run ARGS.runs times each: the bundled sample's export, and opening a big
    traced model (vit_b_16 by default) without a preset up to a drawn, interactive graph, then its
    export. Each reports the event loop's longest gap (wall clock, and the GUI thread's own CPU time
    in that gap, which does not count waiting for a CPU on a busy machine)."""
    import re
    exe = ARGS.studio_test
    if not exe or not os.path.exists(exe):
        return None
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    res = {"exe": os.path.relpath(exe, ROOT), "error": None,
           "sample": {"total": [], "stall": [], "cpu": []},
           "big": {"model": ARGS.studio_model, "open": [], "full": [], "export": [], "stall": [], "cpu": [], "boxes": None}}
    big_path = os.path.join(ARGS.models, ARGS.studio_model + ".pt")

    def run(test, extra_env=None):
        try:
            p = subprocess.run([exe, test], capture_output=True, text=True,
                               env=dict(env, **(extra_env or {})), timeout=300)
        except subprocess.TimeoutExpired:
            return None, f"{test} did not finish in 300 s"
        out = p.stdout + p.stderr
        if p.returncode != 0:
            return None, ((out.strip().splitlines() or ["no output"])[-1])[:300]
        return out, None

    for _ in range(ARGS.runs):
        out, err = run("exportRunsInTheBackgroundAndStaysResponsive")
        m = out and re.search(r"export \+ ONNX preview: (\d+) ms; longest event-loop stall: (\d+) ms wall, "
                              r"(\d+) ms GUI-thread CPU", out)
        if not m:
            res["error"] = err or "no measurement in the test's output"
            return res
        for k, g in (("total", 1), ("stall", 2), ("cpu", 3)):
            res["sample"][k].append(int(m.group(g)))
        if not os.path.exists(big_path):
            continue
        out, err = run("aTracedModelWithoutPresetStartsFromTheGuessedShape", {"OXPORT_STUDIO_BIG_MODEL": big_path})
        o = out and re.search(r"opened and drawn: (\d+) ms \((\d+) boxes.*?full preview after the example run: "
                              r"(\d+) ms \((\d+) boxes\)", out)
        e = out and re.search(r"(\d+) ms export; longest event-loop stall (\d+) ms wall, (\d+) ms GUI-thread CPU", out)
        if not (o and e):
            res["error"] = err or "no measurement in the test's output"
            return res
        res["big"]["open"].append(int(o.group(1)))
        res["big"]["full"].append(int(o.group(3)))
        res["big"]["boxes"] = (int(o.group(2)), int(o.group(4)))
        for k, g in (("export", 1), ("stall", 2), ("cpu", 3)):
            res["big"][k].append(int(e.group(g)))
    return res


# ------------------------------------------------------------------------------------------------
# Report


def write_doc(env, exports, bigs, layouts, studio=None):
    L = []
    a = L.append
    a("# Benchmarks: oxport vs torch.onnx.export")
    a("")
    a("Written by `bench/run.sh` (`bench/bench.py`); do not edit by hand. Every figure is the median of "
      f"{ARGS.runs} runs made in this one run on this machine, the tools alternating (and which goes "
      "first alternating). Ratios are oxport / torch: below 1 means oxport is faster or smaller.")
    a("")
    a(f"- date: {env['date']}; host: {env['host']}, {env['cpus']} CPUs, {env['mem_gib']:.0f} GiB RAM")
    a(f"- load average (1/5/15 min) at start: {' '.join(env['load_start'])}; at end: {' '.join(env['load_end'])}")
    a(f"- oxport {env['git']}; torch {env['torch']}, torchvision {env['torchvision']}; Graphviz {env['dot']}")
    a(f"- BLAS used by libtorch (both tools and the floor): `{env['blas']}`")
    a("")
    if exports:
        a("## Export: whole process, same file, same options")
        a("")
        a("`oxport export` (CLI) vs `/usr/bin/python3 bench/torch_export.py` (import torch, torch.jit.load, "
          "torch.onnx.export). Options: one float32 input (randn, seed 0), names `input`/`output`, dynamic "
          "batch on both, constant folding, operator_export_type ONNX. Both check the model (torch 1.13 runs "
          "the checker with full shape inference). The floor is `bench/floor.cpp`: torch::jit::load and one "
          "forward, in a process of its own. Wall time and peak RSS of the whole process.")
        a("")
        a("| model | opset | oxport | torch | ratio | torch export() alone | oxport peak RSS | torch peak RSS | RSS ratio | floor | oxport / floor |")
        a("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        floors = {}
        for r, s in exports:
            if s["fl_wall"] is not None:
                floors[r["name"]] = s
        for r, s in exports:
            fl = floors.get(r["name"], {})
            a(f"| {r['name']} | {r['opset']} | {fmt_s(s['ox_wall'])} | {fmt_s(s['th_wall'])} | "
              f"**{ratio(s['ox_wall'], s['th_wall'])}** | {fmt_s(s['th_export'] and s['th_export'] / 1e3)} | "
              f"{fmt_mib(s['ox_rss'])} | {fmt_mib(s['th_rss'])} | **{ratio(s['ox_rss'], s['th_rss'])}** | "
              f"{fmt_s(fl.get('fl_wall'))} | {ratio(s['ox_wall'], fl.get('fl_wall'))} |")
        errs = [(r["name"], r["opset"], e) for r, _ in exports for e in sorted(set(r["errors"]))]
        if errs:
            a("")
            a("Failures (the run is left out of the medians):")
            a("")
            for n, o, e in errs:
                a(f"- {n} opset {o}: `{e}`")
        a("")
        a("### Where the time goes")
        a("")
        a("oxport: phases from `oxport export --report` (in-process `phase_ms`); `load+other` is the "
          "report's `total_ms` minus the phases (Model::load, graph views for the report). Process start "
          "(loading libtorch) is the whole-process wall time minus `total`. torch: import torch, "
          "torch.jit.load and torch.onnx.export timed inside the script. Floor: torch::jit::load and one "
          "forward, timed inside floor.cpp.")
        a("")
        a("| model | opset | passes+trace | convert | optimize | serialize+check | load+other | oxport total | oxport process start | torch import | torch jit.load | torch export() | floor load | floor forward |")
        a("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r, s in exports:
            ph = s["phases"]
            fl = floors.get(r["name"], {})
            start = None
            if s["ox_wall"] is not None and ph.get("total (in process)") is not None:
                start = s["ox_wall"] * 1e3 - ph["total (in process)"]
            a(f"| {r['name']} | {r['opset']} | " + " | ".join(fmt_ms(ph.get(k)) for k in
              ["passes+trace", "convert", "optimize", "serialize+check", "load+other", "total (in process)"]) +
              f" | {fmt_ms(start)} | {fmt_ms(s['th_import'])} | {fmt_ms(s['th_load'])} | {fmt_ms(s['th_export'])} | "
              f"{fmt_ms(fl.get('fl_load'))} | {fmt_ms(fl.get('fl_forward'))} |")
        a("")
    if bigs:
        a("## Big models: peak memory and external data")
        a("")
        a("A stack of 4096x4096 float32 Linear weights made with torch.zeros (no random init), exported at "
          "opset 17 (oxport's external-data threshold is 1800 MiB of weights).")
        a("")
        a("| model | weights (.pt) | tool | wall | peak RSS | peak RSS / weights | external data | note |")
        a("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for b in bigs:
            for tool in ("ox", "th"):
                rs = [x for x in b["runs"] if x["tool"] == tool]
                if not rs:
                    continue
                ok = [x for x in rs if x["rc"] == 0]
                wall = med([x["wall"] for x in ok])
                rss = med([x["rss"] for x in ok])
                note = "" if ok else rs[0]["error"] or f"rc {rs[0]['rc']}"
                a(f"| {b['name']} | {fmt_mib(b['weights'])} | {'oxport' if tool == 'ox' else 'torch'} | {fmt_s(wall)} | "
                  f"{fmt_mib(rss)} | {ratio(rss, b['weights'])} | {'yes' if ok and ok[0]['external'] else 'no'} | "
                  f"{note} ({len(ok)} of {len(rs)} runs) |")
        a("")
    if layouts:
        a("## Graph layout: oxport's layoutGraph vs Graphviz dot")
        a("")
        a(f"oxport: `layoutGraph` with default options (median of {ARGS.runs} runs in `bench/layout_bench.cpp`). "
          "dot gets the graph as oxport draws it: every drawn box with its size, every routed edge "
          "(constants and high fan-out values are stubs in oxport's drawing and are left out of both). "
          f"dot's time is the whole `dot -Tplain` process (median of {ARGS.dot_runs}), timeout "
          f"{ARGS.dot_timeout:.0f} s. Crossings are counted the same way for both: proper intersections "
          "between the drawn polylines (dot's splines sampled). oxport's own count (between adjacent "
          "layers inside each group) is shown too.")
        a("")
        a("| graph | nodes | drawn boxes | routed edges | stubs | oxport layout | dot | time ratio | oxport crossings (own count) | dot crossings | crossing ratio |")
        a("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for l in layouts:
            if l["error"]:
                a(f"| {l['label']} | failed: `{l['error']}` | | | | | | | | | |")
                continue
            dot = "did not finish" if l["dot_s"] is None else fmt_s(l["dot_s"])
            a(f"| {l['label']} | {l['nodes']} | {l['items']} | {l['routes']} | {l['stubs']} | {fmt_ms(l['ox_ms'])} | {dot} | "
              f"{ratio(l['ox_ms'] / 1e3, l['dot_s'])} | {l['ox_cross']} ({l['ox_stats']['crossings']}) | "
              f"{'-' if l['dot_cross'] is None else l['dot_cross']} | **{cross_ratio(l['ox_cross'], l['dot_cross'])}** |")
        a("")
    a("## Studio")
    a("")
    if studio is None:
        a("Not measured: no GUI build with the studio tests (pass --studio-test build/tests/ui/test_studio).")
    elif studio["error"]:
        a(f"`{studio['exe']}` failed: `{studio['error']}`")
    else:
        sm, bg = studio["sample"], studio["big"]
        a(f"The UI's own QtTests (`{studio['exe']}`, offscreen; median of {len(sm['stall'])}). The stall is the "
          "event loop's longest gap, as a 5 ms timer sees it (wall clock), and the GUI thread's own CPU time "
          "in that gap (wall clock also counts waiting for a CPU on a busy machine). Goal: under 50 ms.")
        a("")
        a("| what | time | longest stall (wall) | GUI-thread CPU in it |")
        a("| --- | --- | --- | --- |")
        a(f"| bundled sample CNN: export + ONNX preview | {med(sm['total']):.0f} ms | {med(sm['stall']):.0f} ms | "
          f"{med(sm['cpu']):.0f} ms |")
        if bg["open"]:
            a(f"| {bg['model']}, no preset: open to a drawn, interactive graph (as saved, {bg['boxes'][0]} boxes) | "
              f"{med(bg['open']):.0f} ms | (whole test below) | |")
            a(f"| {bg['model']}: open to the full preview after the example run ({bg['boxes'][1]} boxes) | "
              f"{med(bg['full']):.0f} ms | | |")
            a(f"| {bg['model']}: open, preview, export + ONNX preview | {med(bg['export']):.0f} ms (export) | "
              f"{med(bg['stall']):.0f} ms | {med(bg['cpu']):.0f} ms |")
        else:
            a(f"{bg['model']} was not measured: its .pt is not among the models.")
    a("")
    # Measured by bench/transformer_video.py (its own run, kept here when this document is rewritten).
    section = os.path.join(HERE, "transformer_video.md")
    if os.path.exists(section):
        with open(section) as f:
            a(f.read().rstrip())
            a("")
    notes = os.path.join(HERE, "notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            a(f.read().rstrip())
            a("")
    with open(ARGS.doc, "w") as f:
        f.write("\n".join(L) + "\n")
    with open(os.path.join(ARGS.out, "results.json"), "w") as f:
        json.dump({"env": env, "exports": exports, "bigs": bigs, "layouts": layouts, "studio": studio}, f,
                  indent=1, default=str)


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--doc", default=os.path.join(ROOT, "docs", "BENCHMARKS.md"))
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--floor-runs", type=int, default=5)
    p.add_argument("--big-runs", type=int, default=1)
    p.add_argument("--big-torch", action="store_true")
    p.add_argument("--dot-runs", type=int, default=1)
    p.add_argument("--dot-timeout", type=float, default=120)
    p.add_argument("--opsets", default="11,17")
    p.add_argument("--studio-test", default=os.path.join(ROOT, "build", "tests", "ui", "test_studio"))
    p.add_argument("--studio-model", default="vit_b_16")
    p.add_argument("--export-models", default="resnet18,resnet50,mobilenet_v2,transformer_encoder")
    p.add_argument("--big-models", default="")
    p.add_argument("--layout", default="synthetic_1k,synthetic_5k,synthetic_10k,synthetic_10k_mask,resnet50,vit_b_16")
    p.add_argument("--from-results", action="store_true",
                   help="only rewrite the document from OUT/results.json (e.g. after editing bench/notes.md)")
    ARGS = p.parse_args()
    ARGS.opsets = [int(x) for x in ARGS.opsets.split(",") if x]
    os.makedirs(ARGS.out, exist_ok=True)
    if ARGS.from_results:
        with open(os.path.join(ARGS.out, "results.json")) as f:
            res = json.load(f)
        write_doc(res["env"], res["exports"], res["bigs"], res["layouts"], res.get("studio"))
        return

    def pyver(mod):
        r = subprocess.run([PY, "-c", f"import {mod}; print({mod}.__version__)"], capture_output=True, text=True)
        return r.stdout.strip() or "?"

    env = {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "host": platform.node(), "cpus": os.cpu_count(),
           "mem_gib": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30,
           "load_start": load(), "torch": pyver("torch"), "torchvision": pyver("torchvision"),
           "git": subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                                 text=True).stdout.strip()}
    env["blas"] = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    d = subprocess.run(["dot", "-V"], capture_output=True, text=True)
    env["dot"] = (d.stderr.strip().split("version")[-1].split("(")[0].strip() if d.returncode == 0 else "absent")
    print(f"load average {' '.join(env['load_start'])}", flush=True)

    exports = []
    for entry in [m for m in ARGS.export_models.split(",") if m]:
        # "name" runs at every --opsets; "name@17" or "name@11+17" at those opsets only
        name, _, ops = entry.partition("@")
        opsets = [int(o) for o in ops.split("+")] if ops else ARGS.opsets
        if not os.path.exists(os.path.join(ARGS.models, name + ".pt")):
            print(f"export {name}: no model file, skipped", flush=True)
            continue
        for opset in opsets:
            r = bench_export(name, opset)
            s = summarize_export(r)
            exports.append((r, s))
            DONE.append((r, s))
            print(f"export {name} opset {opset}: oxport {fmt_s(s['ox_wall'])} {fmt_mib(s['ox_rss'])}, torch "
                  f"{fmt_s(s['th_wall'])} {fmt_mib(s['th_rss'])}, ratio {ratio(s['ox_wall'], s['th_wall'])}; "
                  f"errors {len(r['errors'])}; load {' '.join(load())}", flush=True)
            write_doc(dict(env, load_end=load()), exports, [], [])
    bigs = []
    for name in [m for m in ARGS.big_models.split(",") if m]:
        b = bench_big(name)
        bigs.append(b)
        print(f"big {name}: {b['runs']}", flush=True)
    layouts = []
    specs = {"synthetic_1k": ["synthetic", "32"], "synthetic_5k": ["synthetic", "161"],
             "synthetic_10k": ["synthetic", "322"], "synthetic_10k_mask": ["synthetic", "322", "--mask"]}
    for label in [m for m in ARGS.layout.split(",") if m]:
        if label in specs:
            args = specs[label]
        else:
            meta = os.path.join(ARGS.models, label + ".json")
            if not os.path.exists(meta):
                print(f"layout {label}: no model file, skipped", flush=True)
                continue
            with open(meta) as f:
                shape = "x".join(str(x) for x in json.load(f)["shape"])
            args = ["model", os.path.join(ARGS.models, label + ".pt"), shape]
        l = bench_layout(label, args)
        layouts.append(l)
        print(f"layout {label}: {json.dumps({k: v for k, v in l.items() if k != 'ox_stats'})}", flush=True)
    studio = bench_studio()
    if studio:
        print(f"studio: {studio}", flush=True)
    env["load_end"] = load()
    write_doc(env, exports, bigs, layouts, studio)
    print(f"wrote {ARGS.doc}; load average {' '.join(env['load_end'])}", flush=True)


if __name__ == "__main__":
    main()
