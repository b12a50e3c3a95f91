// Layout views of the module's weights that the example run folded (weight.t(), transpose,
// permute, contiguous, detach of a parameter). A weight read in two forms, as itself by an
// embedding and transposed by an output projection tied to it, would be written twice: once
// as itself, once as the folded view. The frontend lowers such views as nodes over the one
// weight instead; a view of a weight read in no other form stays folded (one copy either way).
#pragma once

#include <torch/csrc/jit/ir/ir.h>

#include <functional>
#include <unordered_set>

namespace oxport {

struct WeightViewQueries {
  // The value is static (known at export time; the frontend folds it).
  std::function<bool(torch::jit::Value*)> is_static;
  // The value is a parameter or buffer of the module (a tensor reached through GetAttr).
  std::function<bool(torch::jit::Value*)> is_weight;
  // The value the example run computed (static values only), or nullptr.
  std::function<const c10::IValue*(torch::jit::Value*)> value;
};

// The nodes of the folded views to lower as nodes: for each weight (told apart by its storage)
// read in more than one form by the nodes that stay in the graph, the chains of view nodes of
// every form that is not the weight itself. `top` is forward's block; blocks are walked too.
std::unordered_set<torch::jit::Node*> sharedWeightViews(torch::jit::Block* top, const WeightViewQueries& q);

}  // namespace oxport
