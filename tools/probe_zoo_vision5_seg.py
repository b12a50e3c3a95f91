"""The probe sweep's models, round 5 (probe5v), part 3: segmentation networks as their authors write them
(BiSeNet's whole-map avg_pool2d, DDRNet's interpolate to x.shape // 8, DeepLabV3+'s align_corners decoder).
Small configs, random weights, fixed seed. Listed in VISION5_SEG.
"""
import torch
import torch.nn.functional as F
from torch import nn

from probe_zoo import Spec
from probe_zoo_vision5 import IMG, randomize_bn


# ---------------------------------------------------------------- BiSeNet V1 (ARM: avg_pool2d over the whole map, FFM)
class ConvBNReLU(nn.Module):
    def __init__(self, cin, cout, ks=3, stride=1, padding=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, ks, stride, padding, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class AttentionRefinementModule(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = ConvBNReLU(cin, cout)
        self.conv_atten = nn.Conv2d(cout, cout, 1, bias=False)
        self.bn_atten = nn.BatchNorm2d(cout)
        self.sigmoid_atten = nn.Sigmoid()

    def forward(self, x):
        feat = self.conv(x)
        atten = F.avg_pool2d(feat, feat.size()[2:])
        atten = self.sigmoid_atten(self.bn_atten(self.conv_atten(atten)))
        return torch.mul(feat, atten)


class BiSeNetV1(nn.Module):
    def __init__(self):
        super().__init__()
        self.c8 = ConvBNReLU(3, 8, stride=4)
        self.c16 = ConvBNReLU(8, 16, stride=2)
        self.c32 = ConvBNReLU(16, 16, stride=2)
        self.arm16 = AttentionRefinementModule(16, 8)
        self.arm32 = AttentionRefinementModule(16, 8)
        self.conv_avg = ConvBNReLU(16, 8, ks=1, padding=0)
        self.conv_head32 = ConvBNReLU(8, 8)
        self.conv_head16 = ConvBNReLU(8, 8)
        self.ffm_convblk = ConvBNReLU(16, 8, 1, 1, 0)
        self.ffm_conv1 = nn.Conv2d(8, 4, 1, bias=False)
        self.ffm_conv2 = nn.Conv2d(4, 8, 1, bias=False)
        self.conv_out = nn.Conv2d(8, 3, 1)
        randomize_bn(self)

    def forward(self, x):
        H0, W0 = x.size()[2:]
        feat8 = self.c8(x)
        feat16 = self.c16(feat8)
        feat32 = self.c32(feat16)
        H8, W8 = feat8.size()[2:]
        H16, W16 = feat16.size()[2:]
        H32, W32 = feat32.size()[2:]
        avg = F.avg_pool2d(feat32, feat32.size()[2:])
        avg = self.conv_avg(avg)
        avg_up = F.interpolate(avg, (H32, W32), mode="nearest")
        feat32_sum = self.arm32(feat32) + avg_up
        feat32_up = self.conv_head32(F.interpolate(feat32_sum, (H16, W16), mode="nearest"))
        feat16_sum = self.arm16(feat16) + feat32_up
        feat16_up = self.conv_head16(F.interpolate(feat16_sum, (H8, W8), mode="nearest"))
        fcat = torch.cat([feat8, feat16_up], dim=1)
        feat = self.ffm_convblk(fcat)
        atten = F.avg_pool2d(feat, feat.size()[2:])
        atten = torch.sigmoid(self.ffm_conv2(F.relu(self.ffm_conv1(atten))))
        feat_out = torch.mul(feat, atten) + feat
        return F.interpolate(self.conv_out(feat_out), (H0, W0), mode="bilinear", align_corners=True)


# ---------------------------------------------------------------- DDRNet (bilateral fusion: interpolate to [h // 8, w // 8])
class DDRNet(nn.Module):
    def __init__(self, algc=False):
        super().__init__()
        self.algc = algc
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.Conv2d(8, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.Conv2d(8, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.layer4 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.layer3_ = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.compression3 = nn.Sequential(nn.Conv2d(16, 8, 1, bias=False), nn.BatchNorm2d(8))
        self.down3 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16))
        self.final = nn.Conv2d(16, 3, 1)
        randomize_bn(self)

    def forward(self, x):
        width_output = x.shape[-1] // 8
        height_output = x.shape[-2] // 8
        x = self.stem(x)
        x_ = self.layer3_(x)
        x = self.layer4(x)
        x = x + self.down3(F.relu(x_))
        x_ = x_ + F.interpolate(self.compression3(F.relu(x)), size=[height_output, width_output],
                                mode="bilinear", align_corners=self.algc)
        out = self.final(F.relu(x) + F.interpolate(self.down3(x_), size=[x.shape[-2], x.shape[-1]], mode="bilinear",
                                                   align_corners=self.algc))
        return F.interpolate(out, scale_factor=16.0, mode="bilinear", align_corners=self.algc)


# ---------------------------------------------------------------- DeepLabV3+ decoder (align_corners to low-level size) + ASPP pooling to x's size
class DeepLabV3Plus(nn.Module):
    def __init__(self):
        super().__init__()
        self.low = nn.Sequential(nn.Conv2d(3, 8, 3, 4, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.high = nn.Sequential(nn.Conv2d(8, 16, 3, 4, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.aspp = nn.ModuleList([nn.Conv2d(16, 8, 1), nn.Conv2d(16, 8, 3, padding=2, dilation=2)])
        self.aspp_pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(16, 8, 1), nn.ReLU())
        self.project = nn.Conv2d(24, 8, 1)
        self.shortcut = nn.Conv2d(8, 4, 1)
        self.cls = nn.Conv2d(12, 3, 3, padding=1)

    def forward(self, x):
        input_shape = x.shape[-2:]
        low = self.low(x)
        high = self.high(low)
        size = high.shape[-2:]
        pooled = F.interpolate(self.aspp_pool(high), size=size, mode="bilinear", align_corners=False)
        a = self.project(torch.cat([m(high) for m in self.aspp] + [pooled], 1))
        a = F.interpolate(a, size=low.size()[2:], mode="bilinear", align_corners=True)
        out = self.cls(torch.cat((self.shortcut(low), a), dim=1))
        return F.interpolate(out, size=input_shape, mode="bilinear", align_corners=True)

VISION5_SEG = [
    ("v5_bisenet_arm", lambda: Spec(BiSeNetV1(), ["1x3x64x64"], ["x"], IMG)),
    ("v5_ddrnet_fuse", lambda: Spec(DDRNet(), ["1x3x64x64"], ["x"], IMG)),
    ("v5_deeplabv3plus", lambda: Spec(DeepLabV3Plus(), ["1x3x32x32"], ["x"], IMG)),
]
