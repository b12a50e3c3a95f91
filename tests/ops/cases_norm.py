import torch
import torch.nn as nn

import torch.nn.functional as F

from optest import Fn, T, case


def bn(c, **kw):
    m = nn.BatchNorm2d(c, **kw)
    with torch.no_grad():
        if m.running_mean is not None:
            m.running_mean.uniform_(-1, 1)
            m.running_var.uniform_(0.5, 2)
        if m.weight is not None:
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.5, 0.5)
    return m


def _inorm_running():
    m = nn.InstanceNorm2d(4, affine=True, track_running_stats=True)
    with torch.no_grad():
        m.running_mean.uniform_(-1, 1)
        m.running_var.uniform_(0.5, 2)
        m.weight.uniform_(0.5, 1.5)
        m.bias.uniform_(-0.5, 0.5)
    return m.eval()


CASES = [
    case("batch_norm2d", bn(4), [T(2, 4, 5, 5)], dynamic={0: [0]}),
    case("batch_norm2d_no_affine", bn(3, affine=False), [T(1, 3, 4, 4)]),
    case("batch_norm1d", nn.BatchNorm1d(5).eval(), [T(3, 5)]),
    case("conv_bn_fold", nn.Sequential(nn.Conv2d(3, 4, 3), bn(4), nn.ReLU()), [T(1, 3, 8, 8)]),
    case("layer_norm", nn.LayerNorm(8), [T(2, 3, 8)], dynamic={0: [0, 1]}),
    case("layer_norm_2d_shape", nn.LayerNorm([4, 6]), [T(2, 4, 6)]),
    case("layer_norm_no_affine", nn.LayerNorm(6, elementwise_affine=False), [T(3, 6)]),
    case("group_norm", nn.GroupNorm(2, 6), [T(2, 6, 4, 4)], dynamic={0: [0, 2, 3]}),
    case("instance_norm", nn.InstanceNorm2d(3, affine=True), [T(2, 3, 5, 5)]),
    # Batch statistics in an eval export: no running statistics, or F.batch_norm(training=True).
    case("batch_norm2d_batch_stats", nn.BatchNorm2d(4, track_running_stats=False), [T(3, 4, 5, 6)],
         dynamic={0: [0, 2, 3]}),
    case("batch_norm1d_batch_stats_2d", nn.BatchNorm1d(5, affine=False, track_running_stats=False), [T(6, 5)]),
    case("batch_norm_fn_training_with_stats", Fn(lambda x: F.batch_norm(x, torch.zeros(4), torch.ones(4), training=True)),
         [T(2, 4, 3, 5)]),
    # InstanceNorm with track_running_stats=True in eval normalizes with the running statistics.
    case("instance_norm_running_stats", _inorm_running(), [T(2, 4, 5, 5)], dynamic={0: [0, 2, 3]}),
]
