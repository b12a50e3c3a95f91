// Private: rewriting in-place list mutation (`outs.append(t)`, insert, pop, `l[i] = t`, `del l[i]`,
// clear, extend, `+=`) of lists of tensors into functional form, on the TorchScript graph before
// the example run, so that a list built in a scripted loop becomes an ONNX sequence carried
// through Loop and If.
#pragma once

#include <torch/csrc/jit/ir/ir.h>

namespace oxport {

// The functional list ops this pass makes (prim namespace: no registered operator; the example
// run executes them itself, the converters map them to Sequence* ops):
//   prim::oxport_list_append(Tensor[] l, Tensor x) -> Tensor[]
//   prim::oxport_list_insert(Tensor[] l, int i, Tensor x) -> Tensor[]
//   prim::oxport_list_pop(Tensor[] l, int i) -> (Tensor[], Tensor)
//   prim::oxport_list_set(Tensor[] l, int i, Tensor x) -> Tensor[]
//   prim::oxport_list_delete(Tensor[] l, int i) -> Tensor[]
//   prim::oxport_list_clear(Tensor[] l) -> Tensor[]
//   prim::oxport_list_extend(Tensor[] l, Tensor[] other) -> Tensor[]
//   prim::oxport_list_reverse(Tensor[] l) -> Tensor[]
bool isFunctionalListOp(const torch::jit::Node* n);

// For each list of tensors that is mutated and used only in ways the pass understands (the
// mutations, reads such as len, indexing, slicing, cat and stack, and returning it), every
// mutation becomes a functional op making a new version of the list, every later read reads the
// newest version, and a list mutated inside a prim::Loop or prim::If becomes a loop-carried value
// or an If output. Lists used otherwise (put into another list or a dict, passed into a loop as
// a carried value) are left as they are. Returns the number of mutations rewritten.
int functionalizeListMutation(torch::jit::Graph& g);

}  // namespace oxport
