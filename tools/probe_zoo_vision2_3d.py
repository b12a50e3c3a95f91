"""The probe sweep's 3-D, point-cloud and vendor-style QAT models (tools/probe_zoo_vision2.py lists
them in VISION2; split out to keep each file to one screenful of families)."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# ---------------------------------------------------------------- 3-D and point clouds
class C3D(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv3d(3, 8, 3, padding=1)
        self.pool1 = nn.MaxPool3d((1, 2, 2), (1, 2, 2))
        self.conv2 = nn.Conv3d(8, 16, (3, 1, 1), padding=(1, 0, 0))
        self.bn = nn.BatchNorm3d(16)
        self.pool2 = nn.MaxPool3d(3, 2, ceil_mode=True)
        self.i3d_pool = nn.MaxPool3d((1, 3, 3), (1, 2, 2), padding=(0, 1, 1))
        self.avg = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = self.pool1(F.relu(self.conv1(x)))
        x = self.pool2(F.relu(self.bn(self.conv2(x))))
        x = self.i3d_pool(x)
        return self.fc(self.avg(x).flatten(1))


def farthest_point_sample(xyz, npoint: int):
    B, N, C = xyz.shape
    centroids = torch.zeros(B, npoint, dtype=torch.long)
    distance = torch.ones(B, N) * 1e10
    farthest = torch.zeros(B, dtype=torch.long)
    batch_indices = torch.arange(B, dtype=torch.long)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch_indices, farthest, :].view(B, 1, 3)
        dist = torch.sum((xyz - centroid) ** 2, -1)
        mask = dist < distance
        distance[mask] = dist[mask]
        farthest = torch.max(distance, -1)[1]
    return centroids


def index_points(points, idx):
    B = points.shape[0]
    view_shape = list(idx.shape)
    view_shape[1:] = [1] * (len(view_shape) - 1)
    repeat_shape = list(idx.shape)
    repeat_shape[0] = 1
    batch_indices = torch.arange(B, dtype=torch.long).view(view_shape).repeat(repeat_shape)
    return points[batch_indices, idx, :]


def square_distance(src, dst):
    dist = -2 * torch.matmul(src, dst.permute(0, 2, 1))
    dist += torch.sum(src ** 2, -1).unsqueeze(-1)
    dist += torch.sum(dst ** 2, -1).unsqueeze(1)
    return dist


def query_ball_point(radius: float, nsample: int, xyz, new_xyz):
    B, N, C = xyz.shape
    S = new_xyz.shape[1]
    group_idx = torch.arange(N, dtype=torch.long).view(1, 1, N).repeat([B, S, 1])
    sqrdists = square_distance(new_xyz, xyz)
    group_idx[sqrdists > radius ** 2] = N
    group_idx = group_idx.sort(dim=-1)[0][:, :, :nsample]
    group_first = group_idx[:, :, 0].view(B, S, 1).repeat([1, 1, nsample])
    mask = group_idx == N
    group_idx[mask] = group_first[mask]
    return group_idx


class PointNet2SA(nn.Module):
    """yanx27 PointNet++ set abstraction: FPS loop, ball query by sort, grouping by gather."""

    def __init__(self, npoint=8, radius=0.8, nsample=4):
        super().__init__()
        self.npoint, self.radius, self.nsample = npoint, radius, nsample
        self.mlp = nn.Sequential(nn.Conv2d(3, 8, 1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 16, 1))

    def forward(self, xyz):
        B, N, C = xyz.shape
        fps_idx = farthest_point_sample(xyz, self.npoint)
        new_xyz = index_points(xyz, fps_idx)
        idx = query_ball_point(self.radius, self.nsample, xyz, new_xyz)
        grouped = index_points(xyz, idx) - new_xyz.view(B, self.npoint, 1, C)
        feat = self.mlp(grouped.permute(0, 3, 2, 1))
        return new_xyz, torch.max(feat, 2)[0]


class PointPillarsScatter(nn.Module):
    """PointPillarsScatter: pillar features into a BEV canvas at indices computed from coords."""

    def __init__(self, c=8, nx=8, ny=6):
        super().__init__()
        self.c, self.nx, self.ny = c, nx, ny
        self.pfn = nn.Linear(4, c)

    def forward(self, pillar_points, coords):
        feats = torch.max(F.relu(self.pfn(pillar_points)), dim=1)[0]  # [P, C]
        canvas = torch.zeros(self.c, self.nx * self.ny, dtype=feats.dtype, device=feats.device)
        indices = coords[:, 2] * self.nx + coords[:, 3]
        indices = indices.type(torch.long)
        canvas[:, indices] = feats.t()
        return canvas.view(1, self.c, self.ny, self.nx)


class LSSBevPool(nn.Module):
    """Lift-Splat-Shoot QuickCumsum (forward): sort by rank, cumsum, keep the last of each run."""

    def __init__(self, c=4, nx=5):
        super().__init__()
        self.nx = nx
        self.proj = nn.Linear(c, c)

    def forward(self, x, geom):
        x = self.proj(x)
        ranks = geom[:, 0] * self.nx + geom[:, 1]
        sorts = ranks.argsort()
        x, geom, ranks = x[sorts], geom[sorts], ranks[sorts]
        x = x.cumsum(0)
        kept = torch.ones(x.shape[0], device=x.device, dtype=torch.bool)
        kept[:-1] = ranks[1:] != ranks[:-1]
        x, geom = x[kept], geom[kept]
        x = torch.cat((x[:1], x[1:] - x[:-1]))
        final = torch.zeros((self.nx * self.nx, x.shape[1]), dtype=x.dtype)
        final[geom[:, 0] * self.nx + geom[:, 1]] = x
        return final.view(self.nx, self.nx, -1).permute(2, 0, 1)


# ---------------------------------------------------------------- QAT as vendors do it
def tv_qat(name, backend):
    import torchvision.models.quantization as qm
    if backend in torch.backends.quantized.supported_engines:
        torch.backends.quantized.engine = backend
    kw = {"weights": None, "quantize": False}
    m = getattr(qm, name)(**kw)
    m.train()
    m.fuse_model(is_qat=True)
    m.qconfig = torch.ao.quantization.get_default_qat_qconfig(backend)
    torch.ao.quantization.prepare_qat(m, inplace=True)
    with torch.no_grad():
        for _ in range(2):
            m(torch.randn(2, 3, 32, 32))
    return m.eval()


class LearnableQat(nn.Module):
    def __init__(self):
        super().__init__()
        from torch.ao.quantization import FakeQuantize, MovingAveragePerChannelMinMaxObserver, MovingAverageMinMaxObserver
        try:
            from torch.ao.quantization._learnable_fake_quantize import _LearnableFakeQuantize as LFQ
        except ImportError:
            LFQ = None
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.wfq = FakeQuantize(observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
                                dtype=torch.qint8, qscheme=torch.per_channel_symmetric, ch_axis=0)
        self.afq = (LFQ(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, scale=0.05, zero_point=10.0,
                        use_grad_scaling=True) if LFQ is not None else FakeQuantize())
        self.fc = nn.Linear(8, 4)
        self.out_fq = LFQ(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255) if LFQ else FakeQuantize()

    def forward(self, x):
        x = self.afq(x)
        x = F.relu(F.conv2d(x, self.wfq(self.conv.weight), self.conv.bias, padding=1))
        return self.out_fq(self.fc(x.mean((2, 3))))


def learnable_qat():
    m = LearnableQat().train()
    for _ in range(3):
        m(torch.randn(2, 3, 8, 8))
    return m.eval()


def _pp_inputs():
    rng = np.random.RandomState(0)
    cells = rng.permutation(48)[:10]
    coords = np.stack([np.zeros(10), np.zeros(10), cells // 8, cells % 8], 1).astype(np.int64)
    return coords


def _lss_geom():
    rng = np.random.RandomState(1)
    return rng.randint(0, 5, size=(20, 2)).astype(np.int64)
