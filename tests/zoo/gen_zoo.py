#!/usr/bin/python3
"""Generates the model-zoo fixtures: OUT/<model>/model.pt + preset.json, and OUT/manifest.json.

usage: gen_zoo.py OUT_DIR [--full] [NAME ...]
Models marked full (the slow detectors) are made only with --full; their manifest entries have the
label "zoo-full" (the test_zoo_full tests, built with -DOXPORT_ZOO_FULL=ON), the others "zoo".
Run with /usr/bin/python3 (the Python that has torch and torchvision). Weights are random
(torch.manual_seed(0), never downloaded); every module is in eval mode and traced as a user would
trace it, then saved with torch.jit.save. Models marked no_grad are traced under torch.no_grad(),
where PyTorch records its fused fast paths (aten::_transformer_encoder_layer_fwd,
aten::_native_multi_head_attention) instead of the ops they are made of.
"""
import json
import os
import sys
import warnings

import torch
import torch.nn as nn

from fills import make_tensor


def image_model(name, builder, size, batch=1):
    return dict(name=name, build=builder, no_grad=False,
                inputs=[dict(name="input", shape=[batch, 3, size, size], dtype="float32", dynamic=[0])],
                outputs={"logits": [0]})


def tv(fn, **kw):
    def build():
        import torchvision.models as m
        return getattr(m, fn)(weights=None, **kw)
    return build


