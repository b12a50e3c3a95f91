"""The probe sweep's models, round 3 (tools/probe_models.py): vision families not probed before:
segmentation transformers and heads, pose/keypoints/faces, OCR/document (this file); depth, 3-D,
video, low-level vision and detection odds and ends (probe_zoo_vision3_b.py). Written the way their
authors write them (from memory of the real code), random weights, fixed seed, small sizes.
The sweep's results (model, mode, static/dynamic result, max error, cause, fix, torch.onnx): docs/PROBES.md,
"Round 3: vision (probe3v)".
"""
import math
from typing import List, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec
from probe_zoo_vision import cbr
from probe_zoo_vision3_b import VISION3_B


# ---------------------------------------------------------------- SegFormer (mmseg/HF MiT-b0 style)
class OverlapPatchEmbed(nn.Module):
    def __init__(self, k, s, cin, d):
        super().__init__()
        self.proj = nn.Conv2d(cin, d, k, s, k // 2)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        x = self.proj(x)
        _, _, H, W = x.shape
        x = x.flatten(2).transpose(1, 2)
        return self.norm(x), H, W


class EfficientSelfAttention(nn.Module):
    def __init__(self, d, heads, sr):
        super().__init__()
        self.num_heads = heads
        self.scale = (d // heads) ** -0.5
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)
        self.proj = nn.Linear(d, d)
        self.sr_ratio = sr
        if sr > 1:
            self.sr = nn.Conv2d(d, d, sr, sr)
            self.norm = nn.LayerNorm(d)

    def forward(self, x, H: int, W: int):
        B, N, C = x.shape
        q = self.q(x).reshape(B, N, self.num_heads, C // self.num_heads).permute(0, 2, 1, 3)
        if self.sr_ratio > 1:
            x_ = x.permute(0, 2, 1).reshape(B, C, H, W)
            x_ = self.sr(x_).reshape(B, C, -1).permute(0, 2, 1)
            x_ = self.norm(x_)
        else:
            x_ = x
        kv = self.kv(x_).reshape(B, -1, 2, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class MixFFN(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.dwconv = nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x, H: int, W: int):
        x = self.fc1(x)
        B, N, C = x.shape
        x = x.transpose(1, 2).view(B, C, H, W)
        x = self.dwconv(x).flatten(2).transpose(1, 2)
        return self.fc2(F.gelu(x))


class MiTBlock(nn.Module):
    def __init__(self, d, heads, sr):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.attn = EfficientSelfAttention(d, heads, sr)
        self.norm2 = nn.LayerNorm(d)
        self.mlp = MixFFN(d, 4 * d)

    def forward(self, x, H: int, W: int):
        x = x + self.attn(self.norm1(x), H, W)
        return x + self.mlp(self.norm2(x), H, W)


class MLPDecLayer(nn.Module):
    def __init__(self, cin, d):
        super().__init__()
        self.proj = nn.Linear(cin, d)

    def forward(self, x):
        return self.proj(x.flatten(2).transpose(1, 2))


class SegFormer(nn.Module):
    def __init__(self, dims=(8, 16, 32), heads=(1, 2, 2), srs=(4, 2, 1), dec=16, classes=5):
        super().__init__()
        self.embeds = nn.ModuleList()
        self.blocks = nn.ModuleList()
        self.norms = nn.ModuleList()
        cin = 3
        for i, d in enumerate(dims):
            self.embeds.append(OverlapPatchEmbed(7 if i == 0 else 3, 4 if i == 0 else 2, cin, d))
            self.blocks.append(MiTBlock(d, heads[i], srs[i]))
            self.norms.append(nn.LayerNorm(d))
            cin = d
        self.linear_c = nn.ModuleList([MLPDecLayer(d, dec) for d in dims])
        self.linear_fuse = nn.Sequential(nn.Conv2d(dec * len(dims), dec, 1, bias=False), nn.BatchNorm2d(dec), nn.ReLU())
        self.linear_pred = nn.Conv2d(dec, classes, 1)

    def forward(self, x):
        B = x.shape[0]
        feats: List[torch.Tensor] = []
        for embed, block, norm in zip(self.embeds, self.blocks, self.norms):
            x, H, W = embed(x)
            x = block(x, H, W)
            x = norm(x).reshape(B, H, W, -1).permute(0, 3, 1, 2).contiguous()
            feats.append(x)
        c1 = feats[0]
        outs: List[torch.Tensor] = []
        for i, lin in enumerate(self.linear_c):
            f = feats[i]
            o = lin(f).permute(0, 2, 1).reshape(B, -1, f.shape[2], f.shape[3])
            outs.append(F.interpolate(o, size=c1.size()[2:], mode="bilinear", align_corners=False))
        return self.linear_pred(self.linear_fuse(torch.cat(outs[::-1], dim=1)))


# ---------------------------------------------------------------- Mask2Former pieces
class Mask2FormerPosSine(nn.Module):
    """Mask2Former's PositionEmbeddingSine: mask built from x when none is given, normalize=True."""

    def __init__(self, num_pos_feats=8, temperature=10000):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.scale = 2 * math.pi

    def forward(self, x, mask: Optional[torch.Tensor] = None):
        if mask is None:
            mask = torch.zeros((x.size(0), x.size(2), x.size(3)), device=x.device, dtype=torch.bool)
        not_mask = ~mask
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        eps = 1e-6
        y_embed = (y_embed - 0.5) / (y_embed[:, -1:, :] + eps) * self.scale
        x_embed = (x_embed - 0.5) / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=x.device)
        dim_t = self.temperature ** (2 * torch.div(dim_t, 2, rounding_mode="floor") / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)


class Mask2FormerMaskedAttn(nn.Module):
    def __init__(self, d=16, q=6, heads=2):
        super().__init__()
        self.num_heads = heads
        self.query_feat = nn.Embedding(q, d)
        self.query_embed = nn.Embedding(q, d)
        self.pe = Mask2FormerPosSine(d // 2)
        self.cross = nn.MultiheadAttention(d, heads, dropout=0.0)
        self.decoder_norm = nn.LayerNorm(d)
        self.mask_embed = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))
        self.class_embed = nn.Linear(d, 4)
        self.input_proj = nn.Conv2d(d, d, 1)

    def forward_prediction_heads(self, output, mask_features, attn_mask_target_size: List[int]):
        decoder_output = self.decoder_norm(output).transpose(0, 1)
        outputs_class = self.class_embed(decoder_output)
        mask_embed = self.mask_embed(decoder_output)
        outputs_mask = torch.einsum("bqc,bchw->bqhw", mask_embed, mask_features)
        attn_mask = F.interpolate(outputs_mask, size=attn_mask_target_size, mode="bilinear", align_corners=False)
        attn_mask = (attn_mask.sigmoid().flatten(2).unsqueeze(1).repeat(1, self.num_heads, 1, 1).flatten(0, 1) < 0.5).bool()
        attn_mask = attn_mask.detach()
        return outputs_class, outputs_mask, attn_mask

    def forward(self, mask_features, src_feat):
        bs = mask_features.shape[0]
        pos = self.pe(src_feat).flatten(2).permute(2, 0, 1)
        src = self.input_proj(src_feat).flatten(2).permute(2, 0, 1)
        query_embed = self.query_embed.weight.unsqueeze(1).repeat(1, bs, 1)
        output = self.query_feat.weight.unsqueeze(1).repeat(1, bs, 1)
        _, _, attn_mask = self.forward_prediction_heads(output, mask_features, [src_feat.shape[-2], src_feat.shape[-1]])
        attn_mask[torch.where(attn_mask.sum(-1) == attn_mask.shape[-1])] = False
        output = output + self.cross(output + query_embed, src + pos, src, attn_mask=attn_mask)[0]
        cls, masks, _ = self.forward_prediction_heads(output, mask_features, [src_feat.shape[-2], src_feat.shape[-1]])
        return cls, masks


# ---------------------------------------------------------------- MaskFormer semantic inference
class MaskFormerHead(nn.Module):
    def __init__(self, d=16, q=5, classes=4):
        super().__init__()
        self.pixel = nn.Sequential(cbr(3, d, s=2), nn.Conv2d(d, d, 1))
        self.query = nn.Parameter(torch.randn(q, d))
        self.class_embed = nn.Linear(d, classes + 1)
        self.mask_embed = nn.Linear(d, d)

    def forward(self, img):
        mask_features = self.pixel(img)
        b = img.shape[0]
        hs = self.query.unsqueeze(0).expand(b, -1, -1)
        mask_cls = self.class_embed(hs)
        mask_pred = torch.einsum("bqc,bchw->bqhw", self.mask_embed(hs), mask_features)
        mask_pred = F.interpolate(mask_pred, size=(img.shape[-2], img.shape[-1]), mode="bilinear", align_corners=False)
        mask_cls = F.softmax(mask_cls, dim=-1)[..., :-1]
        mask_pred = mask_pred.sigmoid()
        return torch.einsum("bqc,bqhw->bchw", mask_cls, mask_pred)


# ---------------------------------------------------------------- UPerNet (mmseg UPerHead)
class UPerHead(nn.Module):
    def __init__(self, chans=(8, 16, 32), c=8, pool_scales=(1, 2, 3, 6), classes=4):
        super().__init__()
        self.pool_scales = pool_scales
        self.psp = nn.ModuleList([nn.Sequential(nn.AdaptiveAvgPool2d(s), cbr(chans[-1], c, 1)) for s in pool_scales])
        self.bottleneck = cbr(chans[-1] + len(pool_scales) * c, c)
        self.lateral = nn.ModuleList([cbr(ci, c, 1) for ci in chans[:-1]])
        self.fpn = nn.ModuleList([cbr(c, c) for _ in chans[:-1]])
        self.fpn_bottleneck = cbr(len(chans) * c, c)
        self.cls = nn.Conv2d(c, classes, 1)

    def psp_forward(self, x):
        outs = [x]
        for ppm in self.psp:
            outs.append(F.interpolate(ppm(x), size=x.size()[2:], mode="bilinear", align_corners=False))
        return self.bottleneck(torch.cat(outs, dim=1))

    def forward(self, c2, c3, c4):
        inputs = [c2, c3, c4]
        laterals = [l(inputs[i]) for i, l in enumerate(self.lateral)]
        laterals.append(self.psp_forward(c4))
        for i in range(len(laterals) - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=prev_shape, mode="bilinear", align_corners=False)
        outs = [self.fpn[i](laterals[i]) for i in range(len(laterals) - 1)]
        outs.append(laterals[-1])
        for i in range(len(outs) - 1, 0, -1):
            outs[i] = F.interpolate(outs[i], size=outs[0].shape[2:], mode="bilinear", align_corners=False)
        return self.cls(self.fpn_bottleneck(torch.cat(outs, dim=1)))


# ---------------------------------------------------------------- HRNet-OCR
class SpatialGather(nn.Module):
    def __init__(self, scale=1):
        super().__init__()
        self.scale = scale

    def forward(self, feats, probs):
        batch_size, c, h, w = probs.size(0), probs.size(1), probs.size(2), probs.size(3)
        probs = probs.view(batch_size, c, -1)
        feats = feats.view(batch_size, feats.size(1), -1)
        feats = feats.permute(0, 2, 1)
        probs = F.softmax(self.scale * probs, dim=2)
        return torch.matmul(probs, feats).permute(0, 2, 1).unsqueeze(3)


class ObjectAttentionBlock(nn.Module):
    def __init__(self, c, key_c):
        super().__init__()
        self.key_channels = key_c
        self.f_pixel = nn.Sequential(cbr(c, key_c, 1), cbr(key_c, key_c, 1))
        self.f_object = nn.Sequential(cbr(c, key_c, 1), cbr(key_c, key_c, 1))
        self.f_down = cbr(c, key_c, 1)
        self.f_up = cbr(key_c, c, 1)

    def forward(self, x, proxy):
        batch_size, h, w = x.size(0), x.size(2), x.size(3)
        query = self.f_pixel(x).view(batch_size, self.key_channels, -1).permute(0, 2, 1)
        key = self.f_object(proxy).view(batch_size, self.key_channels, -1)
        value = self.f_down(proxy).view(batch_size, self.key_channels, -1).permute(0, 2, 1)
        sim_map = torch.matmul(query, key) * (self.key_channels ** -.5)
        sim_map = F.softmax(sim_map, dim=-1)
        context = torch.matmul(sim_map, value).permute(0, 2, 1).contiguous()
        context = context.view(batch_size, self.key_channels, *x.size()[2:])
        return self.f_up(context)


class HRNetOCR(nn.Module):
    def __init__(self, c=16, classes=5):
        super().__init__()
        self.backbone = nn.Sequential(cbr(3, c, s=2), cbr(c, c, s=2))
        self.aux_head = nn.Sequential(cbr(c, c, 1), nn.Conv2d(c, classes, 1))
        self.conv3x3_ocr = cbr(c, c)
        self.ocr_gather_head = SpatialGather()
        self.ocr_distri_head = ObjectAttentionBlock(c, 8)
        self.conv_bn_dropout = nn.Sequential(cbr(2 * c, c, 1), nn.Dropout2d(0.05))
        self.cls_head = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        feats = self.backbone(x)
        out_aux = self.aux_head(feats)
        feats = self.conv3x3_ocr(feats)
        context = self.ocr_gather_head(feats, out_aux)
        ctx = self.ocr_distri_head(feats, context)
        feats = self.conv_bn_dropout(torch.cat([ctx, feats], 1))
        return self.cls_head(feats), out_aux


# ---------------------------------------------------------------- SimpleBaseline + get_max_preds + DARK-ish
class SimpleBaseline(nn.Module):
    def __init__(self, joints=5):
        super().__init__()
        self.backbone = nn.Sequential(cbr(3, 16, s=2), cbr(16, 32, s=2), cbr(32, 32, s=2))
        layers = []
        cin = 32
        for _ in range(2):
            layers += [nn.ConvTranspose2d(cin, 16, 4, 2, 1, output_padding=0, bias=False), nn.BatchNorm2d(16), nn.ReLU(True)]
            cin = 16
        self.deconv_layers = nn.Sequential(*layers)
        self.final_layer = nn.Conv2d(16, joints, 1)

    def forward(self, x):
        heatmaps = self.final_layer(self.deconv_layers(self.backbone(x)))
        batch_size, num_joints, height, width = heatmaps.shape
        heatmaps_reshaped = heatmaps.reshape((batch_size, num_joints, -1))
        idx = torch.argmax(heatmaps_reshaped, 2).reshape((batch_size, num_joints, 1))
        maxvals = torch.amax(heatmaps_reshaped, 2).reshape((batch_size, num_joints, 1))
        preds = idx.repeat(1, 1, 2).float()
        preds[:, :, 0] = torch.fmod(preds[:, :, 0], width)
        preds[:, :, 1] = torch.floor(preds[:, :, 1] / width)
        pred_mask = torch.gt(maxvals, 0.0).repeat(1, 1, 2).float()
        preds = preds * pred_mask
        # post-processing shift by a quarter pixel toward the higher neighbour (HRNet's get_final_preds)
        px = preds[:, :, 0].long().clamp(1, width - 2)
        py = preds[:, :, 1].long().clamp(1, height - 2)
        flat = heatmaps_reshaped
        right = flat.gather(2, (py * width + px + 1).unsqueeze(-1))
        left = flat.gather(2, (py * width + px - 1).unsqueeze(-1))
        down = flat.gather(2, ((py + 1) * width + px).unsqueeze(-1))
        up = flat.gather(2, ((py - 1) * width + px).unsqueeze(-1))
        diff = torch.cat([right - left, down - up], dim=-1)
        preds = preds + torch.sign(diff) * 0.25
        return preds, maxvals


# ---------------------------------------------------------------- RTMPose SimCC head (mmpose)
class RTMCCHead(nn.Module):
    def __init__(self, joints=5, in_hw=(4, 4), split_ratio=2.0, input_size=(32, 32)):
        super().__init__()
        self.backbone = nn.Sequential(cbr(3, 16, s=2), cbr(16, 16, s=2), cbr(16, 16, s=2))
        self.final_layer = nn.Conv2d(16, joints, 3, padding=1)
        flatten_dims = in_hw[0] * in_hw[1]
        self.mlp = nn.Sequential(nn.LayerNorm(flatten_dims), nn.Linear(flatten_dims, 32, bias=False))
        self.cls_x = nn.Linear(32, int(input_size[1] * split_ratio), bias=False)
        self.cls_y = nn.Linear(32, int(input_size[0] * split_ratio), bias=False)
        self.split_ratio = split_ratio

    def forward(self, x):
        feats = self.final_layer(self.backbone(x))
        feats = torch.flatten(feats, 2)
        feats = self.mlp(feats)
        simcc_x = self.cls_x(feats)
        simcc_y = self.cls_y(feats)
        # get_simcc_maximum, as torch ops
        x_locs = torch.argmax(simcc_x, dim=-1)
        y_locs = torch.argmax(simcc_y, dim=-1)
        locs = torch.stack((x_locs, y_locs), dim=-1).float()
        max_val_x = torch.amax(simcc_x, dim=-1)
        max_val_y = torch.amax(simcc_y, dim=-1)
        vals = torch.minimum(max_val_x, max_val_y)
        locs = torch.where((vals <= 0.0).unsqueeze(-1), torch.full_like(locs, -1.0), locs)
        return locs / self.split_ratio, vals


# ---------------------------------------------------------------- HigherHRNet associative embedding grouping prep
class HigherHRNetAE(nn.Module):
    def __init__(self, joints=4, topk=6):
        super().__init__()
        self.joints = joints
        self.topk = topk
        self.stem = nn.Sequential(cbr(3, 16, s=2), cbr(16, 16, s=2))
        self.final0 = nn.Conv2d(16, 2 * joints, 1)
        self.deconv = nn.Sequential(nn.ConvTranspose2d(16 + 2 * joints, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
        self.final1 = nn.Conv2d(16, joints, 1)

    def forward(self, x):
        f = self.stem(x)
        y0 = self.final0(f)
        f1 = self.deconv(torch.cat((f, y0), 1))
        y1 = self.final1(f1)
        # aggregate: the low-res heatmaps upsampled and averaged with the high-res ones, tags kept low-res upsampled
        hm0 = F.interpolate(y0[:, :self.joints], size=(y1.size(2), y1.size(3)), mode="bilinear", align_corners=False)
        tags = F.interpolate(y0[:, self.joints:], size=(y1.size(2), y1.size(3)), mode="bilinear", align_corners=False)
        det = (hm0 + y1) / 2.0
        # HeatmapParser.nms + top_k
        maxm = F.max_pool2d(det, 5, 1, 2)
        maxm = torch.eq(maxm, det).float()
        det = det * maxm
        num_images, num_joints, h, w = det.size()
        det = det.view(num_images, num_joints, -1)
        val_k, ind = det.topk(self.topk, dim=2)
        tag = tags.view(tags.size(0), tags.size(1), w * h, -1)
        tag_k = torch.stack([torch.gather(tag[:, :, :, i], 2, ind) for i in range(tag.size(3))], dim=3)
        x_ = ind % w
        y_ = (ind // w).long()
        ind_k = torch.stack((x_, y_), dim=3)
        return tag_k, ind_k, val_k


# ---------------------------------------------------------------- RetinaFace (biubug6) heads + decode
class RetinaFace(nn.Module):
    def __init__(self, c=16, num_anchors=2):
        super().__init__()
        self.body = nn.ModuleList([nn.Sequential(cbr(3, c, s=2), cbr(c, c, s=2), cbr(c, c, s=2)), cbr(c, c, s=2)])
        self.ClassHead = nn.ModuleList([nn.Conv2d(c, num_anchors * 2, 1) for _ in range(2)])
        self.BboxHead = nn.ModuleList([nn.Conv2d(c, num_anchors * 4, 1) for _ in range(2)])
        self.LandmarkHead = nn.ModuleList([nn.Conv2d(c, num_anchors * 10, 1) for _ in range(2)])
        self.steps = [8, 16]
        self.min_sizes = [[16, 32], [64, 128]]
        self.variance = [0.1, 0.2]

    def priors(self, feats: List[torch.Tensor], img_h: int, img_w: int):
        out: List[torch.Tensor] = []
        for k, f in enumerate(feats):
            fh, fw = f.shape[2], f.shape[3]
            ys = (torch.arange(fh, dtype=torch.float32) + 0.5) * self.steps[k] / img_h
            xs = (torch.arange(fw, dtype=torch.float32) + 0.5) * self.steps[k] / img_w
            cy, cx = torch.meshgrid(ys, xs, indexing="ij")
            per: List[torch.Tensor] = []
            for ms in self.min_sizes[k]:
                per.append(torch.stack([cx, cy, torch.full_like(cx, ms / img_w), torch.full_like(cy, ms / img_h)], -1))
            out.append(torch.stack(per, 2).view(-1, 4))
        return torch.cat(out, 0)

    def forward(self, x):
        f1 = self.body[0](x)
        f2 = self.body[1](f1)
        feats = [f1, f2]
        cls = torch.cat([h(feats[i]).permute(0, 2, 3, 1).contiguous().view(x.shape[0], -1, 2) for i, h in enumerate(self.ClassHead)], 1)
        loc = torch.cat([h(feats[i]).permute(0, 2, 3, 1).contiguous().view(x.shape[0], -1, 4) for i, h in enumerate(self.BboxHead)], 1)
        ldm = torch.cat([h(feats[i]).permute(0, 2, 3, 1).contiguous().view(x.shape[0], -1, 10) for i, h in enumerate(self.LandmarkHead)], 1)
        priors = self.priors(feats, x.shape[2], x.shape[3]).unsqueeze(0)
        v = self.variance
        boxes = torch.cat((priors[..., :2] + loc[..., :2] * v[0] * priors[..., 2:],
                           priors[..., 2:] * torch.exp(loc[..., 2:] * v[1])), 2)
        boxes = torch.cat((boxes[..., :2] - boxes[..., 2:] / 2, boxes[..., :2] + boxes[..., 2:] / 2), 2)
        landms = torch.cat([priors[..., :2] + ldm[..., 2 * i:2 * i + 2] * v[0] * priors[..., 2:] for i in range(5)], dim=2)
        return boxes, F.softmax(cls, dim=-1), landms


# ---------------------------------------------------------------- face alignment: affine from 5 landmarks
class FaceAlignAffine(nn.Module):
    def __init__(self, out=(16, 16)):
        super().__init__()
        self.out = out
        self.theta_net = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 6))
        nn.init.zeros_(self.theta_net[2].weight)
        with torch.no_grad():
            self.theta_net[2].bias.copy_(torch.tensor([0.9, 0.1, 0.0, -0.1, 0.9, 0.05]))

    def forward(self, img, landmarks):
        b, c = img.shape[0], img.shape[1]
        theta = self.theta_net(landmarks.flatten(1)).view(-1, 2, 3) + 0.05 * landmarks[:, :2, :].sum(-1, keepdim=True)
        grid = F.affine_grid(theta, [b, c, self.out[0], self.out[1]], align_corners=False)
        return F.grid_sample(img, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


# ---------------------------------------------------------------- DBNet++ adaptive scale fusion
class ScaleChannelSpatialAttention(nn.Module):
    def __init__(self, c, ci, out_features):
        super().__init__()
        self.channel_wise = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, ci, 1, bias=False), nn.ReLU(),
                                          nn.Conv2d(ci, c, 1, bias=False), nn.Sigmoid())
        self.spatial_wise = nn.Sequential(nn.Conv2d(1, 1, 3, padding=1, bias=False), nn.ReLU(),
                                          nn.Conv2d(1, 1, 1, bias=False), nn.Sigmoid())
        self.attention_wise = nn.Sequential(nn.Conv2d(c, out_features, 1, bias=False), nn.Sigmoid())

    def forward(self, inputs):
        out = self.channel_wise(inputs) + inputs
        global_x = torch.mean(out, dim=1, keepdim=True)
        out = self.spatial_wise(global_x) + out
        return self.attention_wise(out)


class DBNetPPASF(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.ins = nn.ModuleList([nn.Conv2d(ci, c, 1) for ci in (8, 16, 32)])
        self.outs = nn.ModuleList([nn.Conv2d(c, c // 4, 3, padding=1) for _ in range(3)])
        self.asf_conv = nn.Conv2d(3 * (c // 4), 3 * (c // 4), 3, padding=1)
        self.asf_attn = ScaleChannelSpatialAttention(3 * (c // 4), c // 4, 3)
        self.binarize = nn.Sequential(cbr(3 * (c // 4), 4), nn.ConvTranspose2d(4, 4, 2, 2), nn.ReLU(),
                                      nn.ConvTranspose2d(4, 1, 2, 2), nn.Sigmoid())

    def forward(self, c2, c3, c4):
        in4 = self.ins[2](c4)
        in3 = self.ins[1](c3)
        in2 = self.ins[0](c2)
        out3 = F.interpolate(in4, size=in3.shape[2:], mode="nearest") + in3
        out2 = F.interpolate(out3, size=in2.shape[2:], mode="nearest") + in2
        p4 = F.interpolate(self.outs[2](in4), scale_factor=4.0, mode="nearest")
        p3 = F.interpolate(self.outs[1](out3), scale_factor=2.0, mode="nearest")
        p2 = self.outs[0](out2)
        fuse = torch.cat((p2, p3, p4), 1)
        fusion = self.asf_conv(fuse)
        attn = self.asf_attn(fusion)
        enhanced: List[torch.Tensor] = []
        feats = [p2, p3, p4]
        for i in range(3):
            enhanced.append(attn[:, i:i + 1] * feats[i])
        return self.binarize(torch.cat(enhanced, dim=1))


# ---------------------------------------------------------------- PARSeq decoder with a permutation mask
class PARSeqDecoder(nn.Module):
    def __init__(self, d=16, heads=2, max_len=5, charset=10):
        super().__init__()
        self.max_len = max_len
        self.embed_dim = d
        self.pos_queries = nn.Parameter(torch.randn(1, max_len + 1, d) * 0.02)
        self.text_embed = nn.Embedding(charset + 3, d)
        self.self_attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm_q = nn.LayerNorm(d)
        self.norm_c = nn.LayerNorm(d)
        self.head = nn.Linear(d, charset + 1)
        self.register_buffer("perm", torch.tensor([0, 3, 1, 5, 2, 4, 6]))

    def generate_attn_masks(self, perm):
        sz = perm.shape[0]
        mask = torch.zeros((sz, sz))
        for i in range(sz):
            query_idx = perm[i]
            masked_keys = perm[i + 1:]
            mask[query_idx, masked_keys] = float("-inf")
        content_mask = mask[:-1, :-1].clone()
        mask[torch.eye(sz, dtype=torch.bool)] = float("-inf")
        query_mask = mask[1:, :-1]
        return content_mask, query_mask

    def forward(self, memory, tgt):
        N, L = tgt.shape
        content_mask, query_mask = self.generate_attn_masks(self.perm)
        null_ctx = self.text_embed(tgt[:, :1])
        tgt_emb = self.pos_queries[:, :L - 1] + self.text_embed(tgt[:, 1:]) * math.sqrt(self.embed_dim)
        content = self.norm_c(torch.cat([null_ctx, tgt_emb], dim=1))
        query = self.norm_q(self.pos_queries[:, :L].expand(N, -1, -1))
        q = query + self.self_attn(query, content, content, attn_mask=query_mask[:L, :L])[0]
        q = q + self.cross_attn(q, memory, memory)[0]
        c = content + self.self_attn(content, content, content, attn_mask=content_mask[:L, :L])[0]
        return self.head(q), c


# ---------------------------------------------------------------- TrOCR-like ViT encoder, pos embed interpolated in width
class TrOCREncoder(nn.Module):
    def __init__(self, d=16, patch=4, grid=(2, 8)):
        super().__init__()
        self.patch = patch
        self.grid = grid
        self.patch_embed = nn.Conv2d(3, d, patch, patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, d))
        self.pos_embed = nn.Parameter(torch.randn(1, 1 + grid[0] * grid[1], d))
        self.layer = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True, norm_first=True)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        B, _, H, W = x.shape
        x = self.patch_embed(x)
        h, w = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose(1, 2)
        pos = self.pos_embed[:, 1:].reshape(1, self.grid[0], self.grid[1], -1).permute(0, 3, 1, 2)
        pos = F.interpolate(pos, size=(h, w), mode="bicubic", align_corners=False)
        pos = pos.permute(0, 2, 3, 1).flatten(1, 2)
        x = torch.cat((self.cls_token.expand(B, -1, -1), x), dim=1)
        x = x + torch.cat((self.pos_embed[:, :1], pos), dim=1)
        return self.norm(self.layer(x))


# ---------------------------------------------------------------- LayoutLM 2-D position embeddings
class LayoutLMEmbeddings(nn.Module):
    def __init__(self, vocab=50, d=16, max_2d=1024):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d, padding_idx=0)
        self.position_embeddings = nn.Embedding(64, d)
        self.x_position_embeddings = nn.Embedding(max_2d, d)
        self.y_position_embeddings = nn.Embedding(max_2d, d)
        self.h_position_embeddings = nn.Embedding(max_2d, d)
        self.w_position_embeddings = nn.Embedding(max_2d, d)
        self.LayerNorm = nn.LayerNorm(d, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(64).expand((1, -1)))

    def forward(self, input_ids, bbox):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        bbox = torch.clamp(bbox, 0, 1000)
        left = self.x_position_embeddings(bbox[:, :, 0])
        upper = self.y_position_embeddings(bbox[:, :, 1])
        right = self.x_position_embeddings(bbox[:, :, 2])
        lower = self.y_position_embeddings(bbox[:, :, 3])
        h = self.h_position_embeddings(bbox[:, :, 3] - bbox[:, :, 1])
        w = self.w_position_embeddings(bbox[:, :, 2] - bbox[:, :, 0])
        e = self.word_embeddings(input_ids) + self.position_embeddings(position_ids) + left + upper + right + lower + h + w
        return self.LayerNorm(e)


def _bbox():
    g = np.random.RandomState(0)
    x0 = g.randint(-20, 900, size=(2, 6, 1))
    y0 = g.randint(0, 900, size=(2, 6, 1))
    return np.concatenate([x0, y0, x0 + g.randint(0, 200, (2, 6, 1)), y0 + g.randint(0, 150, (2, 6, 1))], -1).astype(np.int64)


IMG = ["x:0=b,2=h,3=w"]

VISION3 = [
    ("segformer", lambda: Spec(SegFormer(), ["1x3x64x64"], ["x"], IMG)),
    ("mask2former_masked_attn", lambda: Spec(Mask2FormerMaskedAttn(), ["1x16x16x16", "1x16x8x8"], ["mask_features", "src"],
                                             ["mask_features:0=b,2=h,3=w", "src:0=b,2=hs,3=ws"])),
    ("maskformer_einsum", lambda: Spec(MaskFormerHead(), ["1x3x16x16"], ["x"], IMG)),
    ("upernet_ppm_fpn", lambda: Spec(UPerHead(), ["1x8x24x24", "1x16x12x12", "1x32x6x6"], ["c2", "c3", "c4"],
                                     ["c2:0=b,2=h2,3=w2", "c3:0=b,2=h3,3=w3", "c4:0=b,2=h4,3=w4"])),
    ("hrnet_ocr", lambda: Spec(HRNetOCR(), ["1x3x32x32"], ["x"], IMG)),
    ("simplebaseline_argmax", lambda: Spec(SimpleBaseline(), ["2x3x32x32"], ["x"], IMG)),
    ("rtmpose_simcc", lambda: Spec(RTMCCHead(), ["2x3x32x32"], ["x"], ["x:0=b"])),
    ("higherhrnet_ae", lambda: Spec(HigherHRNetAE(), ["1x3x32x32"], ["x"], IMG)),
    ("retinaface_landm", lambda: Spec(RetinaFace(), ["1x3x64x64"], ["x"], IMG)),
    ("face_align_affine", lambda: Spec(FaceAlignAffine(), ["2x3x24x24", "2x5x2:float32:rand"], ["img", "landmarks"],
                                       ["img:0=b,2=h,3=w", "landmarks:0=b"])),
    ("dbnetpp_asf", lambda: Spec(DBNetPPASF(), ["1x8x16x16", "1x16x8x8", "1x32x4x4"], ["c2", "c3", "c4"],
                                 ["c2:0=b,2=h2,3=w2", "c3:0=b,2=h3,3=w3", "c4:0=b,2=h4,3=w4"])),
    ("parseq_perm_decoder", lambda: Spec(PARSeqDecoder(), ["2x8x16", np.array([[11, 3, 4, 5, 1, 2]] * 2)],
                                         ["memory", "tgt"], ["memory:0=b,1=m", "tgt:0=b"])),
    ("trocr_vit_width", lambda: Spec(TrOCREncoder(), ["1x3x8x40"], ["x"], ["x:0=b,3=w"])),
    ("layoutlm_2d_pos", lambda: Spec(LayoutLMEmbeddings(), ["2x6:int64:arange", _bbox()], ["input_ids", "bbox"],
                                     ["input_ids:0=b,1=s", "bbox:0=b,1=s"])),
] + VISION3_B
