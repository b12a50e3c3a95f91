#include "frontend/weight_views.h"

#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace oxport {

namespace jit = torch::jit;

namespace {

// A weight's storage as the key of its forms: tied parameters (lm_head.weight = wte.weight) are
// one tensor reached through two attribute paths.
using WeightKey = std::tuple<const void*, int, std::vector<int64_t>, std::vector<int64_t>>;

struct Form {
  WeightKey key;
  std::vector<int64_t> perm;      // the weight's dims in the order the view has them
  std::vector<jit::Node*> chain;  // the view nodes, from the use back to the weight
};

bool isViewKind(const std::string& k) {
  return k == "aten::t" || k == "aten::transpose" || k == "aten::permute" || k == "aten::contiguous" ||
         k == "aten::detach";
}

std::optional<int64_t> staticInt(jit::Value* v, const WeightViewQueries& q) {
  const c10::IValue* iv = q.value(v);
  if (!iv || !iv->isInt()) return std::nullopt;
  return iv->toInt();
}

// The form of static value v when it is a weight or a chain of view nodes over one.
std::optional<Form> formOf(jit::Value* v, const WeightViewQueries& q) {
  Form f;
  while (!q.is_weight(v)) {
    jit::Node* n = v->node();
    if (!isViewKind(n->kind().toQualString()) || n->inputs().empty() || !q.is_static(n->input(0))) return std::nullopt;
    f.chain.push_back(n);
    v = n->input(0);
  }
  const c10::IValue* root = q.value(v);
  if (!root || !root->isTensor()) return std::nullopt;
  const at::Tensor& t = root->toTensor();
  if (!t.has_storage() || t.is_meta()) return std::nullopt;
  f.key = WeightKey(t.data_ptr(), static_cast<int>(t.scalar_type()), t.sizes().vec(), t.strides().vec());
  f.perm.resize(static_cast<size_t>(t.dim()));
  std::iota(f.perm.begin(), f.perm.end(), 0);
  for (auto it = f.chain.rbegin(); it != f.chain.rend(); ++it) {
    jit::Node* n = *it;
    const std::string k = n->kind().toQualString();
    const auto r = static_cast<int64_t>(f.perm.size());
    auto norm = [&](int64_t d) { return d < 0 ? d + r : d; };
    if (k == "aten::t") {
      if (r == 2) std::swap(f.perm[0], f.perm[1]);
    } else if (k == "aten::transpose") {
      auto a = n->inputs().size() == 3 ? staticInt(n->input(1), q) : std::nullopt;
      auto b = n->inputs().size() == 3 ? staticInt(n->input(2), q) : std::nullopt;
      if (!a || !b || norm(*a) < 0 || norm(*a) >= r || norm(*b) < 0 || norm(*b) >= r) return std::nullopt;
      std::swap(f.perm[static_cast<size_t>(norm(*a))], f.perm[static_cast<size_t>(norm(*b))]);
    } else if (k == "aten::permute") {
      const c10::IValue* dims = n->inputs().size() == 2 ? q.value(n->input(1)) : nullptr;
      if (!dims || !dims->isIntList()) return std::nullopt;
      auto d = dims->toIntVector();
      if (static_cast<int64_t>(d.size()) != r) return std::nullopt;
      std::vector<int64_t> p(d.size());
      for (size_t i = 0; i < d.size(); ++i) {
        if (norm(d[i]) < 0 || norm(d[i]) >= r) return std::nullopt;
        p[i] = f.perm[static_cast<size_t>(norm(d[i]))];
      }
      f.perm = std::move(p);
    }
    // contiguous and detach keep the layout.
  }
  return f;
}

// Every static input of a node that stays in the graph (and every static block output): the
// values the lowering turns into constants.
void collectUses(jit::Block* b, const WeightViewQueries& q, std::map<WeightKey, std::map<std::vector<int64_t>, std::vector<Form>>>& forms) {
  auto use = [&](jit::Value* in) {
    if (!q.is_static(in)) return;
    if (auto f = formOf(in, q)) forms[f->key][f->perm].push_back(std::move(*f));
  };
  for (jit::Node* n : b->nodes()) {
    bool all_static = !n->outputs().empty();
    for (auto* o : n->outputs()) all_static = all_static && q.is_static(o);
    if (all_static) continue;
    for (auto* in : n->inputs()) use(in);
    for (auto* sb : n->blocks()) collectUses(sb, q, forms);
  }
  for (auto* o : b->outputs()) use(o);
}

}  // namespace

std::unordered_set<jit::Node*> sharedWeightViews(jit::Block* top, const WeightViewQueries& q) {
  std::map<WeightKey, std::map<std::vector<int64_t>, std::vector<Form>>> forms;
  collectUses(top, q, forms);
  std::unordered_set<jit::Node*> out;
  for (const auto& [key, by_perm] : forms) {
    if (by_perm.size() < 2) continue;  // one form: folded once, the weight itself not written
    for (const auto& [perm, list] : by_perm)
      for (const auto& f : list) out.insert(f.chain.begin(), f.chain.end());
  }
  return out;
}

}  // namespace oxport
