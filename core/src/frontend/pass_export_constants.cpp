// Export-time constants folded before the example run (see pass_export_constants.h).
#include "frontend/pass_export_constants.h"

#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/jit_util.h"

namespace oxport {

namespace jit = torch::jit;

namespace {

using c10::Symbol;

// Metadata of a tensor that no dynamic axis changes, as libtorch's ops name it.
const std::unordered_set<std::string>& inputMetadataKinds() {
  static const std::unordered_set<std::string> kinds = {
      "prim::dtype",       "aten::dim",         "prim::device",     "prim::layout",       "prim::is_cuda",
      "prim::is_nested",   "prim::is_sparse",   "prim::is_quantized", "prim::is_meta",    "prim::is_mkldnn",
      "prim::requires_grad", "aten::is_floating_point", "aten::is_complex"};
  return kinds;
}

// Can a value of type `t` be None at run time? (TorchScript's types are checked: a Tensor never is.)
bool mayBeNone(const c10::TypePtr& t) {
  switch (t->kind()) {
    case c10::TypeKind::OptionalType:
    case c10::TypeKind::NoneType:
    case c10::TypeKind::AnyType:
    case c10::TypeKind::UnionType: return true;
    default: return false;
  }
}

bool isNoneConstant(const jit::Value* v) {
  return v->node()->kind() == c10::prim::Constant && v->type()->kind() == c10::TypeKind::NoneType;
}

// The constant bool `v` holds, if it is one.
c10::optional<bool> constantBool(jit::Value* v) {
  if (v->node()->kind() != c10::prim::Constant) return c10::nullopt;
  auto iv = jit::toIValue(v);
  if (!iv || !iv->isBool()) return c10::nullopt;
  return iv->toBool();
}

class ExportConstants {
 public:
  ExportConstants(std::shared_ptr<jit::Graph>& g, const c10::IValue& self, TrainingMode training)
      : g_(g), self_(self), training_(training) {
    collectSetAttrs(g_->block());
  }

  int run() {
    const int ifs_before = countIfs(g_->block());
    for (int round = 0; round < 32; ++round) {
      // Module values are found again each round (dead code elimination frees values).
      objects_.clear();
      dicts_.clear();
      if (!g_->inputs().empty() && self_.isObject()) objects_[g_->inputs()[0]] = self_;
      bool changed = replaceIn(g_->block());
      changed = jit::ConstantPropagationImmutableTypes(g_) || changed;
      jit::EliminateDeadCode(g_);
      if (!changed) break;
    }
    return ifs_before - countIfs(g_->block());
  }

 private:
  static int countIfs(jit::Block* b) {
    int n = 0;
    for (jit::Node* node : b->nodes()) {
      n += node->kind() == c10::prim::If;
      for (jit::Block* sb : node->blocks()) n += countIfs(sb);
    }
    return n;
  }

  // Attributes the graph writes keep being read at run time.
  void collectSetAttrs(jit::Block* b) {
    for (jit::Node* n : b->nodes()) {
      if (n->kind() == c10::prim::SetAttr) written_.insert(n->s(c10::attr::name));
      for (jit::Block* sb : n->blocks()) collectSetAttrs(sb);
    }
  }

  // Replaces every use of n's single output by the constant `v`; the node goes with dead code.
  bool replaceWith(jit::Node* n, const c10::IValue& v) {
    jit::WithInsertPoint guard(n);
    c10::optional<jit::Value*> c = g_->insertConstant(v, c10::nullopt, n->scope());
    if (!c) return false;
    n->output()->replaceAllUsesWith(*c);
    return true;
  }

  // The graph input (after argument baking: an example tensor) that `v` is, through casts.
  const c10::TensorType* inputTensorType(jit::Value* v) const {
    while (v->node()->kind() == c10::prim::unchecked_cast) v = v->node()->input();
    if (v->node()->kind() != c10::prim::Param || v->node()->owningBlock() != g_->block()) return nullptr;
    if (!g_->inputs().empty() && v == g_->inputs()[0]) return nullptr;  // self
    return v->type()->cast<c10::TensorType>().get();
  }

