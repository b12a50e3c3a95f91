"""Transformer and video models: oxport's frontend before and after a change, and torch.onnx.export.

Usage: /usr/bin/python3 bench/transformer_video.py --models DIR --after OXPORT [--before OXPORT]
           [--torch] [--runs N] [--md OUT.md] [name ...]

DIR holds NAME.pt and NAME.json ({"shape": [...]}), e.g. made by
    torch.manual_seed(0); m = torchvision.models.get_model(name).eval()
    torch.jit.trace(m, torch.randn(*shape), check_trace=False).save(f"{DIR}/{name}.pt")
Each export is the user's path with the defaults but the opset:
`oxport export NAME.pt --arg SHAPE --opset 17 -o OUT.onnx --report R.json`. Per model and binary
the median wall and CPU (user + system) time and the report's frontend pass time (stats.pass_ms) over --runs runs, the peak
RSS, which example run was used (stats.example_run) and the file's sha256: with --before, the two
binaries alternate (which goes first alternates too), and the files must be byte-identical.
--torch adds torch.onnx.export of the same file at opset 17 (bench/torch_export.py) for a ratio.
Prints a Markdown table, also written to --md (--rows FILE renders it from the JSON rows a run
printed on stderr, one a model).
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench import fmt_mib, fmt_ms, fmt_s, ratio  # noqa: E402 (bench/ is the script's folder)

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"


def run(cmd, env=None):
    """(wall seconds, CPU seconds, peak RSS bytes, returncode, stderr) of one child process."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    return (time.perf_counter() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024,
            os.waitstatus_to_exitcode(status), err)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def oxport_once(binary, model, shape, tmp, tag):
    out = os.path.join(tmp, f"{tag}.onnx")
    report = os.path.join(tmp, f"{tag}.json")
    env = dict(os.environ)
    lib = os.path.dirname(os.path.abspath(binary))
    if os.path.exists(os.path.join(lib, "liboxport-core.so.0")):  # a copied binary with its library
        env["LD_LIBRARY_PATH"] = lib + ":" + env.get("LD_LIBRARY_PATH", "")
    wall, cpu, rss, rc, err = run([binary, "export", model, "--arg", "x".join(map(str, shape)), "--opset", "17",
                              "-o", out, "--report", report], env)
    if rc != 0:
        return {"error": err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"}
    with open(report) as f:
        stats = json.load(f).get("stats", {})
    frontend = sum(p["ms"] for p in stats.get("pass_ms", []) if p.get("pass") == "frontend")
    res = {"wall": wall, "cpu": cpu, "rss": rss, "frontend_ms": frontend, "example_run": stats.get("example_run", ""),
           "sha256": sha256(out)}
    os.remove(out)
    return res


def torch_once(model, meta, tmp):
    out = os.path.join(tmp, "torch.onnx")
    times = os.path.join(tmp, "torch_times.json")
    wall, cpu, rss, rc, err = run([PY, os.path.join(HERE, "torch_export.py"), model, meta, out, "17", times])
    if rc != 0:
        return {"error": err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"}
    os.remove(out)
    return {"wall": wall, "cpu": cpu, "rss": rss}


def median(rs, key):
    vals = [r[key] for r in rs if key in r]
    return statistics.median(vals) if vals else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", required=True)
    p.add_argument("--after", required=True)
    p.add_argument("--before")
    p.add_argument("--torch", action="store_true")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--md")
    p.add_argument("--rows", help="only render the table from the JSON rows (one a line) a run printed on stderr")
    p.add_argument("names", nargs="*")
    a = p.parse_args()
    if a.rows:
        with open(a.rows) as f:
            rows = [json.loads(line) for line in f if line.startswith("{")]
        md = table(rows, any("before" in r for r in rows), any("torch" in r for r in rows))
        print(md)
        if a.md:
            with open(a.md, "w") as f:
                f.write(md + "\n")
        return
    names = a.names or sorted(f[:-3] for f in os.listdir(a.models) if f.endswith(".pt"))
    bins = [("after", a.after)] + ([("before", a.before)] if a.before else [])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            model = os.path.join(a.models, name + ".pt")
            meta = os.path.join(a.models, name + ".json")
            with open(meta) as f:
                shape = json.load(f)["shape"]
            res = {tag: [] for tag, _ in bins}
            for i in range(a.runs):
                order = bins if i % 2 == 0 else bins[::-1]
                for tag, binary in order:
                    res[tag].append(oxport_once(binary, model, shape, tmp, tag))
            torch_res = [torch_once(model, meta, tmp) for _ in range(a.runs)] if a.torch else []
            row = {"model": name, "shape": "x".join(map(str, shape))}
            for tag, _ in bins:
                ok = [r for r in res[tag] if "error" not in r]
                row[tag] = {"wall": median(ok, "wall"), "cpu": median(ok, "cpu"), "frontend_ms": median(ok, "frontend_ms"),
                            "rss": max((r["rss"] for r in ok), default=None),
                            "example_run": ok[0]["example_run"] if ok else res[tag][0]["error"],
                            "sha256": sorted({r["sha256"] for r in ok})}
            if torch_res:
                ok = [r for r in torch_res if "error" not in r]
                row["torch"] = {"wall": median(ok, "wall"), "cpu": median(ok, "cpu"), "rss": max((r["rss"] for r in ok), default=None),
                                "error": torch_res[0].get("error") if not ok else None}
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    md = table(rows, bool(a.before), a.torch)
    print(md)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md + "\n")


def run_kind(desc):
    return "meta" if desc == "meta" else ("real: " + desc.split("(fallback: ")[-1].split(" on ")[0]
                                           if "fallback" in desc else desc)


def table(rows, before, torch):
    head = ["model", "input"]
    if before:
        head += ["wall before", "CPU before", "frontend before", "run before"]
    head += ["wall", "CPU", "frontend", "peak RSS", "run"]
    if before:
        head += ["same file"]
    if torch:
        head += ["torch.onnx.export wall", "torch CPU", "oxport / torch (wall)", "oxport / torch (CPU)"]
    L = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        aft = r["after"]
        cells = [r["model"], r["shape"]]
        if before:
            b = r["before"]
            cells += [fmt_s(b["wall"]), fmt_s(b["cpu"]), fmt_ms(b["frontend_ms"]), run_kind(b["example_run"])]
        cells += [fmt_s(aft["wall"]), fmt_s(aft["cpu"]), fmt_ms(aft["frontend_ms"]), fmt_mib(aft["rss"]), run_kind(aft["example_run"])]
        if before:
            same = len(aft["sha256"]) == 1 and aft["sha256"] == r["before"]["sha256"]
            cells += ["yes" if same else "NO"]
        if torch:
            t = r.get("torch", {})
            cells += [fmt_s(t.get("wall")) if t.get("wall") else ("fails" if t.get("error") else "-"), fmt_s(t.get("cpu")),
                      ratio(aft["wall"], t.get("wall")), ratio(aft["cpu"], t.get("cpu"))]
        L.append("| " + " | ".join(cells) + " |")
    return "\n".join(L)


if __name__ == "__main__":
    main()
