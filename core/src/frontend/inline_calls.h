// Inlining every call a forward makes: method and function calls (libtorch's Inline) and the calls
// that torch.jit.fork starts (prim::fork's subgraph runs in place; aten::wait is its value).
// An ONNX file has no threads: a forked call computes the same values run in line. Sees libtorch.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

namespace oxport {

// Inlines calls and forks (nested ones too); where a fork was inlined, what held a Future[T] (a
// list of futures, a loop over them) is retyped T and aten::wait is dropped. With `self` (the module
// whose forward `graph` is), a submodule held through a torch.jit.interface attribute is called as
// the module it is.
void inlineCallsAndForks(torch::jit::Graph& graph, const c10::IValue& self = c10::IValue());

}  // namespace oxport
