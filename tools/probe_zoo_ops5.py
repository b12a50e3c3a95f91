"""The probe sweep's models (tools/probe_models.py) for issue 16's ops: small matrix inverses and
solves (BEV camera geometry, Kalman filters), fold (overlap-add), antialiased resizing, CTC
collapse (unique_consecutive), bincount and pdist, used the way deployed code uses them."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec

rng = np.random.default_rng(16)


def cameras(b, n):
    """Pinhole intrinsics [b, n, 3, 3] and sensor-to-ego poses [b, n, 4, 4] (rotation, translation)."""
    k = np.zeros((b, n, 3, 3), dtype=np.float32)
    k[..., 0, 0] = k[..., 1, 1] = rng.uniform(400, 1200, (b, n))
    k[..., 0, 2] = rng.uniform(300, 800, (b, n))
    k[..., 1, 2] = rng.uniform(200, 450, (b, n))
    k[..., 2, 2] = 1
    t = np.zeros((b, n, 4, 4), dtype=np.float32)
    for i in range(b):
        for j in range(n):
            q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
            t[i, j, :3, :3] = q
            t[i, j, :3, 3] = rng.standard_normal(3) * 2
            t[i, j, 3, 3] = 1
    return k, t


class CamToEgo(nn.Module):
    """LSS/BEVDet-style frustum lifting: pixels with depths back-projected by the inverse
    intrinsics, moved to the ego frame, then the ego-to-camera poses for the reprojection."""

    def __init__(self, h=4, w=6, d=5):
        super().__init__()
        ys, xs = torch.meshgrid(torch.linspace(0, 450, h), torch.linspace(0, 800, w), indexing="ij")
        ds = torch.linspace(1, 40, d)
        pix = torch.stack([xs.expand(d, h, w), ys.expand(d, h, w), torch.ones(d, h, w)], -1) * ds.view(d, 1, 1, 1)
        self.register_buffer("frustum", pix)  # [d, h, w, 3]

    def forward(self, intrins, sensor2ego):
        b, n = intrins.shape[:2]
        cam = torch.matmul(torch.inverse(intrins).view(b, n, 1, 1, 1, 3, 3), self.frustum.unsqueeze(-1))
        rot, trans = sensor2ego[..., :3, :3], sensor2ego[..., :3, 3]
        ego = torch.matmul(rot.view(b, n, 1, 1, 1, 3, 3), cam).squeeze(-1) + trans.view(b, n, 1, 1, 1, 3)
        ego2sensor = torch.inverse(sensor2ego)
        return ego, ego2sensor


class KalmanUpdate(nn.Module):
    """The measurement update of a batched constant-velocity Kalman filter (trackers run one per
    object): gain K = P H^T S^-1 through a solve, the state and covariance corrected."""

    def __init__(self):
        super().__init__()
        h = torch.zeros(2, 4)
        h[0, 0] = h[1, 1] = 1
        self.register_buffer("H", h)
        self.register_buffer("R", torch.eye(2) * 0.5)

    def forward(self, x, p, z):
        s = self.H @ p @ self.H.t() + self.R
        k = torch.linalg.solve(s, self.H @ p).transpose(-1, -2)  # P H^T S^-1 (S and P symmetric)
        x = x + (k @ (z - (self.H @ x.unsqueeze(-1)).squeeze(-1)).unsqueeze(-1)).squeeze(-1)
        p = (torch.eye(4) - k @ self.H) @ p
        return x, p, torch.logdet(s)


class GaussianFlow(nn.Module):
    """A normalising flow's Gaussian base: the log-density of samples under a learned full
    covariance through its Cholesky factor (log det from the diagonal)."""

    def __init__(self, d=3):
        super().__init__()
        self.a = nn.Parameter(torch.randn(d, d) * 0.3)

    def forward(self, z):
        cov = self.a @ self.a.t() + torch.eye(self.a.shape[0])
        l = torch.linalg.cholesky(cov)
        sol = torch.linalg.solve(l, z.t()).t()
        return -0.5 * (sol * sol).sum(-1) - torch.log(torch.diagonal(l)).sum()


class OverlapAdd(nn.Module):
    """An iSTFT-style synthesis: frames [b, win, n] windowed, overlap-added by fold, divided by the
    summed window envelope."""

    def __init__(self, win=16, hop=4):
        super().__init__()
        self.win, self.hop = win, hop
        self.register_buffer("window", torch.hann_window(win).view(1, win, 1))

    def forward(self, frames):
        n = frames.shape[-1]
        length = (n - 1) * self.hop + self.win
        y = F.fold(frames * self.window, (1, length), (1, self.win), stride=(1, self.hop))
        env = F.fold((self.window ** 2).expand(1, self.win, n), (1, length), (1, self.win), stride=(1, self.hop))
        return (y / env.clamp_min(1e-8)).flatten(1)


class PatchFold(nn.Module):
    """MobileViT-style: unfold into 2x2 patches, a per-patch transform, fold back."""

    def __init__(self, c=8):
        super().__init__()
        self.mix = nn.Linear(c * 4, c * 4)

    def forward(self, x):
        h, w = x.shape[-2:]
        p = F.unfold(x, 2, stride=2)  # [b, c*4, L]
        p = self.mix(p.transpose(1, 2)).transpose(1, 2)
        return F.fold(p, (h, w), 2, stride=2)


class AaPreprocess(nn.Module):
    """Image preprocessing in the model: antialiased downsample to the network size, normalised."""

    def __init__(self, size=(32, 48), mode="bilinear"):
        super().__init__()
        self.size, self.mode = size, mode
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, img):
        x = F.interpolate(img, size=self.size, mode=self.mode, align_corners=False, antialias=True)
        return self.conv((x - self.mean) / self.std)


class AaPyramid(nn.Module):
    """A scale-factor pyramid (half, quarter) with antialiasing."""

    def forward(self, x):
        return [F.interpolate(x, scale_factor=s, mode="bilinear", antialias=True) for s in (0.5, 0.25)]


class CtcGreedy(nn.Module):
    """CTC greedy decoding of a small recogniser: best class per frame, repeats collapsed, blanks
    dropped, and how many frames each kept symbol lasted."""

    def __init__(self, classes=6):
        super().__init__()
        self.proj = nn.Conv1d(8, classes, 3, padding=1)

    def forward(self, feats):
        best = self.proj(feats).argmax(1)[0]  # [T]
        sym, counts = torch.unique_consecutive(best, return_counts=True)
        keep = sym != 0
        return sym[keep], counts[keep]


class ClassHistogram(nn.Module):
    """Detections per class (bincount with a minimum length) and the score mass per class."""

    def forward(self, labels, scores):
        return torch.bincount(labels, minlength=5), torch.bincount(labels, scores, minlength=5)


class PointSpread(nn.Module):
    """Pairwise distances of a point set (pdist), as a repulsion loss or a spread feature."""

    def forward(self, pts):
        d = F.pdist(pts)
        return d.min(), d.mean()


K, E = cameras(2, 3)
X4 = rng.standard_normal((5, 4)).astype(np.float32)
P4 = np.stack([np.eye(4, dtype=np.float32) * (1 + i) for i in range(5)])
Z2 = rng.standard_normal((5, 2)).astype(np.float32)
LABELS = np.array([0, 3, 3, 1, 0, 4, 3], dtype=np.int64)
SCORES = rng.uniform(0.05, 1, 7).astype(np.float32)  # (a plain "7" would be the int 7 on the CLI)

OPS5 = [
    ("bev_cam_to_ego_inverse", lambda: Spec(CamToEgo(), [K, E], ["intrins", "sensor2ego"],
                                            ["intrins:0=b", "sensor2ego:0=b"], modes=("trace",))),
    ("kalman_update_solve", lambda: Spec(KalmanUpdate(), [X4, P4, Z2], ["x", "p", "z"], ["x:0=n", "p:0=n", "z:0=n"])),
    ("flow_cholesky_logprob", lambda: Spec(GaussianFlow(), ["7x3"], ["z"], ["z:0=n"])),
    ("istft_overlap_add_fold", lambda: Spec(OverlapAdd(), ["2x16x9"], ["frames"], ["frames:0=b"], modes=("trace",))),
    ("mobilevit_patch_fold", lambda: Spec(PatchFold(), ["1x8x8x12"], ["x"], ["x:0=b"], modes=("trace",))),
    ("aa_preprocess_bilinear", lambda: Spec(AaPreprocess(), ["1x3x96x128"], ["img"], ["img:0=b,2=h,3=w"],
                                            modes=("trace",))),
    ("aa_preprocess_bicubic", lambda: Spec(AaPreprocess(mode="bicubic"), ["1x3x96x128"], ["img"], ["img:0=b"],
                                           modes=("trace",))),
    ("aa_pyramid_scale", lambda: Spec(AaPyramid(), ["1x3x64x48"], ["x"], ["x:0=b,2=h,3=w"], modes=("trace",))),
    ("ctc_greedy_collapse", lambda: Spec(CtcGreedy(), ["1x8x40"], ["feats"], ["feats:2=t"])),
    ("class_histogram_bincount", lambda: Spec(ClassHistogram(), [LABELS, SCORES], ["labels", "scores"],
                                              ["labels:0=n", "scores:0=n"])),
    ("point_spread_pdist", lambda: Spec(PointSpread(), ["10x3"], ["pts"], ["pts:0=n"])),
]
