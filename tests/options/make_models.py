#!/usr/bin/python3
"""Fixtures of the option tests: small TorchScript models, oxport presets, and what torch.onnx.export
(torch 1.13) writes for the same model and options.

usage: make_models.py OUT_DIR
       make_models.py --large FILE.pt      (the >2 GiB model of the external-data test)
Writes OUT_DIR/models/<model>.pt, OUT_DIR/golden/<case>/{preset.json,torch.onnx} and
OUT_DIR/manifest.json. Run with /usr/bin/python3 (the Python that has torch and onnx).
"""
import io
import json
import os
import sys
import warnings
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.onnx import OperatorExportTypes as OET
from torch.onnx import TrainingMode as TM

warnings.filterwarnings("ignore")


# ---- models ---------------------------------------------------------------------------------

class Net(torch.nn.Module):
    """conv-bn-relu-dropout, a linear layer and arithmetic on a parameter (w * 2).t()."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.drop = torch.nn.Dropout(0.5)
        self.fc = torch.nn.Linear(4, 3)
        self.w = torch.nn.Parameter(torch.randn(3, 4))

    def forward(self, x):
        y = self.drop(torch.relu(self.bn(self.conv(x))))
        y = y.mean((2, 3))
        return self.fc(y) + y @ (self.w * 2).t()


class Plain(torch.nn.Module):
    """conv and linear, no batch norm: parameters keep their state_dict names in torch.onnx too."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.fc = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


class TwoInTwoOut(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, a, b):
        y = self.fc(a) + b
        return y, y.sum(1)


class Search(torch.nn.Module):
    def forward(self, b, y):
        return torch.special.zeta(y, 2.0)  # b unused: the Hist module reads it


class Hist(torch.nn.Module):
    def forward(self, y, b):
        return torch.special.bessel_j0(y) + b[:4]  # bessel_j0: neither torch.onnx 1.13 nor oxport converts it


class Unsupported(torch.nn.Module):
    """Two ops neither torch.onnx 1.13 nor oxport converts, in two submodules."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.search = Search()
        self.hist = Hist()

    def forward(self, x, b):
        y = torch.relu(self.fc(x))
        return self.search(b, y), self.hist(y, b)


class Twin(torch.nn.Module):
    """Two linear layers with identical weights (copies, not shared): one initializer when folding."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)
        with torch.no_grad():
            self.b.weight.copy_(self.a.weight)
            self.b.bias.copy_(self.a.bias)
        self.unused = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.a(x) + self.b(x * 2)


class TiedLM(torch.nn.Module):
    """A GPT-like decoder whose token embedding is tied to the output projection, written as
    x @ wte.weight.t() ("matmul"), F.linear(x, wte.weight) ("linear") or an nn.Linear head whose
    weight is the embedding's ("head", as transformers ties them). fc is an ordinary linear layer
    (its weight read once). Each parameter must be written once."""

    def __init__(self, head):
        super().__init__()
        self.wte = torch.nn.Embedding(64, 16)
        self.wpe = torch.nn.Embedding(8, 16)
        self.ln = torch.nn.LayerNorm(16)
        self.fc = torch.nn.Linear(16, 16)
        self.head = head
        if head == "head":
            self.lm_head = torch.nn.Linear(16, 64, bias=False)
            self.lm_head.weight = self.wte.weight

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.wte(ids) + self.wpe(pos)
        h = h + self.fc(torch.relu(self.ln(h)))
        if self.head == "matmul":
            return h @ self.wte.weight.t()
        if self.head == "linear":
            return F.linear(h, self.wte.weight)
        return self.lm_head(h)


def unique_parameter_bytes(m):
    """Bytes of the parameters and buffers, each tensor once (tied ones are one tensor)."""
    seen = {}
    for t in list(m.parameters()) + list(m.buffers()):
        seen[t.data_ptr()] = t.numel() * t.element_size()
    return sum(seen.values())


