#!/usr/bin/python3
"""Makes the bad-input fixtures for test_robustness: OUT/<name> files and OUT/manifest.json.

usage: gen_fixtures.py OUT_DIR SAMPLE.pt
Run with /usr/bin/python3 (the Python that has torch). Fixed seeds; the same files every time.

  linear.pt            traced nn.Linear(4, 3) on a [2, 4] float32 input (fails on other widths
                       and on integer inputs)
  raises.pt            scripted module whose forward raises for a batch larger than 2
  state_dict.pt        torch.save of a state_dict: a zip, but not TorchScript (no code/ entry)
  plain.zip            a zip archive of two text files
  pickle.pt            a module pickled by torch.save with the legacy (non-zip) format
  truncated.pt         the first half of linear.pt
  no_central_dir.pt    linear.pt without its zip central directory (the last 1 KiB cut off)
  garbage.pt           'PK' followed by 4 KiB of random bytes
  text.pt              a text file
  view.pt              traced x.view(3, 4): fails on inputs that do not have 12 elements
  sample_stored.pt     SAMPLE.pt re-zipped with every entry stored (not deflated), so that the
                       mutation test can change TorchScript code text and fix up the CRC-32
"""
import io
import json
import os
import random
import sys
import warnings
import zipfile

import torch


class View(torch.nn.Module):
    def forward(self, x):
        return x.view(3, 4) * 2.0


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    random.seed(0)
    files = {}

    def put(name, data, what):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        files[name] = what

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin = torch.nn.Linear(4, 3).eval()
        traced = torch.jit.trace(lin, (torch.randn(2, 4),))
    buf = io.BytesIO()
    torch.jit.save(traced, buf)
    linear = buf.getvalue()
    put("linear.pt", linear, "traced Linear(4, 3), input [2, 4] float32")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        view = torch.jit.trace(View(), (torch.randn(2, 6),))
    buf = io.BytesIO()
    torch.jit.save(view, buf)
    put("view.pt", buf.getvalue(), "traced x.view(3, 4)")

    buf = io.BytesIO()
    with zipfile.ZipFile(sys.argv[2]) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info.filename))
    put("sample_stored.pt", buf.getvalue(), "the sample, every entry stored")

    buf = io.BytesIO()
    torch.save(lin.state_dict(), buf)
    put("state_dict.pt", buf.getvalue(), "torch.save(state_dict): zip, not TorchScript")

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("readme.txt", "not a model\n")
        z.writestr("data/values.csv", "1,2,3\n")
    put("plain.zip", buf.getvalue(), "zip archive of two text files")

    buf = io.BytesIO()
    torch.save(lin, buf, _use_new_zipfile_serialization=False)
    put("pickle.pt", buf.getvalue(), "legacy pickled module (not a zip)")

    put("truncated.pt", linear[: len(linear) // 2], "first half of linear.pt")
    put("no_central_dir.pt", linear[:-1024], "linear.pt without its last 1 KiB")
    put("garbage.pt", b"PK" + bytes(random.getrandbits(8) for _ in range(4096)), "PK + random bytes")
    put("text.pt", b"this is not a model\n", "text")

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(files, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
