"""In-place writes into views as real models write them (tools/probe_models.py, round 6): YOLO head
decode, anchor generators, Swin's mask and relative position index, HF causal masks, KV caches,
index writes, RNN-style loops, padding loops, and the odd view chains (t_, unsqueeze, unbind, chunk)."""
from typing import List, Tuple

import numpy
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec


class YoloDetectDecode(nn.Module):
    """YOLOv5's Detect.forward (inference): sigmoid, then xy and wh decoded in place in y's slices."""

    def __init__(self, nc=3, ch=8):
        super().__init__()
        self.na, self.no = 3, nc + 5
        self.m = nn.Conv2d(ch, self.na * self.no, 1)
        self.register_buffer("anchors", torch.tensor([[10., 13.], [16., 30.], [33., 23.]]) / 8.0)
        self.stride = 8.0

    def _make_grid(self, nx: int, ny: int):
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(1, self.na, ny, nx, 2).float()
        anchor_grid = (self.anchors * self.stride).view(1, self.na, 1, 1, 2).expand(1, self.na, ny, nx, 2)
        return grid, anchor_grid

    def forward(self, x):
        x = self.m(x)
        bs, _, ny, nx = x.shape
        x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        grid, anchor_grid = self._make_grid(nx, ny)
        y = x.sigmoid()
        y[..., 0:2] = (y[..., 0:2] * 2 - 0.5 + grid) * self.stride
        y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * anchor_grid
        return y.view(bs, -1, self.no)


class AnchorGrid(nn.Module):
    """Faster R-CNN style anchors: base anchors repeated per cell, x and y coordinates shifted in place
    through stepped slices (anchors[..., 0::2] += shift_x)."""

    def __init__(self, stride=16):
        super().__init__()
        self.stride = stride
        self.register_buffer("base", torch.tensor([[-8., -8., 8., 8.], [-16., -8., 16., 8.], [-8., -16., 8., 16.]]))

    def forward(self, feat):
        h, w = feat.shape[-2], feat.shape[-1]
        sx = torch.arange(w, dtype=torch.float32) * self.stride
        sy = torch.arange(h, dtype=torch.float32) * self.stride
        yy, xx = torch.meshgrid(sy, sx, indexing="ij")
        anchors = self.base[None].repeat(h * w, 1, 1)
        anchors[..., 0::2] += xx.reshape(-1, 1, 1)
        anchors[..., 1::2] += yy.reshape(-1, 1, 1)
        anchors[..., 0::2].clamp_(min=0.0, max=float(w * self.stride))
        return anchors.view(-1, 4) + feat.mean()


