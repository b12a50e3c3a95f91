// Private: writes into a dict at constant keys (`result["out"] = x`, torchvision's
// IntermediateLayerGetter and segmentation heads), rewritten into new dicts on the TorchScript
// graph before the example run.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

namespace oxport {

// For each dict made in a block (`{}`, dict(), a dict literal) whose every use is in that block
// and whose every write (aten::_set_item) has a constant key: each write becomes a new
// prim::DictConstruct holding the entries so far, and every later use reads the newest one, so
// the dict returned or read is a plain construct the converters flatten. Dicts written at keys
// computed from the inputs, or inside an if or a loop, are left as they are (the converters
// refuse them). Returns the number of writes rewritten.
int functionalizeDictWrites(torch::jit::Graph& g);

}  // namespace oxport
