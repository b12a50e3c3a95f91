"""The probe sweep's models, round 5 (probe5v), part 2: detection/pose heads as their authors write them
(grid caches, in-place decode writes, argmax/gather decode, query selection) and Mask2Former's pixel
decoder inputs; generative image models are in probe_zoo_vision5_gen.py. Small configs, random weights,
fixed seed. Listed in VISION5_B.
"""
import math
from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec

IMG = ["x:0=b,2=h,3=w"]


# ---------------------------------------------------------------- YOLOv5 (v6.0 era) Detect: self.grid[i] caches, in-place y[..., 0:2] =
class YoloV5InplaceDetect(nn.Module):
    stride = None
    onnx_dynamic = False

    def __init__(self, nc=3, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119)), ch=(8, 16)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        self.anchor_grid = [torch.zeros(1)] * self.nl
        self.register_buffer("anchors", torch.tensor(anchors).float().view(self.nl, -1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.inplace = True
        self.stride = torch.tensor([8.0, 16.0])

    def forward(self, x0, x1):
        x = [x0, x1]
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.onnx_dynamic or self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)
                y = x[i].sigmoid()
                if self.inplace:
                    y[..., 0:2] = (y[..., 0:2] * 2 - 0.5 + self.grid[i]) * self.stride[i]
                    y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]
                z.append(y.view(bs, -1, self.no))
        return torch.cat(z, 1)

    def _make_grid(self, nx=20, ny=20, i=0):
        d = self.anchors[i].device
        yv, xv = torch.meshgrid([torch.arange(ny, device=d), torch.arange(nx, device=d)], indexing="ij")
        grid = torch.stack((xv, yv), 2).expand((1, self.na, ny, nx, 2)).float()
        anchor_grid = (self.anchors[i].clone() * self.stride[i]).view((1, self.na, 1, 1, 2)).expand((1, self.na, ny, nx, 2)).float()
        return grid, anchor_grid


