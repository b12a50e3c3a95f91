// Private to the frontend: small facts about TorchScript nodes, values and IValues that the
// example run, the lowering and the saved-graph view all ask (module scope, source location,
// value types, tensor metadata, control flow). Sees libtorch; included only by frontend/*.cpp.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "ir/ts_ir.h"
#include "oxport/diagnostic.h"

namespace oxport {

// The module instances a node was inlined from (outermost first) and their dotted path.
struct ScopeInfo {
  std::vector<std::string> names, types;
  std::string path;
};

ScopeInfo scopeOf(const torch::jit::Node* n);
SourceLocation locationOf(const torch::jit::Node* n);

// The diagnostic about `n`: its kind, module path and source location filled in.
Diagnostic atNode(Diagnostic d, const torch::jit::Node* n);

ts::ValueType valueTypeOf(const c10::TypePtr& t0, ts::ValueType* elem);
ts::TensorMeta metaOf(const at::Tensor& t);

// Is `pred` true of some tensor in the value (a tensor, or inside lists and tuples)?
template <typename Pred>
bool anyTensorIn(const c10::IValue& v, const Pred& pred) {
  if (v.isTensor()) return pred(v.toTensor());
  if (v.isList()) {
    for (const auto& e : v.toListRef())
      if (anyTensorIn(e, pred)) return true;
  }
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements())
      if (anyTensorIn(e, pred)) return true;
  }
  return false;
}

// Does the value's IValue contain a tensor (the folding rule treats those specially)? A tensor
// list counts even when empty. With `dicts_and_objects` (the rule for a dict attribute read by
// key), dict keys and values are searched too, and an object (a module or other class instance,
// whose attributes may be tensors) counts as holding one.
bool holdsTensor(const c10::IValue& v, bool dicts_and_objects = false);
// Whether type t is or contains Tensor (Optional[Tensor], List[Tensor], tuples of them).
bool holdsTensorType(const c10::TypePtr& t);

// Ops whose result depends only on a tensor's metadata that does not vary with dynamic axes
// (dtype, device, rank): known at export time even for inputs.
bool isMetadataQuery(const torch::jit::Node* n);

// Values a block uses from outside it (free variables), nested blocks included.
void freeValues(torch::jit::Block* b, std::unordered_set<torch::jit::Value*>& out);

// Whether the block has an If or a Loop (Inline() left no calls; blocks only hang off those).
bool hasControlFlow(torch::jit::Block* b);

}  // namespace oxport
