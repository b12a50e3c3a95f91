"""Makes the benchmark models: traced with torch.jit.trace, saved with torch.jit.save.

Usage: /usr/bin/python3 bench/make_models.py OUT_DIR [--big-gib G] [name ...]

Weights are random with seed 0 (torchvision weights=None); nothing is downloaded. Each model
gets OUT_DIR/<name>.pt and OUT_DIR/<name>.json (the example input shape and the names that
both exporters are given). A model that fails to trace is reported and skipped.
"""
import json
import os
import sys
import time

import torch


def transformer_encoder():
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048,
                                             dropout=0.1, batch_first=True)
    return torch.nn.TransformerEncoder(layer, num_layers=4), (1, 128, 512)


def tv(name, shape=(1, 3, 224, 224)):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None), shape
    return make


class BigLinearStack(torch.nn.Module):
    """Many large Linear layers whose parameters are torch.zeros (no random init: fast to make)."""

    def __init__(self, total_bytes, width=4096):
        super().__init__()
        per_layer = width * width * 4
        n = max(1, total_bytes // per_layer)
        # One distinct element per layer, so that no exporter can merge equal weights.
        ws = [torch.zeros(width, width) for _ in range(n)]
        for i, w in enumerate(ws):
            w[0, 0] = i + 1
        self.weights = torch.nn.ParameterList([torch.nn.Parameter(w, requires_grad=False) for w in ws])

    def forward(self, x):
        for w in self.weights:
            x = torch.nn.functional.linear(x, w)
        return x


MODELS = {
    "resnet18": tv("resnet18"),
    "resnet50": tv("resnet50"),
    "mobilenet_v2": tv("mobilenet_v2"),
    "transformer_encoder": transformer_encoder,
    # Further zoo models: exported when both tools manage to.
    "vit_b_16": tv("vit_b_16"),
    "squeezenet1_1": tv("squeezenet1_1"),
    "efficientnet_b0": tv("efficientnet_b0"),
    "densenet121": tv("densenet121"),
}


def save(out_dir, name, module, shape):
    path = os.path.join(out_dir, name + ".pt")
    meta = os.path.join(out_dir, name + ".json")
    if os.path.exists(path) and os.path.exists(meta):
        return
    module.eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    t = time.time()
    # Traced with autograd on: TransformerEncoderLayer's inference fast path (a fused op no exporter
    # handles) is skipped when parameters require grad and grad mode is on.
    traced = torch.jit.trace(module, (x,), check_trace=False)
    torch.jit.save(traced, path + ".tmp")
    os.replace(path + ".tmp", path)
    with open(meta, "w") as f:
        json.dump({"name": name, "shape": list(shape), "input": "input", "output": "output"}, f)
    print(f"  {name}: traced and saved in {time.time() - t:.1f} s", flush=True)


def main():
    args = sys.argv[1:]
    out_dir = args.pop(0)
    big_gib = []
    while "--big-gib" in args:
        i = args.index("--big-gib")
        big_gib.append(float(args[i + 1]))
        del args[i:i + 2]
    os.makedirs(out_dir, exist_ok=True)
    names = args or list(MODELS)
    for name in names:
        if name not in MODELS:
            continue
        torch.manual_seed(0)
        try:
            module, shape = MODELS[name]()
            save(out_dir, name, module, shape)
        except Exception as e:  # a model this torch/torchvision cannot trace: skipped, reported
            print(f"  {name}: skipped ({type(e).__name__}: {e})", flush=True)
    for g in big_gib:
        name = f"big_{g:g}gib".replace(".", "_")
        with torch.no_grad():
            save(out_dir, name, BigLinearStack(int(g * (1 << 30))), (1, 4096))


if __name__ == "__main__":
    main()
