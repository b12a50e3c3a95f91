// Constant-count loops that build a list, unrolled (see pass_unroll_list_loops.h).
#include "frontend/pass_unroll_list_loops.h"

#include <unordered_map>
#include <vector>

#include <torch/csrc/jit/ir/constants.h>

namespace oxport {

namespace jit = torch::jit;

namespace {

constexpr int64_t kMaxTrips = 64;

bool isTrue(jit::Value* v) {
  auto c = jit::toIValue(v);
  return c && c->isBool() && c->toBool();
}

// Is node `n` inside `loop`'s body (at any depth)?
bool inside(jit::Node* n, jit::Node* loop) {
  for (jit::Block* b = n->owningBlock(); b && b->owningNode(); b = b->owningNode()->owningBlock())
    if (b->owningNode() == loop) return true;
  return false;
}

// Does `b` (nested blocks included) append to a list defined outside `loop`?
bool appendsToOuterList(jit::Block* b, jit::Node* loop) {
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* sb : n->blocks())
      if (appendsToOuterList(sb, loop)) return true;
    if (n->kind() == c10::aten::append && !inside(n->input(0)->node(), loop)) return true;
  }
  return false;
}

void unroll(jit::Graph& g, jit::Node* loop, int64_t trips) {
  jit::Block* body = loop->blocks()[0];
  std::vector<jit::Value*> carried(loop->inputs().begin() + 2, loop->inputs().end());
  jit::WithInsertPoint guard(loop);
  for (int64_t i = 0; i < trips; ++i) {
    std::unordered_map<jit::Value*, jit::Value*> env;
    env[body->inputs()[0]] = g.insertConstant(i);
    for (size_t j = 0; j < carried.size(); ++j) env[body->inputs()[j + 1]] = carried[j];
    auto map = [&](jit::Value* v) {
      auto it = env.find(v);
      return it != env.end() ? it->second : v;
    };
    for (jit::Node* bn : body->nodes()) {
      jit::Node* c = g.insertNode(g.createClone(bn, map));
      for (size_t k = 0; k < bn->outputs().size(); ++k) env[bn->outputs()[k]] = c->outputs()[k];
    }
    for (size_t j = 0; j < carried.size(); ++j) carried[j] = map(body->outputs()[j + 1]);
  }
  for (size_t j = 0; j < carried.size(); ++j) loop->outputs()[j]->replaceAllUsesWith(carried[j]);
  loop->destroy();
}

int unrollBlock(jit::Graph& g, jit::Block* b) {
  int count = 0;
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;
    for (jit::Block* sb : n->blocks()) count += unrollBlock(g, sb);
    if (n->kind() != c10::prim::Loop) continue;
    auto trips = jit::toIValue(n->input(0));
    if (!trips || !trips->isInt() || trips->toInt() < 0 || trips->toInt() > kMaxTrips) continue;
    if (!isTrue(n->input(1)) || !isTrue(n->blocks()[0]->outputs()[0])) continue;
    if (!appendsToOuterList(n->blocks()[0], n)) continue;
    unroll(g, n, trips->toInt());
    ++count;
  }
  return count;
}

}  // namespace

int unrollListBuildingLoops(jit::Graph& g) { return unrollBlock(g, g.block()); }

}  // namespace oxport
