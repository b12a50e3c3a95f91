"""The probe sweep's models (tools/probe_models.py): NLP and detection heads."""
import math
from typing import List, Optional, Tuple

import numpy
import torch
import torch.nn.functional as F
from torch import nn


class Spec:
    """model; args: CLI tensor specs; names: input names; dynamic: --dynamic-axes values."""

    def __init__(self, model, args, names, dynamic=(), modes=("trace", "script")):
        self.model = model.eval()
        self.args = list(args)
        self.names = list(names)
        self.dynamic = list(dynamic)
        self.modes = modes
        self.inputs = [example(a) for a in args]


def cli_tensor_args(args, pt):
    """--arg values for the CLI: tensor specs as they are, numpy arrays saved beside the model as .npy."""
    out = []
    for i, a in enumerate(args):
        if not isinstance(a, str):
            npy = pt[:-3] + f".arg{i}.npy"
            numpy.save(npy, a)
            a = "npy=" + npy
        out += ["--arg", a]
    return out


def example(spec):
    if not isinstance(spec, str):  # a numpy array: exact values (indices), passed as npy
        return torch.from_numpy(spec.copy())
    parts = spec.split(":")
    shape = [int(s) for s in parts[0].split("x")] if parts[0] else []
    dtype = getattr(torch, parts[1]) if len(parts) > 1 else torch.float32
    fill = parts[2] if len(parts) > 2 else "randn"
    n = 1
    for s in shape:
        n *= s
    if fill == "arange":
        return torch.arange(n).reshape(shape).to(dtype)
    if fill == "ones":
        return torch.ones(shape, dtype=dtype)
    if fill == "zeros":
        return torch.zeros(shape, dtype=dtype)
    if fill == "rand":
        return torch.rand(shape).to(dtype)
    return torch.randn(shape).to(dtype)


# ---------------------------------------------------------------- HuggingFace-style BERT
class BertEmbeddings(nn.Module):
    def __init__(self, vocab=1000, hidden=32, max_pos=64, types=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.token_type_embeddings = nn.Embedding(types, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros(self.position_ids.size(), dtype=torch.long),
                             persistent=False)

    def forward(self, input_ids, token_type_ids: Optional[torch.Tensor] = None):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, 0:seq_length]
        if token_type_ids is None:
            token_type_ids = self.token_type_ids[:, :seq_length].expand(input_ids.size(0), seq_length)
        e = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        e = e + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(e))


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class BertSelfAttention(nn.Module):
    def __init__(self, hidden=32, heads=4):
        super().__init__()
        self.num_attention_heads = heads
        self.attention_head_size = hidden // heads
        self.all_head_size = hidden
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask: Optional[torch.Tensor] = None):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = nn.functional.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        new_shape = ctx.size()[:-2] + (self.all_head_size,)
        return ctx.view(new_shape)


class BertLayer(nn.Module):
    def __init__(self, hidden=32, heads=4, act="erf"):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads)
        self.attn_out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, hidden * 4)
        self.output = nn.Linear(hidden * 4, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)
        self.act = act

    def forward(self, h, mask: Optional[torch.Tensor] = None):
        a = self.ln1(self.attn_out(self.attention(h, mask)) + h)
        i = self.intermediate(a)
        i = gelu_new(i) if self.act == "tanh" else F.gelu(i)
        return self.ln2(self.output(i) + a)


class Bert(nn.Module):
    def __init__(self, act="erf"):
        super().__init__()
        self.embeddings = BertEmbeddings()
        self.layers = nn.ModuleList([BertLayer(act=act) for _ in range(2)])
        self.pooler = nn.Linear(32, 32)
        self.mask_min = torch.finfo(torch.float32).min  # torch.finfo does not script

    def forward(self, input_ids, attention_mask, token_type_ids):
        ext = attention_mask[:, None, None, :]
        ext = ext.to(dtype=torch.float32)
        ext = (1.0 - ext) * self.mask_min
        h = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            h = layer(h, ext)
        pooled = torch.tanh(self.pooler(h[:, 0]))
        return h, pooled


def bert(act):
    return lambda: Spec(Bert(act), ["2x8:int64:arange", "2x8:int64:ones", "2x8:int64:zeros"],
                        ["input_ids", "attention_mask", "token_type_ids"],
                        ["input_ids:0=b,1=s", "attention_mask:0=b,1=s", "token_type_ids:0=b,1=s"])


