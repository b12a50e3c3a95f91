// List mutation rewritten into functional form (see pass_list_mutation.h).
#include "frontend/pass_list_mutation.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <torch/csrc/jit/runtime/custom_operator.h>

namespace oxport {

namespace jit = torch::jit;

namespace {

using c10::Symbol;

// In-place list ops of TorchScript, and what each becomes.
struct Mutation {
  const char* functional;
  bool returns_list;  // its own output aliases the list (append, _set_item, add_)
};

const std::unordered_map<std::string, Mutation>& mutations() {
  static const std::unordered_map<std::string, Mutation> m = {
      {"aten::append", {"prim::oxport_list_append", true}},
      {"aten::insert", {"prim::oxport_list_insert", false}},
      {"aten::pop", {"prim::oxport_list_pop", false}},
      {"aten::_set_item", {"prim::oxport_list_set", true}},
      {"aten::Delete", {"prim::oxport_list_delete", false}},
      {"aten::clear", {"prim::oxport_list_clear", false}},
      {"aten::extend", {"prim::oxport_list_extend", false}},
      {"aten::add_", {"prim::oxport_list_extend", true}},
      {"aten::reverse", {"prim::oxport_list_reverse", false}},
  };
  return m;
}

bool isTensorList(const jit::Value* v) {
  auto lt = v->type()->cast<c10::ListType>();
  return lt && lt->getElementType()->kind() == c10::TypeKind::TensorType;
}

const Mutation* mutationOf(const jit::Node* n) {
  if (n->inputs().empty() || !isTensorList(n->input(0))) return nullptr;
  auto it = mutations().find(n->kind().toQualString());
  return it == mutations().end() ? nullptr : &it->second;
}

// Uses that would let the list be seen through another name (an alias that a later mutation
// would have to update too): into a container, into a loop or an if as an input.
bool aliasingUse(const jit::Use& u) {
  const jit::Node* n = u.user;
  if (mutationOf(n) && u.offset == 0) return false;
  const std::string k = n->kind().toQualString();
  if (mutationOf(n)) return k != "aten::extend" && k != "aten::add_";  // stored as an element
  return k == "prim::ListConstruct" || k == "prim::DictConstruct" || k == "prim::Loop" || k == "prim::If" ||
         k == "aten::_set_item" || k == "aten::append" || k == "aten::insert";
}

// Each new version of a list is named after the list (`outs`, as jit numbers it: outs.3), so that
// messages about it name the variable of the model's code.
jit::Value* named(jit::Value* v, const jit::Value* list) {
  std::string base = list->debugName();
  if (auto dot = base.find('.'); dot != std::string::npos) base.resize(dot);
  if (!base.empty() && base.find_first_not_of("0123456789") != std::string::npos) v->setDebugName(base);
  return v;
}

class Rewriter {
 public:
  explicit Rewriter(jit::Graph& g) : g_(g) {}

  int run() {
    collect(g_.block());
    if (lists_.empty()) return 0;
    std::unordered_map<jit::Value*, jit::Value*> cur;
    for (auto* l : lists_) cur[l] = l;
    rewriteBlock(g_.block(), cur);
    return rewritten_;
  }

 private:
  // The lists to rewrite: mutated, defined by a node, and without aliasing uses.
  void collect(jit::Block* b) {
    for (jit::Node* n : b->nodes()) {
      for (auto* sb : n->blocks()) collect(sb);
      if (!mutationOf(n)) continue;
      jit::Value* l = n->input(0);
      if (seen_.count(l)) continue;
      seen_.insert(l);
      if (l->node()->kind() == c10::prim::Param) continue;  // a block input: carried by TorchScript
      bool ok = true;
      for (const auto& u : l->uses()) ok = ok && !aliasingUse(u);
      if (ok) {
        lists_.push_back(l);
        lists_set_.insert(l);
      }
    }
  }

  // Whether `v` is defined in block `b` or in a block nested in it.
  static bool definedWithin(const jit::Value* v, const jit::Block* b) {
    for (const jit::Block* at = v->node()->owningBlock(); at; at = at->owningNode() ? at->owningNode()->owningBlock() : nullptr)
      if (at == b) return true;
    return false;
  }

  // The tracked lists made outside `b` and mutated in `b` or its nested blocks, in the order of
  // lists_: those `b` must give back (a list made inside it stays inside).
  std::vector<jit::Value*> mutatedIn(jit::Block* b) {
    std::unordered_set<jit::Value*> found;
    std::function<void(jit::Block*)> visit = [&](jit::Block* blk) {
      for (jit::Node* n : blk->nodes()) {
        if (mutationOf(n) && lists_set_.count(n->input(0))) found.insert(n->input(0));
        for (auto* sb : n->blocks()) visit(sb);
      }
    };
    visit(b);
    std::vector<jit::Value*> out;
    for (auto* l : lists_)
      if (found.count(l) && !definedWithin(l, b)) out.push_back(l);
    return out;
  }

  static void readCurrent(jit::Node* n, const std::unordered_map<jit::Value*, jit::Value*>& cur, size_t from = 0) {
    for (size_t i = from; i < n->inputs().size(); ++i) {
      auto it = cur.find(n->input(i));
      if (it != cur.end() && it->second != n->input(i)) n->replaceInput(i, it->second);
    }
  }