class SegOut(nn.Module):
    """torchvision's segmentation models return {"out": ...}: the deployed tensor."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def seg_model(name, fn, size):
    """A segmentation model with batch, height and width dynamic (its Resize sizes follow them)."""
    def build():
        import torchvision.models.segmentation as seg
        return SegOut(getattr(seg, fn)(weights=None, weights_backbone=None))
    return dict(name=name, build=build, no_grad=False,
                inputs=[dict(name="image", shape=[1, 3, size, size], dtype="float32", dynamic=[0, 2, 3])],
                outputs={"out": [0, 2, 3]})


class DetOut(nn.Module):
    """A torchvision detector as deployment code traces it: one image in, (boxes, labels, scores)
    out, then what its heads add (masks, keypoints)."""

    def __init__(self, m, extra=()):
        super().__init__()
        self.m = m
        self.extra = list(extra)

    def forward(self, x):
        out = self.m([x[0]])[0]
        return tuple([out["boxes"], out["labels"], out["scores"]] + [out[k] for k in self.extra])


def det_model(name, fn, size, init=None, tolerance=1e-4, full=False, extra=(), seed=0, fill="rand", **kw):
    """With random weights every score is low: no score threshold, a fixed number of detections, so
    that NMS and the box decoding are compared (the image's height and width are dynamic). init,
    if given, re-draws the random weights of a model whose own initialization leaves every score
    equal (then NMS only breaks ties, and any order is right). seed, fill: the image's (preset)
    seed and fill."""
    def build():
        import torchvision.models.detection as det
        model = getattr(det, fn)(weights=None, weights_backbone=None, **kw)
        if init:
            init(model)
        return DetOut(model, extra)
    # Pixel values in [0, 1) as images have ("rand"): normal noise makes near-equal scores, whose
    # order NMS may break either way. The detection count depends on the data: no output axis is
    # declared to follow the inputs.
    return dict(name=name, build=build, no_grad=True, meta_run=False,
                inputs=[dict(name="image", shape=[1, 3, size, size], dtype="float32", dynamic=[2, 3], fill=fill,
                             seed=seed)],
                outputs=dict({"boxes": [], "labels": [], "scores": []}, **{k: [] for k in extra}),
                opsets=[11, 17], tolerance=tolerance,
                full=full)


def ssd_signal_init(cls_scale, he=True):
    """SSDLite's own initialization (std 0.03 convolutions) shrinks the features to ~1e-13 on the
    way through the backbone: every class score is then exactly 1/num_classes and NMS compares
    ties. Variance-keeping random convolutions (he: He, fan-in) keep a signal. The classification
    head is scaled so that the scores stay apart instead of all saturating near 1 (SSD300's do,
    1e-7 apart)."""
    def init(model):
        with torch.no_grad():
            for mod in model.modules():
                if he and isinstance(mod, nn.Conv2d):
                    nn.init.kaiming_normal_(mod.weight, mode="fan_in", nonlinearity="relu")
            for mod in model.head.classification_head.module_list:
                last = [c for c in mod.modules() if isinstance(c, nn.Conv2d)][-1]
                last.weight.mul_(cls_scale)
    return init


def vit_b_16():
    # torchvision zero-initializes the ViT head, which would make the logits all zero and the
    # comparison vacuous: give the head random weights like every other layer.
    model = tv("vit_b_16")()
    nn.init.normal_(model.heads.head.weight, std=0.02)
    nn.init.normal_(model.heads.head.bias, std=0.02)
    return model


class EncoderWithMask(nn.Module):
    """nn.TransformerEncoder called with a key padding mask (True = padding)."""

    def __init__(self, enc):
        super().__init__()
        self.enc = enc

    def forward(self, src, src_key_padding_mask):
        return self.enc(src, src_key_padding_mask=src_key_padding_mask)


class SelfAttention(nn.Module):
    """nn.MultiheadAttention used for self-attention (query, key and value the same tensor)."""

    def __init__(self, key_padding=False):
        super().__init__()
        self.attn = nn.MultiheadAttention(64, 4, batch_first=True)
        self.key_padding = key_padding

    def forward(self, x, mask):
        out, weights = self.attn(x, x, x, key_padding_mask=mask if self.key_padding else None)
        return out


def encoder(batch_first=True, norm_first=False, activation="relu", nested=True):
    def build():
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, activation=activation,
                                           batch_first=batch_first, norm_first=norm_first)
        return nn.TransformerEncoder(layer, 4, enable_nested_tensor=nested)
    return build


def seq_inputs(batch_first, features, with_mask=False, batch=2, seq=10):
    shape = [batch, seq, features] if batch_first else [seq, batch, features]
    axes = [0, 1]
    ins = [dict(name="src", shape=shape, dtype="float32", dynamic=axes)]
    if with_mask:
        ins.append(dict(name="mask", shape=[batch, seq], dtype="bool", dynamic=[0, 1]))
    return ins


def rnn_model(name, cls, batch_first):
    b, s = (0, 1) if batch_first else (1, 0)
    outputs = {"output": [b, s], "h_n": [1]}
    if cls is nn.LSTM:
        outputs["c_n"] = [1]
    return dict(name=name, no_grad=False,
                build=lambda: cls(16, 32, num_layers=2, bidirectional=True, batch_first=batch_first),
                inputs=seq_inputs(batch_first, 16), outputs=outputs)


def encoder_model(name, build, no_grad, with_mask, batch_first=True):
    b, s = (0, 1) if batch_first else (1, 0)
    return dict(name=name, build=build, no_grad=no_grad, inputs=seq_inputs(batch_first, 64, with_mask),
                outputs={"output": [b, s]}, wrap=EncoderWithMask if with_mask else None)


MODELS = [
    image_model("resnet18", tv("resnet18"), 64),
    image_model("resnet50", tv("resnet50"), 64),
    image_model("mobilenet_v2", tv("mobilenet_v2"), 64),
    image_model("mobilenet_v3_small", tv("mobilenet_v3_small"), 64),
    image_model("vgg11_bn", tv("vgg11_bn"), 224),
    image_model("squeezenet1_1", tv("squeezenet1_1"), 64),
    image_model("densenet121", tv("densenet121"), 64),
    image_model("inception_v3", tv("inception_v3", aux_logits=False, init_weights=True), 75),
    image_model("vit_b_16", vit_b_16, 224),
    seg_model("lraspp_mobilenet_v3_large", "lraspp_mobilenet_v3_large", 64),
    det_model("fasterrcnn_mobilenet_v3_large_320_fpn", "fasterrcnn_mobilenet_v3_large_320_fpn", 320,
              box_score_thresh=0.0, box_detections_per_img=30),
    # SSD resizes every image to 320x320. At 321x321, ONNX Runtime's Resize computes the sampling
    # positions from 320/321 and libtorch from 321/320: positions a few 1e-5 pixel apart, which on a
    # noise image are 6.5e-5 apart in the resized image and 1.5e-4 of the largest score at the end.
    det_model("ssdlite320_mobilenet_v3_large", "ssdlite320_mobilenet_v3_large", 320, init=ssd_signal_init(0.2),
              tolerance=3e-4, score_thresh=0.0, detections_per_img=30),
    # The ResNet-50 and VGG detectors at a 320 (SSD: 300) image: slow, outside the default run.
    det_model("retinanet_resnet50_fpn", "retinanet_resnet50_fpn", 320, min_size=320, max_size=320,
              score_thresh=0.0, detections_per_img=30, full=True),
    det_model("fcos_resnet50_fpn", "fcos_resnet50_fpn", 320, min_size=320, max_size=320,
              score_thresh=0.0, detections_per_img=30, full=True),
    det_model("ssd300_vgg16", "ssd300_vgg16", 300, init=ssd_signal_init(0.2, he=False),
              score_thresh=0.0, detections_per_img=30, full=True),
    # The two-stage ResNet-50 detectors pool their RoIs (roi_align) from feature maps that, with
    # random weights on a noise image, change by their full magnitude from one pixel to the next:
    # a proposal box that moves by float32 rounding (1e-5 px) moves the pooled values by ~1e-4 of
    # their magnitude. libtorch itself in float32 is that far from the same model in float64
    # (measured at 320: boxes 1.1e-4, scores 9.9e-5 of their largest value), so two correct
    # float32 implementations can differ by twice that; ONNX Runtime differs from libtorch by
    # 1.5e-4 (320), 1.1e-4 (321), 2e-5 (640), at opsets 11 and 17 alike. `oxport verify
    # --localize` (320, opset 11): the first divergence is the RPN's top-1000 of 19200 objectness
    # values, whose values agree (3.8e-6) and whose indices differ only among values equal within
    # rounding; then roi_align, with boxes that agree within the tolerance, 2e-4.
    # Tolerance: 2x libtorch's own float32 error, rounded up.
    det_model("fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn", 320, min_size=320, max_size=320,
              box_score_thresh=0.0, box_detections_per_img=30, full=True, tolerance=3e-4),
    # Mask R-CNN and Keypoint R-CNN: the same detector with a mask or keypoint head (roi_align
    # 14x14 from the same kind of features). With the seed-0 image they differ at 321 for reasons
    # that are not conversion errors (docs/OP_LIBRARIES.md, measured with tools/det_compare.py):
    # Keypoint R-CNN's detection 0 is a box 0.07 px wide at the image's right edge, whose roi_align
    # samples (aligned=False widens it to 1 feature pixel) fall 5e-5 feature px from x = W, where
    # roi_align (libtorch's and ONNX Runtime's alike) jumps from the edge pixel's value to 0; a
    # 2e-4 px move of the box moves keypoints by up to 44 px. Mask R-CNN's detection 8 is a box
    # 5.9 px high whose 28x28 mask moves by 1.5e-3 to 1.2e-2 when the box moves by 0.002 to
    # 0.008 px (the boxes' float32 difference), and by 1.5e-5 in float64 with the same box. Mask
    # R-CNN uses image seed 2, without such a box (seed 1 has masks 1.0e-3 apart at 321). Tolerance
    # as for fasterrcnn_resnet50_fpn: 2x libtorch's own float32 error (masks 4.9e-4), rounded up.
    det_model("maskrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn", 320, min_size=320, max_size=320,
              box_score_thresh=0.0, box_detections_per_img=30, full=True, tolerance=1e-3, extra=("masks",), seed=2),
    # Keypoint R-CNN on a smooth image ("smooth", seed 0: blobs and edges, the same picture at 320,
    # 321 and 640), not white noise. On noise every image seed tried (0-4) had a knife-edge that
    # float32 rounding crossed at one size or another: degenerate boxes (on the image's edge,
    # 0.07 px wide) whose roi_align samples sat 5e-5 feature px from the jump at x = W, a box
    # 181.0002 px high whose heatmap is resized to ceil(height) rows; the boxes of libtorch and ONNX
    # Runtime differed by up to 0.017 px. tools/det_margins.py --fill smooth (2026-12-04) measures
    # margins of the same order on the smooth image (seed 0: edge 1.4e-3 / 1.7e-2 / 1.3e-3 feature
    # px, ceil 0.031 / 0.018 / 0.0077 px at 320 / 321 / 640), but there its boxes move far less
    # between the two runs (tools/det_compare.py: at most 0.0015 / 0.0021 / 0.0025 px, 5e-4 feature
    # px at the finest level), so each knife-edge is 2.5 to 20 times the largest box's movement
    # and every heatmap size is the same in both runs. Errors (largest output), opset 11: 1.2e-5,
    # 2.4e-5, 3.3e-5 at 320, 321, 640 (keypoint scores); opset 17 the same.
    # The zoo's default tolerance, 1e-4: these are float32 rounding differences, as large as
    # libtorch's own (float64 model on the same image, 320: keypoint scores 1.2e-5, scores 8.3e-6,
    # boxes and keypoints 4.5e-6); no special tolerance is needed.
    det_model("keypointrcnn_resnet50_fpn", "keypointrcnn_resnet50_fpn", 320, min_size=320, max_size=320,
              box_score_thresh=0.0, box_detections_per_img=30, full=True, tolerance=1e-4,
              extra=("keypoints", "keypoints_scores"), fill="smooth", seed=0),
    # nn.TransformerEncoder, 4 layers, d_model 64: the composite path (traced with autograd on) ...
    encoder_model("transformer_encoder", encoder(), False, False),
    encoder_model("transformer_encoder_mask", encoder(), False, True),
    encoder_model("transformer_encoder_seq_first", encoder(batch_first=False), False, True, batch_first=False),
    encoder_model("transformer_encoder_norm_first_gelu", encoder(norm_first=True, activation="gelu"), False, True),
    # ... and the fused fast paths recorded under torch.no_grad() (beyond torch.onnx 1.13).
    encoder_model("transformer_encoder_fused", encoder(), True, False),
    encoder_model("transformer_encoder_fused_mask", encoder(nested=False), True, True),
    encoder_model("transformer_encoder_fused_norm_first_gelu",
                  encoder(norm_first=True, activation="gelu", nested=False), True, True),
    dict(name="mha_fused", build=lambda: SelfAttention(key_padding=True), no_grad=True,
         inputs=seq_inputs(True, 64, True), outputs={"output": [0, 1]}),
    dict(name="mha_fused_nomask", build=lambda: SelfAttention(key_padding=False), no_grad=True,
         inputs=seq_inputs(True, 64, True), outputs={"output": [0, 1]}),
    rnn_model("lstm", nn.LSTM, False),
    rnn_model("lstm_batch_first", nn.LSTM, True),
    rnn_model("gru", nn.GRU, False),
    rnn_model("gru_batch_first", nn.GRU, True),
]


def mask_seed(spec):
    """A seed whose random padding mask leaves every row some unmasked key, at the traced size and
    at the other sizes the test verifies (traced + 1 and 2x on the dynamic axes): a row with every
    key masked is NaN in PyTorch."""
    for seed in range(1000):
        ok = True
        for f in (lambda s: s, lambda s: s + 1, lambda s: 2 * s):
            shape = [f(d) if i in spec["dynamic"] else d for i, d in enumerate(spec["shape"])]
            if make_tensor(spec, shape, seed).all(dim=-1).any():
                ok = False
        if ok:
            return seed
    raise SystemExit("no usable mask seed")


def main():
    out = sys.argv[1]
    full = "--full" in sys.argv[2:]
    only = set(a for a in sys.argv[2:] if a != "--full")
    os.makedirs(out, exist_ok=True)
    manifest = []
    for m in MODELS:
        name = m["name"]
        if m.get("full") and not full:
            continue
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        if only and name not in only:
            manifest.append({"name": name, "dir": name, "opsets": [11, 13, 17], "tolerance": 1e-4,
                             "label": "zoo-full" if m.get("full") else "zoo"})
            continue
        torch.manual_seed(0)
        module = m["build"]()
        if m.get("wrap"):
            module = m["wrap"](module)
        module.eval()
        args = []
        preset_args = []
        for spec in m["inputs"]:
            seed = mask_seed(spec) if spec["dtype"] == "bool" else spec.get("seed", 0)
            args.append(make_tensor(spec, spec["shape"], seed))
            preset_args.append({"tensor": {"shape": spec["shape"], "dtype": spec["dtype"], "fill": spec.get("fill", "randn"),
                                           "seed": seed}})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if m["no_grad"]:
                with torch.no_grad():
                    traced = torch.jit.trace(module, tuple(args), check_trace=False)
            else:
                traced = torch.jit.trace(module, tuple(args), check_trace=False)
        traced.save(os.path.join(folder, "model.pt"))
        input_names = [s["name"] for s in m["inputs"]]
        output_names = list(m["outputs"].keys())
        dyn = {}
        for s in m["inputs"]:
            dyn[s["name"]] = {str(a): f"{s['name']}_{a}" for a in s["dynamic"]}
        for o, axes in m["outputs"].items():
            if axes:
                dyn[o] = {str(a): f"{o}_{a}" for a in axes}
        # The seed's defaults otherwise (keep_initializers_as_inputs None, ONNX_FALLTHROUGH), as
        # users export: the weights are graph inputs, what the export computes is not.
        preset = {"format": "oxport-preset", "version": 1, "model": "model.pt", "args": preset_args,
                  "input_names": input_names, "output_names": output_names, "dynamic_axes": dyn}
        with open(os.path.join(folder, "preset.json"), "w") as f:
            json.dump(preset, f, indent=2)
        manifest.append({"name": name, "dir": name, "opsets": m.get("opsets", [11, 13, 17]),
                         "label": "zoo-full" if m.get("full") else "zoo",
                         "tolerance": m.get("tolerance", 1e-4), "meta_run": m.get("meta_run", True)})
        print(f"  {name}", flush=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{len(manifest)} zoo models in {out}")


if __name__ == "__main__":
    main()
