import torch

from optest import T, case

CASES = [
    case("flatten_1", lambda x: torch.flatten(x, 1), [T(2, 3, 4, 5)], dynamic={0: [0]}),
    case("flatten_middle", lambda x: torch.flatten(x, 1, 2), [T(2, 3, 4, 5)], dynamic={0: [0, 3]}),
    case("flatten_all", lambda x: x.flatten(), [T(2, 3, 4)]),
    case("view_dynamic_batch", lambda x: x.view(x.size(0), -1), [T(2, 3, 4)], dynamic={0: [0]}),
    case("reshape_static", lambda x: x.reshape(6, 4), [T(2, 3, 4)]),
    case("permute", lambda x: x.permute(0, 2, 3, 1), [T(1, 2, 3, 4)]),
    case("transpose", lambda x: x.transpose(1, -1), [T(2, 3, 4)]),
    case("unsqueeze_squeeze", lambda x: x.unsqueeze(1).squeeze(1).unsqueeze(-1), [T(2, 3)], opsets=(11, 13)),
    case("squeeze_all", lambda x: x.squeeze(), [T(1, 3, 1, 4)], opsets=(11, 13)),
    case("cat", lambda a, b: torch.cat([a, b], dim=1), [T(2, 3), T(2, 5)], dynamic={0: [0], 1: [0]}),
    case("stack", lambda a, b: torch.stack([a, b], dim=-1), [T(2, 3), T(2, 3)]),
    case("split_sizes", lambda x: torch.split(x, [2, 3], dim=1), [T(2, 5)], opsets=(11, 13)),
    case("chunk", lambda x: x.chunk(3, dim=-1)[1] * 2, [T(2, 9)], opsets=(11, 13)),
    case("unbind", lambda x: torch.unbind(x, 1)[2], [T(2, 4, 3)], opsets=(11, 13)),
    case("slice_step", lambda x: x[:, 1:7:2], [T(2, 9)]),
    case("slice_negative", lambda x: x[..., -3:], [T(2, 9)], dynamic={0: [0]}),
    case("select", lambda x: x[:, 1], [T(2, 4, 3)]),
    case("narrow", lambda x: x.narrow(1, 1, 2), [T(2, 4, 3)]),
    case("expand", lambda x: x.expand(3, -1, 4), [T(1, 2, 1)]),
    case("size_arith", lambda x: x.reshape(x.shape[0] * x.shape[1], -1), [T(2, 3, 4)], dynamic={0: [0, 1]}),
]
