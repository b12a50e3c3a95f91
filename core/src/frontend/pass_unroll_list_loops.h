// Private: loops of a constant trip count that append to a list made before them (torchvision's
// RAFT builds its correlation pyramid with `for _ in range(self.num_levels - 1): pyramid.append(..)`),
// unrolled on the TorchScript graph before the example run.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

namespace oxport {

// Each prim::Loop whose trip count is a constant of at most 64 after the export-time constants are
// folded, whose condition stays true, and whose body appends to a list defined outside it, is
// replaced by that many copies of its body: the list then has a length known at export time (its
// elements may have different shapes, which an ONNX sequence carried by a Loop cannot hold before
// opset 13, and a later `for x in pyramid` or len() reads a static length). Returns the number
// of loops unrolled.
int unrollListBuildingLoops(torch::jit::Graph& g);

}  // namespace oxport