# ---------------------------------------------------------------- YOLOv8 Pose head: kpts_decode on a clone with strided in-place writes
class YoloV8Pose(nn.Module):
    def __init__(self, nc=1, kpt_shape=(4, 3), ch=(8, 16)):
        super().__init__()
        self.nc, self.reg_max = nc, 4
        self.no = nc + self.reg_max * 4
        self.kpt_shape = kpt_shape
        self.nk = kpt_shape[0] * kpt_shape[1]
        self.nl = len(ch)
        self.stride = torch.tensor([8.0, 16.0])
        self.cv2 = nn.ModuleList(nn.Conv2d(x, 4 * self.reg_max, 3, 1, 1) for x in ch)
        self.cv3 = nn.ModuleList(nn.Conv2d(x, nc, 3, 1, 1) for x in ch)
        self.cv4 = nn.ModuleList(nn.Conv2d(x, self.nk, 3, 1, 1) for x in ch)
        self.register_buffer("proj", torch.arange(self.reg_max, dtype=torch.float))
        self.anchors = torch.empty(0)
        self.strides = torch.empty(0)

    def make_anchors(self, feats, strides, grid_cell_offset=0.5):
        anchor_points, stride_tensor = [], []
        dtype, device = feats[0].dtype, feats[0].device
        for i, stride in enumerate(strides):
            _, _, h, w = feats[i].shape
            sx = torch.arange(end=w, device=device, dtype=dtype) + grid_cell_offset
            sy = torch.arange(end=h, device=device, dtype=dtype) + grid_cell_offset
            sy, sx = torch.meshgrid(sy, sx, indexing="ij")
            anchor_points.append(torch.stack((sx, sy), -1).view(-1, 2))
            stride_tensor.append(torch.full((h * w, 1), stride, dtype=dtype, device=device))
        return torch.cat(anchor_points), torch.cat(stride_tensor)

    def kpts_decode(self, bs, kpts):
        ndim = self.kpt_shape[1]
        y = kpts.clone()
        if ndim == 3:
            y[:, 2::3] = y[:, 2::3].sigmoid()
        y[:, 0::ndim] = (y[:, 0::ndim] * 2.0 + (self.anchors[0] - 0.5)) * self.strides
        y[:, 1::ndim] = (y[:, 1::ndim] * 2.0 + (self.anchors[1] - 0.5)) * self.strides
        return y

    def forward(self, f0, f1):
        x = [f0, f1]
        bs = x[0].shape[0]
        kpt = torch.cat([self.cv4[i](x[i]).view(bs, self.nk, -1) for i in range(self.nl)], -1)
        for i in range(self.nl):
            x[i] = torch.cat((self.cv2[i](x[i]), self.cv3[i](x[i])), 1)
        shape = x[0].shape
        self.anchors, self.strides = (a.transpose(0, 1) for a in self.make_anchors(x, self.stride, 0.5))
        x_cat = torch.cat([xi.view(shape[0], self.no, -1) for xi in x], 2)
        box, cls = x_cat.split((self.reg_max * 4, self.nc), 1)
        b, c, a = box.shape
        dist = box.view(b, 4, c // 4, a).transpose(2, 1).softmax(1)
        dist = (dist * self.proj.view(1, -1, 1, 1)).sum(1)
        lt, rb = dist.chunk(2, 1)
        anchors = self.anchors.unsqueeze(0)
        dbox = torch.cat(((anchors - lt + anchors + rb) / 2, rb + lt), 1) * self.strides
        pred_kpt = self.kpts_decode(bs, kpt)
        return torch.cat([dbox, cls.sigmoid(), pred_kpt], 1)


# ---------------------------------------------------------------- YOLACT: protonet masks, crop by boxes with arange comparisons
def sanitize_coordinates(_x1, _x2, img_size: int, padding: int = 0):
    _x1 = _x1 * img_size
    _x2 = _x2 * img_size
    x1 = torch.min(_x1, _x2)
    x2 = torch.max(_x1, _x2)
    x1 = torch.clamp(x1 - padding, min=0)
    x2 = torch.clamp(x2 + padding, max=img_size)
    return x1, x2


def crop(masks, boxes, padding: int = 1):
    h, w, n = masks.size()
    x1, x2 = sanitize_coordinates(boxes[:, 0], boxes[:, 2], w, padding)
    y1, y2 = sanitize_coordinates(boxes[:, 1], boxes[:, 3], h, padding)
    rows = torch.arange(w, device=masks.device, dtype=x1.dtype).view(1, -1, 1).expand(h, w, n)
    cols = torch.arange(h, device=masks.device, dtype=x1.dtype).view(-1, 1, 1).expand(h, w, n)
    masks_left = rows >= x1.view(1, 1, -1)
    masks_right = rows < x2.view(1, 1, -1)
    masks_up = cols >= y1.view(1, 1, -1)
    masks_down = cols < y2.view(1, 1, -1)
    crop_mask = masks_left * masks_right * masks_up * masks_down
    return masks * crop_mask.float()


class YolactMasks(nn.Module):
    def __init__(self, k=4):
        super().__init__()
        self.proto = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1), nn.ReLU(), nn.Conv2d(8, k, 1), nn.ReLU())

    def forward(self, feat, coeffs, boxes):
        proto = self.proto(feat)[0].permute(1, 2, 0).contiguous()  # h, w, k
        masks = proto @ coeffs.t()
        masks = torch.sigmoid(masks)
        masks = crop(masks, boxes)
        masks = masks.permute(2, 0, 1).contiguous()
        masks = F.interpolate(masks.unsqueeze(0), (feat.shape[2] * 4, feat.shape[3] * 4), mode="bilinear",
                              align_corners=False).squeeze(0)
        masks.gt_(0.5)
        return masks


