// 0-dim tensor constants as Scalars in add/sub/mul/div (see pass_scalar_constants.h).
#include "frontend/pass_scalar_constants.h"

#include <vector>

#include <torch/csrc/jit/ir/constants.h>

namespace oxport {

namespace jit = torch::jit;

static bool isTensorTensorArith(const jit::Node* n) {
  return n->matches("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") ||
         n->matches("aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") ||
         n->matches("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor") ||
         n->matches("aten::div.Tensor(Tensor self, Tensor other) -> Tensor");
}

static int scalarize(jit::Block* b) {
  int count = 0;
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;
    for (jit::Block* sb : n->blocks()) count += scalarize(sb);
    if (!isTensorTensorArith(n)) continue;
    c10::optional<at::Tensor> other = n->get<at::Tensor>(c10::attr::other);
    if (!other || !other->defined() || other->dim() != 0) continue;
    jit::WithInsertPoint guard(n);
    jit::Graph* g = n->owningGraph();
    std::vector<jit::Value*> inputs = n->inputs().vec();
    inputs.at(1) = g->insertConstant(other->item());
    jit::Node* repl = g->insertNode(g->create(n->kind(), inputs));
    repl->copyMetadata(n);
    repl->output()->copyMetadata(n->output());
    n->output()->replaceAllUsesWith(repl->output());
    n->destroy();
    ++count;
  }
  return count;
}

int scalarizeTensorConstants(jit::Graph& g) { return scalarize(g.block()); }

}  // namespace oxport
