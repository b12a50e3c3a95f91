// The reference run of a half-precision model without a float32 copy of it (widened_forward.h).
#include "pipeline/widened_forward.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <unordered_map>

#include "frontend/frontend.h"
#include "pipeline/model_impl.h"

namespace oxport {
namespace {

namespace jit = torch::jit;

bool isHalf(const at::Tensor& t) {
  return t.defined() && (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16);
}

// The half tensors read in `block` (and the blocks inside it): GetAttr on a path from self whose
// value is a half tensor, and half tensor constants. `known` maps values to the objects they hold.
void collectHalfReads(jit::Block* block, std::unordered_map<const jit::Value*, c10::IValue>& known,
                      std::vector<jit::Node*>& reads) {
  for (jit::Node* n : block->nodes()) {
    if (n->kind() == c10::prim::GetAttr) {
      auto it = known.find(n->input(0));
      if (it != known.end() && it->second.isObject()) {
        const auto obj = it->second.toObject();
        const auto slot = obj->type()->findAttributeSlot(n->s(c10::attr::name));
        if (slot) {
          c10::IValue v = obj->getSlot(*slot);
          if (v.isObject()) known[n->output()] = v;
          else if (v.isTensor() && isHalf(v.toTensor())) reads.push_back(n);
        }
      }
    } else if (n->kind() == c10::prim::Constant && n->output()->type()->kind() == c10::TypeKind::TensorType) {
      auto v = jit::toIValue(n->output());
      if (v && v->isTensor() && isHalf(v->toTensor())) reads.push_back(n);
    }
    for (jit::Block* b : n->blocks()) collectHalfReads(b, known, reads);
  }
}

}  // namespace

Result<WidenedForward> widenedForward(const torch::jit::Module& m) {
  try {
    auto method = m.find_method("forward");
    if (!method) return Error("forward-failed", "the module has no forward method");
    auto g = jit::toGraphFunction(method->function()).graph()->copy();
    jit::Inline(*g);
    std::unordered_map<const jit::Value*, c10::IValue> known{{g->inputs().at(0), m._ivalue()}};
    std::vector<jit::Node*> reads;
    collectHalfReads(g->block(), known, reads);
    for (jit::Node* n : reads) {
      jit::Value* out = n->output();
      const std::vector<jit::Use> uses = out->uses();
      jit::WithInsertPoint guard(n->next());
      jit::Value* dtype = g->insertConstant(static_cast<int64_t>(at::kFloat));
      jit::Value* no = g->insertConstant(false);
      jit::Value* none = g->insertConstant(c10::IValue());
      jit::Node* to = g->insertNode(g->create(c10::aten::to, {out, dtype, no, no, none}));
      to->output()->setType(c10::TensorType::get());
      for (const jit::Use& u : uses) u.user->replaceInput(u.offset, to->output());
    }
    WidenedForward f;
    f.graph = g;
    f.code = std::make_shared<jit::Code>(g, "forward_widened");
    f.widened_reads = reads.size();
    return f;
  } catch (const std::exception& e) {
    return Error("forward-failed", "forward cannot be widened to float32 where it reads its weights: " +
                                       torchErrorMessage(e));
  }
}

Result<c10::IValue> runWidenedForward(const WidenedForward& f, const torch::jit::Module& m,
                                      const std::vector<c10::IValue>& inputs) {
  try {
    jit::Stack stack;
    stack.push_back(m._ivalue());
    for (const auto& v : inputs)
      stack.push_back(mapTensors(v, [](const at::Tensor& t) { return isHalf(t) ? t.to(at::kFloat) : t; }));
    jit::InterpreterState state(*f.code);
    state.run(stack);
    if (stack.size() != 1)
      return Error("forward-failed", "the widened forward returned " + std::to_string(stack.size()) + " values");
    return std::move(stack.back());
  } catch (const std::exception& e) {
    return Error("forward-failed", torchErrorMessage(e));
  }
}

}  // namespace oxport
