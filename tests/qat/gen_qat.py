"""QAT fixtures: torchvision's quantizable resnet18 and mobilenet_v2 (weights=None, seed 0), conv-bn-relu
fused for QAT, prepared with torch.ao.quantization.prepare_qat under the default QAT qconfig and the
fbgemm one (FusedMovingAvgObsFakeQuantize, per-channel weights), calibrated for a few steps on random
data, observers frozen, eval, traced and saved. The manifest records each model's output scale (the
quantization step the comparison counts in).

usage: gen_qat.py OUT_DIR
"""
import json
import os
import sys
import warnings

import torch
import torch.ao.quantization as tq
import torchvision

warnings.filterwarnings("ignore")


def output_fake_quant(arch, m):
    return m.fc.activation_post_process if arch == "resnet18" else m.classifier[1].activation_post_process


def make(arch, qconfig, path):
    torch.manual_seed(0)
    ctor = {"resnet18": torchvision.models.quantization.resnet18,
            "mobilenet_v2": torchvision.models.quantization.mobilenet_v2}[arch]
    m = ctor(weights=None, quantize=False)
    m.train()
    m.fuse_model(is_qat=True)
    m.qconfig = tq.default_qat_qconfig if qconfig == "default" else tq.get_default_qat_qconfig("fbgemm")
    tq.prepare_qat(m, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            m(torch.randn(4, 3, 64, 64))
    m.eval()
    m.apply(tq.disable_observer)  # freeze the statistics: eval export uses them as saved
    traced = torch.jit.trace(m, torch.randn(1, 3, 64, 64))
    traced.save(path)
    return float(output_fake_quant(arch, m).scale)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rows = []
    for arch in ["resnet18", "mobilenet_v2"]:
        for qc in ["default", "fbgemm"]:
            name = f"{arch}_{qc}"
            scale = make(arch, qc, os.path.join(out, name + ".pt"))
            rows.append({"name": name, "model": name + ".pt", "output_scale": scale, "shape": [1, 3, 64, 64]})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