class Shapes(torch.nn.Module):
    """Operands the export computes: Resize scales and sizes, Pad amounts, Reshape, Expand and
    Tile sizes, Slice bounds, next to weights (a conv whose batch norm folds into it)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        up = F.interpolate(y, scale_factor=2.0, mode="nearest")
        bi = F.interpolate(y, size=(x.shape[2] * 2, x.shape[3] * 2), mode="bilinear", align_corners=False)
        z = F.pad(up + bi, (1, 1, 2, 0))
        z = z[:, :, 1:-1, 1:-1]
        b = z.shape[0]
        f = z.reshape(b, 4, -1).mean(2)
        t = f.unsqueeze(2).expand(b, 4, 3).repeat(1, 2, 1)
        return z, t


class PoolHead(torch.nn.Module):
    """A VGG-style head: features, a squeeze-excite gate, AdaptiveAvgPool2d to a size the features
    divide, flatten and a classifier. Exported with a dynamic batch only, its pooled axes never
    change: torch.onnx writes an AveragePool, and so must oxport (not a pooling by MatMul)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.gate = torch.nn.Conv2d(8, 8, 1)
        self.pool = torch.nn.AdaptiveAvgPool2d((2, 2))
        self.fc = torch.nn.Linear(32, 5)

    def forward(self, x):
        y = F.max_pool2d(torch.relu(self.conv(x)), 2)
        y = y + y * torch.sigmoid(self.gate(F.adaptive_avg_pool2d(y, 1)))
        return self.fc(torch.flatten(self.pool(y), 1))