  void rewriteBlock(jit::Block* b, std::unordered_map<jit::Value*, jit::Value*>& cur) {
    std::vector<jit::Node*> nodes(b->nodes().begin(), b->nodes().end());
    for (jit::Node* n : nodes) {
      const Mutation* m = mutationOf(n);
      if (m && lists_set_.count(n->input(0))) {
        jit::Value* l = n->input(0);
        readCurrent(n, cur, 1);
        std::vector<jit::Value*> ins(n->inputs().begin(), n->inputs().end());
        ins[0] = cur.at(l);
        const bool pop = std::string(n->kind().toQualString()) == "aten::pop";
        jit::Node* f = g_.create(Symbol::fromQualString(m->functional), ins, pop ? 2 : 1);
        f->insertBefore(n);
        f->setSourceRange(n->sourceRange());
        f->setScope(n->scope());
        named(f->output(0), l)->setType(l->type());
        if (pop) {
          f->output(1)->setType(n->output()->type());
          n->output()->replaceAllUsesWith(f->output(1));
        } else if (m->returns_list && n->outputs().size() == 1) {
          n->output()->replaceAllUsesWith(l);  // later reads map to the newest version
        }
        cur[l] = f->output(0);
        n->destroy();
        ++rewritten_;
        continue;
      }
      readCurrent(n, cur);
      if (n->kind() == c10::prim::Loop) {
        jit::Block* body = n->blocks()[0];
        auto carried = mutatedIn(body);
        std::unordered_map<jit::Value*, jit::Value*> inner = cur;
        std::vector<jit::Value*> outs;
        for (auto* l : carried) {
          n->addInput(cur.at(l));
          inner[l] = named(body->addInput(), l)->setType(l->type());
          outs.push_back(named(n->addOutput(), l)->setType(l->type()));
        }
        rewriteBlock(body, inner);
        for (auto* l : carried) body->registerOutput(inner.at(l));
        for (size_t k = 0; k < carried.size(); ++k) cur[carried[k]] = outs[k];
      } else if (n->kind() == c10::prim::If) {
        std::vector<jit::Value*> changed;
        for (auto* blk : n->blocks())
          for (auto* l : mutatedIn(blk))
            if (std::find(changed.begin(), changed.end(), l) == changed.end()) changed.push_back(l);
        std::vector<jit::Value*> outs;
        for (auto* l : changed) outs.push_back(named(n->addOutput(), l)->setType(l->type()));
        for (auto* blk : n->blocks()) {
          std::unordered_map<jit::Value*, jit::Value*> inner = cur;
          rewriteBlock(blk, inner);
          for (auto* l : changed) blk->registerOutput(inner.at(l));
        }
        for (size_t k = 0; k < changed.size(); ++k) cur[changed[k]] = outs[k];
      } else {
        for (auto* blk : n->blocks()) {
          std::unordered_map<jit::Value*, jit::Value*> inner = cur;
          rewriteBlock(blk, inner);
        }
      }
    }
    readCurrent(b->return_node(), cur);
  }

  jit::Graph& g_;
  std::vector<jit::Value*> lists_;
  std::unordered_set<jit::Value*> lists_set_;
  std::unordered_set<jit::Value*> seen_;
  int rewritten_ = 0;
};

// Schemas for the functional ops, so that the passes run after this one (dead code elimination
// after trace mode's unrolling, alias analysis) know them: pure functions of their inputs. The
// example run executes them itself (Frontend::executeListOp), never through these operations.
void notRunHere(torch::jit::Stack&) {
  throw std::runtime_error("oxport's functional list ops are run by the export's example run only");
}

const char* const kListOpSchemas[] = {
    "prim::oxport_list_append(Tensor[] l, Tensor x) -> Tensor[]",
    "prim::oxport_list_insert(Tensor[] l, int i, Tensor x) -> Tensor[]",
    "prim::oxport_list_pop(Tensor[] l, int i) -> (Tensor[], Tensor)",
    "prim::oxport_list_set(Tensor[] l, int i, Tensor x) -> Tensor[]",
    "prim::oxport_list_delete(Tensor[] l, int i) -> Tensor[]",
    "prim::oxport_list_clear(Tensor[] l) -> Tensor[]",
    "prim::oxport_list_extend(Tensor[] l, Tensor[] other) -> Tensor[]",
    "prim::oxport_list_reverse(Tensor[] l) -> Tensor[]",
};

torch::jit::RegisterOperators registerListOps() {
  std::vector<c10::optional<torch::jit::Operator>> ops;
  for (const char* schema : kListOpSchemas)
    ops.emplace_back(torch::jit::Operator(schema, notRunHere, c10::AliasAnalysisKind::FROM_SCHEMA));
  return torch::jit::RegisterOperators(std::move(ops));
}

const torch::jit::RegisterOperators kListOps = registerListOps();

}  // namespace

bool isFunctionalListOp(const jit::Node* n) {
  const char* k = n->kind().toQualString();
  return std::string(k).rfind("prim::oxport_list_", 0) == 0;
}

int functionalizeListMutation(jit::Graph& g) { return Rewriter(g).run(); }

}  // namespace oxport
