// Loops of a known count that build lists of tensors, unrolled (see pass_unroll_list_loops.h).
#include "frontend/pass_unroll_list_loops.h"

#include <unordered_map>
#include <unordered_set>

#include <torch/csrc/jit/ir/constants.h>

namespace oxport {

namespace jit = torch::jit;

std::vector<jit::Value*> copyBlockBefore(jit::Block* b, jit::Node* before, const std::vector<jit::Value*>& inputs) {
  std::unordered_map<jit::Value*, jit::Value*> map;
  for (size_t i = 0; i < b->inputs().size(); ++i) map[b->inputs()[i]] = inputs.at(i);
  auto mapped = [&](jit::Value* v) {
    auto it = map.find(v);
    return it == map.end() ? v : it->second;
  };
  jit::Graph& g = *before->owningGraph();
  for (jit::Node* bn : b->nodes()) {
    jit::Node* copy = g.createClone(bn, mapped);  // source range, scope, call stack, debug names
    copy->insertBefore(before);
    for (size_t i = 0; i < bn->outputs().size(); ++i) map[bn->outputs()[i]] = copy->outputs()[i];
  }
  std::vector<jit::Value*> outs;
  for (auto* o : b->outputs()) outs.push_back(mapped(o));
  return outs;
}

namespace {

bool isTrue(jit::Value* v) {
  auto c = jit::toIValue(v);
  return c && c->isBool() && c->toBool();
}

bool isTensorList(const jit::Value* v) {
  auto list = v->type()->cast<c10::ListType>();
  return list && list->getElementType()->kind() == c10::TypeKind::TensorType;
}

// Is node `n` inside `loop`'s body (at any depth)?
bool inside(jit::Node* n, jit::Node* loop) {
  for (jit::Block* b = n->owningBlock(); b && b->owningNode(); b = b->owningNode()->owningBlock())
    if (b->owningNode() == loop) return true;
  return false;
}

// Does `b` (nested blocks included) change in place a list defined outside `loop` (of tensors or
// numbers: unrolled, appends of sizes are straight-line code too)?
bool changesOuterList(jit::Block* b, jit::Node* loop) {
  static const std::unordered_set<std::string> kinds = {"aten::append", "aten::extend", "aten::insert",
                                                        "aten::_set_item"};
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* sb : n->blocks())
      if (changesOuterList(sb, loop)) return true;
    if (kinds.count(n->kind().toQualString()) && !n->inputs().empty() &&
        n->input(0)->type()->kind() == c10::TypeKind::ListType && !inside(n->input(0)->node(), loop))
      return true;
  }
  return false;
}

int unrollBlock(jit::Block* b) {
  int count = 0;
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;
    for (jit::Block* sb : n->blocks()) count += unrollBlock(sb);
    if (n->kind() != c10::prim::Loop) continue;
    auto trips = jit::toIValue(n->input(0));
    if (!trips || !trips->isInt() || trips->toInt() < 0 || trips->toInt() > kMaxUnrolledTrips) continue;
    if (!isTrue(n->input(1)) || !buildsList(n)) continue;
    if (!unrollFixedLoop(n, trips->toInt()).ok()) continue;  // without a callback it cannot fail
    n->destroy();
    ++count;
  }
  return count;
}

}  // namespace

bool buildsList(jit::Node* loop) {
  jit::Block* body = loop->blocks()[0];
  if (!isTrue(body->outputs()[0])) return false;  // a break: the count depends on the body's values
  for (size_t k = 2; k < loop->inputs().size(); ++k)
    if (isTensorList(loop->input(k))) return true;
  return changesOuterList(body, loop);
}

bool changesListInPlace(jit::Node* loop) {
  jit::Block* body = loop->blocks()[0];
  return isTrue(body->outputs()[0]) && changesOuterList(body, loop);
}

Status unrollFixedLoop(jit::Node* loop, int64_t trips, const std::function<Status(jit::Node*, jit::Node*)>& each) {
  jit::Block* body = loop->blocks()[0];
  jit::Graph& g = *loop->owningGraph();
  std::vector<jit::Value*> carried(loop->inputs().begin() + 2, loop->inputs().end());
  for (int64_t i = 0; i < trips; ++i) {
    jit::Node* before = loop->prev();
    std::vector<jit::Value*> ins;
    {
      jit::WithInsertPoint guard(loop);
      ins.push_back(g.insertConstant(i));
    }
    ins.insert(ins.end(), carried.begin(), carried.end());
    std::vector<jit::Value*> outs = copyBlockBefore(body, loop, ins);
    if (each) {
      // `each` may unroll a loop nested in the copy, replacing that loop's outputs (which `outs` may
      // hold) by its last copy's: read them back through a placeholder that uses them.
      jit::Node* hold = g.create(c10::prim::TupleConstruct, outs);
      hold->insertAfter(loop);
      Status st = each(before->next(), loop);
      outs.assign(hold->inputs().begin(), hold->inputs().end());
      hold->destroy();
      OXPORT_TRY(st);
    }
    carried.assign(outs.begin() + 1, outs.end());
  }
  for (size_t k = 0; k < loop->outputs().size(); ++k) loop->outputs()[k]->replaceAllUsesWith(carried[k]);
  return okStatus();
}

int unrollListBuildingLoops(jit::Graph& g) { return unrollBlock(g.block()); }

}  // namespace oxport