# ---------------------------------------------------------------- GPT-2 block, causal mask buffer
class GPT2Attention(nn.Module):
    def __init__(self, embed=32, heads=4, max_pos=64):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones((max_pos, max_pos), dtype=torch.bool)).view(
            1, 1, max_pos, max_pos), persistent=False)
        self.register_buffer("masked_bias", torch.tensor(-1e4), persistent=False)
        self.num_heads = heads
        self.head_dim = embed // heads
        self.c_attn = nn.Linear(embed, 3 * embed)
        self.c_proj = nn.Linear(embed, embed)
        self.mask_min = torch.finfo(torch.float32).min  # torch.finfo does not script

    def _split_heads(self, t):
        new_shape = t.size()[:-1] + (self.num_heads, self.head_dim)
        return t.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, layer_past: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        query, key, value = self.c_attn(hidden_states).split(self.num_heads * self.head_dim, dim=2)
        query = self._split_heads(query)
        key = self._split_heads(key)
        value = self._split_heads(value)
        if layer_past is not None:
            past_key, past_value = layer_past
            key = torch.cat((past_key, key), dim=-2)
            value = torch.cat((past_value, value), dim=-2)
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype,
                                                 device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = self.mask_min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        out = torch.matmul(attn_weights, value)
        out = out.permute(0, 2, 1, 3).contiguous()
        out = out.view(out.size()[:-2] + (self.num_heads * self.head_dim,))
        return self.c_proj(out), key, value


