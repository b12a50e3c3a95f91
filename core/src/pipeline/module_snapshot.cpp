// The module state saved around a run (see module_snapshot.h): which slots forward may write in
// place, found from the TorchScript of each module type's methods, and their copies.
#include "pipeline/module_snapshot.h"

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <torch/csrc/jit/api/function_impl.h>

namespace oxport {

namespace {

namespace jit = torch::jit;

// Attribute names from a method's self: {"cache"} for self.cache, {"sub", "buf"} for self.sub.buf.
using Path = std::vector<std::string>;
const Path kUnknown = {"?"};  // a value from an object the analysis cannot follow

bool isStructural(c10::Symbol k) {
  using namespace c10;
  return k == prim::ListConstruct || k == prim::TupleConstruct || k == prim::ListUnpack || k == prim::TupleUnpack ||
         k == prim::TupleIndex || k == prim::TupleSlice || k == prim::DictConstruct || k == prim::unchecked_cast ||
         k == prim::Constant || k == prim::Uninitialized || k == prim::RaiseException || k == prim::Print ||
         k == prim::device || k == prim::dtype || k == prim::layout || k == prim::NumToTensor ||
         k == prim::isinstance || k == prim::TypeCheck || k == prim::Enter || k == prim::Exit;
}

// The attribute paths one method graph writes in place, reached from its self (input 0).
class MethodWrites {
 public:
  explicit MethodWrites(std::set<Path>& written) : written_(written) {}

  void run(jit::Graph& g) {
    if (g.inputs().empty()) return;
    objects_[g.inputs()[0]] = Path{};
    block(g.block());
  }

 private:
  const std::set<Path>& rootsOf(jit::Value* v) {
    static const std::set<Path> none;
    auto it = roots_.find(v);
    return it == roots_.end() ? none : it->second;
  }
  void addRoots(jit::Value* to, const std::set<Path>& from) {
    if (!from.empty()) roots_[to].insert(from.begin(), from.end());
  }
  void markWritten(jit::Value* v) {
    for (const Path& p : rootsOf(v)) written_.insert(p);
  }

  void getAttr(jit::Node* n) {
    auto it = objects_.find(n->input());
    Path p = it == objects_.end() ? kUnknown : it->second;
    if (p != kUnknown) p.push_back(n->s(c10::attr::name));
    auto cls = n->output()->type()->cast<c10::ClassType>();
    if (cls && cls->is_module()) objects_[n->output()] = p;
    else if (n->output()->type()->kind() != c10::TypeKind::ClassType) roots_[n->output()] = {p};
    else roots_[n->output()] = {kUnknown};  // a script class object: its fields are not followed
  }

