"""Scripted transformer fixtures (torch.jit.script, saved with torch.jit.save): PyTorch's
nn.TransformerEncoder/Decoder, nn.Transformer and nn.MultiheadAttention, whose scripted code holds
fast paths behind conditions fixed at export time (torch.is_grad_enabled(), self.training,
x.is_nested, `mask is None`, module flags) and asserts on shapes. Small (d_model 16, 2 layers), eval
mode, torch.manual_seed(0). usage: gen_transformers.py OUT_DIR
"""
import json
import os
import sys
from typing import Optional, Tuple

import numpy as np
import torch
from torch import nn

D = 16


class Encoder(nn.Module):
    def __init__(self, batch_first: bool, nested: bool = True, norm_first: bool = False, activation: str = "relu",
                 mask_check: bool = True):
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, 2, 32, dropout=0.1, activation=activation, batch_first=batch_first,
                                           norm_first=norm_first)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=nested, mask_check=mask_check)

    def forward(self, x, mask: Optional[torch.Tensor] = None):
        return self.enc(x, src_key_padding_mask=mask)


class EncoderNorm(nn.Module):
    """The encoder's final norm after the layers (the nested path pads before it)."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, 2, 32, dropout=0.1, activation="gelu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(D))

    def forward(self, x, mask: Optional[torch.Tensor] = None):
        return self.enc(x, src_key_padding_mask=mask)


class EncoderAttnMask(nn.Module):
    """An attention mask (float or bool, as given) with or without a key padding mask."""

    def __init__(self, batch_first: bool):
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, 2, 32, dropout=0.1, batch_first=batch_first)
        self.enc = nn.TransformerEncoder(layer, 2)

    def forward(self, x, attn_mask, padding: Optional[torch.Tensor] = None):
        return self.enc(x, mask=attn_mask, src_key_padding_mask=padding)


class EncoderCausal(nn.Module):
    """A causal float mask made in forward from the input's length."""

    def __init__(self, norm_first: bool):
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, 2, 32, dropout=0.1, batch_first=True, norm_first=norm_first)
        self.enc = nn.TransformerEncoder(layer, 2)

    def forward(self, x):
        n = x.size(1)
        causal = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        return self.enc(x, mask=causal)


class Decoder(nn.Module):
    """A causal tgt_mask made in forward from the target's length."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(D, 2, 32, dropout=0.1, batch_first=True)
        self.dec = nn.TransformerDecoder(layer, 2)

    def forward(self, tgt, memory):
        n = tgt.size(1)
        causal = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        return self.dec(tgt, memory, tgt_mask=causal)


class DecoderMasks(nn.Module):
    """Sequence-first, norm_first, gelu; a bool causal mask and both key padding masks."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(D, 2, 32, dropout=0.1, activation="gelu", norm_first=True)
        self.dec = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(D))

    def forward(self, tgt, memory, tgt_padding: Optional[torch.Tensor] = None,
                memory_padding: Optional[torch.Tensor] = None):
        n = tgt.size(0)
        causal = torch.ones(n, n, dtype=torch.bool).triu(1)
        return self.dec(tgt, memory, tgt_mask=causal, tgt_key_padding_mask=tgt_padding,
                        memory_key_padding_mask=memory_padding)


class Seq2Seq(nn.Module):
    def __init__(self, batch_first: bool = True):
        super().__init__()
        self.t = nn.Transformer(D, 2, 2, 2, 32, dropout=0.1, batch_first=batch_first)

    def forward(self, src, tgt, src_padding: Optional[torch.Tensor] = None):
        n = tgt.size(1) if self.t.batch_first else tgt.size(0)
        causal = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        return self.t(src, tgt, tgt_mask=causal, src_key_padding_mask=src_padding,
                      memory_key_padding_mask=src_padding)


class Attention(nn.Module):
    def __init__(self, batch_first: bool = True):
        super().__init__()
        self.m = nn.MultiheadAttention(D, 2, batch_first=batch_first)

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None,
                attn_mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        out, weights = self.m(x, x, x, key_padding_mask=key_padding_mask, need_weights=True, attn_mask=attn_mask)
        assert weights is not None
        return out, weights


class CrossAttention(nn.Module):
    """Batch-first attention whose query is not its key: the inputs are transposed by a list
    comprehension that appends to an empty list."""

    def __init__(self):
        super().__init__()
        self.m = nn.MultiheadAttention(D, 2, batch_first=True)

    def forward(self, x, memory, memory_padding: Optional[torch.Tensor] = None):
        return self.m(x, memory, memory, key_padding_mask=memory_padding, need_weights=False)[0]


