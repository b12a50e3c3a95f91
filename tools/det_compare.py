#!/usr/bin/python3
"""Compares a traced torchvision detector (libtorch) with its ONNX file (ONNX Runtime) at one image
size, detection by detection, and prints the discrete decisions the model takes from each box, so
that a difference can be told apart as a rounding knife-edge or a wrong conversion.

usage: tools/det_compare.py MODEL.pt MODEL.onnx SIZE [SEED] [--fill rand|smooth]
The image is the [1, 3, SIZE, SIZE] tensor oxport makes for the preset's {"fill": FILL, "seed":
SEED} (tests/zoo/fills.py; FILL rand, white noise, by default; SEED 0). The graph input must be named "image" (tests/zoo/gen_zoo.py).
Mask R-CNN: per detection the mask error and whether paste_masks_in_image's integer box (the box
expanded by 30/28, truncated with .to(int64)) is the same in both. Keypoint R-CNN: per detection the
keypoint error and heatmaps_to_keypoints' ceil(width), ceil(height) of the box in the resized
image (resized as the zoo's fixtures are: min_size=max_size=320). Run with /usr/bin/python3; ONNX
Runtime runs through tools/ort_run.js (onnxruntime-node).
"""
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch
import torchvision  # noqa: F401  (registers torchvision::nms, roi_align for torch.jit.load)
from torchvision.models.detection import roi_heads

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "zoo"))
from fills import make_tensor  # noqa: E402

warnings.simplefilter("ignore")


def main():
    argv = list(sys.argv)
    fill = "rand"
    if "--fill" in argv:
        i = argv.index("--fill")
        fill = argv[i + 1]
        del argv[i:i + 2]
    pt, onnx, size = argv[1], argv[2], int(argv[3])
    seed = int(argv[4]) if len(argv) > 4 else 0
    model = torch.jit.load(pt)
    x = make_tensor({"fill": fill, "dtype": "float32"}, [1, 3, size, size], seed)
    with torch.no_grad():
        ref = [t.numpy() for t in model(x)]
    with tempfile.TemporaryDirectory() as run:
        np.save(os.path.join(run, "in0.npy"), x.numpy())
        with open(os.path.join(run, "request.json"), "w") as f:
            json.dump({"model": os.path.abspath(onnx), "inputs": [{"name": "image", "file": "in0.npy"}]}, f)
        subprocess.run(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_run.js"), run],
                       check=True)
        with open(os.path.join(run, "response.json")) as f:
            resp = json.load(f)
        ort = [np.load(os.path.join(run, o["file"])) for o in resp["outputs"]]
    names = [o["name"] for o in resp["outputs"]]
    for n, a, b in zip(names, ref, ort):
        if a.shape != b.shape:
            print(f"{n}: shapes differ, libtorch {a.shape}, ONNX Runtime {b.shape}")
            continue
        err = np.abs(a.astype(np.float64) - b).max() / max(np.abs(a).max(), 1e-30) if a.size else 0.0
        print(f"{n}: max |error| / max |value| {err:.3e}")
    bt, bo = torch.from_numpy(ref[0]), torch.from_numpy(ort[0])
    if bt.shape != bo.shape:
        return
    print(f"boxes: largest difference {(bt - bo).abs().max().item():.4f} px")
    if "masks" in names:
        mt, mo = ref[names.index("masks")], ort[names.index("masks")]
        et, eo = roi_heads.expand_boxes(bt, 30.0 / 28.0), roi_heads.expand_boxes(bo, 30.0 / 28.0)
        it, io = et.to(torch.int64), eo.to(torch.int64)
        for i in range(len(bt)):
            near = (et[i].double() - et[i].double().round()).abs().min().item()
            same = "same" if torch.equal(it[i], io[i]) else f"DIFFERENT (ONNX Runtime {io[i].tolist()})"
            print(f"detection {i}: mask error {np.abs(mt[i] - mo[i]).max():.2e}, integer box {it[i].tolist()} {same}, "
                  f"nearest integer {near:.4f} px away")
    if "keypoints" in names:
        kt, ko = ref[names.index("keypoints")], ort[names.index("keypoints")]
        # The RoI heads see the boxes in the resized image (at 321, 319x319: the rounding of
        # 321 * (320 / 321)), as the fixtures' transform (min_size=max_size=320) resizes it.
        from torchvision.models.detection.transform import GeneralizedRCNNTransform
        resize = GeneralizedRCNNTransform(320, 320, [0.0] * 3, [1.0] * 3).eval()
        r = resize([x[0]])[0].image_sizes[0][1] / size

        def wh(b):
            b = b * r
            return torch.stack([(b[:, 2] - b[:, 0]).clamp(min=1), (b[:, 3] - b[:, 1]).clamp(min=1)], 1)
        wt, wo = wh(bt), wh(bo)
        for i in range(len(bt)):
            same = "same" if torch.equal(wt[i].ceil(), wo[i].ceil()) else f"DIFFERENT (ONNX Runtime {wo[i].ceil().tolist()})"
            print(f"detection {i}: keypoint error {np.abs(kt[i] - ko[i]).max():.2e} px, width x height "
                  f"{wt[i, 0].item():.4f} x {wt[i, 1].item():.4f}, heatmap size {wt[i].ceil().tolist()} {same}")


if __name__ == "__main__":
    main()
