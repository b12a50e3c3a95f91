import torch
import torch.nn as nn

from optest import T, case

CASES = [
    case("conv2d_basic", nn.Conv2d(3, 8, 3), [T(1, 3, 10, 10)], dynamic={0: [0]}),
    case("conv2d_stride_pad_dilation", nn.Conv2d(4, 6, (3, 5), stride=(2, 1), padding=(1, 2), dilation=(2, 1)),
         [T(2, 4, 12, 11)]),
    case("conv2d_groups_nobias", nn.Conv2d(8, 8, 3, groups=4, bias=False), [T(1, 8, 7, 7)]),
    case("conv2d_depthwise", nn.Conv2d(6, 6, 3, groups=6, padding=1), [T(1, 6, 9, 9)], dynamic={0: [0, 2, 3]}),
    case("conv2d_padding_same", nn.Conv2d(3, 4, 4, padding="same"), [T(1, 3, 9, 9)]),
    case("conv2d_padding_valid", nn.Conv2d(3, 4, 3, padding="valid"), [T(1, 3, 9, 9)]),
    case("conv1d", nn.Conv1d(3, 5, 3, padding=1), [T(2, 3, 16)], dynamic={0: [0, 2]}),
    case("conv3d", nn.Conv3d(2, 3, 3), [T(1, 2, 5, 6, 7)]),
    case("conv_transpose2d", nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), [T(1, 4, 5, 5)]),
    case("conv_transpose1d", nn.ConvTranspose1d(4, 2, 4, stride=2), [T(2, 4, 7)]),
    case("conv2d_scripted", nn.Conv2d(3, 4, 3), [T(1, 3, 8, 8)], script=True),
    case("conv2d_unbatched", nn.Conv2d(3, 4, 3), [T(3, 8, 8)]),
]