class AttentionNoWeights(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.MultiheadAttention(D, 2, batch_first=True)

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None):
        out, _ = self.m(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)
        return out


class BertLike(nn.Module):
    """Embeddings and a batch-first encoder; forward(input_ids, attention_mask=None,
    token_type_ids=None, scale=1.0) as BERT-style models have it."""

    def __init__(self, nested: bool = True):
        super().__init__()
        self.tok = nn.Embedding(50, D)
        self.typ = nn.Embedding(2, D)
        self.pos = nn.Embedding(32, D)
        self.norm = nn.LayerNorm(D)
        layer = nn.TransformerEncoderLayer(D, 2, 32, dropout=0.1, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=nested)

    def forward(self, input_ids, attention_mask: Optional[torch.Tensor] = None,
                token_type_ids: Optional[torch.Tensor] = None, scale: float = 1.0):
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        positions = torch.arange(input_ids.size(1)).unsqueeze(0)
        h = self.norm(self.tok(input_ids) + self.typ(token_type_ids) + self.pos(positions)) * scale
        padding: Optional[torch.Tensor] = None
        if attention_mask is not None:
            padding = attention_mask == 0
        return self.enc(h, src_key_padding_mask=padding)


def T(*shape, dtype="float32", fill="randn", seed=0):
    return {"tensor": {"shape": list(shape), "dtype": dtype, "fill": fill, "seed": seed}}


