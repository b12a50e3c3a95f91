"""Ctrl+C in every phase of a big export: the time from the SIGINT to the end of `oxport export`.

Usage: /usr/bin/python3 bench/cancel.py OXPORT MODEL.pt [--arg SPEC] [--opset N] [--tries N]
                                        [--phases load,passes,convert,optimize,write] [--out DIR]

Runs `oxport export MODEL.pt --progress=always` in a session of its own, waits until its progress
line enters the phase (plus a delay that lands inside that phase's long call: libtorch's read of the
archive for `load`, the weights for `write`), sends SIGINT to the whole process group as a terminal's
Ctrl+C does (the supervising parent and the working child both get it), and measures until the
process has ended. Each phase is tried --tries times, the phases alternating. Prints a Markdown
table (latency per try, median, worst; the diagnostic printed; exit status) and the load average;
checks that the earlier output file is untouched and that no temporary file is left.
Not part of ctest: it needs a big model (bench/bigmodel.py makes GPT-2 medium) and a minute or two.
"""
import argparse
import glob
import os
import re
import signal
import statistics
import subprocess
import sys
import time

# phase -> (progress text that starts it, seconds to wait after it)
PHASES = {
    "load": (b"load: checking the archive", 1.0),
    "passes": (b"trace: running the model", 0.0),
    "convert": (b"convert: converting", 0.0),
    "optimize": (b"optimize: optimizing", 0.0),
    "write": (b"writing weights", 0.3),
}


def one(ox, model, out, extra, phase):
    trigger, delay = PHASES[phase]
    earlier = b"EARLIER OUTPUT\n"
    with open(out, "wb") as f:
        f.write(earlier)
    p = subprocess.Popen([ox, "export", model, "-o", out, "--progress=always"] + extra, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen, sent = b"", None
    fd = p.stderr.fileno()
    os.set_blocking(fd, False)
    deadline = time.monotonic() + 300
    armed_at = None
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            chunk = None
        if chunk == b"":
            break
        if chunk:
            seen += chunk
        now = time.monotonic()
        if armed_at is None and trigger in seen:
            armed_at = now
        if sent is None and armed_at is not None and now - armed_at >= delay:
            os.killpg(p.pid, signal.SIGINT)
            sent = time.monotonic()
        if not chunk:
            time.sleep(0.005)
    rc = p.wait()
    ended = time.monotonic()
    text = seen.decode("utf-8", "replace")
    codes = re.findall(r"error\[([a-z-]+)\]", text)
    # The phase the progress line showed last before the signal.
    intact = open(out, "rb").read() == earlier
    left = glob.glob(os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".tmp-*"))
    return {"latency": (ended - sent) if sent else None, "rc": rc, "codes": codes, "intact": intact, "left": left}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("oxport")
    ap.add_argument("model")
    ap.add_argument("--arg", default="1x128:int64:arange")
    ap.add_argument("--opset", type=int, default=14)
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--phases", default=",".join(PHASES))
    ap.add_argument("--out", default="/tmp/oxport-cancel")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    out = os.path.join(args.out, "cancel.onnx")
    extra = ["--arg", args.arg, "--opset", str(args.opset)]
    phases = args.phases.split(",")
    load0 = os.getloadavg()
    res = {ph: [] for ph in phases}
    for i in range(args.tries):
        for ph in (phases if i % 2 == 0 else list(reversed(phases))):
            r = one(args.oxport, args.model, out, extra, ph)
            res[ph].append(r)
            lat = "no signal sent" if r["latency"] is None else "%.2f s" % r["latency"]
            print(f"  {ph}: {lat}, rc {r['rc']}, {r['codes']}, intact={r['intact']}, left={r['left']}", flush=True)
    load1 = os.getloadavg()
    lines = [f"Ctrl+C (SIGINT to the process group) in each phase of `oxport export {os.path.basename(args.model)}`; "
             f"load average {' '.join('%.1f' % x for x in load0)} at start, {' '.join('%.1f' % x for x in load1)} at end.",
             "", "| phase | SIGINT to exit (each try) | median | worst | diagnostic | exit status | earlier file intact |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for ph in phases:
        lats = [r["latency"] for r in res[ph] if r["latency"] is not None]
        codes = sorted({",".join(r["codes"]) for r in res[ph]})
        rcs = sorted({str(r["rc"]) for r in res[ph]})
        ok = all(r["intact"] and not r["left"] for r in res[ph])
        lines.append(f"| {ph} | {', '.join('%.2f' % x for x in lats)} s | "
                     f"{statistics.median(lats) if lats else float('nan'):.2f} s | {max(lats) if lats else float('nan'):.2f} s | "
                     f"{'; '.join(codes)} | {', '.join(rcs)} | {'yes' if ok else 'NO'} |")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
