// The reference run of a half-precision model without a float32 copy of it (widened_forward.h).
#include "pipeline/widened_forward.h"

#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <torch/library.h>

#include <unordered_map>
#include <unordered_set>

#include "frontend/frontend.h"
#include "pipeline/model_impl.h"
#include "frontend/inline_calls.h"

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

// oxport_ref::round_through(x, dtype): a float32 tensor rounded to `dtype` (float16 or bfloat16) and
// back, as a half run holds each op's result; other tensors unchanged. Only the reference graph
// below uses it; the exported file never sees it.
at::Tensor roundThrough(const at::Tensor& x, int64_t dtype) {
  if (!x.defined() || x.scalar_type() != at::kFloat) return x;
  return x.to(static_cast<at::ScalarType>(dtype)).to(at::kFloat);
}

TORCH_LIBRARY(oxport_ref, lib) { lib.def("round_through(Tensor x, int dtype) -> Tensor", roundThrough); }

// Ops whose result, from inputs that are already half values, is one too (they move, pick or
// compare elements): not rounded again.
bool keepsHalfValues(c10::Symbol kind) {
  static const std::unordered_set<std::string> kExact = {
      "view", "reshape", "permute", "transpose", "t", "contiguous", "expand", "expand_as", "slice",
      "select", "squeeze", "unsqueeze", "flatten", "unflatten", "split", "chunk", "unbind", "narrow",
      "detach", "clone", "view_as", "reshape_as", "movedim", "dropout", "cat", "stack", "relu", "neg",
      "abs", "max_pool2d", "max_pool1d", "embedding", "index_select", "gather", "flip", "roll",
      "repeat", "tile", "max", "min", "zeros_like", "ones_like", "alias", "numpy_T", "mT"};
  std::string name = kind.toUnqualString();
  while (!name.empty() && name.back() == '_') name.pop_back();
  return kExact.count(name) > 0;
}

// The nodes of `block` and of the blocks inside it, in order (a graph and its copy give the same
// order).
void allNodes(jit::Block* block, std::vector<jit::Node*>& out) {
  for (jit::Node* n : block->nodes()) {
    out.push_back(n);
    for (jit::Block* b : n->blocks()) allNodes(b, out);
  }
}

// A constant dtype argument of float32 or float64 among `n`'s inputs (x.float(), x.to(torch.float32),
// x.double()): a value the model itself holds in a wider type, not rounded.
bool castsToWide(jit::Node* n) {
  if (n->kind() != c10::aten::to) return false;
  for (jit::Value* in : n->inputs()) {
    if (in->type()->kind() != c10::TypeKind::IntType) continue;
    auto v = jit::toIValue(in);
    if (v && v->isInt() && (v->toInt() == static_cast<int64_t>(at::kFloat) || v->toInt() == static_cast<int64_t>(at::kDouble)))
      return true;
  }
  return false;
}

// After each aten op of `block` whose tensor results a half run would hold in `dtype`, a
// round_through of them. `wide` holds the values the model keeps in float32 itself (its own casts
// to float32 or float64, and what is computed from them: type promotion keeps them wide); `skip`
// the nodes not to follow (the widening casts). forward's tensor arguments count as values of the
// model's type.
void roundResults(jit::Graph& g, jit::Block* block, at::ScalarType dtype, std::unordered_set<const jit::Value*>& wide,
                  const std::unordered_set<const jit::Node*>& skip, size_t& rounded) {
  for (auto it = block->nodes().begin(); it != block->nodes().end(); ++it) {
    jit::Node* n = *it;
    for (jit::Block* b : n->blocks()) roundResults(g, b, dtype, wide, skip, rounded);
    if (skip.count(n) || !n->kind().is_aten()) continue;
    bool from_wide = castsToWide(n);
    for (jit::Value* in : n->inputs()) from_wide = from_wide || wide.count(in) > 0;
    if (from_wide) {
      for (jit::Value* out : n->outputs()) wide.insert(out);
      continue;
    }
    if (keepsHalfValues(n->kind())) continue;
    for (jit::Value* out : n->outputs()) {
      if (out->type()->kind() != c10::TypeKind::TensorType) continue;
      jit::WithInsertPoint guard(n->next());
      jit::Value* dt = g.insertConstant(static_cast<int64_t>(dtype));
      jit::Node* r = g.insertNode(g.create(c10::Symbol::fromQualString("oxport_ref::round_through"), {out, dt}));
      r->output()->setType(out->type());
      out->replaceAllUsesAfterNodeWith(r, r->output());
      ++rounded;
    }
  }
}

}  // namespace

Result<WidenedForward> widenedForward(const torch::jit::Module& m, std::optional<at::ScalarType> round_to) {
  try {
    auto method = m.find_method("forward");
    if (!method) return Error("forward-failed", "the module has no forward method");
    auto g = jit::toGraphFunction(method->function()).graph()->copy();
    inlineCallsAndForks(*g, m._ivalue());
    std::unordered_map<const jit::Value*, c10::IValue> known{{g->inputs().at(0), m._ivalue()}};
    std::vector<jit::Node*> reads;
    collectHalfReads(g->block(), known, reads);
    std::unordered_set<const jit::Node*> casts;
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
      casts.insert(to);
    }
    WidenedForward f;
    if (round_to) {
      f.rounded_graph = g->copy();
      std::unordered_set<const jit::Node*> copied_casts;  // the widening casts, in the copy
      std::vector<jit::Node*> original, copied;
      allNodes(g->block(), original);
      allNodes(f.rounded_graph->block(), copied);
      for (size_t i = 0; i < original.size() && i < copied.size(); ++i)
        if (casts.count(original[i])) copied_casts.insert(copied[i]);
      std::unordered_set<const jit::Value*> wide;
      roundResults(*f.rounded_graph, f.rounded_graph->block(), *round_to, wide, copied_casts, f.rounded_results);
      f.rounded_code = std::make_shared<jit::Code>(f.rounded_graph, "forward_half_run");
    }
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
                                      const std::vector<c10::IValue>& inputs, bool rounded) {
  if (rounded && !f.rounded_code) return Error("forward-failed", "no rounded graph was made");
  try {
    jit::Stack stack;
    stack.push_back(m._ivalue());
    for (const auto& v : inputs)
      stack.push_back(mapTensors(v, [](const at::Tensor& t) { return isHalf(t) ? t.to(at::kFloat) : t; }));
    jit::InterpreterState state(rounded ? *f.rounded_code : *f.code);
    state.run(stack);
    if (stack.size() != 1)
      return Error("forward-failed", "the widened forward returned " + std::to_string(stack.size()) + " values");
    return std::move(stack.back());
  } catch (const std::exception& e) {
    return Error("forward-failed", torchErrorMessage(e));
  }
}

}  // namespace oxport
