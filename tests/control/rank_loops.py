"""Scripted while loops whose condition reads only ranks (gen_control.py's PATTERN_CASES)."""
import torch


class RankWhileUnsqueeze(torch.nn.Module):
    """Stable Diffusion's ResBlock: `while len(emb_out.shape) < len(h.shape): emb_out = emb_out[..., None]`.
    The count follows from ranks (known at export time) and the carried tensor changes rank each time,
    which no ONNX Loop can carry: unrolled (ONNX Runtime failed on the Loop: 'axis 3 is not in valid range')."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 6)

    def forward(self, h, emb):
        emb_out = self.proj(emb)
        while len(emb_out.shape) < len(h.shape):
            emb_out = emb_out[..., None]
        scale, shift = torch.chunk(emb_out, 2, dim=1)
        g = emb.sum(-1)
        while g.dim() < h.dim() and g.dim() < 8:
            g = g.unsqueeze(-1)
        return h * (1 + scale) + shift + g