# ---------------------------------------------------------------- RT-DETR: anchors with inf outside (0, 1), top-k query selection
class RTDETRQuerySelect(nn.Module):
    def __init__(self, hidden_dim=16, num_classes=5, num_queries=6, feat_strides=(8, 16)):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.num_queries = num_queries
        self.feat_strides = feat_strides
        self.input_proj = nn.ModuleList(nn.Sequential(nn.Conv2d(c, hidden_dim, 1, bias=False), nn.BatchNorm2d(hidden_dim))
                                        for c in (8, 16))
        self.enc_output = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.LayerNorm(hidden_dim))
        self.enc_score_head = nn.Linear(hidden_dim, num_classes)
        self.enc_bbox_head = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, 4))

    def _generate_anchors(self, spatial_shapes: List[List[int]], grid_size: float = 0.05, eps: float = 1e-2):
        anchors = []
        for lvl, (h, w) in enumerate(spatial_shapes):
            grid_y, grid_x = torch.meshgrid(torch.arange(end=h, dtype=torch.float32),
                                            torch.arange(end=w, dtype=torch.float32), indexing="ij")
            grid_xy = torch.stack([grid_x, grid_y], -1)
            valid_WH = torch.tensor([w, h]).to(torch.float32)
            grid_xy = (grid_xy.unsqueeze(0) + 0.5) / valid_WH
            wh = torch.ones_like(grid_xy) * grid_size * (2.0 ** lvl)
            anchors.append(torch.concat([grid_xy, wh], -1).reshape(-1, h * w, 4))
        anchors = torch.concat(anchors, 1)
        valid_mask = ((anchors > eps) * (anchors < 1 - eps)).all(-1, keepdim=True)
        anchors = torch.log(anchors / (1 - anchors))
        anchors = torch.where(valid_mask, anchors, torch.inf)
        return anchors, valid_mask

    def forward(self, f0, f1):
        feats = [f0, f1]
        proj_feats = [self.input_proj[i](feat) for i, feat in enumerate(feats)]
        feat_flatten = []
        spatial_shapes = []
        for i, feat in enumerate(proj_feats):
            _, _, h, w = feat.shape
            feat_flatten.append(feat.flatten(2).permute(0, 2, 1))
            spatial_shapes.append([h, w])
        memory = torch.concat(feat_flatten, 1)
        anchors, valid_mask = self._generate_anchors(spatial_shapes)
        memory = valid_mask.to(memory.dtype) * memory
        output_memory = self.enc_output(memory)
        enc_outputs_class = self.enc_score_head(output_memory)
        enc_outputs_coord_unact = self.enc_bbox_head(output_memory) + anchors
        _, topk_ind = torch.topk(enc_outputs_class.max(-1).values, self.num_queries, dim=1)
        reference_points_unact = enc_outputs_coord_unact.gather(
            dim=1, index=topk_ind.unsqueeze(-1).repeat(1, 1, enc_outputs_coord_unact.shape[-1]))
        enc_topk_logits = enc_outputs_class.gather(
            dim=1, index=topk_ind.unsqueeze(-1).repeat(1, 1, enc_outputs_class.shape[-1]))
        target = output_memory.gather(dim=1, index=topk_ind.unsqueeze(-1).repeat(1, 1, output_memory.shape[-1]))
        return F.sigmoid(reference_points_unact), enc_topk_logits, target


# ---------------------------------------------------------------- DETR PostProcess (+ PostProcessSegm's interpolate)
def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=-1)


class DETRPostProcess(nn.Module):
    def forward(self, pred_logits, pred_boxes, target_sizes):
        out_logits, out_bbox = pred_logits, pred_boxes
        assert len(out_logits) == len(target_sizes)
        assert target_sizes.shape[1] == 2
        prob = F.softmax(out_logits, -1)
        scores, labels = prob[..., :-1].max(-1)
        boxes = box_cxcywh_to_xyxy(out_bbox)
        img_h, img_w = target_sizes.unbind(1)
        scale_fct = torch.stack([img_w, img_h, img_w, img_h], dim=1)
        boxes = boxes * scale_fct[:, None, :]
        return scores, labels, boxes


class DETRPostProcessSegm(nn.Module):
    def __init__(self, threshold=0.5):
        super().__init__()
        self.threshold = threshold

    def forward(self, pred_masks, max_h: int = 24, max_w: int = 20):
        outputs_masks = pred_masks.squeeze(2)
        outputs_masks = F.interpolate(outputs_masks, size=(max_h, max_w), mode="bilinear", align_corners=False)
        return (outputs_masks.sigmoid() > self.threshold).float()


class DETRPost(nn.Module):
    def __init__(self):
        super().__init__()
        self.post = DETRPostProcess()
        self.segm = DETRPostProcessSegm()

    def forward(self, pred_logits, pred_boxes, target_sizes, pred_masks):
        scores, labels, boxes = self.post(pred_logits, pred_boxes, target_sizes)
        return scores, labels, boxes, self.segm(pred_masks)


# ---------------------------------------------------------------- Mask2Former pixel decoder bits: sine pos enc with mask None, valid ratios, reference points
class PositionEmbeddingSineM2F(nn.Module):
    def __init__(self, num_pos_feats=8, temperature=10000, normalize=True):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        self.scale = 2 * math.pi

    def forward(self, x, mask: Optional[torch.Tensor] = None):
        if mask is None:
            mask = torch.zeros((x.size(0), x.size(2), x.size(3)), device=x.device, dtype=torch.bool)
        not_mask = ~mask
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        if self.normalize:
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


