"""The GIL is released while the core exports, and Ctrl+C cancels an export cleanly."""
import io
import json
import os
import subprocess
import sys
import threading
import time

import torch
import torchvision

import oxport

HERE = os.path.dirname(os.path.abspath(__file__))


def big_model():
    torch.manual_seed(0)
    x = torch.randn(1, 3, 224, 224)
    return torch.jit.trace(torchvision.models.resnet50().eval(), x), x


def test_gil_is_released_during_the_export():
    m, x = big_model()
    in_core = threading.Event()
    real = oxport._oxport.export
    spans = {}

    def export(*a, **k):  # the core's part, timed, in the main thread
        in_core.set()
        t0 = time.monotonic()
        try:
            return real(*a, **k)
        finally:
            spans["core"] = (t0, time.monotonic())

    ticks = []
    stop = threading.Event()

    def ticker():  # pure Python: it runs only while nobody holds the GIL for long
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    oxport._oxport.export = export
    t = threading.Thread(target=ticker)
    t.start()
    try:
        oxport.export_to_onnx(m, x, io.BytesIO())
    finally:
        stop.set()
        t.join()
        oxport._oxport.export = real
    t0, t1 = spans["core"]
    inside = [b for b in ticks if t0 <= b <= t1]
    assert t1 - t0 > 0.3, "the export is too quick to tell"
    gaps = [b - a for a, b in zip([t0] + inside, inside + [t1])]
    # With the GIL held through the export the ticker would stop for all of it.
    assert max(gaps) < 0.5 * (t1 - t0), (max(gaps), t1 - t0, len(inside))


INTERRUPT = r"""
import io, json, os, signal, sys, threading, time
import torch, torchvision
import oxport
out_dir = sys.argv[1]
torch.manual_seed(0)
x = torch.randn(1, 3, 224, 224)
m = torch.jit.trace(torchvision.models.resnet50().eval(), x)
target = os.path.join(out_dir, "model.onnx")
with open(target, "wb") as fh:
    fh.write(b"an earlier export")
real = oxport._oxport.export
sent = {}
def export(*a, **k):  # Ctrl+C 0.1 s after the core started
    def fire():
        sent["t"] = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)
    threading.Timer(0.1, fire).start()
    return real(*a, **k)
oxport._oxport.export = export
res = {"interrupted": False}
try:
    oxport.export_to_onnx(m, x, target, report=os.path.join(out_dir, "report.json"))
except KeyboardInterrupt:
    res["interrupted"] = True
    res["latency"] = time.monotonic() - sent["t"]
oxport._oxport.export = real
with open(target, "rb") as fh:
    res["earlier_kept"] = fh.read() == b"an earlier export"
res["files"] = sorted(os.listdir(out_dir))
res["report"] = json.load(open(os.path.join(out_dir, "report.json")))["status"]
r = oxport.export_to_onnx(m, x, target)  # the core still works after a cancel
res["after"] = r.stats["checker_passed"]
print("RESULT " + json.dumps(res))
"""


def test_ctrl_c_cancels_the_export(tmp_path):
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-c", INTERRUPT, str(tmp_path)], capture_output=True, text=True,
                       env=env, timeout=300)
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line, p.stdout + p.stderr
    res = json.loads(line[7:])
    assert res["interrupted"], "the export finished before Ctrl+C; it must be slower for this test"
    assert res["latency"] < 5.0, res
    assert res["earlier_kept"] and res["files"] == ["model.onnx", "report.json"], res
    assert res["report"] == "interrupted" and res["after"], res