class SwinAttnMask(nn.Module):
    """Swin's shifted-window attention mask computed in forward (the input's size), loops over slices."""

    def __init__(self, ws=4, shift=2):
        super().__init__()
        self.ws, self.shift = ws, shift

    def forward(self, x):
        H, W = x.shape[1], x.shape[2]
        img_mask = torch.zeros((1, H, W, 1))
        h_slices = ((0, -self.ws), (-self.ws, -self.shift), (-self.shift, H))
        w_slices = ((0, -self.ws), (-self.ws, -self.shift), (-self.shift, W))
        cnt = 0
        for h in h_slices:
            for w in w_slices:
                img_mask[:, h[0]:h[1], w[0]:w[1], :] = cnt
                cnt += 1
        ws = self.ws
        mw = img_mask.view(1, H // ws, ws, W // ws, ws, 1).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws)
        attn_mask = mw.unsqueeze(1) - mw.unsqueeze(2)
        attn_mask = attn_mask.masked_fill(attn_mask != 0, float(-100.0)).masked_fill(attn_mask == 0, float(0.0))
        return x.mean(-1).reshape(-1)[:1] + attn_mask


class RelPosIndex(nn.Module):
    """Swin's relative_position_index, computed in forward for the window the input has."""

    def __init__(self, heads=2, max_ws=8):
        super().__init__()
        self.table = nn.Parameter(torch.randn((2 * max_ws - 1) ** 2, heads))

    def forward(self, x):
        ws = x.shape[-1]
        coords_h = torch.arange(ws)
        coords_w = torch.arange(ws)
        coords = torch.stack(torch.meshgrid([coords_h, coords_w], indexing="ij"))
        coords_flatten = torch.flatten(coords, 1)
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()
        relative_coords[:, :, 0] += ws - 1
        relative_coords[:, :, 1] += ws - 1
        relative_coords[:, :, 0] *= 2 * ws - 1
        index = relative_coords.sum(-1)
        bias = self.table[index.view(-1)].view(ws * ws, ws * ws, -1).permute(2, 0, 1)
        return bias + x.flatten(2).mean()


class HFCausalMask(nn.Module):
    """Llama's _update_causal_mask: full min, triu, expand + clone, then the padding part of a slice
    rewritten with masked_fill and assigned back; and OPT's mask_cond masked_fill_ on the whole mask."""

    def forward(self, inputs_embeds, attention_mask):
        bsz, seq = inputs_embeds.shape[0], inputs_embeds.shape[1]
        min_dtype = torch.finfo(inputs_embeds.dtype).min
        causal_mask = torch.full((seq, seq), fill_value=min_dtype, dtype=inputs_embeds.dtype)
        mask_cond = torch.arange(causal_mask.size(-1))
        causal_mask.masked_fill_(mask_cond < (mask_cond + 1).view(causal_mask.size(-1), 1), 0)
        causal_mask = causal_mask[None, None, :, :].expand(bsz, 1, -1, -1).clone()
        mask_length = attention_mask.shape[-1]
        padding_mask = causal_mask[:, :, :, :mask_length] + attention_mask[:, None, None, :].to(causal_mask.dtype)
        padding_mask = padding_mask == 0
        causal_mask[:, :, :, :mask_length] = causal_mask[:, :, :, :mask_length].masked_fill(padding_mask, min_dtype)
        return causal_mask


class HFCausalMaskInplace(nn.Module):
    """The same padding step written with masked_fill_ on the slice (older HF code paths)."""

    def forward(self, inputs_embeds, attention_mask):
        bsz, seq = inputs_embeds.shape[0], inputs_embeds.shape[1]
        min_dtype = -1e4
        causal_mask = torch.triu(torch.full((seq, seq), min_dtype), diagonal=1)
        causal_mask = causal_mask[None, None, :, :].expand(bsz, 1, -1, -1).clone()
        mask_length = attention_mask.shape[-1]
        padding_mask = attention_mask[:, None, None, :] == 0
        causal_mask[:, :, :, :mask_length].masked_fill_(padding_mask, min_dtype)
        return causal_mask + inputs_embeds.mean()


class KVCacheIndexCopy(nn.Module):
    """HF StaticCache.update: k_out.index_copy_(2, cache_position, key_states), then attention."""

    def forward(self, k_cache, v_cache, k, v, cache_position):
        k_cache.index_copy_(2, cache_position, k)
        v_cache[:, :, cache_position] = v
        att = (k[:, :, -1:] @ k_cache.transpose(-1, -2)).softmax(-1)
        return att @ v_cache, k_cache, v_cache


class KVCacheSliceInt(nn.Module):
    """A KV cache written at positions pos:pos+n, pos read from an input tensor (scripted: int(pos))."""

    def forward(self, k_cache, k, pos):
        p = int(pos.item())
        n = k.size(2)
        k_cache[:, :, p:p + n] = k
        return k_cache[:, :, :p + n].sum(2)


class KVCacheSliceShape(nn.Module):
    """A KV cache whose write position comes from a past length (a size): k_cache[:, :, past:past+n] = k."""

    def forward(self, past, k):
        b, h, past_len, d = past.shape
        n = k.size(2)
        cache = torch.zeros(b, h, past_len + n, d)
        cache[:, :, :past_len] = past
        cache[:, :, past_len:past_len + n] = k
        return cache


class IndexWrites(nn.Module):
    """x[mask] = 0, x[idx] += v (index_put_ without accumulate: duplicates take one value),
    index_put_ with accumulate and duplicates, on a clone and on a slice."""

    def forward(self, x, idx, v):
        y = x.clone()
        y[y < 0] = 0
        y[:, 1:][idx] += v[:, 1:]
        z = x.clone()
        z.index_put_((idx,), v, accumulate=True)
        z[:, 0].index_put_((idx,), v[:, 0] * 2, accumulate=True)
        return y, z


class RNNLoopWrites(nn.Module):
    """out[:, i] = cell(x[:, i], h) over time steps (scripted loop)."""

    def __init__(self, d=6, hid=5):
        super().__init__()
        self.cell = nn.GRUCell(d, hid)
        self.hid = hid

    def forward(self, x):
        b, t = x.size(0), x.size(1)
        out = torch.zeros(b, t, self.hid)
        h = torch.zeros(b, self.hid)
        for i in range(t):
            h = self.cell(x[:, i], h)
            out[:, i] = h
        return out


class PadSequences(nn.Module):
    """pad_sequence by hand: a zeros buffer filled row by row from a list of sequences."""

    def forward(self, x, lengths):
        seqs: List[torch.Tensor] = []
        for i in range(x.size(0)):
            seqs.append(x[i, :int(lengths[i])] * 2.0)
        max_len = 0
        for s in seqs:
            max_len = max(max_len, s.size(0))
        buf = torch.zeros(len(seqs), max_len, x.size(2))
        for b, s in enumerate(seqs):
            buf[b, :s.size(0)] = s
        return buf


class FlatViewIndex(nn.Module):
    """x.view(-1)[idx] = v on a clone, and x.reshape(-1)[::3] *= 2 (stepped flat write)."""

    def forward(self, x, idx):
        y = x.clone()
        y.view(-1)[idx] = -1.0
        y.reshape(-1)[::3] *= 2.0
        return y


class TransposeWrites(nn.Module):
    """x.t_() then a write, and y.transpose(0, 1)[0] = v read through y."""

    def forward(self, x):
        y = x.clone()
        y.t_()
        y[0] = 5.0
        z = x.clone()
        z.transpose(0, 1)[0] = 7.0
        return y, z


class UnsqueezeWrites(nn.Module):
    """x.unsqueeze(0)[0, 1] = v and x[:, None][..., 0] = v."""

    def forward(self, x):
        y = x.clone()
        y.unsqueeze(0)[0, 1] = 3.0
        y[:, None][..., 0] = y[:, None][..., 1] + 1.0
        return y


class DiagonalFill(nn.Module):
    """torch.diagonal(x).fill_(v) / fill_diagonal_ (covariance regularisation): refused or computed."""

    def forward(self, x):
        c = x @ x.t()
        c.fill_diagonal_(1.0)
        return c


class DiagonalAdd(nn.Module):
    """cov.diagonal().add_(eps): the Tikhonov step of a whitening layer."""

    def forward(self, x):
        c = x @ x.t()
        c.diagonal().add_(1e-3)
        return c


class SteppedMul(nn.Module):
    """x[..., ::2].mul_(s) and x[:, 1::2].sigmoid_() / relu_ / clamp_ on slices."""

    def forward(self, x):
        y = x.clone()
        y[..., ::2].mul_(0.5)
        y[:, 1::2].sigmoid_()
        y[:, 0].relu_()
        y[1:, -2:].clamp_(-0.2, 0.2)
        return y


class NarrowCopy(nn.Module):
    """x.narrow(d, start, len).copy_(src) with start from the input's size."""

    def forward(self, x, src):
        y = x.clone()
        y.narrow(1, x.size(1) - src.size(1), src.size(1)).copy_(src)
        y.narrow(0, 0, 1).zero_()
        return y


class NestedIfInLoop(nn.Module):
    """Writes in nested ifs inside a loop over rows (scripted)."""

    def forward(self, x):
        y = x.clone()
        for i in range(x.size(0)):
            if bool(x[i].sum() > 0):
                if i % 2 == 0:
                    y[i] = y[i] * 2.0
                else:
                    y[i, :2] += 1.0
            else:
                y[i].zero_()
        return y


@torch.jit.script
def make_buffer(x: torch.Tensor) -> torch.Tensor:
    return torch.zeros(x.size(0), x.size(1) + 2)


class HelperReturnWrite(nn.Module):
    """Writes into a tensor returned by a scripted helper function."""

    def forward(self, x):
        buf = make_buffer(x)
        buf[:, 1:-1] = x
        buf[:, 0] = x[:, 0]
        return buf


class WriteReadOtherView(nn.Module):
    """A write through one view, the base then read through a different view."""

    def forward(self, x):
        y = x.clone()
        rows = y[1:]
        cols = y[:, 1:]
        rows[:, 0] = -1.0
        cols.mul_(2.0)
        return rows + 0.0, y.t()[0] + 0.0


class InputWrite(nn.Module):
    """forward writes into its own input (normalise in place, a slice of the input zeroed)."""

    def forward(self, x):
        x[:, 0] = 0.0
        x.sub_(0.5).div_(0.25)
        return x * 2.0


class ScatterOnViews(nn.Module):
    """scatter_ / index_fill_ / masked_scatter_ on slices."""

    def forward(self, x, idx, m):
        y = x.clone()
        y[:, :3].scatter_(1, idx, 1.0)
        y[1:].index_fill_(1, torch.tensor([0]), -2.0)
        y[:2].masked_scatter_(m, x[:2] * 10.0)
        return y


class UnbindWrites(nn.Module):
    """Results of unbind / chunk written in place, the base read afterwards (YOLO-style split decode)."""

    def forward(self, x):
        y = x.clone()
        a, b = y.unbind(1)[:2]
        a.mul_(2.0)
        b.add_(1.0)
        z = x.clone()
        xy, wh = z.chunk(2, 1)
        xy.sigmoid_()
        wh.exp_()
        return y, z


class SplitWrites(nn.Module):
    """torch.split results written in place, the base read afterwards."""

    def forward(self, x):
        y = x.clone()
        p, q, r = y.split([1, 2, 1], dim=1)
        p.zero_()
        r.fill_(3.0)
        return y


B = numpy.array([0, 2, 2], dtype=numpy.int64)
IMG = ["x:0=b,2=h,3=w"]

VIEWS6 = [
    ("w6_yolov5_detect_decode", lambda: Spec(YoloDetectDecode(), ["1x8x4x6"], ["x"], IMG)),
    ("w6_anchor_grid_stepped", lambda: Spec(AnchorGrid(), ["1x4x3x5"], ["feat"], ["feat:2=h,3=w"])),
    ("w6_swin_attn_mask", lambda: Spec(SwinAttnMask(), ["1x8x12x4"], ["x"], ["x:1=h,2=w"])),
    ("w6_swin_rel_pos_index", lambda: Spec(RelPosIndex(), ["1x2x4x4"], ["x"], ["x:0=b"])),
    ("w6_hf_causal_mask", lambda: Spec(HFCausalMask(), ["2x5x4", numpy.array([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]])],
                                        ["inputs_embeds", "attention_mask"],
                                        ["inputs_embeds:0=b,1=s", "attention_mask:0=b,1=s"], modes=("trace",))),
    ("w6_hf_causal_mask_inplace", lambda: Spec(HFCausalMaskInplace(),
                                                ["2x5x4", numpy.array([[1, 1, 1, 1, 1], [0, 0, 1, 1, 1]])],
                                                ["inputs_embeds", "attention_mask"],
                                                ["inputs_embeds:0=b,1=s", "attention_mask:0=b,1=s"])),
    ("w6_kv_cache_index_copy", lambda: Spec(KVCacheIndexCopy(), ["1x2x8x4", "1x2x8x4", "1x2x2x4", "1x2x2x4",
                                                                  numpy.array([3, 4], dtype=numpy.int64)],
                                             ["k_cache", "v_cache", "k", "v", "cache_position"],
                                             ["k:2=n", "v:2=n", "cache_position:0=n"])),
    ("w6_kv_cache_slice_int", lambda: Spec(KVCacheSliceInt(), ["1x2x8x4", "1x2x2x4",
                                                               numpy.array(3, dtype=numpy.int64)],
                                            ["k_cache", "k", "pos"], ["k:2=n"], modes=("script",))),
    ("w6_kv_cache_slice_shape", lambda: Spec(KVCacheSliceShape(), ["1x2x5x4", "1x2x1x4"], ["past", "k"],
                                              ["past:2=p", "k:2=n"])),
    ("w6_index_writes", lambda: Spec(IndexWrites(), ["5x4", B, "3x4"], ["x", "idx", "v"], ["x:0=n"])),
    ("w6_rnn_loop_out_write", lambda: Spec(RNNLoopWrites(), ["2x5x6"], ["x"], ["x:0=b,1=t"], modes=("script",))),
    ("w6_pad_sequences_loop", lambda: Spec(PadSequences(), ["3x6x2", numpy.array([4, 6, 2], dtype=numpy.int64)],
                                           ["x", "lengths"], ["x:0=b", "lengths:0=b"], modes=("script",))),
    ("w6_flat_view_index", lambda: Spec(FlatViewIndex(), ["3x4", B], ["x", "idx"], ["x:0=n"])),
    ("w6_transpose_writes", lambda: Spec(TransposeWrites(), ["3x4"], ["x"], ["x:0=n"])),
    ("w6_unsqueeze_writes", lambda: Spec(UnsqueezeWrites(), ["3x4"], ["x"], ["x:1=n"])),
    ("w6_fill_diagonal", lambda: Spec(DiagonalFill(), ["4x3"], ["x"], ["x:0=n"])),
    ("w6_diagonal_add", lambda: Spec(DiagonalAdd(), ["4x3"], ["x"], ["x:0=n"])),
    ("w6_stepped_inplace_acts", lambda: Spec(SteppedMul(), ["4x6"], ["x"], ["x:0=n,1=m"])),
    ("w6_narrow_copy", lambda: Spec(NarrowCopy(), ["3x6", "3x2"], ["x", "src"], ["x:0=n,1=m", "src:0=n"])),
    ("w6_nested_if_in_loop", lambda: Spec(NestedIfInLoop(), ["5x4"], ["x"], ["x:0=n"], modes=("script",))),
    ("w6_helper_return_write", lambda: Spec(HelperReturnWrite(), ["3x4"], ["x"], ["x:0=n,1=m"])),
    ("w6_write_read_other_view", lambda: Spec(WriteReadOtherView(), ["3x4"], ["x"], ["x:0=n"])),
    ("w6_input_write", lambda: Spec(InputWrite(), ["3x4"], ["x"], ["x:0=n"])),
    ("w6_scatter_on_views", lambda: Spec(ScatterOnViews(), ["3x5", numpy.array([[0], [2], [1]]),
                                                             numpy.array([[True, False] * 2 + [True]] * 2)],
                                          ["x", "idx", "m"], [])),
    ("w6_unbind_chunk_writes", lambda: Spec(UnbindWrites(), ["3x4"], ["x"], ["x:0=n"])),
    ("w6_split_writes", lambda: Spec(SplitWrites(), ["5x4"], ["x"], ["x:0=n"])),
]