class M2FPixelDecoderInputs(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.pe_layer = PositionEmbeddingSineM2F(d // 2)
        self.level_embed = nn.Parameter(torch.randn(2, d))
        self.input_proj = nn.ModuleList(nn.Sequential(nn.Conv2d(c, d, 1), nn.GroupNorm(4, d)) for c in (8, 16))

    @staticmethod
    def get_valid_ratio(mask):
        _, H, W = mask.shape
        valid_H = torch.sum(~mask[:, :, 0], 1)
        valid_W = torch.sum(~mask[:, 0, :], 1)
        valid_ratio_h = valid_H.float() / H
        valid_ratio_w = valid_W.float() / W
        return torch.stack([valid_ratio_w, valid_ratio_h], -1)

    @staticmethod
    def get_reference_points(spatial_shapes, valid_ratios):
        reference_points_list = []
        for lvl, (H_, W_) in enumerate(spatial_shapes):
            ref_y, ref_x = torch.meshgrid(torch.linspace(0.5, H_ - 0.5, H_, dtype=torch.float32),
                                          torch.linspace(0.5, W_ - 0.5, W_, dtype=torch.float32), indexing="ij")
            ref_y = ref_y.reshape(-1)[None] / (valid_ratios[:, None, lvl, 1] * H_)
            ref_x = ref_x.reshape(-1)[None] / (valid_ratios[:, None, lvl, 0] * W_)
            ref = torch.stack((ref_x, ref_y), -1)
            reference_points_list.append(ref)
        reference_points = torch.cat(reference_points_list, 1)
        return reference_points[:, :, None] * valid_ratios[:, None]

    def forward(self, res3, res4):
        srcs = [self.input_proj[0](res3), self.input_proj[1](res4)]
        pos = [self.pe_layer(res3), self.pe_layer(res4)]
        masks = [torch.zeros((x.size(0), x.size(2), x.size(3)), device=x.device, dtype=torch.bool) for x in srcs]
        src_flatten, mask_flatten, lvl_pos_embed_flatten, spatial_shapes = [], [], [], []
        for lvl, (src, mask, pos_embed) in enumerate(zip(srcs, masks, pos)):
            bs, c, h, w = src.shape
            spatial_shapes.append((h, w))
            src_flatten.append(src.flatten(2).transpose(1, 2))
            mask_flatten.append(mask.flatten(1))
            lvl_pos_embed_flatten.append(pos_embed.flatten(2).transpose(1, 2) + self.level_embed[lvl].view(1, 1, -1))
        src_flatten = torch.cat(src_flatten, 1)
        lvl_pos_embed_flatten = torch.cat(lvl_pos_embed_flatten, 1)
        shapes = torch.as_tensor(spatial_shapes, dtype=torch.long, device=src_flatten.device)
        level_start_index = torch.cat((shapes.new_zeros((1,)), shapes.prod(1).cumsum(0)[:-1]))
        valid_ratios = torch.stack([self.get_valid_ratio(m) for m in masks], 1)
        ref = self.get_reference_points(spatial_shapes, valid_ratios)
        return src_flatten + lvl_pos_embed_flatten, ref, level_start_index


def _yolact_boxes():
    r = np.random.RandomState(4)
    a = r.rand(3, 2).astype(np.float32) * 0.5
    return np.concatenate([a, a + 0.3 + r.rand(3, 2).astype(np.float32) * 0.2], 1)


VISION5_B = [
    ("v5_yolov5_inplace_grid", lambda: Spec(YoloV5InplaceDetect(), ["1x8x8x8", "1x16x4x4"], ["f0", "f1"],
                                           ["f0:0=b,2=h0,3=w0", "f1:0=b,2=h1,3=w1"], modes=("trace",))),
    ("v5_yolov8_pose_kpts", lambda: Spec(YoloV8Pose(), ["2x8x8x8", "2x16x4x4"], ["f0", "f1"],
                                        ["f0:0=b,2=h0,3=w0", "f1:0=b,2=h1,3=w1"], modes=("trace",))),
    ("v5_yolact_crop", lambda: Spec(YolactMasks(), ["1x8x8x10", "3x4", _yolact_boxes()], ["feat", "coeffs", "boxes"],
                                   ["feat:2=h,3=w", "coeffs:0=n", "boxes:0=n"])),
    ("v5_rtdetr_query_select", lambda: Spec(RTDETRQuerySelect(), ["2x8x8x8", "2x16x4x4"], ["f0", "f1"],
                                           ["f0:0=b,2=h0,3=w0", "f1:0=b,2=h1,3=w1"], modes=("trace",))),
    ("v5_detr_postprocess", lambda: Spec(DETRPost(), ["2x6x5", "2x6x4:float32:rand", np.array([[480, 640], [300, 200]]),
                                                      "2x6x1x12x10"], ["logits", "boxes", "sizes", "masks"],
                                         ["logits:0=b,1=q", "boxes:0=b,1=q", "sizes:0=b", "masks:0=b,1=q"])),
    ("v5_m2f_pixdec_inputs", lambda: Spec(M2FPixelDecoderInputs(), ["2x8x8x8", "2x16x4x4"], ["res3", "res4"],
                                         ["res3:0=b,2=h3,3=w3", "res4:0=b,2=h4,3=w4"], modes=("trace",))),
]
