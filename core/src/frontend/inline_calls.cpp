#include "frontend/inline_calls.h"

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <functional>
#include <unordered_map>
#include <vector>

namespace oxport {

namespace jit = torch::jit;

namespace {

c10::TypePtr withoutFutures(const c10::TypePtr& t) {
  if (auto f = t->cast<c10::FutureType>()) return withoutFutures(f->getElementType());
  const auto contained = t->containedTypes();
  if (contained.empty()) return t;
  std::vector<c10::TypePtr> mapped;
  bool changed = false;
  for (const auto& c : contained) {
    mapped.push_back(withoutFutures(c));
    changed = changed || mapped.back() != c;
  }
  return changed ? t->withContained(std::move(mapped)) : t;
}

// `head: HeadInterface` (torch.jit.interface) on a module: prim::GetAttr gives a value of the
// interface type, whose method calls Inline cannot follow. The module object behind it is known
// (the loaded module's attribute), so the value takes that object's own class type. Returns
// whether a value was retyped.
bool resolveInterfaces(jit::Graph& graph, const c10::IValue& self) {
  std::unordered_map<const jit::Value*, c10::IValue> objects{{graph.inputs().at(0), self}};
  bool changed = false;
  std::function<void(jit::Block*)> visit = [&](jit::Block* b) {
    for (jit::Node* n : b->nodes()) {
      for (jit::Block* sb : n->blocks()) visit(sb);
      if (n->kind() != c10::prim::GetAttr) continue;
      auto found = objects.find(n->input());
      if (found == objects.end() || !found->second.isObject()) continue;
      const auto& obj = found->second.toObjectRef();
      const std::string& name = n->s(c10::attr::name);
      if (!obj.type()->hasAttribute(name)) continue;
      c10::IValue attr = obj.getAttr(name);
      if (!attr.isObject()) continue;
      objects.emplace(n->output(), attr);
      if (n->output()->type()->cast<c10::InterfaceType>()) {
        n->output()->setType(attr.type());
        changed = true;
      }
    }
  };
  visit(graph.block());
  return changed;
}

// Runs each fork's subgraph where the fork stands. Returns whether one was found (its body may
// hold calls to inline and forks of its own).
bool inlineForks(jit::Block* b) {
  bool found = false;
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it++;
    for (jit::Block* sb : n->blocks()) found = inlineForks(sb) || found;
    if (n->kind() != c10::prim::fork) continue;
    jit::WithInsertPoint guard(n);
    auto outs = jit::insertGraph(*b->owningGraph(), *n->g(c10::attr::Subgraph), n->inputs());
    n->output()->replaceAllUsesWith(outs.at(0));
    n->destroy();
    found = true;
  }
  return found;
}

// Values that held forked results: every value typed Future[T] (or List[Future[T]] ...) is T.
void retype(jit::Block* b) {
  auto fix = [](jit::Value* v) {
    auto t = withoutFutures(v->type());
    if (t != v->type()) v->setType(t);
  };
  for (jit::Value* v : b->inputs()) fix(v);
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* sb : n->blocks()) retype(sb);
    for (jit::Value* v : n->outputs()) fix(v);
  }
}

// aten::wait of a forked call's future (directly, or taken from a list of them): the value itself.
void removeWaits(jit::Block* b) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it++;
    for (jit::Block* sb : n->blocks()) removeWaits(sb);
    if (n->kind() != c10::aten::wait || n->inputs().size() != 1 || n->outputs().size() != 1) continue;
    n->output()->replaceAllUsesWith(n->input());
    n->destroy();
  }
}

}  // namespace

void inlineCallsAndForks(jit::Graph& graph, const c10::IValue& self) {
  jit::Inline(graph);
  bool forked = false;
  for (;;) {
    const bool resolved = self.isObject() && resolveInterfaces(graph, self);
    const bool inlined_fork = inlineForks(graph.block());
    forked = forked || inlined_fork;
    if (!resolved && !inlined_fork) break;
    jit::Inline(graph);
  }
  if (!forked) return;
  retype(graph.block());
  removeWaits(graph.block());
}

}  // namespace oxport
