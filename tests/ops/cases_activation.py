import torch
import torch.nn as nn
import torch.nn.functional as F

from optest import T, case

CASES = [
    case("relu", nn.ReLU(), [T(2, 3, 4)], dynamic={0: [0]}),
    case("relu_inplace", lambda x: F.relu(x * 1.0, inplace=True) + 1, [T(2, 5)]),
    case("sigmoid", nn.Sigmoid(), [T(3, 4)]),
    case("tanh", nn.Tanh(), [T(3, 4)]),
    case("hardtanh", nn.Hardtanh(-0.5, 0.7), [T(3, 4)], opsets=(9, 11, 13)),
    case("relu6", nn.ReLU6(), [T(3, 4)], opsets=(9, 11)),
    case("leaky_relu", nn.LeakyReLU(0.2), [T(3, 4)]),
    case("softmax_last", nn.Softmax(dim=-1), [T(2, 3, 5)], dynamic={0: [0]}),
    case("softmax_dim1", nn.Softmax(dim=1), [T(2, 3, 5)]),
    case("log_softmax_dim0", nn.LogSoftmax(dim=0), [T(4, 3)]),
    case("gelu", nn.GELU(), [T(3, 7)]),
    case("gelu_tanh", nn.GELU(approximate="tanh"), [T(3, 7)]),
    case("silu", nn.SiLU(), [T(3, 7)]),
    case("hardsigmoid", nn.Hardsigmoid(), [T(3, 7)]),
    case("hardswish", nn.Hardswish(), [T(3, 7)], opsets=(11, 14)),
    case("elu", nn.ELU(0.5), [T(3, 7)]),
    case("softplus", nn.Softplus(beta=2.0), [T(3, 7)]),
    case("softplus_threshold", nn.Softplus(beta=2.0, threshold=1.0), [T(4, 9)], dynamic={0: [0]}),  # x itself above
    case("prelu", nn.PReLU(4), [T(2, 4, 3, 3)]),
]

CASES += [
    case("glu", nn.GLU(), [T(2, 3, 6)], opsets=(9, 13, 17), dynamic={0: [0, 1]}),
    case("glu_dim0", lambda x: F.glu(x, 0), [T(4, 3)]),
    case("hardshrink", nn.Hardshrink(0.3), [T(3, 7)], opsets=(9, 13)),
    case("softshrink", nn.Softshrink(0.4), [T(3, 7)], opsets=(9, 13)),
    case("tanhshrink", nn.Tanhshrink(), [T(3, 7)]),
    case("threshold", nn.Threshold(0.1, 20.0), [T(3, 7)], opsets=(9, 13)),
    case("threshold_int", lambda x: F.threshold(x, 2, -1), [T(3, 4, dtype="int64", fill="arange")]),
    case("log_sigmoid", nn.LogSigmoid(), [T(3, 7)], opsets=(9, 13)),
    case("mish", nn.Mish(), [T(3, 7)], opsets=(9, 13)),
    case("selu", nn.SELU(), [T(3, 7)], opsets=(9, 13)),
    case("celu", nn.CELU(2.0), [T(3, 7)], opsets=(9, 11, 12, 13)),
    case("celu_default_f64", nn.CELU(), [T(3, 7, dtype="float64")], opsets=(11, 13)),
    case("rrelu_eval", nn.RReLU(0.1, 0.3), [T(3, 7)], opsets=(9, 13)),
    case("rrelu_training_refused", lambda x: F.rrelu(x, 0.1, 0.3, training=True), [T(3, 7)], opsets=(13,),
         expect="error:unsupported-form", operator_export_type="ONNX"),
    case("softsign", nn.Softsign(), [T(3, 7)]),
]
