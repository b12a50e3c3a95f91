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
    def __init__(self, batch_first: bool, nested: bool = True):
        super().__init__()
        layer = nn.TransformerEncoderLayer(D, 2, 32, dropout=0.1, batch_first=batch_first)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=nested)

    def forward(self, x, mask: Optional[torch.Tensor] = None):
        return self.enc(x, src_key_padding_mask=mask)


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


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Transformer(D, 2, 2, 2, 32, dropout=0.1, batch_first=True)

    def forward(self, src, tgt):
        return self.t(src, tgt)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.MultiheadAttention(D, 2, batch_first=True)

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        out, weights = self.m(x, x, x, key_padding_mask=key_padding_mask, need_weights=True)
        assert weights is not None
        return out, weights


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


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def npy(name, array):
        path = os.path.join(out, name + ".npy")
        np.save(path, array)
        return {"tensor": {"fill": {"npy": path}}}

    # Trailing padding (True = padding; key_padding_mask is (batch, length) in both layouts) of lengths
    # 5 and 3, and the attention mask it comes from.
    padding = npy("padding_2x5", np.array([[0, 0, 0, 0, 0], [0, 0, 0, 1, 1]], dtype=bool))
    attention = npy("attention_2x5", np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=np.int64))
    ids = T(2, 5, dtype="int64", fill="arange")

    cases = [
        # name, module constructor, args, kwargs, the error code the export must fail with (or "")
        ("encoder_batch_first", lambda: Encoder(True), [T(2, 5, D)], {}, ""),
        ("encoder_seq_first", lambda: Encoder(False), [T(5, 2, D)], {}, ""),
        ("encoder_seq_first_padding", lambda: Encoder(False), [T(5, 2, D), padding], {}, ""),
        ("encoder_batch_first_padding", lambda: Encoder(True, nested=False), [T(2, 5, D), padding], {}, ""),
        ("decoder_causal", lambda: Decoder(), [T(2, 4, D), T(2, 6, D, seed=1)], {}, ""),
        ("transformer", lambda: Seq2Seq(), [T(2, 6, D), T(2, 4, D, seed=1)], {}, ""),
        ("attention_weights", lambda: Attention(), [T(2, 5, D), padding], {}, ""),
        ("attention_no_weights", lambda: AttentionNoWeights(), [T(2, 5, D), padding], {}, ""),
        ("attention_weights_no_mask", lambda: Attention(), [T(2, 5, D)], {}, ""),
        ("bert_ids", lambda: BertLike(), [ids], {}, ""),
        ("bert_ids_mask", lambda: BertLike(nested=False), [ids], {"attention_mask": attention}, ""),
        # The default encoder's nested-tensor path on a left-aligned mask: no ONNX form.
        ("bert_ids_mask_nested", lambda: BertLike(), [ids], {"attention_mask": attention}, "nested-tensor"),
    ]
    rows = []
    for name, make, args, kwargs, error in cases:
        torch.manual_seed(0)
        module = make().eval()
        torch.jit.script(module).save(os.path.join(out, name + ".pt"))
        rows.append({"name": name, "model": name + ".pt", "args": args, "kwargs": kwargs, "error": error})
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