  void node(jit::Node* n) {
    using namespace c10;
    const Symbol k = n->kind();
    if (k == prim::GetAttr) return getAttr(n);
    if (k == prim::If) {
      for (jit::Block* b : n->blocks()) {
        block(b);
        for (size_t i = 0; i < n->outputs().size(); ++i) addRoots(n->output(i), rootsOf(b->outputs()[i]));
      }
      return;
    }
    if (k == prim::Loop) {
      jit::Block* body = n->blocks()[0];
      // Carried values: the body's inputs alias the initial values and what the body returns.
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 2; i < n->inputs().size(); ++i) addRoots(body->inputs()[i - 1], rootsOf(n->input(i)));
        block(body);
        for (size_t i = 1; i < body->outputs().size(); ++i) addRoots(body->inputs()[i], rootsOf(body->outputs()[i]));
      }
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        addRoots(n->output(i), rootsOf(n->input(i + 2)));
        addRoots(n->output(i), rootsOf(body->outputs()[i + 1]));
      }
      return;
    }
    std::set<Path> in_roots;
    for (jit::Value* in : n->inputs()) {
      const auto& r = rootsOf(in);
      in_roots.insert(r.begin(), r.end());
    }
    for (jit::Block* b : n->blocks()) block(b);
    if (in_roots.empty()) return;
    if (k == prim::CallMethod || k == prim::CallFunction) {
      // The callee's writes into its own attributes are found from its type; what it does with the
      // values passed to it is not followed here: each counts as written.
      for (jit::Value* in : n->inputs()) markWritten(in);
      for (jit::Value* out : n->outputs()) addRoots(out, in_roots);
      return;
    }
    if (isStructural(k)) {
      for (jit::Value* out : n->outputs()) addRoots(out, in_roots);
      return;
    }
    const FunctionSchema* schema = n->maybeSchema();
    if (!schema) {
      for (jit::Value* in : n->inputs()) markWritten(in);
      for (jit::Value* out : n->outputs()) addRoots(out, in_roots);
      return;
    }
    // Batch norm in training mode updates running_mean and running_var in place, though its schema
    // marks no argument as written.
    if (k == aten::batch_norm || k == aten::instance_norm || k == aten::_batch_norm_impl_index ||
        k == aten::native_batch_norm) {
      for (size_t i = 3; i < 5 && i < n->inputs().size(); ++i) markWritten(n->input(i));
    }
    std::set<Path> aliased;  // what the returns may alias: the inputs the schema marks with alias sets
    const auto& args = schema->arguments();
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const AliasInfo* a = i < args.size() ? args[i].alias_info() : nullptr;
      if (i >= args.size()) {  // vararg: not described
        markWritten(n->input(i));
        continue;
      }
      if (!a) continue;
      if (a->isWrite()) markWritten(n->input(i));
      const auto& r = rootsOf(n->input(i));
      aliased.insert(r.begin(), r.end());
    }
    const auto& rets = schema->returns();
    for (size_t j = 0; j < n->outputs().size(); ++j)
      if (j >= rets.size() || rets[j].alias_info()) addRoots(n->output(j), aliased);
  }

  void block(jit::Block* b) {
    for (jit::Node* n : b->nodes()) node(n);
  }

  std::set<Path>& written_;
  std::unordered_map<jit::Value*, std::set<Path>> roots_;  // value -> attribute paths it may alias
  std::unordered_map<jit::Value*, Path> objects_;          // module values -> their path from self
};

// The paths a module type's methods and hooks write, relative to an instance; false if one has no graph.
bool typeWrites(const c10::ClassType& type, std::set<Path>& out) {
  std::vector<jit::Function*> fns = type.methods();
  for (jit::Function* f : type.getForwardHooks()) fns.push_back(f);
  for (jit::Function* f : type.getForwardPreHooks()) fns.push_back(f);
  for (jit::Function* f : fns) {
    if (!f->isGraphFunction()) return false;
    MethodWrites(out).run(*jit::toGraphFunction(*f).graph());
  }
  return true;
}

// Walks the module tree; resolves each instance's written paths to slots.
class Finder {
 public:
  WrittenSlots run(const c10::intrusive_ptr<c10::ivalue::Object>& root) {
    result_.known = true;
    visit(root);
    return std::move(result_);
  }

 private:
  void visit(const c10::intrusive_ptr<c10::ivalue::Object>& obj) {
    if (!seen_.insert(obj.get()).second || !result_.known) return;
    const c10::ClassType* type = obj->type().get();
    auto it = by_type_.find(type);
    if (it == by_type_.end()) {
      std::set<Path> paths;
      if (!typeWrites(*type, paths)) {
        result_.known = false;
        return;
      }
      it = by_type_.emplace(type, std::move(paths)).first;
    }
    for (const Path& p : it->second) resolve(obj, p);
    for (const c10::IValue& v : obj->slots())
      if (v.isObject() && v.toObjectRef().type()->is_module()) visit(v.toObject());
  }

