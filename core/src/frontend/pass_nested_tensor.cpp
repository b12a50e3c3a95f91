// nn.TransformerEncoder's nested-tensor fast path as padded-tensor ops (see pass_nested_tensor.h).
#include "frontend/pass_nested_tensor.h"

#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <vector>

#include "frontend/pass_export_constants.h"

namespace oxport {

namespace jit = torch::jit;

namespace {

const c10::Symbol kLeftAligned = c10::Symbol::fromQualString("aten::_nested_tensor_from_mask_left_aligned");
const c10::Symbol kFromMask = c10::Symbol::fromQualString("aten::_nested_tensor_from_mask");
const c10::Symbol kToPadded = c10::Symbol::fromQualString("aten::to_padded_tensor");

void collect(jit::Block* b, c10::Symbol kind, std::vector<jit::Node*>& out) {
  for (jit::Node* n : b->nodes()) {
    if (n->kind() == kind) out.push_back(n);
    for (jit::Block* sub : n->blocks()) collect(sub, kind, out);
  }
}

std::string where(const jit::Node* n) {
  const auto& sr = n->sourceRange();
  auto r = sr.findSourceRangeThatGenerated() ? sr.findSourceRangeThatGenerated()->file_line_col() : sr.file_line_col();
  std::string at = r ? " (" + std::get<0>(*r) + ":" + std::to_string(std::get<1>(*r)) + ")" : "";
  return std::string(n->kind().toQualString()) + at;
}

bool isNone(const jit::Value* v) {
  return v->node()->kind() == c10::prim::Constant && v->type()->kind() == c10::TypeKind::NoneType;
}

// The Optional (or Tensor) mask `valid = mask.logical_not()` was computed from, seen through the
// refinement TorchScript puts after `mask is not None`.
jit::Value* maskBehind(jit::Value* valid) {
  jit::Node* n = valid->node();
  if (n->kind() != c10::aten::logical_not) return nullptr;
  return n->input(0);
}

jit::Value* optionalSource(jit::Value* mask) {
  if (mask->node()->kind() == c10::prim::unchecked_cast) return mask->node()->input(0);
  return mask;
}

// At the insertion point: what to_padded_tensor(y, 0.) returns when the encoder took its nested
// path exactly when the mask is left-aligned: where(left_aligned, y with zeros at padding, y),
// sliced to the longest row where left-aligned.
jit::Value* paddedResult(jit::Graph& g, jit::Value* y, jit::Value* mask, const jit::SourceRange& range) {
  auto ins = [&](c10::Symbol s, std::vector<jit::NamedValue> args) { return g.insert(s, args, {}, range); };
  jit::Value* valid = ins(c10::aten::logical_not, {mask});
  jit::Value* counts = ins(c10::aten::sum, {valid, std::vector<int64_t>{1}, true});  // (N, 1) int64
  jit::Value* length = ins(c10::aten::size, {y, int64_t(1)});
  jit::Value* positions = ins(c10::aten::arange, {length});
  jit::Value* expected = ins(c10::aten::lt, {positions, counts});  // (N, L): left-aligned rows
  jit::Value* left_aligned = ins(c10::aten::all, {ins(c10::aten::eq, {expected, valid})});
  jit::Value* zeroed = ins(c10::aten::where, {ins(c10::aten::unsqueeze, {valid, int64_t(-1)}), y, 0.0});
  jit::Value* chosen = ins(c10::aten::where, {left_aligned, zeroed, y});
  jit::Value* longest = ins(c10::aten::max, {counts});
  jit::Value* end = ins(c10::aten::Int, {ins(c10::aten::where, {left_aligned, longest, length})});
  return ins(c10::aten::slice, {chosen, int64_t(1), int64_t(0), end, int64_t(1)});
}

}  // namespace

std::string lowerNestedFastPath(std::shared_ptr<jit::Graph>& g, const c10::IValue& self, TrainingMode training) {
  std::vector<jit::Node*> tests, packs, unpacks;
  collect(g->block(), kLeftAligned, tests);
  collect(g->block(), kFromMask, packs);
  collect(g->block(), kToPadded, unpacks);
  if (packs.empty() && unpacks.empty()) return "";
  if (tests.empty())
    return where(packs.empty() ? unpacks.front() : packs.front()) +
           " packs the batch into a nested tensor on every input: the encoder's mask_check is False, so no test "
           "on the mask decides it; construct nn.TransformerEncoder with mask_check=True (its default) or "
           "enable_nested_tensor=False";
  if (packs.size() != unpacks.size())
    return where(packs.empty() ? unpacks.front() : packs.front()) + ": " + std::to_string(packs.size()) +
           " _nested_tensor_from_mask against " + std::to_string(unpacks.size()) +
           " to_padded_tensor; only nn.TransformerEncoder's own use of nested tensors is rewritten";
  // First check every pair, then rewrite: a refusal leaves the graph as it was.
  struct Pair {
    jit::Node *pack, *unpack;
    jit::Value *mask, *optional;
    size_t none_output;
  };
  std::vector<Pair> pairs;
  for (size_t i = 0; i < packs.size(); ++i) {
    jit::Node* pack = packs[i];
    jit::Node* unpack = unpacks[i];
    jit::Value* mask = maskBehind(pack->input(1));
    if (!mask) return where(pack) + ": its mask is not `src_key_padding_mask.logical_not()`";
    jit::Value* optional = optionalSource(mask);
    if (optional->node()->kind() != c10::prim::Param && !unpack->isDominatedBy(optional->node()))
      return where(unpack) + ": the mask is not in scope where the nested tensor is unpacked";
    auto padding = jit::toIValue(unpack->input(1));
    if (!padding || !padding->isDouble() || padding->toDouble() != 0.0 || !isNone(unpack->input(2)))
      return where(unpack) + ": only to_padded_tensor(0.) without an output size is rewritten";
    jit::Block* b = pack->owningBlock();
    if (b == g->block()) return where(pack) + " is not behind the encoder's left-aligned test";
    size_t none_output = b->outputs().size();
    for (size_t k = 0; k < b->outputs().size(); ++k)
      if (isNone(b->outputs()[k])) {
        if (none_output != b->outputs().size())
          return where(pack) + ": more than one None leaves the branch that packs the nested tensor";
        none_output = k;
      }
    if (none_output == b->outputs().size())
      return where(pack) + ": the branch that packs the nested tensor hands the layers no None mask to replace";
    pairs.push_back({pack, unpack, mask, optional, none_output});
  }
  for (const Pair& p : pairs) {
    // The layers run on the padded input with the mask (the padded path).
    p.pack->owningBlock()->replaceOutput(p.none_output, p.mask);
    p.pack->output()->replaceAllUsesWith(p.pack->input(0));
    p.pack->destroy();
    jit::WithInsertPoint guard(p.unpack);
    jit::Value* mask = p.optional;
    if (mask->type()->kind() == c10::TypeKind::OptionalType)
      mask = g->insertUncheckedCast(mask, c10::TensorType::get());
    jit::Value* out = paddedResult(*g, p.unpack->input(0), mask, p.unpack->sourceRange());
    p.unpack->output()->replaceAllUsesWith(out);
    p.unpack->destroy();
  }
  // The conditions decided as if the mask were left-aligned: the nested branch is kept where every
  // other condition holds, and it now runs the padded path and the test itself.
  for (jit::Node* t : tests) {
    jit::WithInsertPoint guard(t);
    t->output()->replaceAllUsesWith(g->insertConstant(true));
    t->destroy();
  }
  foldExportConstants(g, self, training);
  jit::EliminateDeadCode(g);
  return "";
}

}  // namespace oxport