  c10::optional<c10::IValue> inputMetadata(const std::string& kind, const c10::TensorType& t) const {
    if (kind == "prim::dtype") {
      if (!t.scalarType()) return c10::nullopt;
      return c10::IValue(static_cast<int64_t>(*t.scalarType()));
    }
    if (kind == "aten::dim") {
      if (!t.dim()) return c10::nullopt;
      return c10::IValue(static_cast<int64_t>(*t.dim()));
    }
    if (kind == "aten::is_floating_point" || kind == "aten::is_complex") {
      if (!t.scalarType()) return c10::nullopt;
      return c10::IValue(kind == "aten::is_complex" ? c10::isComplexType(*t.scalarType())
                                                    : c10::isFloatingType(*t.scalarType()));
    }
    // Example inputs are dense CPU tensors that do not require grad.
    if (kind == "prim::device") return c10::IValue(c10::Device(c10::kCPU));
    if (kind == "prim::layout") return c10::IValue(static_cast<int64_t>(c10::kStrided));
    return c10::IValue(false);  // is_cuda, is_nested, is_sparse, is_quantized, is_meta, is_mkldnn, requires_grad
  }

  // The constant a module attribute read stands for, if any.
  c10::optional<c10::IValue> attribute(jit::Node* n) {
    auto it = objects_.find(n->input());
    if (it == objects_.end()) return c10::nullopt;
    const auto& obj = it->second.toObjectRef();
    const std::string& name = n->s(c10::attr::name);
    if (!obj.type()->hasAttribute(name)) return c10::nullopt;
    c10::IValue v = obj.getAttr(name);
    if (v.isObject()) {
      objects_[n->output()] = v;  // a submodule: its own attributes are read next
      return c10::nullopt;
    }
    if (written_.count(name)) return c10::nullopt;
    if (name == "training" && obj.type()->is_module()) {
      if (training_ == TrainingMode::Eval) return c10::IValue(false);
      if (training_ == TrainingMode::Training) return c10::IValue(true);
    }
    if (v.isBool() || v.isInt() || v.isDouble() || v.isString() || v.isNone()) return v;
    if (v.isGenericDict() && !holdsTensor(v, true)) dicts_[n->output()] = v;  // read by key below
    return c10::nullopt;
  }

  // `name in self.return_layers` and `self.return_layers[name]` (torchvision's
  // IntermediateLayerGetter) on a dict attribute of the module, at a constant key.
  c10::optional<c10::IValue> dictLookup(jit::Node* n, bool contains) {
    if (n->inputs().size() != 2) return c10::nullopt;
    auto it = dicts_.find(n->input(0));
    if (it == dicts_.end()) return c10::nullopt;
    c10::optional<c10::IValue> key = jit::toIValue(n->input(1));
    if (!key) return c10::nullopt;
    const auto dict = it->second.toGenericDict();
    auto found = dict.find(*key);
    if (contains) return c10::IValue(found != dict.end());
    if (found == dict.end()) return c10::nullopt;  // a KeyError: left for the example run to report
    const c10::IValue& v = found->value();
    if (v.isBool() || v.isInt() || v.isDouble() || v.isString() || v.isNone()) return v;
    return c10::nullopt;
  }

  // isinstance(v, T) where v's static type decides it: a subtype of a candidate is one; a type
  // that no value of another type can hide behind (not Optional, Union, Any, an interface or a
  // class) is none of the others. (After baking an Optional argument is a tensor or None.)
  c10::optional<c10::IValue> isInstance(jit::Node* n) {
    const c10::TypePtr& t = n->input()->type();
    for (const c10::TypePtr& cand : n->tys(c10::attr::types))
      if (t->isSubtypeOf(*cand)) return c10::IValue(true);
    if (mayBeNone(t) && t->kind() != c10::TypeKind::NoneType) return c10::nullopt;
    switch (t->kind()) {
      case c10::TypeKind::InterfaceType:
      case c10::TypeKind::ClassType:
      case c10::TypeKind::AnyClassType:
      case c10::TypeKind::AnyListType:
      case c10::TypeKind::AnyTupleType:
      case c10::TypeKind::AnyEnumType:
      case c10::TypeKind::NumberType: return c10::nullopt;
      default: return c10::IValue(false);
    }
  }