  void resolve(c10::intrusive_ptr<c10::ivalue::Object> obj, const Path& p) {
    if (p == kUnknown || p.empty()) {
      result_.known = false;
      return;
    }
    for (size_t i = 0; i < p.size(); ++i) {
      auto slot = obj->type()->findAttributeSlot(p[i]);
      if (!slot) return;  // an attribute the instance does not have: nothing to save
      if (i + 1 == p.size()) {
        for (const auto& s : result_.slots)
          if (s.object == obj && s.index == *slot) return;
        result_.slots.push_back({obj, *slot});
        return;
      }
      const c10::IValue& next = obj->getSlot(*slot);
      if (!next.isObject()) return;
      obj = next.toObject();
    }
  }

  WrittenSlots result_;
  std::unordered_set<const c10::ivalue::Object*> seen_;
  std::unordered_map<const c10::ClassType*, std::set<Path>> by_type_;
};

}  // namespace

WrittenSlots writtenTensorSlots(const torch::jit::Module& m) {
  try {
    return Finder().run(m._ivalue());
  } catch (const std::exception&) {
    return {};  // not known: the snapshot copies every buffer
  }
}

namespace {

class Copier {
 public:
  c10::IValue copy(const c10::IValue& v) {
    if (v.isTensor()) return tensor(v.toTensor());
    if (v.isList()) {
      c10::impl::GenericList out(v.toList().elementType());
      for (const auto& e : v.toListRef()) out.push_back(copy(e));
      return out;
    }
    if (v.isGenericDict()) {
      const auto& d = v.toGenericDict();
      c10::impl::GenericDict out(d.keyType(), d.valueType());
      for (const auto& kv : d) out.insert(kv.key(), copy(kv.value()));
      return out;
    }
    if (v.isTuple()) {
      std::vector<c10::IValue> elems;
      for (const auto& e : v.toTupleRef().elements()) elems.push_back(copy(e));
      return c10::ivalue::Tuple::create(std::move(elems));
    }
    return v;
  }
  at::Tensor tensor(const at::Tensor& t) {
    if (!t.defined() || t.is_meta()) return t;
    auto it = copies_.find(t.unsafeGetTensorImpl());
    if (it == copies_.end()) {
      it = copies_.emplace(t.unsafeGetTensorImpl(), t.clone()).first;
      bytes += t.nbytes();
    }
    return it->second;
  }
  size_t bytes = 0;

 private:
  std::unordered_map<const c10::TensorImpl*, at::Tensor> copies_;
};

}  // namespace

ModuleSnapshot::ModuleSnapshot(torch::jit::Module& m) {
  save(m._ivalue());
  const WrittenSlots written = writtenTensorSlots(m);
  torch::NoGradGuard no_grad;
  Copier copier;
  if (written.known) {
    for (const auto& s : written.slots) s.object->setSlot(s.index, copier.copy(s.object->getSlot(s.index)));
  } else {
    // Not known: every buffer up to 64 MiB (such tables are rarely written by forward).
    for (auto& [obj, slots] : saved_) {
      const auto& type = obj->type();
      for (size_t i = 0; i < slots.size() && i < type->numAttributes(); ++i) {
        if (!type->is_buffer(i) || !slots[i].isTensor()) continue;
        const at::Tensor& t = slots[i].toTensor();
        if (t.defined() && t.nbytes() <= (size_t{64} << 20)) obj->setSlot(i, copier.tensor(t));
      }
    }
  }
  copied_bytes_ = copier.bytes;
}

ModuleSnapshot::~ModuleSnapshot() {
  for (auto& [obj, slots] : saved_)
    for (size_t i = 0; i < slots.size() && i < obj->slots().size(); ++i) obj->setSlot(i, slots[i]);
}

void ModuleSnapshot::save(const c10::intrusive_ptr<c10::ivalue::Object>& obj) {
  for (const auto& [o, s] : saved_)
    if (o == obj) return;
  saved_.emplace_back(obj, obj->slots());
  for (const c10::IValue& v : obj->slots())
    if (v.isObject() && v.toObjectRef().type()->is_module()) save(v.toObject());
}

}  // namespace oxport
