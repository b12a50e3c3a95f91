#!/usr/bin/python3
"""Measures how far a two-stage torchvision detector's discrete decisions are from flipping, for the
zoo's fixture images, so that an image can be picked whose decisions float32 rounding cannot change
(docs/OP_LIBRARIES.md, "Mask R-CNN and Keypoint R-CNN at 321: the cause").

usage: tools/det_margins.py MODEL SEED[,SEED...] [SIZE,SIZE,...] [--f64] [--fill rand|smooth]
MODEL: maskrcnn_resnet50_fpn or keypointrcnn_resnet50_fpn, built as tests/zoo/gen_zoo.py builds it
(torch.manual_seed(0) weights, min_size=max_size=320, 30 detections, no score threshold). The image
is the [1, 3, SIZE, SIZE] tensor oxport makes from {"fill": FILL, "seed": SEED} (tests/zoo/fills.py;
FILL rand by default, white noise; smooth, a low-frequency field); sizes default to the zoo's 320,
321, 640. Per seed and size it prints, over the 30 detections (boxes in
the resized image, as the RoI heads see them):
  edge   the nearest roi_align sample (aligned=False: the box widened to one feature pixel, 2x2
         samples per bin) to x = W or y = H (or -1) of its feature map, in feature pixels: there
         roi_align jumps from the edge pixel's value to 0. For the detections' own boxes (mask or
         keypoint head, 14x14) and for the proposals they were decoded from (box head, 7x7).
  level  the distance of MultiScaleRoIAlign's level, 4 + log2(sqrt(area) / 224), to an integer
         (its floor picks the feature map), for the same boxes
  ceil   Keypoint R-CNN: the distance of the boxes' widths and heights (clamped to 1) to an
         integer above 1: heatmaps_to_keypoints resizes each heatmap to their ceil
  argmax Keypoint R-CNN: the smallest gap between the largest and second largest value of a
         keypoint's resized heatmap, relative to its largest |value|
  nms    the box head's NMS (IoU 0.5): the smallest |IoU - 0.5| between a kept box and a later one
         (nms_iou), and the smallest relative score gap between two boxes whose IoU is over 0.45
         and which are not the same box (nms_gap; their order decides which survives)
  top    the relative score gap between the 30th and 31st box that NMS keeps
  f64    with --f64: the largest |float32 - float64| / max |value| of each output (libtorch's own
         error; the float64 run is the slow part)
Each margin is compared with how far float32 moves the quantity: boxes differ by up to ~0.02 px
between libtorch and ONNX Runtime. Run with /usr/bin/python3.
"""
import math
import sys
import warnings

import os

import torch
import torch.nn.functional as F
import torchvision.models.detection as det
from torchvision.ops import boxes as box_ops

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "zoo"))
from fills import make_tensor  # noqa: E402

warnings.simplefilter("ignore")


def build(name):
    torch.manual_seed(0)
    return getattr(det, name)(weights=None, weights_backbone=None, min_size=320, max_size=320,
                              box_score_thresh=0.0, box_detections_per_img=30).eval()


def edge_margin(boxes, feats, image_size, out):
    """Smallest distance of a roi_align sample (aligned=False, sampling_ratio 2) to the jump of its
    feature map at x = W, y = H, x = -1, y = -1, with MultiScaleRoIAlign's level per box."""
    lv, lm = levels(boxes)
    best = math.inf
    for b, k in zip(boxes.double(), lv.tolist()):
        f = feats[k]
        scale = 2.0 ** round(math.log2(f.shape[-1] / image_size[1]))
        for lo, hi, n in ((b[0], b[2], f.shape[-1]), (b[1], b[3], f.shape[-2])):
            start = lo.item() * scale
            size = max(hi.item() * scale - start, 1.0)
            grid = torch.arange(out * 2, dtype=torch.float64)
            s = start + (grid + 0.5) * size / (out * 2)
            best = min(best, (s - n).abs().min().item(), (s + 1).abs().min().item())
    return best, lm


def levels(boxes):
    s = torch.sqrt(box_ops.box_area(boxes.double()))
    k = 4 + torch.log2(s / 224) + 1e-6
    lv = k.floor().clamp(2, 5).long() - 2
    inside = (k > 2) & (k < 6)
    margin = (k - k.round()).abs()[inside].min().item() if inside.any() else math.inf
    return lv, margin


