// Private: writes to the module's attributes inside forward (`self.cache = x`, `self.count += 1`,
// torchvision's RAFT keeping its correlation pyramid on self), rewritten into plain values on the
// TorchScript graph before the example run.
#pragma once

#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "oxport/diagnostic.h"

namespace oxport {

// Every prim::SetAttr on an attribute reached from `self` through GetAttr becomes a value: a later
// prim::GetAttr of the same attribute reads the value written (an SSA rewrite), across If (a new
// If output; a branch that does not write gives the value before the If) and Loop (a new
// loop-carried value). Reads before any write keep reading the module's attribute, as the first
// call does. The final value of each attribute is state for the NEXT call, which an ONNX graph
// cannot keep: it is dropped, with one `attribute-write-dropped` warning per attribute whose saved
// value this call also reads (a later call would read the new one). A graph with a write the
// rewrite cannot follow (an object not reached from self, a module assigned, a write inside a
// block other than If/Loop) is left as it was. Returns the warnings.
std::vector<Diagnostic> functionalizeAttributeWrites(torch::jit::Graph& g);

}  // namespace oxport