class ArgsNet(torch.nn.Module):
    """Every kind of argument: tensor, int, bool, str, float, Optional[Tensor], List[Tensor],
    Tuple[Tensor, Tensor], List[int], and keyword arguments with defaults; returns a tuple holding
    a tensor, a list and a dict."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.w2 = torch.nn.Parameter(torch.randn(4, 2))

    def forward(self, x: Tensor, n: int, flag: bool, mode: str, scale: float, opt: Optional[Tensor],
                ts: List[Tensor], pair: Tuple[Tensor, Tensor], order: List[int],
                bias: Optional[Tensor] = None, k: int = 2):
        y = F.linear(x * n + scale, self.w, opt)
        y = y + torch.cat(ts, 1).sum(1, keepdim=True)
        y = y + pair[0] * pair[1]
        y = torch.div(y, 2.0, rounding_mode=mode)
        s = y.sum(0, keepdim=flag)
        z = F.linear(y.permute(order), self.w2, bias)
        return z * k, [y + 1, y - 1], {"s": s, "m": y.mean()}


# ---- cases ----------------------------------------------------------------------------------

def T(*shape):
    return {"tensor": {"shape": list(shape)}}


def torch_value(a):
    if isinstance(a, dict) and "tensor" in a:
        return torch.randn(*a["tensor"]["shape"])
    if isinstance(a, list):
        return [torch_value(e) for e in a]
    return a


NET_ARGS = [T(1, 3, 8, 8)]
ARGS_POS = [T(2, 4), 3, True, "floor", 0.5, T(4), [T(2, 1), T(2, 2)], [T(2, 4), T(2, 4)], [1, 0]]
ARGS_KW = {"bias": T(4)}

# name: (model, args, kwargs, options as preset keys, what the test compares)
CASES = {}


def case(name, model, args, options, compare, kwargs=None, tuples=()):
    CASES[name] = dict(model=model, args=args, kwargs=kwargs or {}, options=options, compare=compare,
                       tuples=list(tuples))


COMMON = ["opsets", "ir_version", "producer", "input_count", "output_count", "ops"]
# The same graph inputs (the user's tensors, then the weights), the same initializers, and each
# operand of the same kind (weight, Constant node, computed): what the export computes is never
# an input a runtime lets the caller override. "runs": the file loads and matches libtorch in
# the pinned ONNX Runtime and in the newest.
WEIGHTS = ["input_count", "init_inputs", "initializer_count", "param_names", "operand_kinds"]
case("default", "net", NET_ARGS, {}, COMMON + ["input_dims", "output_dims"] + WEIGHTS + ["runs"])
for t in ["ONNX", "ONNX_FALLTHROUGH", "ONNX_ATEN_FALLBACK"]:
    for k in [None, True, False]:
        case(f"keep_{t}_{k}".lower(), "net", NET_ARGS, {"operator_export_type": t, "keep_initializers_as_inputs": k},
             WEIGHTS + ["runs"])
# Under the seed's defaults (no keep_initializers_as_inputs, no operator_export_type), with the
# batch and the image's height and width dynamic, at the opsets where Resize and Pad change form.
SHAPES_ARGS = [T(1, 3, 8, 10)]
SHAPES_DYN = {"input_names": ["image"], "output_names": ["z", "t"],
              "dynamic_axes": {"image": {"0": "batch", "2": "height", "3": "width"},
                               "z": {"0": "batch", "2": "zh", "3": "zw"}, "t": {"0": "batch"}}}
for op in [11, 13, 17]:
    case(f"shapes_defaults_{op}", "shapes", SHAPES_ARGS, dict(SHAPES_DYN, opset_version=op),
         ["opsets", "input_count", "output_count", "input_names", "output_names", "input_dims"] + WEIGHTS + ["runs"])
    case(f"shapes_static_{op}", "shapes", SHAPES_ARGS, {"opset_version": op},
         ["opsets", "input_count", "output_count"] + WEIGHTS + ["runs"])
# verbose changes doc_strings only (torch.onnx: a Python stack trace; oxport: op, module, line).
case("verbose", "net", NET_ARGS, {"verbose": True}, COMMON + ["input_dims", "output_dims"] + WEIGHTS)
case("no_folding", "net", NET_ARGS, {"do_constant_folding": False},
     ["opsets", "has_ops:Conv,Gemm,Mul,Transpose,MatMul,Add", "param_names"])
case("export_params_false", "plain", NET_ARGS, {"export_params": False},
     ["input_count", "input_names:-1", "input_dims", "initializer_count", "ops"])
case("export_params_false_named", "plain", NET_ARGS, {"export_params": False, "input_names": ["image"]},
     ["input_names", "input_dims", "initializer_count"])
TRAIN = ["opsets", "ir_version", "output_count", "ops", "input_count", "init_inputs", "initializer_count"]
case("training_15", "net", NET_ARGS, {"training": "TRAINING", "opset_version": 15},
     TRAIN + ["param_names", "attrs:BatchNormalization", "node_outputs:BatchNormalization",
               "node_inputs:Dropout"])
case("training_17", "net", NET_ARGS, {"training": "TRAINING", "opset_version": 17},
     TRAIN + ["param_names", "attrs:BatchNormalization", "node_inputs:Dropout"])
case("preserve_train", "net_train", NET_ARGS, {"training": "PRESERVE", "opset_version": 15},
     TRAIN + ["param_names", "attrs:BatchNormalization"])
case("preserve_eval", "net", NET_ARGS, {"training": "PRESERVE", "opset_version": 15}, COMMON + WEIGHTS + ["runs"])
for op in range(9, 18):
    case(f"opset_{op}", "net", NET_ARGS, {"opset_version": op}, COMMON + WEIGHTS + ["runs"])
case("dynamic_dict", "net", NET_ARGS,
     {"input_names": ["x"], "output_names": ["y"], "dynamic_axes": {"x": {"0": "batch", "2": "h"}, "y": {"0": "batch"}}},
     ["input_names", "output_names", "input_dims", "output_dims"])
case("dynamic_list", "net", NET_ARGS,
     {"input_names": ["x"], "output_names": ["y"], "dynamic_axes": {"x": [0, 2], "y": [0]}},
     ["input_names", "output_names", "input_dims", "output_dims"])
case("names_partial", "two", [T(2, 4), T(2, 4)], {"input_names": ["first"], "output_names": ["out0"]},
     ["input_names:1", "output_names:1", "input_count", "output_count"])
case("names_full", "two", [T(2, 4), T(2, 4)],
     {"input_names": ["a", "b"], "output_names": ["y", "s"], "keep_initializers_as_inputs": False},
     ["input_names", "output_names", "input_dims", "output_dims"])
for t in ["ONNX_FALLTHROUGH", "ONNX_ATEN", "ONNX_ATEN_FALLBACK"]:
    case(f"export_type_{t.lower()}", "unsupported", [T(2, 4), T(5)], {"operator_export_type": t},
         ["opsets", "output_count", "custom_ops", "attrs:ATen:operator"])
case("custom_opsets", "unsupported", [T(2, 4), T(5)],
     {"operator_export_type": "ONNX_FALLTHROUGH", "custom_opsets": {"org.pytorch.aten": 2}}, ["opsets"])
case("args_kinds", "args", ARGS_POS, {"keep_initializers_as_inputs": False},
     ["input_count", "input_dims", "output_count", "output_dims"], kwargs=ARGS_KW, tuples=[7])
case("args_kinds_named", "args", ARGS_POS,
     {"keep_initializers_as_inputs": False, "input_names": ["x", "opt", "t0", "t1", "p0", "p1", "bias"],
      "output_names": ["z", "l0", "l1", "s", "m"]},
     ["input_names", "input_dims", "output_names", "output_dims"], kwargs=ARGS_KW, tuples=[7])


# Adaptive pooling behind a dynamic batch only: the same ops as torch.onnx, at both opset forms.
for op in [11, 17]:
    case(f"pool_head_batch_{op}", "pool_head", [T(1, 3, 16, 16)],
         {"opset_version": op, "input_names": ["x"], "dynamic_axes": {"x": {"0": "batch"}}},
         ["opsets", "ops", "input_dims", "runs"])


class EvenOnly(torch.nn.Module):
    """An encoder-decoder skip that only takes even H, W (as UNet, HRNet, ... take multiples of
    their stride): verification at H + 1 fails in libtorch itself."""

    def forward(self, x):
        return x + torch.nn.functional.interpolate(torch.nn.functional.avg_pool2d(x, 2), scale_factor=2.0)


def make_models(models_dir):
    torch.manual_seed(0)
    os.makedirs(models_dir, exist_ok=True)
    eager = {}
    net = Net().eval()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 8, 8)
    eager["net"] = net
    torch.jit.trace(net, (x,)).save(os.path.join(models_dir, "net.pt"))
    net_train = Net()
    net_train.load_state_dict(net.state_dict())
    net_train.train()
    eager["net_train"] = net_train
    torch.jit.trace(net_train, (x,), check_trace=False).save(os.path.join(models_dir, "net_train.pt"))
    # Scripted (no control flow in forward itself) and saved in training mode: not a trace.
    torch.jit.script(net_train).save(os.path.join(models_dir, "net_scripted_train.pt"))
    plain = Plain().eval()
    eager["plain"] = plain
    torch.jit.trace(plain, (x,)).save(os.path.join(models_dir, "plain.pt"))
    two = TwoInTwoOut().eval()
    eager["two"] = two
    torch.jit.trace(two, (torch.randn(2, 4), torch.randn(2, 4))).save(os.path.join(models_dir, "two.pt"))
    uns = Unsupported().eval()
    eager["unsupported"] = uns
    torch.jit.trace(uns, (torch.randn(2, 4), torch.linspace(-1, 1, 5))).save(os.path.join(models_dir, "unsupported.pt"))
    shapes = Shapes().eval()
    with torch.no_grad():
        shapes.bn.running_mean.uniform_(-0.5, 0.5)
        shapes.bn.running_var.uniform_(0.5, 1.5)
    eager["shapes"] = shapes
    torch.jit.trace(shapes, (torch.randn(1, 3, 8, 10),)).save(os.path.join(models_dir, "shapes.pt"))
    twin = Twin().eval()
    torch.jit.trace(twin, (torch.randn(2, 4),)).save(os.path.join(models_dir, "twin.pt"))
    big = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 16)).eval()
    torch.jit.trace(big, (torch.randn(2, 256),)).save(os.path.join(models_dir, "big.pt"))
    tied_bytes = {}
    for head in ("matmul", "linear", "head"):
        tied = TiedLM(head).eval()
        torch.jit.trace(tied, (torch.randint(0, 64, (2, 5)),)).save(os.path.join(models_dir, f"tied_{head}.pt"))
        tied_bytes[f"tied_{head}"] = unique_parameter_bytes(tied)
    with open(os.path.join(models_dir, "tied.json"), "w") as f:
        json.dump(tied_bytes, f)
    # A linear layer on a 3-D input whose weight (1024 x 300, 1.2 MB) is written transposed for
    # MatMul as the file is written, not transposed in memory.
    wide = torch.nn.Sequential(torch.nn.Linear(1024, 300), torch.nn.ReLU(), torch.nn.Linear(300, 8)).eval()
    torch.jit.trace(wide, (torch.randn(2, 3, 1024),)).save(os.path.join(models_dir, "wide.pt"))
    pool_head = PoolHead().eval()
    eager["pool_head"] = pool_head
    torch.jit.trace(pool_head, (torch.randn(1, 3, 16, 16),)).save(os.path.join(models_dir, "pool_head.pt"))
    args = ArgsNet().eval()
    eager["args"] = args
    torch.jit.script(args).save(os.path.join(models_dir, "args.pt"))
    torch.jit.script(EvenOnly()).save(os.path.join(models_dir, "even_only.pt"))
    observing_qat().save(os.path.join(models_dir, "qat_observing.pt"))
    return eager


def observing_qat():
    """A QAT model saved as vendors often save it: fbgemm qconfig (per-channel weights, activations
    in 0..127), calibrated, eval, but its observers left enabled, so each libtorch call moves the
    statistics. Traced."""
    import torch.ao.quantization as tq
    torch.manual_seed(0)
    m = torch.nn.Sequential(tq.QuantStub(), torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8),
                            torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 3), tq.DeQuantStub())
    m.train()
    tq.fuse_modules_qat(m, [["1", "2", "3"]], inplace=True)
    m.qconfig = tq.get_default_qat_qconfig("fbgemm")
    tq.prepare_qat(m, inplace=True)
    with torch.no_grad():
        for _ in range(3):
            m(torch.randn(2, 3, 12, 12))
    m.eval()
    return torch.jit.trace(m, torch.randn(1, 3, 12, 12), check_trace=False)


class BakedArgs(torch.nn.Module):
    """torch.onnx 1.13 turns int and bool arguments into graph inputs (tensors) when it traces,
    so the reference bakes ArgsNet's non-tensor arguments here, as the seed documents."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x, opt, ts, pair, bias=None):
        return self.m(x, 3, True, "floor", 0.5, opt, ts, pair, [1, 0], bias=bias)


