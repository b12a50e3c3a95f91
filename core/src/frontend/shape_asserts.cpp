// Asserts on shapes recognized on the TorchScript graph (see shape_asserts.h).
#include "frontend/shape_asserts.h"

#include <string>
#include <unordered_set>

#include "frontend/jit_util.h"

namespace oxport {

namespace jit = torch::jit;

namespace {

// Ops that read a tensor's shape or metadata, never its elements.
bool readsShapeOnly(const jit::Node* n) {
  static const std::unordered_set<std::string> kinds = {
      "aten::size", "aten::dim", "aten::numel", "aten::len", "prim::dtype", "prim::device", "prim::layout",
      "prim::is_cuda", "prim::is_nested", "prim::is_sparse", "prim::is_quantized", "prim::is_meta",
      "prim::is_mkldnn", "prim::requires_grad", "aten::is_floating_point", "aten::is_complex"};
  return kinds.count(n->kind().toQualString()) != 0;
}

// No node in n's blocks (at any depth) has side effects.
bool pureBlocks(const jit::Node* n) {
  for (const jit::Block* b : n->blocks())
    for (const jit::Node* bn : b->nodes())
      if (bn->hasSideEffects() || !pureBlocks(bn)) return false;
  return true;
}

bool shapeOnly(const jit::Value* v, std::unordered_set<const jit::Value*>& seen) {
  if (!seen.insert(v).second) return true;
  const jit::Node* p = v->node();
  if (p->kind() == c10::prim::Constant) return true;
  if (holdsTensorType(v->type())) return false;  // a tensor's elements (or a graph input)
  if (readsShapeOnly(p)) return true;
  if (p->kind() == c10::prim::GetAttr) return true;  // a setting of the module (not a tensor: above)
  if (p->kind() == c10::prim::Param) {
    // The counter or a carried value of a loop (`for i in range(len(size) - 2): p *= size[i + 2]`
    // in F._verify_batch_size): shape-only when the loop's inputs and its body's results are.
    const jit::Node* loop = p->owningBlock() ? p->owningBlock()->owningNode() : nullptr;
    if (!loop || loop->kind() != c10::prim::Loop || !pureBlocks(loop)) return false;
    for (const jit::Value* in : loop->inputs())
      if (!shapeOnly(in, seen)) return false;
    for (const jit::Value* o : loop->blocks()[0]->outputs())
      if (!shapeOnly(o, seen)) return false;
    return true;
  }
  if (p->hasSideEffects() || p->isNondeterministic()) return false;
  if (!p->blocks().empty()) {
    // `a and b` / `a or b` are Ifs giving a bool: shape-only when their branches are; a loop's
    // results when its inputs and body's results are.
    if ((p->kind() != c10::prim::If && p->kind() != c10::prim::Loop) || !pureBlocks(p)) return false;
    for (const jit::Block* b : p->blocks())
      for (const jit::Value* o : b->outputs())
        if (!shapeOnly(o, seen)) return false;
  }
  for (const jit::Value* o : p->outputs())
    if (holdsTensorType(o->type())) return false;
  for (const jit::Value* in : p->inputs())
    if (!shapeOnly(in, seen)) return false;
  return true;
}

bool onlyRaises(const jit::Block* b) {
  const jit::Node* last = nullptr;
  for (const jit::Node* n : b->nodes()) {
    if (last && n->kind() == c10::prim::Uninitialized) continue;  // the outputs of a path that raised
    if (last) return false;  // something after the raise
    if (n->kind() == c10::prim::RaiseException) {
      last = n;
      continue;
    }
    if (!n->blocks().empty() || n->hasSideEffects()) return false;
  }
  return last != nullptr;
}

}  // namespace

// The branch an assert passes through: only side-effect-free nodes and more asserts on shapes
// (`elif` chains of checks).
static bool onlyChecks(const jit::Block* b) {
  size_t unused = 0;
  for (const jit::Node* n : b->nodes()) {
    if (n->kind() == c10::prim::If && n->outputs().empty()) {
      if (!isShapeAssert(n, &unused)) return false;
      continue;
    }
    if (!n->blocks().empty() || n->hasSideEffects()) return false;
  }
  return true;
}

bool decidedByShapes(const jit::Value* v) {
  std::unordered_set<const jit::Value*> seen;
  return shapeOnly(v, seen);
}

bool isShapeAssert(const jit::Node* n, size_t* raise_branch) {
  if (n->kind() != c10::prim::If || !n->outputs().empty() || n->blocks().size() != 2) return false;
  for (size_t i = 0; i < 2; ++i) {
    if (!onlyRaises(n->blocks()[i]) || !onlyChecks(n->blocks()[1 - i])) continue;
    std::unordered_set<const jit::Value*> seen;
    if (!shapeOnly(n->input(0), seen)) return false;
    *raise_branch = i;
    return true;
  }
  return false;
}

bool isCheck(const jit::Node* n, size_t* raise_branch) {
  if (n->kind() != c10::prim::If || n->blocks().size() != 2) return false;
  for (size_t i = 0; i < 2; ++i) {
    if (!onlyRaises(n->blocks()[i]) || onlyRaises(n->blocks()[1 - i])) continue;
    *raise_branch = i;
    return true;
  }
  return false;
}

}  // namespace oxport
