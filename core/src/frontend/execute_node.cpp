// One node on the example run's values: prim ops on IValues, the functional list ops of
// pass_list_mutation.h, and libtorch's kernel for the rest.
#include <algorithm>
#include <optional>

#include "frontend/frontend_impl.h"
#include "frontend/meta_rules.h"
#include "frontend/pass_list_mutation.h"

namespace oxport {

c10::IValue Frontend::trainingFlag(const c10::IValue& obj) const {
  switch (options_.training) {
    case TrainingMode::Eval: return false;
    case TrainingMode::Training: return true;
    case TrainingMode::Preserve: break;
  }
  return obj.toObjectRef().getAttr("training");
}

// A branch run only for its metadata must leave the example run's values as they were: what an
// op writes in place (a list's _set_item, a tensor's add_) gets a copy.
static void isolateWrites(const jit::Node* n, jit::Stack& stack) {
  const c10::FunctionSchema* schema = n->maybeSchema();
  if (!schema) return;
  const auto& args = schema->arguments();
  for (size_t i = 0; i < args.size() && i < stack.size(); ++i) {
    const c10::AliasInfo* a = args[i].alias_info();
    if (!a || !a->isWrite()) continue;
    c10::IValue& v = stack[i];
    if (v.isTensor()) {
      v = v.toTensor().clone();
    } else if (v.isList()) {
      c10::impl::GenericList copy(v.toList().elementType());
      for (const auto& e : v.toListRef()) copy.push_back(e);
      v = c10::IValue(copy);
    }
  }
}

// A value that does not depend on the inputs is folded into the file as the example run leaves it.
// An op writing into it in place with an operand that does depend on them (a buffer updated from
// the input, self.avg.mul_(0.9).add_(0.1 * x.mean(0))) writes into a copy (a meta tensor in the
// meta run): the folded value stays what the graph reads before the write, the write's readers
// follow its result (carryInplaceWrite), and the value's own later readers are not static any
// more. A write of static operands changes the value (later readers fold the new value); what it
// held before is kept for a rerun (written_statics_).
void Frontend::isolateFoldedWrite(jit::Node* n, jit::Stack& stack) {
  const c10::FunctionSchema* schema = n->maybeSchema();
  if (!schema || !schema->is_mutable()) return;  // most ops write nothing
  bool any_dynamic = false;
  for (auto* in : n->inputs()) any_dynamic = any_dynamic || !run_.statics.count(in);
  const auto& args = schema->arguments();
  for (size_t i = 0; i < args.size() && i < stack.size() && i < n->inputs().size(); ++i) {
    const c10::AliasInfo* a = args[i].alias_info();
    if (!a || !a->isWrite() || !stack[i].isTensor() || !run_.statics.count(n->input(i))) continue;
    const at::Tensor& t = stack[i].toTensor();
    if (!t.defined() || t.is_meta()) continue;
    if (any_dynamic) {
      if (i == 0 && n->outputs().size() == 1) run_.attribute_writes.emplace_back(t, n->output());
      stack[i] = run_.meta_mode ? toMeta(stack[i]) : c10::IValue(t.clone());
      run_.overwritten.insert(n->input(i));
    } else if (std::none_of(written_statics_.begin(), written_statics_.end(),
                            [&](const auto& w) { return w.first.is_same(t); })) {
      written_statics_.emplace_back(t, t.clone());
    }
  }
}

// A read of a module's tensor that an earlier op wrote in place with input-dependent operands
// (isolateFoldedWrite): the read is that op's result, when the op's block encloses the read.
bool Frontend::readWrittenAttribute(jit::Node* n) {
  const c10::IValue& v = run_.env.at(n->output());
  if (!v.isTensor() || run_.attribute_writes.empty()) return false;
  for (auto it = run_.attribute_writes.rbegin(); it != run_.attribute_writes.rend(); ++it) {
    if (!it->first.is_same(v.toTensor())) continue;
    jit::Value* written = it->second;
    bool visible = false;
    for (const jit::Block* b = n->owningBlock(); b && !visible; b = b->owningNode() ? b->owningNode()->owningBlock() : nullptr)
      visible = b == written->node()->owningBlock();
    if (!visible || !run_.env.count(written)) return false;
    n->output()->replaceAllUsesWith(written);
    run_.env[n->output()] = run_.env.at(written);
    return true;
  }
  return false;
}

// Why a node that has no operator uses a TorchScript object oxport cannot turn into values (see
// "unsupported-object"), or nothing for any other node.
static std::optional<std::pair<std::string, std::string>> unsupportedObjectUse(const jit::Node* n) {
  auto className = [](const c10::TypePtr& t) {
    std::string s = t->annotation_str();
    if (s.rfind("__torch__.", 0) == 0) s = s.substr(10);
    return s;
  };
  const auto kind = n->kind();
  if (kind == c10::prim::CreateObject) {
    const std::string cls = className(n->output()->type());
    if (cls.find("autocast_mode.autocast") != std::string::npos)
      return std::make_pair(
          "forward() enters an autocast region on the CPU (torch.autocast(\"cpu\") or torch.cpu.amp.autocast, "
          "enabled): TorchScript computes the ops inside it in reduced precision, which oxport does not reproduce",
          "cast explicitly inside the region (x.to(torch.bfloat16)) or remove it; a CUDA autocast and "
          "autocast(enabled=False) are exported, in float32");
    std::string where = "something other than its attributes";
    for (const jit::Use& u : n->output()->uses()) {
      const auto k = u.user->kind();
      if ((k == c10::prim::GetAttr || k == c10::prim::SetAttr) && u.offset == 0) continue;
      where = k == c10::prim::Return ? std::string("the graph's outputs") : std::string(k.toQualString());
      break;
    }
    return std::make_pair("forward() creates an object of TorchScript class " + cls + " and gives it to " + where +
                              ": oxport follows such an object only while forward reads and writes its attributes",
                          "keep the object inside forward and pass its tensors, not the object, to lists, "
                          "returns and other calls");
  }
  if (kind == c10::prim::CallMethod && n->inputs().size() > 0)
    return std::make_pair("forward() calls " + n->s(c10::attr::name) + "() on a value of type " +
                              className(n->input(0)->type()) + ", which oxport cannot resolve to a module's code",
                          "call the submodule directly, or give the attribute the module's own type rather "
                          "than a torch.jit.interface built at run time");
  if (kind == c10::prim::Enter || kind == c10::prim::Exit)
    return std::make_pair("forward() uses a context manager of class " +
                              className(n->input(0)->type()) + " that oxport cannot remove",
                          "move the with-block's effect out of forward");
  if (kind == c10::aten::wait ||
      (!n->inputs().empty() && n->input(0)->type()->kind() == c10::TypeKind::FutureType))
    return std::make_pair(std::string("forward() waits on a future that torch.jit.fork did not make (RPC)"),
                          std::string("compute the value in forward, or export the remote module separately"));
  return std::nullopt;
}

Status Frontend::execute(jit::Node* n) {
  using namespace c10;
  if (n->kind() == prim::Constant) {
    auto iv = jit::toIValue(n->output());
    run_.env[n->output()] = iv ? *iv : IValue();
    return okStatus();
  }
  if (n->kind() == prim::GetAttr) {
    const IValue& obj = run_.env.at(n->input());
    const std::string& name = n->s(attr::name);
    if (!obj.isObject()) return nodeError(n, "internal", "GetAttr on a value that is not an object");
    auto& o = obj.toObjectRef();
    if (name == "training" && o.type()->is_module()) run_.env[n->output()] = trainingFlag(obj);
    else run_.env[n->output()] = o.getAttr(name);
    if (readWrittenAttribute(n)) return okStatus();
    auto pit = run_.paths.find(n->input());
    if (pit != run_.paths.end()) run_.paths[n->output()] = pit->second.empty() ? name : pit->second + "." + name;
    return okStatus();
  }
  if (!n->blocks().empty()) {
    return nodeError(n, "control-flow",
                     std::string(n->kind().toQualString()) + " with blocks is not supported",
                     "trace the model instead (torch.jit.trace with example inputs) and export the traced file");
  }
  if (n->kind() == prim::ListConstruct) {
    auto lt = n->output()->type()->cast<c10::ListType>();
    c10::impl::GenericList list(lt ? lt->getElementType() : c10::AnyType::get());
    for (auto* in : n->inputs()) list.push_back(run_.env.at(in));
    run_.env[n->output()] = c10::IValue(list);
    return okStatus();
  }
  if (n->kind() == prim::TupleConstruct) {
    std::vector<IValue> items;
    for (auto* in : n->inputs()) items.push_back(run_.env.at(in));
    run_.env[n->output()] = c10::ivalue::Tuple::create(std::move(items));
    return okStatus();
  }
  if (n->kind() == prim::ListUnpack || n->kind() == prim::TupleUnpack) {
    const IValue& v = run_.env.at(n->input());
    std::vector<IValue> items = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
    if (items.size() != n->outputs().size())
      return nodeError(n, "forward-failed", "unpacking " + std::to_string(items.size()) + " values into " +
                                                std::to_string(n->outputs().size()));
    for (size_t i = 0; i < items.size(); ++i) run_.env[n->outputs()[i]] = items[i];
    return okStatus();
  }
  if (n->kind() == prim::TupleIndex) {
    const IValue& t = run_.env.at(n->input(0));
    int64_t idx = run_.env.at(n->input(1)).toInt();
    const auto& elems = t.toTupleRef().elements();
    if (idx < 0) idx += static_cast<int64_t>(elems.size());
    run_.env[n->output()] = elems.at(static_cast<size_t>(idx));
    return okStatus();
  }
  if (n->kind() == prim::DictConstruct) {
    auto dt = n->output()->type()->cast<c10::DictType>();
    c10::impl::GenericDict dict(dt->getKeyType(), dt->getValueType());
    for (size_t i = 0; i + 1 < n->inputs().size(); i += 2) dict.insert(run_.env.at(n->input(i)), run_.env.at(n->input(i + 1)));
    run_.env[n->output()] = c10::IValue(dict);
    return okStatus();
  }
  if (n->kind() == prim::unchecked_cast) {
    run_.env[n->output()] = run_.env.at(n->input());
    return okStatus();
  }
  if (n->kind() == prim::Uninitialized) {
    run_.env[n->output()] = IValue();
    return okStatus();
  }
  if (run_.meta_mode && (n->kind() == prim::device || n->kind() == Symbol::fromQualString("prim::is_meta")) &&
      n->inputs().size() == 1 && holdsMeta(run_.env.at(n->input()))) {
    // What the real run would see: the example inputs live on the CPU. (A meta device must not
    // be folded into the graph.)
    if (n->kind() == prim::device) run_.env[n->output()] = IValue(c10::Device(at::kCPU));
    else run_.env[n->output()] = IValue(false);
    return okStatus();
  }
  if (isFunctionalListOp(n)) return executeListOp(n);
  if (n->kind() == prim::RaiseException) {
    return nodeError(n, "raises", "the model raises an exception on these example inputs",
                     "check the shapes and values in args");
  }
  std::optional<jit::Operation> op;
  try {
    op.emplace(n->getOperation());
  } catch (const std::exception& e) {
    if (auto why = unsupportedObjectUse(n)) return nodeError(n, "unsupported-object", why->first, why->second);
    return nodeError(n, "no-kernel", std::string("libtorch cannot run ") + n->kind().toQualString() + ": " +
                                         torchErrorMessage(e));
  }
  jit::Stack stack;
  for (auto* in : n->inputs()) {
    auto it = run_.env.find(in);
    if (it == run_.env.end()) return nodeError(n, "internal", "input %" + in->debugName() + " has no value");
    stack.push_back(it->second);
  }
  // Vararg ops (aten::format, prim::TupleConstruct's kin) take their input count on the stack,
  // as TorchScript's interpreter pushes it (the OPN instruction).
  if (const c10::FunctionSchema* schema = n->maybeSchema(); schema && schema->is_vararg())
    stack.push_back(IValue(static_cast<int64_t>(n->inputs().size())));
  if (n->kind() == c10::Symbol::fromQualString("aten::fused_moving_avg_obs_fake_quant") && stack.size() > 1 &&
      stack[1].isTensor()) {
    // The export uses the observer statistics as saved: the example run must not update them.
    const at::Tensor& on = stack[1].toTensor();
    bool warned = std::any_of(run_.warnings.begin(), run_.warnings.end(),
                              [](const Diagnostic& d) { return d.code == "observer-enabled"; });
    if (!warned && on.numel() > 0 && on.reshape({-1})[0].item<int64_t>() != 0 && run_.shadow_depth == 0) {
      Diagnostic w = makeWarning("observer-enabled",
                                 "the fake-quantize observer is enabled in the saved model; the export uses its "
                                 "statistics as saved (also verification's reference run), while libtorch would keep "
                                 "updating them on every input (said once for all fake-quantize nodes)",
                                 "call model.apply(torch.ao.quantization.disable_observer) before saving");
      run_.warnings.push_back(atNode(w, n));
    }
    stack[1] = at::zeros_like(on);
  }
  if (run_.shadow_depth > 0) isolateWrites(n, stack);
  else isolateFoldedWrite(n, stack);
  try {
    runOp(n, *op, stack);
  } catch (const MetaFallback&) {
    throw;
  } catch (const std::exception& e) {
    return nodeError(n, "forward-failed",
                     std::string("the model fails on the example inputs at ") + n->kind().toQualString() + ": " +
                         torchErrorMessage(e),
                     "check the input shapes and dtypes in args against what forward() expects");
  }
  if (stack.size() != n->outputs().size())
    return nodeError(n, "internal", "unexpected number of results from " + std::string(n->kind().toQualString()));
  for (size_t i = 0; i < n->outputs().size(); ++i) run_.env[n->outputs()[i]] = std::move(stack[i]);
  return okStatus();
}

// The functional list ops of pass_list_mutation.h, on copies (earlier versions stay as they were).
Status Frontend::executeListOp(jit::Node* n) {
  const std::string k = n->kind().toQualString();
  const c10::IValue& lv = run_.env.at(n->input(0));
  if (!lv.isList()) return nodeError(n, "internal", k + " on a value that is not a list");
  c10::impl::GenericList list(lv.toList().elementType());
  for (const auto& e : lv.toListRef()) list.push_back(e);
  const int64_t size = static_cast<int64_t>(list.size());
  auto index = [&](size_t at, bool insert) -> Result<int64_t> {
    int64_t i = run_.env.at(n->input(at)).toInt();
    if (insert) return std::max<int64_t>(0, std::min<int64_t>(i < 0 ? i + size : i, size));
    if (i < 0) i += size;
    if (i < 0 || i >= size)
      return nodeError(n, "forward-failed", "list index out of range on the example inputs (" + k + ")");
    return i;
  };
  if (k == "prim::oxport_list_append") {
    list.push_back(run_.env.at(n->input(1)));
  } else if (k == "prim::oxport_list_insert") {
    OXPORT_ASSIGN(int64_t i, index(1, true));
    list.insert(list.begin() + i, run_.env.at(n->input(2)));
  } else if (k == "prim::oxport_list_pop") {
    OXPORT_ASSIGN(int64_t i, index(1, false));
    run_.env[n->output(1)] = list.get(static_cast<size_t>(i));
    list.erase(list.begin() + i);
  } else if (k == "prim::oxport_list_set") {
    OXPORT_ASSIGN(int64_t i, index(1, false));
    list.set(static_cast<size_t>(i), run_.env.at(n->input(2)));
  } else if (k == "prim::oxport_list_delete") {
    OXPORT_ASSIGN(int64_t i, index(1, false));
    list.erase(list.begin() + i);
  } else if (k == "prim::oxport_list_clear") {
    list.clear();
  } else if (k == "prim::oxport_list_extend") {
    for (const auto& e : run_.env.at(n->input(1)).toListRef()) list.push_back(e);
  } else if (k == "prim::oxport_list_reverse") {
    std::vector<c10::IValue> elems(list.begin(), list.end());
    list.clear();
    for (auto it = elems.rbegin(); it != elems.rend(); ++it) list.push_back(*it);
  } else {
    return nodeError(n, "internal", "unknown list op " + k);
  }
  run_.env[n->output(0)] = c10::IValue(list);
  return okStatus();
}

Error Frontend::nodeError(const jit::Node* n, std::string code, std::string msg, std::string hint) const {
  Diagnostic d = makeError(std::move(code), std::move(msg), std::move(hint));
  return Error(atNode(d, n));
}

}  // namespace oxport
