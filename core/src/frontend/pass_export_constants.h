// Private: conditions that are fixed at export time, folded on the TorchScript graph before the
// example run, so that the branches they rule out (PyTorch's fast paths behind
// torch.is_grad_enabled(), self.training, x.is_nested, `mask is None`, ...) are gone before
// anything runs or converts them.
#pragma once

#include <memory>

#include <torch/csrc/jit/ir/ir.h>

#include "oxport/options.h"

namespace oxport {

// What an export knows before the example run, replaced by constants:
//  - the environment of the export: no autograd (aten::is_grad_enabled is false, as in the
//    reference run), no autocast (aten::is_autocast_enabled and kin are false), scripting;
//  - the modules' non-tensor attributes read through prim::GetAttr from `self` (flags, strings,
//    numbers, None), unless the graph writes that attribute (prim::SetAttr), with `training`
//    as the training option says (PRESERVE: as saved);
//  - the metadata of the graph's tensor inputs that no dynamic axis changes: dtype, rank, device
//    (CPU), layout, is_cuda, is_nested, is_sparse, is_quantized, is_meta, is_mkldnn, requires_grad,
//    is_floating_point, is_complex;
//  - `v is None` / `v is not None` and isinstance(v, T) where the type of v decides (after argument
//    baking an Optional argument is either a tensor input or a None constant);
//  - all([...]) / any([...]) of a list of bools that one constant element (or all of them) decides.
// Then libtorch's constant propagation over immutable values (not, and, or, ==, != on the
// constants, string formatting, list-free arithmetic) folds what follows, every prim::If on a
// constant condition is replaced by the branch it takes, and dead code goes; repeated until nothing
// changes. Conditions that depend on tensor values stay as they are. Returns the number of
// prim::If nodes removed.
int foldExportConstants(std::shared_ptr<torch::jit::Graph>& g, const c10::IValue& self, TrainingMode training);

}  // namespace oxport
