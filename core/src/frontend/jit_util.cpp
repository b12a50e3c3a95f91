// Small facts about TorchScript nodes, values and IValues (jit_util.h).
#include "frontend/jit_util.h"

#include <functional>
#include <unordered_set>

#include "frontend/frontend.h"

namespace oxport {

namespace jit = torch::jit;

ScopeInfo scopeOf(const jit::Node* n) {
  ScopeInfo s;
  if (auto cs = n->callstack()) {
    for (const auto& entry : (*cs)->vec()) {
      const auto& mi = std::get<2>(entry);
      if (!mi) continue;
      std::string name = mi->instance_name();
      // A method called on the module itself (Conv2d.forward -> self._conv_forward) is recorded as
      // an instance named "SELF": the same module, not a child of it.
      if (name.empty() || name == "SELF") continue;
      s.names.push_back(name);
      auto ct = mi->class_type();
      s.types.push_back(ct && ct->name() ? ct->name()->name() : std::string());
      s.path += (s.path.empty() ? "" : ".") + name;
    }
  }
  return s;
}

SourceLocation locationOf(const jit::Node* n) {
  SourceLocation loc;
  const auto& sr = n->sourceRange();
  c10::optional<std::tuple<std::string, size_t, size_t>> flc;
  if (auto orig = sr.findSourceRangeThatGenerated()) flc = orig->file_line_col();
  if (!flc) flc = sr.file_line_col();
  if (flc) {
    loc.file = std::get<0>(*flc);
    loc.line = static_cast<int>(std::get<1>(*flc));
    loc.column = static_cast<int>(std::get<2>(*flc));
  }
  return loc;
}

Diagnostic atNode(Diagnostic d, const jit::Node* n) {
  d.node_kind = n->kind().toQualString();
  d.module_path = scopeOf(n).path;
  d.location = locationOf(n);
  return d;
}

ts::ValueType valueTypeOf(const c10::TypePtr& t0, ts::ValueType* elem) {
  c10::TypePtr t = t0;
  *elem = ts::ValueType::Other;
  if (auto opt = t->cast<c10::OptionalType>()) t = opt->getElementType();
  switch (t->kind()) {
    case c10::TypeKind::TensorType: return ts::ValueType::Tensor;
    case c10::TypeKind::IntType: return ts::ValueType::Int;
    case c10::TypeKind::FloatType: return ts::ValueType::Float;
    case c10::TypeKind::NumberType: return ts::ValueType::Float;
    case c10::TypeKind::BoolType: return ts::ValueType::Bool;
    case c10::TypeKind::NoneType: return ts::ValueType::None;
    case c10::TypeKind::StringType: return ts::ValueType::String;
    case c10::TypeKind::DeviceObjType: return ts::ValueType::Device;
    case c10::TypeKind::ListType: {
      ts::ValueType e2;
      *elem = valueTypeOf(t->cast<c10::ListType>()->getElementType(), &e2);
      return ts::ValueType::List;
    }
    case c10::TypeKind::TupleType: return ts::ValueType::Tuple;
    default: return ts::ValueType::Other;
  }
}

ts::TensorMeta metaOf(const at::Tensor& t) {
  ts::TensorMeta m;
  bool ok = true;
  m.complex = t.is_complex();
  const c10::ScalarType st = m.complex ? c10::toRealValueType(t.scalar_type()) : t.scalar_type();
  m.dtype = dtypeFromScalarType(t.is_quantized() ? c10::kFloat : st, &ok);
  m.shape = t.sizes().vec();
  m.known = ok;
  return m;
}
// Does the value's IValue contain a tensor (the folding rule treats those specially)? A tensor
// list counts even when empty.
bool holdsTensorType(const c10::TypePtr& t) {
  if (t->kind() == c10::TypeKind::TensorType) return true;
  for (const auto& c : t->containedTypes())
    if (holdsTensorType(c)) return true;
  return false;
}

bool holdsTensor(const c10::IValue& v, bool dicts_and_objects) {
  if (v.isTensorList()) return true;
  if (!dicts_and_objects) return anyTensorIn(v, [](const at::Tensor&) { return true; });
  if (v.isTensor() || v.isObject()) return true;
  if (v.isGenericDict()) {
    for (const auto& kv : v.toGenericDict())
      if (holdsTensor(kv.key(), true) || holdsTensor(kv.value(), true)) return true;
    return false;
  }
  if (!v.isList() && !v.isTuple()) return false;
  for (const auto& e : v.isList() ? v.toListRef() : v.toTupleRef().elements())
    if (holdsTensor(e, true)) return true;
  return false;
}

// Ops whose result depends only on a tensor's metadata that does not vary with dynamic axes
// (dtype, device, rank): known at export time even for inputs.
bool isMetadataQuery(const jit::Node* n) {
  static const std::unordered_set<std::string> kinds = {
      "prim::dtype", "prim::device", "prim::layout", "aten::dim", "prim::is_cuda", "aten::is_floating_point",
      "prim::requires_grad", "aten::is_complex", "prim::is_quantized", "aten::__is__", "aten::__isnot__", "aten::is_pinned",
      "prim::is_nested", "prim::is_sparse", "prim::is_mkldnn", "prim::is_meta"};
  return kinds.count(n->kind().toQualString()) != 0;
}

void freeValues(jit::Block* b, std::unordered_set<jit::Value*>& out) {
  std::unordered_set<jit::Value*> defined(b->inputs().begin(), b->inputs().end());
  std::function<void(jit::Block*)> visit = [&](jit::Block* blk) {
    for (auto* v : blk->inputs()) defined.insert(v);
    for (jit::Node* n : blk->nodes()) {
      for (auto* in : n->inputs())
        if (!defined.count(in)) out.insert(in);
      for (auto* sb : n->blocks()) visit(sb);
      for (auto* o : n->outputs()) defined.insert(o);
    }
    for (auto* o : blk->outputs())
      if (!defined.count(o)) out.insert(o);
  };
  visit(b);
}

// prim::Loop(max_trip_count, initial_condition, carried...) with body (iter, carried...) ->

bool hasControlFlow(jit::Block* b) {
  for (jit::Node* n : b->nodes())
    if (n->kind() == c10::prim::If || n->kind() == c10::prim::Loop) return true;
  return false;  // Inline() left no calls; blocks only hang off If and Loop
}

}  // namespace oxport