def to_tuple_at(values, idxs):
    return [tuple(v) if i in idxs else v for i, v in enumerate(values)]


def torch_export(model, c, path):
    o = c["options"]
    args = to_tuple_at([torch_value(a) for a in c["args"]], c["tuples"])
    if isinstance(model, ArgsNet):
        model = BakedArgs(model)
        args = [args[0], args[5], args[6], args[7]]
    if c["kwargs"]:
        args.append({k: torch_value(v) for k, v in c["kwargs"].items()})
    dyn = None
    if "dynamic_axes" in o:
        dyn = {k: ({int(a): n for a, n in v.items()} if isinstance(v, dict) else v) for k, v in o["dynamic_axes"].items()}
    f = io.BytesIO()
    torch.onnx.export(
        model, tuple(args), f,
        export_params=o.get("export_params", True), verbose=o.get("verbose", False),
        training=getattr(TM, o.get("training", "EVAL")),
        input_names=o.get("input_names"), output_names=o.get("output_names"),
        operator_export_type=getattr(OET, o.get("operator_export_type", "ONNX_FALLTHROUGH")),
        opset_version=o.get("opset_version", 11),
        do_constant_folding=o.get("do_constant_folding", True),
        dynamic_axes=dyn,
        keep_initializers_as_inputs=o.get("keep_initializers_as_inputs"),
        custom_opsets=o.get("custom_opsets"))
    with open(path, "wb") as out:
        out.write(f.getvalue())


