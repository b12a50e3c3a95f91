"""PyTorch's fused attention fast paths (aten::_native_multi_head_attention,
aten::_transformer_encoder_layer_fwd) and the composite nn.MultiheadAttention path.

PyTorch takes the fast paths in eval mode when no autograd is needed; these modules freeze their
parameters (requires_grad False) so that tracing records the fused ops, as it would under
torch.no_grad()."""
import numpy as np
import torch
import torch.nn as nn

from optest import Npy, T, case

E, H, B, L = 32, 4, 2, 6

# Key padding masks (True = padding) with at least one real key per row.
KPM = np.array([[False] * L, [False] * (L - 2) + [True] * 2])
# A float key padding mask: the fused path takes it as bool (non-zero = padding), not additive.
KPM_FLOAT = np.where(KPM, -1e4, 0.0).astype(np.float32)
KPM_FLOAT[0, 1] = 0.5
CAUSAL = np.triu(np.ones((L, L), dtype=bool), k=1)


def frozen(m):
    for p in m.parameters():
        p.requires_grad_(False)
    return m


class SelfAttn(nn.Module):
    def __init__(self, fused=True, **call):
        super().__init__()
        self.attn = nn.MultiheadAttention(E, H, batch_first=True)
        if fused:
            frozen(self)
        self.call = call

    def forward(self, x, mask=None):
        kw = dict(self.call)
        if mask is not None:
            kw[kw.pop("mask_arg", "key_padding_mask")] = mask
        out, w = self.attn(x, x, x, **kw)
        return (out, w) if w is not None else out


class NativeOp(nn.Module):
    """Calls aten::_native_multi_head_attention directly, with a (B, heads, L, S) mask."""

    def __init__(self):
        super().__init__()
        self.attn = frozen(nn.MultiheadAttention(E, H, batch_first=True))

    def forward(self, x, mask):
        a = self.attn
        return torch._native_multi_head_attention(x, x, x, E, H, a.in_proj_weight, a.in_proj_bias,
                                                  a.out_proj.weight, a.out_proj.bias, mask, True, False, 1)


class CrossAttn(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.attn = nn.MultiheadAttention(E, H, **kw)

    def forward(self, q, kv, mask=None):
        return self.attn(q, kv, kv, attn_mask=mask)[0]


class ScriptedNoWeights(nn.Module):
    """Scripted MHA with need_weights=False: its (out, None) tuple is unpacked and the None dropped."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(E, H, batch_first=True)

    def forward(self, x, mask):
        out, _ = self.attn(x, x, x, attn_mask=mask, need_weights=False)
        return out


class Layer(nn.Module):
    def __init__(self, fused=True, **kw):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(E, H, 64, batch_first=True, **kw)
        if fused:
            frozen(self)

    def forward(self, x, mask=None):
        return self.layer(x, src_key_padding_mask=mask)


CASES = [
    # aten::_native_multi_head_attention
    case("mha_fused", SelfAttn(), [T(B, L, E)], dynamic={0: [0, 1]}),
    case("mha_fused_per_head_weights", SelfAttn(average_attn_weights=False), [T(B, L, E)], dynamic={0: [0, 1]}),
    case("mha_fused_no_weights", SelfAttn(need_weights=False), [T(B, L, E)], dynamic={0: [0, 1]}),
    case("mha_fused_kpm_bool", SelfAttn(), [T(B, L, E), Npy(KPM)]),
    case("mha_fused_kpm_float", SelfAttn(), [T(B, L, E), Npy(KPM_FLOAT)]),
    case("mha_native_4d_mask", NativeOp(), [T(B, L, E), Npy(np.broadcast_to(CAUSAL, (B, H, L, L)).copy())]),
    # aten::_transformer_encoder_layer_fwd
    case("encoder_layer_fused", Layer(), [T(B, L, E)], dynamic={0: [0, 1]}),
    case("encoder_layer_fused_gelu_norm_first", Layer(activation="gelu", norm_first=True), [T(B, L, E)],
         dynamic={0: [0, 1]}),
    case("encoder_layer_fused_kpm", Layer(), [T(B, L, E), Npy(KPM)]),
    case("encoder_layer_fused_kpm_norm_first", Layer(norm_first=True), [T(B, L, E), Npy(KPM)]),
    # The composite path (autograd on): matmul/softmax/baddbmm/masked_fill ...
    case("mha_composite_kpm", SelfAttn(fused=False), [T(B, L, E), Npy(KPM)]),
    case("mha_composite_attn_mask_bool", SelfAttn(fused=False, mask_arg="attn_mask"), [T(B, L, E), Npy(CAUSAL)]),
    case("mha_composite_attn_mask_float",
         SelfAttn(fused=False, mask_arg="attn_mask"), [T(B, L, E), Npy(np.where(CAUSAL, -1e4, 0.0).astype(np.float32))]),
    case("mha_scripted_no_weights", ScriptedNoWeights(), [T(B, L, E), Npy(CAUSAL)], script=True, dynamic={0: [0]}),
    case("mha_cross_seq_first", CrossAttn(), [T(L, B, E), T(L + 2, B, E)], dynamic={0: [0, 1], 1: [0, 1]}),
]