class GPT2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(32)
        self.attn = GPT2Attention()
        self.ln_2 = nn.LayerNorm(32)
        self.c_fc = nn.Linear(32, 128)
        self.c_proj = nn.Linear(128, 32)

    def forward(self, x, layer_past: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        a, k, v = self.attn(self.ln_1(x), layer_past)
        x = x + a
        x = x + self.c_proj(gelu_new(self.c_fc(self.ln_2(x))))
        return x, k, v


class GPT2(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(1000, 32)
        self.wpe = nn.Embedding(64, 32)
        self.h = nn.ModuleList([GPT2Block() for _ in range(2)])
        self.ln_f = nn.LayerNorm(32)

    def forward(self, input_ids):
        pos = torch.arange(0, input_ids.size(-1), dtype=torch.long, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for blk in self.h:
            x, _, _ = blk(x)
        x = self.ln_f(x)
        return torch.matmul(x, self.wte.weight.t())


class KVStep(nn.Module):
    """A decoder step with the past keys/values concatenated (HF's use_cache path)."""

    def __init__(self):
        super().__init__()
        self.block = GPT2Block()

    def forward(self, x, past_k, past_v):
        return self.block(x, (past_k, past_v))


# ---------------------------------------------------------------- T5 relative position bias
class T5Bias(nn.Module):
    def __init__(self, num_buckets=32, max_distance=128, heads=4, bidirectional=True):
        super().__init__()
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.bidirectional = bidirectional
        self.relative_attention_bias = nn.Embedding(num_buckets, heads)

    @staticmethod
    def _relative_position_bucket(relative_position, bidirectional: bool = True, num_buckets: int = 32,
                                  max_distance: int = 128):
        relative_buckets = torch.zeros_like(relative_position)
        if bidirectional:
            num_buckets = num_buckets // 2  # HF writes //=, which does not script
            relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
            relative_position = torch.abs(relative_position)
        else:
            relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)).to(torch.long)
        relative_position_if_large = torch.min(
            relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    def forward(self, hidden):
        query_length = hidden.size(1)
        key_length = hidden.size(1)
        context_position = torch.arange(query_length, dtype=torch.long, device=hidden.device)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long, device=hidden.device)[None, :]
        relative_position = memory_position - context_position
        buckets = self._relative_position_bucket(relative_position, self.bidirectional, self.num_buckets,
                                                 self.max_distance)
        values = self.relative_attention_bias(buckets)
        values = values.permute([2, 0, 1]).unsqueeze(0)
        scores = torch.matmul(hidden, hidden.transpose(1, 2)).unsqueeze(1) + values
        return scores.softmax(-1)


# ---------------------------------------------------------------- greedy decoding, scripted loops
class GreedyDecoder(nn.Module):
    def __init__(self, vocab: int = 50, eos: int = 1, max_len: int = 12):
        super().__init__()
        self.emb = nn.Embedding(vocab, 16)
        self.cell = nn.GRUCell(16, 16)
        self.out = nn.Linear(16, vocab)
        self.eos = eos
        self.max_len = max_len

    def forward(self, h):
        tok = torch.zeros(h.size(0), dtype=torch.long)
        tokens: List[torch.Tensor] = []
        step = 0
        while step < self.max_len:
            h = self.cell(self.emb(tok), h)
            tok = self.out(h).argmax(-1)
            tokens.append(tok)
            step += 1
            if bool((tok == self.eos).all()):
                break
        return torch.stack(tokens, 1)


class BeamlessForDecoder(nn.Module):
    """A `for` over a fixed count with an early `break` on a data condition and a running score."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        score = torch.zeros(x.size(0))
        for i in range(6):
            x = torch.tanh(self.proj(x))
            score = score + x.max(dim=-1)[0]
            if bool(score.min() > 3.0):
                break
        return x, score


# ---------------------------------------------------------------- YOLOv5 / v8 heads
class YoloV5Detect(nn.Module):
    def __init__(self, nc=4, ch=(8, 16, 32), stride=(8, 16, 32)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(ch)
        self.na = 3
        anchors = torch.tensor([[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119],
                                [116, 90, 156, 198, 373, 326]], dtype=torch.float32).view(3, 3, 2)
        self.register_buffer("anchors", anchors)
        self.stride = list(stride)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def _make_grid(self, nx: int, ny: int, i: int):
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(1, self.na, ny, nx, 2).float() - 0.5
        anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(1, self.na, ny, nx, 2)
        return grid, anchor_grid

    def forward(self, x0, x1, x2):
        xs = [x0, x1, x2]
        z: List[torch.Tensor] = []
        for i, conv in enumerate(self.m):
            x = conv(xs[i])
            bs, _, ny, nx = x.shape
            x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            grid, anchor_grid = self._make_grid(nx, ny, i)
            xy, wh, conf = x.sigmoid().split((2, 2, self.nc + 1), 4)
            xy = (xy * 2 + grid) * self.stride[i]
            wh = (wh * 2) ** 2 * anchor_grid
            y = torch.cat((xy, wh, conf), 4)
            z.append(y.view(bs, self.na * nx * ny, self.no))
        return torch.cat(z, 1)


def make_anchors(feats: List[torch.Tensor], strides: List[int], grid_cell_offset: float = 0.5):
    anchor_points, stride_tensor = [], []
    dtype = feats[0].dtype
    for i, stride in enumerate(strides):
        _, _, h, w = feats[i].shape
        sx = torch.arange(end=w, dtype=dtype) + grid_cell_offset
        sy = torch.arange(end=h, dtype=dtype) + grid_cell_offset
        sy, sx = torch.meshgrid(sy, sx, indexing="ij")
        anchor_points.append(torch.stack((sx, sy), -1).view(-1, 2))
        stride_tensor.append(torch.full((h * w, 1), stride, dtype=dtype))
    return torch.cat(anchor_points), torch.cat(stride_tensor)


class DFL(nn.Module):
    def __init__(self, c1=16):
        super().__init__()
        self.conv = nn.Conv2d(c1, 1, 1, bias=False).requires_grad_(False)
        x = torch.arange(c1, dtype=torch.float)
        self.conv.weight.data[:] = nn.Parameter(x.view(1, c1, 1, 1))
        self.c1 = c1

    def forward(self, x):
        b, _, a = x.shape
        return self.conv(x.view(b, 4, self.c1, a).transpose(2, 1).softmax(1)).view(b, 4, a)


class YoloV8Detect(nn.Module):
    def __init__(self, nc=4, ch=(8, 16)):
        super().__init__()
        self.nc = nc
        self.reg_max = 16
        self.no = nc + self.reg_max * 4
        self.strides = [8, 16]
        self.cv2 = nn.ModuleList(nn.Sequential(nn.Conv2d(x, 16, 3, padding=1), nn.SiLU(),
                                               nn.Conv2d(16, 4 * self.reg_max, 1)) for x in ch)
        self.cv3 = nn.ModuleList(nn.Sequential(nn.Conv2d(x, 16, 3, padding=1), nn.SiLU(),
                                               nn.Conv2d(16, nc, 1)) for x in ch)
        self.dfl = DFL(self.reg_max)

    def forward(self, x0, x1):
        xs = [x0, x1]
        outs: List[torch.Tensor] = []
        i = 0
        for a, b in zip(self.cv2, self.cv3):
            outs.append(torch.cat((a(xs[i]), b(xs[i])), 1))
            i += 1
        shape = outs[0].shape
        anchors, strides = make_anchors(outs, self.strides, 0.5)
        anchors = anchors.transpose(0, 1)
        strides = strides.transpose(0, 1)
        x_cat = torch.cat([xi.view(shape[0], self.no, -1) for xi in outs], 2)
        box, cls = x_cat.split((self.reg_max * 4, self.nc), 1)
        distance = self.dfl(box)
        lt, rb = distance.chunk(2, 1)
        x1y1 = anchors.unsqueeze(0) - lt
        x2y2 = anchors.unsqueeze(0) + rb
        dbox = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * strides
        return torch.cat((dbox, cls.sigmoid()), 1)


# ---------------------------------------------------------------- CenterNet decode
class CenterNetDecode(nn.Module):
    def __init__(self, K: int = 10):
        super().__init__()
        self.K = K
        self.head = nn.Conv2d(8, 3 + 2 + 2, 3, padding=1)

    def forward(self, feat):
        out = self.head(feat)
        heat = out[:, :3].sigmoid()
        wh = out[:, 3:5]
        reg = out[:, 5:7]
        hmax = F.max_pool2d(heat, (3, 3), stride=1, padding=1)
        keep = (hmax == heat).float()
        heat = heat * keep
        batch, cat, height, width = heat.size()
        topk_scores, topk_inds = torch.topk(heat.view(batch, -1), self.K)
        topk_clses = topk_inds // (height * width)
        topk_inds = topk_inds % (height * width)
        topk_ys = (topk_inds // width).float()
        topk_xs = (topk_inds % width).float()
        reg = reg.view(batch, 2, -1).permute(0, 2, 1)
        idx = topk_inds.unsqueeze(2).expand(batch, self.K, 2)
        reg = reg.gather(1, idx)
        wh = wh.view(batch, 2, -1).permute(0, 2, 1).gather(1, idx)
        xs = topk_xs + reg[:, :, 0]
        ys = topk_ys + reg[:, :, 1]
        boxes = torch.stack([xs - wh[..., 0] / 2, ys - wh[..., 1] / 2, xs + wh[..., 0] / 2,
                             ys + wh[..., 1] / 2], dim=2)
        return boxes, topk_scores, topk_clses


# ---------------------------------------------------------------- DETR
class PositionEmbeddingSine(nn.Module):
    def __init__(self, num_pos_feats=8, temperature=10000):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.scale = 2 * math.pi

    def forward(self, x, mask):
        not_mask = ~mask
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        eps = 1e-6
        y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
        x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=x.device)
        dim_t = self.temperature ** (2 * (dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)


class DETR(nn.Module):
    def __init__(self, d=16, queries=5, classes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, d, 3, stride=4, padding=1), nn.ReLU())
        self.pos = PositionEmbeddingSine(d // 2)
        self.transformer = nn.Transformer(d, 2, 1, 1, 32, dropout=0.0)
        self.query_embed = nn.Embedding(queries, d)
        self.class_embed = nn.Linear(d, classes + 1)
        self.bbox_embed = nn.Linear(d, 4)

    def forward(self, img):
        src = self.backbone(img)
        b = src.shape[0]
        mask = torch.zeros((b, src.shape[2], src.shape[3]), dtype=torch.bool, device=img.device)
        pos = self.pos(src, mask)
        src = (src + pos).flatten(2).permute(2, 0, 1)
        query = self.query_embed.weight.unsqueeze(1).repeat(1, b, 1)
        tgt = torch.zeros_like(query)
        hs = self.transformer(src, tgt + query, src_key_padding_mask=mask.flatten(1))
        return self.class_embed(hs), self.bbox_embed(hs).sigmoid()


NLP_DET = [
    ("bert_erf", bert("erf")),
    ("bert_gelu_tanh", bert("tanh")),
    ("gpt2", lambda: Spec(GPT2(), ["2x8:int64:arange"], ["input_ids"], ["input_ids:0=b,1=s"])),
    ("gpt2_kv_step", lambda: Spec(KVStep(), ["2x1x32", "2x4x5x8", "2x4x5x8"], ["x", "past_k", "past_v"],
                                  ["x:0=b", "past_k:0=b,2=past", "past_v:0=b,2=past"])),
    ("t5_rel_bias", lambda: Spec(T5Bias(), ["2x12x4"], ["hidden"], ["hidden:0=b,1=s"])),
    ("greedy_while", lambda: Spec(GreedyDecoder(), ["2x16"], ["h"], ["h:0=b"], modes=("script",))),
    ("for_early_stop", lambda: Spec(BeamlessForDecoder(), ["3x8"], ["x"], ["x:0=b"], modes=("script",))),
    ("yolov5_detect", lambda: Spec(YoloV5Detect(), ["1x8x16x16", "1x16x8x8", "1x32x4x4"], ["p3", "p4", "p5"],
                                   ["p3:0=b,2=h3,3=w3", "p4:0=b,2=h4,3=w4", "p5:0=b,2=h5,3=w5"])),
    ("yolov8_detect", lambda: Spec(YoloV8Detect(), ["1x8x16x16", "1x16x8x8"], ["p3", "p4"],
                                   ["p3:0=b,2=h3,3=w3", "p4:0=b,2=h4,3=w4"])),
    ("centernet_decode", lambda: Spec(CenterNetDecode(), ["2x8x16x16"], ["feat"], ["feat:0=b,2=h,3=w"])),
    ("detr", lambda: Spec(DETR(), ["1x3x64x64"], ["img"], ["img:0=b,2=h,3=w"])),
]