def make_large(path):
    """A model with a little over 2 GiB of weights (two 16384x16384 linear layers, zeros, no random
    init), for the external-data test; made only when that test runs (OXPORT_TEST_LARGE=1)."""
    n = 16384
    m = torch.nn.Sequential(torch.nn.utils.skip_init(torch.nn.Linear, n, n), torch.nn.ReLU(),
                            torch.nn.utils.skip_init(torch.nn.Linear, n, n)).eval()
    with torch.no_grad():
        for p in m.parameters():
            p.zero_()
        m[0].bias.fill_(1.0)
        m[2].weight[0, :].fill_(0.5)
    torch.jit.trace(m, (torch.zeros(1, n),)).save(path)


def main():
    if sys.argv[1] == "--large":
        make_large(sys.argv[2])
        return
    out = os.path.abspath(sys.argv[1])
    eager = make_models(os.path.join(out, "models"))
    manifest = []
    for name, c in CASES.items():
        d = os.path.join(out, "golden", name)
        os.makedirs(d, exist_ok=True)
        preset = {"model": os.path.join(out, "models", c["model"] + ".pt"), "args": c["args"]}
        if c["kwargs"]:
            preset["kwargs"] = c["kwargs"]
        preset.update(c["options"])
        with open(os.path.join(d, "preset.json"), "w") as f:
            json.dump(preset, f, indent=2)
        torch.manual_seed(0)
        # Preserve/training exports change the module's mode; torch.onnx restores it.
        torch_export(eager[c["model"]], c, os.path.join(d, "torch.onnx"))
        manifest.append({"name": name, "dir": d, "compare": c["compare"]})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)


if __name__ == "__main__":
    main()