# Key padding masks (True = padding; (batch, length) in both layouts) at the two example sizes
# (batch 2, length 5) and (batch 3, length 7): left-aligned, left-aligned with every row shorter
# than the length (the nested path returns the longest row's length), not left-aligned, all false.
MASKS = {
    "left": ([[0, 0, 0, 0, 0], [0, 0, 0, 1, 1]],
             [[0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0]]),
    "short": ([[0, 0, 0, 1, 1], [0, 0, 1, 1, 1]],
              [[0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1], [0, 1, 1, 1, 1, 1, 1]]),
    "gaps": ([[0, 0, 1, 0, 0], [1, 0, 0, 0, 0]],
             [[0, 0, 0, 0, 0, 0, 1], [0, 1, 0, 1, 0, 1, 0], [0, 0, 0, 0, 0, 0, 0]]),
    "none": ([[0] * 5] * 2, [[0] * 7] * 3),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def npy(name, array):
        path = os.path.join(out, name + ".npy")
        np.save(path, array)
        return {"tensor": {"fill": {"npy": path}}}

    def padding(kind, size):  # size 0: batch 2, length 5; size 1: batch 3, length 7
        return npy("padding_%s_%d" % (kind, size), np.array(MASKS[kind][size], dtype=bool))

    def attention(kind, size):  # BERT's attention_mask: 1 = a token, 0 = padding
        return npy("attention_%s_%d" % (kind, size), 1 - np.array(MASKS[kind][size], dtype=np.int64))

    def causal(n, float_mask):
        m = np.triu(np.ones((n, n), dtype=bool), 1)
        if float_mask:
            return npy("causal_float_%d" % n, np.where(m, -np.inf, 0).astype(np.float32))
        return npy("causal_bool_%d" % n, m)

    SIZES = [(2, 5), (3, 7)]

    def x(size, batch_first=True, seed=0, length=None):
        b, n = SIZES[size]
        n = length or n
        return T(b, n, D, seed=seed) if batch_first else T(n, b, D, seed=seed)

    bf_axes = {"0": "batch", "1": "seq"}
    sf_axes = {"0": "seq", "1": "batch"}
    mask_axes = {"0": "batch", "1": "seq"}
    out_nested = {"0": "batch", "1": "out_seq"}  # the nested path may return fewer positions
    tgt_bf = {"0": "batch", "1": "tgt_seq"}  # a target whose length is not the source's
    tgt_sf = {"0": "tgt_seq", "1": "batch"}

    def rows(name, make, inputs, outputs, axes, build, error=""):
        """build(size) -> (args, kwargs) at size 0 and 1."""
        a0, k0 = build(0)
        a1, k1 = build(1)
        return (name, make, a0, k0, error, inputs, outputs, axes, a1, k1)

    cases = [
        rows("encoder_batch_first", lambda: Encoder(True), ["x"], ["out"], {"x": bf_axes, "out": bf_axes},
             lambda s: ([x(s)], {})),
        rows("encoder_seq_first", lambda: Encoder(False), ["x"], ["out"], {"x": sf_axes, "out": sf_axes},
             lambda s: ([x(s, False)], {})),
        rows("encoder_seq_first_padding", lambda: Encoder(False), ["x", "mask"], ["out"],
             {"x": sf_axes, "mask": mask_axes, "out": sf_axes}, lambda s: ([x(s, False), padding("left", s)], {})),
        rows("encoder_batch_first_padding", lambda: Encoder(True, nested=False), ["x", "mask"], ["out"],
             {"x": bf_axes, "mask": mask_axes, "out": bf_axes}, lambda s: ([x(s), padding("left", s)], {})),
        rows("encoder_norm_first_gelu_padding", lambda: Encoder(True, norm_first=True, activation="gelu"),
             ["x", "mask"], ["out"], {"x": bf_axes, "mask": mask_axes, "out": bf_axes},
             lambda s: ([x(s), padding("left", s)], {})),
        rows("encoder_norm", lambda: EncoderNorm(), ["x", "mask"], ["out"],
             {"x": bf_axes, "mask": mask_axes, "out": out_nested}, lambda s: ([x(s), padding("short", s)], {})),
        rows("encoder_attn_mask_float", lambda: EncoderAttnMask(True), ["x", "attn_mask"], ["out"],
             {"x": bf_axes, "attn_mask": {"0": "seq", "1": "seq"}, "out": bf_axes},
             lambda s: ([x(s), causal(SIZES[s][1], True)], {})),
        rows("encoder_attn_mask_bool_padding", lambda: EncoderAttnMask(False), ["x", "attn_mask", "padding"],
             ["out"], {"x": sf_axes, "attn_mask": {"0": "seq", "1": "seq"}, "padding": mask_axes, "out": sf_axes},
             lambda s: ([x(s, False), causal(SIZES[s][1], False), padding("gaps", s)], {})),
        rows("encoder_causal_norm_first", lambda: EncoderCausal(True), ["x"], ["out"], {"x": bf_axes, "out": bf_axes},
             lambda s: ([x(s)], {})),
        rows("decoder_causal", lambda: Decoder(), ["tgt", "memory"], ["out"],
             {"tgt": tgt_bf, "memory": bf_axes, "out": tgt_bf},
             lambda s: ([x(s, length=4 + s), x(s, seed=1, length=6 + s)], {})),
        rows("decoder_masks_seq_first", lambda: DecoderMasks(), ["tgt", "memory", "tgt_padding", "memory_padding"],
             ["out"], {"tgt": sf_axes, "memory": sf_axes, "tgt_padding": mask_axes, "memory_padding": mask_axes,
                       "out": sf_axes},
             lambda s: ([x(s, False), x(s, False, seed=1), padding("left", s), padding("gaps", s)], {})),
        rows("transformer", lambda: Seq2Seq(), ["src", "tgt"], ["out"], {"src": bf_axes, "tgt": tgt_bf, "out": tgt_bf},
             lambda s: ([x(s, length=6 + s), x(s, seed=1, length=4 + s)], {})),
        rows("transformer_seq_first_padding", lambda: Seq2Seq(False), ["src", "tgt", "src_padding"], ["out"],
             {"src": sf_axes, "tgt": tgt_sf, "src_padding": mask_axes, "out": tgt_sf},
             lambda s: ([x(s, False), x(s, False, seed=1, length=3 + s), padding("left", s)], {})),
        rows("attention_weights", lambda: Attention(), ["x", "key_padding_mask"], ["out", "weights"],
             {"x": bf_axes, "key_padding_mask": mask_axes, "out": bf_axes,
              "weights": {"0": "batch", "1": "seq", "2": "seq"}},
             lambda s: ([x(s), padding("gaps", s)], {})),
        rows("attention_seq_first_attn_mask", lambda: Attention(False), ["x", "attn_mask"], ["out", "weights"],
             {"x": sf_axes, "attn_mask": {"0": "seq", "1": "seq"}, "out": sf_axes,
              "weights": {"0": "batch", "1": "seq", "2": "seq"}},
             lambda s: ([x(s, False)], {"attn_mask": causal(SIZES[s][1], True)})),
        rows("attention_bool_attn_mask_padding", lambda: Attention(), ["x", "key_padding_mask", "attn_mask"],
             ["out", "weights"], {"x": bf_axes, "key_padding_mask": mask_axes, "attn_mask": {"0": "seq", "1": "seq"},
                                  "out": bf_axes, "weights": {"0": "batch", "1": "seq", "2": "seq"}},
             lambda s: ([x(s), padding("left", s), causal(SIZES[s][1], False)], {})),
        rows("attention_cross", lambda: CrossAttention(), ["x", "memory", "memory_padding"], ["out"],
             {"x": tgt_bf, "memory": bf_axes, "memory_padding": mask_axes, "out": tgt_bf},
             lambda s: ([x(s, length=3 + s), x(s, seed=1), padding("gaps", s)], {})),
        rows("attention_no_weights", lambda: AttentionNoWeights(), ["x", "key_padding_mask"], ["out"],
             {"x": bf_axes, "key_padding_mask": mask_axes, "out": bf_axes}, lambda s: ([x(s), padding("left", s)], {})),
        rows("attention_weights_no_mask", lambda: Attention(), ["x"], ["out", "weights"],
             {"x": bf_axes, "out": bf_axes, "weights": {"0": "batch", "1": "seq", "2": "seq"}},
             lambda s: ([x(s)], {})),
    ]
    # The BERT-like model: named arguments given or not (missing ones take their default, given
    # tensors become inputs, scale is baked) and the default encoder's nested path on each kind of
    # mask (the left-aligned test decides at run time: the example mask and the second one differ).
    ids_axes = {"0": "batch", "1": "seq"}

    def ids(s):
        b, n = SIZES[s]
        return T(b, n, dtype="int64", fill="arange")

    def types(s):
        b, n = SIZES[s]
        return npy("types_%d" % s, (np.arange(b * n).reshape(b, n) % 2).astype(np.int64))

    cases += [
        rows("bert_ids", lambda: BertLike(), ["input_ids"], ["out"], {"input_ids": ids_axes, "out": bf_axes},
             lambda s: ([ids(s)], {})),
        rows("bert_ids_scale", lambda: BertLike(), ["input_ids"], ["out"], {"input_ids": ids_axes, "out": bf_axes},
             lambda s: ([ids(s)], {"scale": 0.5})),
        rows("bert_ids_types", lambda: BertLike(), ["input_ids", "token_type_ids"], ["out"],
             {"input_ids": ids_axes, "token_type_ids": ids_axes, "out": bf_axes},
             lambda s: ([ids(s)], {"token_type_ids": types(s)})),
        rows("bert_ids_mask", lambda: BertLike(nested=False), ["input_ids", "attention_mask"], ["out"],
             {"input_ids": ids_axes, "attention_mask": ids_axes, "out": bf_axes},
             lambda s: ([ids(s)], {"attention_mask": attention("left", s)})),
        rows("bert_all_named", lambda: BertLike(), ["input_ids", "attention_mask", "token_type_ids"], ["out"],
             {"input_ids": ids_axes, "attention_mask": ids_axes, "token_type_ids": ids_axes, "out": out_nested},
             lambda s: ([ids(s)], {"attention_mask": attention("left", s), "token_type_ids": types(s), "scale": 0.5})),
    ]
    for kind, other in (("left", "gaps"), ("short", "left"), ("gaps", "short"), ("none", "gaps")):
        cases.append(rows("bert_ids_mask_nested_" + kind, lambda: BertLike(), ["input_ids", "attention_mask"], ["out"],
                          {"input_ids": ids_axes, "attention_mask": ids_axes, "out": out_nested},
                          lambda s, kind=kind, other=other: ([ids(s)], {"attention_mask": attention(kind if s == 0 else other, s)})))
    cases.append(rows("encoder_nested_short", lambda: Encoder(True), ["x", "mask"], ["out"],
                      {"x": bf_axes, "mask": mask_axes, "out": out_nested},
                      lambda s: ([x(s), padding("short" if s == 0 else "none", s)], {})))

    # mask_check=False: the encoder packs the first sum(valid) tokens of every row whatever the mask,
    # without a test; refused, naming the value, the branch and what to do.
    cases.append(rows("encoder_nested_mask_check_off", lambda: Encoder(True, mask_check=False), ["x", "mask"], ["out"],
                      {"x": bf_axes, "mask": mask_axes, "out": out_nested},
                      lambda s: ([x(s), padding("gaps", s)], {}), error="nested-tensor"))

    rows_out = []
    for name, make, args, kwargs, error, inputs, outputs, axes, args2, kwargs2 in cases:
        torch.manual_seed(0)
        module = make().eval()
        torch.jit.script(module).save(os.path.join(out, name + ".pt"))
        rows_out.append({"name": name, "model": name + ".pt", "args": args, "kwargs": kwargs, "error": error,
                         "input_names": inputs, "output_names": outputs, "dynamic_axes": axes,
                         "args2": args2, "kwargs2": kwargs2})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(rows_out, f, indent=1)


if __name__ == "__main__":
    main()
