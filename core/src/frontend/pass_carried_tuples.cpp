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

// A list of tuples of tensors (`pairs.append((r, c))` in a matching loop) used only by append,
// len and indexing: one list per element, each a list of tensors that pass_list_mutation can carry.
bool splitTupleList(jit::Graph& g, jit::Node* def) {
  auto lt = def->output()->type()->cast<c10::ListType>();
  auto tt = lt ? lt->getElementType()->cast<c10::TupleType>() : nullptr;
  if (!tt || tt->elements().empty()) return false;
  for (const auto& e : tt->elements())
    if (e->kind() != c10::TypeKind::TensorType) return false;
  jit::Value* l = def->output();
  for (const jit::Use& u : l->uses()) {
    const std::string k = u.user->kind().toQualString();
    if (u.offset != 0 || (k != "aten::append" && k != "aten::len" && k != "aten::__getitem__")) return false;
    if (k == "aten::append" && u.user->output()->hasUses()) return false;
  }
  const size_t m = tt->elements().size();
  std::vector<std::vector<jit::Value*>> initial(m);
  for (jit::Value* t : def->inputs()) {
    auto elems = elementsOf(g, t, tt, def);
    for (size_t j = 0; j < m; ++j) initial[j].push_back(elems[j]);
  }
  std::vector<jit::Value*> lists;
  for (size_t j = 0; j < m; ++j) {
    jit::Node* made = g.createList(tt->elements()[j], initial[j]);
    made->insertAfter(def);
    lists.push_back(made->output());
  }
  std::vector<jit::Node*> dead;
  const std::vector<jit::Use> uses(l->uses().begin(), l->uses().end());
  for (const jit::Use& u : uses) {
    jit::Node* n = u.user;
    const std::string k = n->kind().toQualString();
    jit::WithInsertPoint guard(n);
    if (k == "aten::append") {
      auto elems = elementsOf(g, n->input(1), tt, n);
      for (size_t j = 0; j < m; ++j) g.insert(c10::aten::append, {lists[j], elems[j]})->node()->setSourceRange(n->sourceRange());
      dead.push_back(n);
    } else if (k == "aten::len") {
      n->replaceInput(0, lists[0]);
    } else {
      std::vector<jit::Value*> parts;
      for (size_t j = 0; j < m; ++j) parts.push_back(g.insert(c10::aten::__getitem__, {lists[j], n->input(1)}));
      jit::Value* joined = construct(g, parts, tt);
      joined->node()->insertBefore(n);
      n->output()->replaceAllUsesWith(joined);
      dead.push_back(n);
    }
  }
  for (jit::Node* n : dead) n->destroy();
  def->destroy();
  return true;
}

int visitLists(jit::Graph& g, jit::Block* b) {
  int split = 0;
  std::vector<jit::Node*> defs;
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* sb : n->blocks()) split += visitLists(g, sb);
    if (n->kind() == c10::prim::ListConstruct) defs.push_back(n);
  }
  for (jit::Node* def : defs) split += splitTupleList(g, def) ? 1 : 0;
  return split;
}

}  // namespace

int splitCarriedTuples(jit::Graph& g) { return visit(g, g.block()); }

int splitTupleLists(jit::Graph& g) { return visitLists(g, g.block()); }

}  // namespace oxport
