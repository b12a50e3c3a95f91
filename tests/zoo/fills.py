"""oxport's example-tensor fills in Python, with the same torch ops as the core's makeTensor
(core/src/frontend/example_args.cpp), so that fixtures are traced, and tools/det_margins.py
measures, on the very tensor oxport makes from {"fill": ..., "seed": ...} (a preset's or --arg's).
The python label's test_example_input checks the two agree."""
import math

import torch
import torch.nn.functional as F


def smooth_field(shape, g):
    """{"fill": "smooth"}: five octaves of value noise over the last two axes (seeded uniform grids
    of 3, 5, 9, 17 and 33 points per axis, interpolated bicubically with align_corners over the
    whole axis, amplitudes 1 ... 1/16), summed in float64 and stretched to [0, 1] per slice."""
    if not shape:
        return torch.rand([], generator=g)
    lead = math.prod(shape[:-2])
    h = shape[-2] if len(shape) >= 2 else 1
    w = shape[-1]
    if math.prod(shape) == 0:
        return torch.zeros(shape)
    total = torch.zeros([lead, 1, h, w], dtype=torch.float64)
    amplitude = 1.0
    for points in (3, 5, 9, 17, 33):
        grid = torch.rand([lead, 1, points, points], generator=g).double()
        total.add_(F.interpolate(grid, size=(h, w), mode="bicubic", align_corners=True), alpha=amplitude)
        amplitude /= 2
    lo, hi = total.amin((2, 3), keepdim=True), total.amax((2, 3), keepdim=True)
    flat = (hi - lo) <= 0
    field = torch.where(flat, (total / (2.0 - 1.0 / 16)).clamp(0, 1),
                        (total - lo) / torch.where(flat, torch.ones_like(hi), hi - lo))
    return field.float().reshape(shape)


def make_tensor(spec, shape, seed):
    """The tensor oxport makes from {"fill": FILL, "seed": seed} (randn, rand or smooth) of
    spec["dtype"] at `shape`."""
    g = torch.Generator().manual_seed(seed)
    fill = spec.get("fill", "randn")
    if fill == "smooth":
        t = smooth_field(list(shape), g)
        return t > 0.5 if spec["dtype"] == "bool" else t.to(getattr(torch, spec["dtype"]))
    t = torch.rand(shape, generator=g) if fill == "rand" else torch.randn(shape, generator=g)
    if spec["dtype"] == "bool":
        return torch.rand(shape, generator=g) > 0.5
    return t.to(getattr(torch, spec["dtype"]))