def nms_margins(boxes, scores, thresh=0.5, keep_n=30):
    order = scores.argsort(descending=True)
    boxes, scores = boxes[order].double(), scores[order].double()
    iou = box_ops.box_iou(boxes, boxes)
    keep = box_ops.nms(boxes.float(), scores.float(), thresh)
    top = scores.abs().max().item()
    iou_m, gap = math.inf, math.inf
    for i in keep.tolist():
        later = iou[i, i + 1:]
        if later.numel():
            iou_m = min(iou_m, (later - thresh).abs().min().item())
            # Identical boxes with equal scores (clipped duplicates) give the same output in
            # either order.
            close = ((later > thresh - 0.05) & (later < 1 - 1e-6)).nonzero().flatten() + i + 1
            if close.numel():
                gap = min(gap, (scores[i] - scores[close]).abs().min().item() / top)
    ks = scores[keep]
    cut = (ks[keep_n - 1] - ks[keep_n]).item() / top if len(ks) > keep_n else math.inf
    return iou_m, gap, cut, order[keep[:keep_n]]


def analyse(model, name, x):
    got = {}
    rh = model.roi_heads
    h1 = rh.box_roi_pool.register_forward_hook(lambda m, a, o: got.update(feats=a[0], props=a[1][0], shapes=a[2]))
    h2 = rh.box_predictor.register_forward_hook(lambda m, a, o: got.update(logits=o[0], reg=o[1]))
    head = rh.keypoint_predictor if name.startswith("keypoint") else rh.mask_predictor
    h3 = head.register_forward_hook(lambda m, a, o: got.update(maps=o))
    with torch.no_grad():
        out = model([x[0]])[0]
    for h in (h1, h2, h3):
        h.remove()
    feats = [got["feats"][k] for k in ("0", "1", "2", "3")]
    shape = got["shapes"][0]
    props = got["props"]
    boxes = rh.box_coder.decode(got["reg"], [props])[:, 1]
    boxes = box_ops.clip_boxes_to_image(boxes, shape)
    scores = F.softmax(got["logits"], -1)[:, 1]
    keep = box_ops.remove_small_boxes(boxes, 1e-2)
    iou_m, gap, cut, kept = nms_margins(boxes[keep], scores[keep])
    src = keep[kept]
    dets = boxes[src]
    r = {"nms_iou": iou_m, "nms_gap": gap, "top": cut}
    r["edge_box"], r["level_box"] = edge_margin(props[src], feats, shape, 7)
    r["edge_head"], r["level_head"] = edge_margin(dets, feats, shape, 14)
    if name.startswith("keypoint"):
        wh = torch.stack([dets[:, 2] - dets[:, 0], dets[:, 3] - dets[:, 1]], 1).double()
        frac = torch.where(wh <= 1, 1 - wh, (wh - wh.round()).abs())
        # A width that is an exact integer is a box clipped on both sides (0 to W): both runs clip
        # it to the same value, and a box clamped to exactly 1 the same: no knife-edge.
        edge = wh != wh.round()
        r["ceil"] = frac[edge].min().item() if edge.any() else math.inf
        r["argmax"] = argmax_gap(got["maps"], dets.clamp(min=0))
    return out, r


def argmax_gap(maps, rois):
    best = math.inf
    for i in range(len(rois)):
        w = max((rois[i, 2] - rois[i, 0]).item(), 1)
        h = max((rois[i, 3] - rois[i, 1]).item(), 1)
        m = F.interpolate(maps[i][:, None], size=(math.ceil(h), math.ceil(w)), mode="bicubic",
                          align_corners=False)[:, 0].flatten(1)
        t = m.topk(2, dim=1).values
        best = min(best, ((t[:, 0] - t[:, 1]) / m.abs().max(1).values).min().item())
    return best


def main():
    f64 = "--f64" in sys.argv
    argv = [a for a in sys.argv if a != "--f64"]
    fill = "rand"
    if "--fill" in argv:
        i = argv.index("--fill")
        fill = argv[i + 1]
        del argv[i:i + 2]
    name = argv[1]
    seeds = [int(s) for s in argv[2].split(",")]
    sizes = [int(s) for s in argv[3].split(",")] if len(argv) > 3 else [320, 321, 640]
    model = build(name)
    m64 = build(name).double() if f64 else None
    for seed in seeds:
        for size in sizes:
            x = make_tensor({"fill": fill, "dtype": "float32"}, [1, 3, size, size], seed)
            out, r = analyse(model, name, x)
            line = f"seed {seed} size {size}: " + ", ".join(f"{k} {v:.2g}" for k, v in r.items())
            if m64 is not None:
                line += " | f64 " + float64_error(out, m64, x)
            print(line, flush=True)


def float64_error(out, m64, x):
    with torch.no_grad():
        o64 = m64([x[0].double()])[0]
    errs = []
    for k, v in out.items():
        if k == "labels":
            continue
        if v.shape != o64[k].shape:
            errs.append(f"{k} shapes differ")
            continue
        errs.append(f"{k} {(v.double() - o64[k]).abs().max().item() / max(v.abs().max().item(), 1e-30):.1e}")
    return ", ".join(errs)


if __name__ == "__main__":
    main()