  // all([...]) / any([...]) of a list made here and only read: decided by one constant element
  // (a false for all, a true for any) or by all of them being constants.
  c10::optional<bool> allOrAny(jit::Node* n, bool is_all) {
    if (n->inputs().size() != 1) return c10::nullopt;
    jit::Value* list = n->input();
    if (list->node()->kind() != c10::prim::ListConstruct) return c10::nullopt;
    if (list->type()->cast<c10::ListType>() == nullptr ||
        list->type()->cast<c10::ListType>()->getElementType()->kind() != c10::TypeKind::BoolType)
      return c10::nullopt;
    static const std::unordered_set<std::string> readers = {"aten::all", "aten::any", "aten::len", "aten::__getitem__"};
    for (const jit::Use& u : list->uses())
      if (!readers.count(u.user->kind().toQualString())) return c10::nullopt;
    bool all_constant = true;
    for (jit::Value* e : list->node()->inputs()) {
      auto b = constantBool(e);
      if (!b) {
        all_constant = false;
        continue;
      }
      if (*b != is_all) return !is_all;  // all(... False ...) is False, any(... True ...) is True
    }
    if (all_constant) return is_all;  // every element true (all) or false (any)
    return c10::nullopt;
  }

  // Replaces what is known in `b` (nested blocks included) by constants. True if anything changed.
  bool replaceIn(jit::Block* b) {
    bool changed = false;
    for (auto it = b->nodes().begin(); it != b->nodes().end(); ++it) {
      jit::Node* n = *it;
      for (jit::Block* sb : n->blocks()) changed = replaceIn(sb) || changed;
      if (n->outputs().size() != 1 || !n->output()->hasUses()) continue;
      const std::string kind = n->kind().toQualString();
      c10::optional<c10::IValue> value;
      if (kind == "aten::is_grad_enabled" || kind == "aten::is_autocast_enabled" ||
          kind == "aten::is_autocast_cpu_enabled") {
        value = c10::IValue(false);  // the export (and the reference run) is without autograd and autocast
      } else if (kind == "aten::is_scripting") {
        value = c10::IValue(true);
      } else if (n->kind() == c10::prim::GetAttr) {
        value = attribute(n);
      } else if (inputMetadataKinds().count(kind) && n->inputs().size() == 1) {
        if (const c10::TensorType* t = inputTensorType(n->input())) value = inputMetadata(kind, *t);
      } else if ((kind == "aten::__is__" || kind == "aten::__isnot__") && n->inputs().size() == 2) {
        jit::Value* a = n->input(0);
        jit::Value* o = n->input(1);
        if (isNoneConstant(a)) std::swap(a, o);
        if (isNoneConstant(o) && !mayBeNone(a->type())) value = c10::IValue(kind == "aten::__isnot__");
      } else if (n->kind() == c10::prim::isinstance && n->inputs().size() == 1) {
        value = isInstance(n);
      } else if (kind == "aten::__contains__" || kind == "aten::__getitem__") {
        value = dictLookup(n, kind == "aten::__contains__");
      } else if (kind == "aten::all" || kind == "aten::any") {
        if (auto r = allOrAny(n, kind == "aten::all")) value = c10::IValue(*r);
      }
      if (value && replaceWith(n, *value)) changed = true;
    }
    return changed;
  }

  std::shared_ptr<jit::Graph>& g_;
  c10::IValue self_;  // the module forward belongs to (graph input 0)
  TrainingMode training_;
  std::unordered_map<jit::Value*, c10::IValue> objects_;  // module (and other object) values
  std::unordered_set<std::string> written_;                // attribute names the graph sets
  std::unordered_map<jit::Value*, c10::IValue> dicts_;     // dict attributes without tensors
};

}  // namespace

int foldExportConstants(std::shared_ptr<jit::Graph>& g, const c10::IValue& self, TrainingMode training) {
  return ExportConstants(g, self, training).run();
}

}  // namespace oxport
