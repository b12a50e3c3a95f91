"""Scripted loops over lists whose elements are tuples (gen_control.py's CASES)."""
import torch


class ShiftedWindowMask(torch.nn.Module):
    """SwinIR's calculate_mask in forward: loops over lists of (start, end) tuples computed from the
    input's size write region numbers into a mask (no ONNX value holds a list of tuples: unrolled)."""

    def forward(self, x):
        H, W = x.shape[-2], x.shape[-1]
        ws, s = 4, 2
        img_mask = torch.zeros((1, H, W))
        cnt = 0
        for h in [(0, H - ws), (H - ws, H - s), (H - s, H)]:
            for w in [(0, W - ws), (W - ws, W - s), (W - s, W)]:
                img_mask[:, h[0]:h[1], w[0]:w[1]] = cnt
                cnt += 1
        return x + img_mask
