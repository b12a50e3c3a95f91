// Tuples carried by loops and leaving ifs, split into their elements (see pass_carried_tuples.h).
#include "frontend/pass_carried_tuples.h"

#include <vector>

namespace oxport {

namespace jit = torch::jit;

namespace {

// The elements of tuple `v` (of type `tt`) as values available before `before`: a TupleConstruct's
// inputs, one prim::Uninitialized per element for an uninitialized tuple (the value of a path that
// returned early), else a TupleUnpack.
std::vector<jit::Value*> elementsOf(jit::Graph& g, jit::Value* v, const c10::TupleTypePtr& tt, jit::Node* before) {
  jit::Node* p = v->node();
  if (p->kind() == c10::prim::TupleConstruct && p->inputs().size() == tt->elements().size())
    return {p->inputs().begin(), p->inputs().end()};
  std::vector<jit::Value*> out;
  if (p->kind() == c10::prim::Uninitialized) {
    for (const auto& t : tt->elements()) {
      jit::Node* u = g.create(c10::prim::Uninitialized, {}, 1);
      u->output()->setType(t);
      u->insertBefore(before);
      out.push_back(u->output());
    }
    return out;
  }
  jit::Node* unpack = g.createTupleUnpack(v);
  unpack->insertBefore(before);
  for (size_t j = 0; j < unpack->outputs().size(); ++j) unpack->output(j)->setType(tt->elements()[j]);
  return {unpack->outputs().begin(), unpack->outputs().end()};
}

jit::Value* construct(jit::Graph& g, const std::vector<jit::Value*>& elems, const c10::TypePtr& type) {
  jit::Node* t = g.createTuple(elems);
  t->output()->setType(type);
  return t->output();
}

// Splits the first tuple-typed output of `n` (a prim::Loop or prim::If); true when one was split.
bool splitOne(jit::Graph& g, jit::Node* n) {
  const bool loop = n->kind() == c10::prim::Loop;
  for (size_t k = 0; k < n->outputs().size(); ++k) {
    auto tt = n->output(k)->type()->cast<c10::TupleType>();
    if (!tt) continue;
    const size_t m = tt->elements().size();
    std::vector<jit::Value*> outs;
    if (loop) {
      jit::Block* b = n->blocks()[0];
      std::vector<jit::Value*> init = elementsOf(g, n->input(2 + k), tt, n);
      std::vector<jit::Value*> bins;
      for (size_t j = 0; j < m; ++j) bins.push_back(b->addInput()->setType(tt->elements()[j]));
      jit::Value* joined = construct(g, bins, n->output(k)->type());
      b->prependNode(joined->node());
      b->inputs()[1 + k]->replaceAllUsesWith(joined);
      std::vector<jit::Value*> bouts = elementsOf(g, b->outputs()[1 + k], tt, b->return_node());
      for (size_t j = 0; j < m; ++j) {
        b->registerOutput(bouts[j]);
        n->addInput(init[j]);
        outs.push_back(n->addOutput()->setType(tt->elements()[j]));
      }
      b->eraseOutput(1 + k);
      b->eraseInput(1 + k);
      n->removeInput(2 + k);
    } else {
      for (jit::Block* b : n->blocks()) {
        std::vector<jit::Value*> bouts = elementsOf(g, b->outputs()[k], tt, b->return_node());
        for (jit::Value* e : bouts) b->registerOutput(e);
      }
      for (size_t j = 0; j < m; ++j) outs.push_back(n->addOutput()->setType(tt->elements()[j]));
      for (jit::Block* b : n->blocks()) b->eraseOutput(k);
    }
    jit::Value* joined = construct(g, outs, n->output(k)->type());
    joined->node()->insertAfter(n);
    n->output(k)->replaceAllUsesWith(joined);
    n->eraseOutput(k);
    return true;
  }
  return false;
}

int visit(jit::Graph& g, jit::Block* b) {
  int split = 0;
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* sb : n->blocks()) split += visit(g, sb);
    if (n->kind() != c10::prim::Loop && n->kind() != c10::prim::If) continue;
    while (splitOne(g, n)) ++split;  // nested tuples: their elements are split next
  }
  return split;
}

}  // namespace

int splitCarriedTuples(jit::Graph& g) { return visit(g, g.block()); }

}  // namespace oxport
