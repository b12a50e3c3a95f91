"""torchvision's detection ops (its op library is loaded by oxport for these models): nms,
roi_align, roi_pool. Scores are distinct, so the kept order has no ties to break."""
import numpy as np
import torch
from torchvision.ops import nms, roi_align, roi_pool

from optest import Npy, case

R = np.random.RandomState(11)
XY = R.uniform(0, 20, (16, 2)).astype(np.float32)
BOXES = Npy(np.concatenate([XY, XY + R.uniform(2, 12, (16, 2)).astype(np.float32)], 1))
SCORES = Npy(R.permutation(16).astype(np.float32) / 16 + 0.01)
FEAT = Npy(R.randn(2, 3, 16, 16).astype(np.float32))
ROIS = Npy(np.array([[0, 1.0, 1.5, 10.0, 12.0], [1, 4.0, 2.0, 20.0, 9.5], [0, 0.0, 0.0, 31.0, 31.0],
                     [1, 6.2, 7.7, 8.1, 9.0]], dtype=np.float32))

ROIS_WIDE = Npy(ROIS.array[:3])

CASES = [
    case("nms", lambda b, s: nms(b, s, 0.5), [BOXES, SCORES], opsets=(10, 11, 17), dynamic={0: [0], 1: [0]}),
    case("nms_low_iou", lambda b, s: nms(b, s, 0.1), [BOXES, SCORES], opsets=(11,)),
    case("nms_opset9_refused", lambda b, s: nms(b, s, 0.5), [BOXES, SCORES], opsets=(9,),
         expect="error:opset-too-old", operator_export_type="ONNX"),
    case("roi_align", lambda f, r: roi_align(f, r, (3, 3), spatial_scale=0.5, sampling_ratio=2, aligned=False),
         [FEAT, ROIS], opsets=(10, 11, 16, 17), dynamic={1: [0]}),
    case("roi_align_aligned", lambda f, r: roi_align(f, r, (2, 4), spatial_scale=0.5, sampling_ratio=2, aligned=True),
         [FEAT, ROIS], opsets=(16, 17)),
    # Below opset 16 aligned=True is a half-pixel shift of the boxes: exact for boxes of at least
    # one feature-map pixel (the last ROI, under one pixel, is widened there; warned).
    case("roi_align_aligned_opset11", lambda f, r: roi_align(f, r, (2, 4), spatial_scale=0.5, sampling_ratio=2,
                                                             aligned=True), [FEAT, ROIS_WIDE], opsets=(10, 11, 13)),
    case("roi_align_adaptive", lambda f, r: roi_align(f, r, (3, 3), spatial_scale=0.25, sampling_ratio=-1),
         [FEAT, ROIS], opsets=(11, 16)),
    case("roi_pool", lambda f, r: roi_pool(f, r, (2, 2), spatial_scale=0.5), [FEAT, ROIS], opsets=(9, 11, 17)),
]
