"""Half-precision models: float16 and bfloat16 weights and inputs, as `model.half()` and
`model.to(torch.bfloat16)` make them. Weights stay in their type in the file. libtorch 1.13 has no
CPU kernel for most float16 ops, so the reference runs in float32 (each weight widened where forward
reads it, no float32 copy of the module) rounded to the model's type (verification says so), and the
comparison's tolerance is that type's epsilon. Ops that an opset has no float16/bfloat16 form of
(Conv, Gemm, ... for bfloat16) compute in float32 between Casts.
Scripted: tracing in Python runs the model, which fails on the CPU for these types."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from optest import T, case


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = F.relu(self.bn(self.conv1(x)))
        y = F.max_pool2d(F.silu(self.conv2(y)), 2)
        y = F.interpolate(y, scale_factor=2.0, mode="nearest")
        return self.fc(y.mean((2, 3))).softmax(-1)


class Block(nn.Module):
    """A pre-norm attention block with a GELU MLP, on [batch, tokens, 16]."""

    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(16)
        self.qkv = nn.Linear(16, 48)
        self.proj = nn.Linear(16, 16)
        self.norm2 = nn.LayerNorm(16)
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 16)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, n, 3, 2, 8).permute(2, 0, 3, 1, 4).unbind(0)
        a = (q @ k.transpose(-2, -1) * 8 ** -0.5).softmax(-1)
        x = x + self.proj((a @ v).transpose(1, 2).reshape(b, n, c))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


def typed(module, dtype):
    torch.manual_seed(0)
    return module.to(dtype).eval()


CASES = [
    case("cnn_float16", typed(Cnn(), torch.float16), [T(1, 3, 16, 16, dtype="float16")], opsets=(11, 13, 17),
         script=True, dynamic={0: [0, 2, 3]}),
    case("attention_block_float16", typed(Block(), torch.float16), [T(2, 6, 16, dtype="float16")],
         opsets=(11, 17), script=True, dynamic={0: [0, 1]}),
    # onnxruntime-node passes no bfloat16 tensors: checked files, verification skipped with its reason.
    # bfloat16 exists in ONNX from opset 13 (Cast included): below it, a clear refusal.
    case("cnn_bfloat16", typed(Cnn(), torch.bfloat16), [T(1, 3, 16, 16, dtype="bfloat16")], opsets=(13, 17),
         script=True, expect="verify-skipped"),
    case("attention_block_bfloat16", typed(Block(), torch.bfloat16), [T(2, 6, 16, dtype="bfloat16")],
         opsets=(13, 17), script=True, expect="verify-skipped"),
    case("cnn_bfloat16_opset11_refused", typed(Cnn(), torch.bfloat16), [T(1, 3, 16, 16, dtype="bfloat16")],
         opsets=(11,), script=True, expect="error:opset-too-old"),
]
