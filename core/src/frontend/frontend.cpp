// runFrontend: inline forward, bake the arguments, the TorchScript rewrites, the example run
// (example_run.cpp) and the lowering (lower.cpp), in that order (Frontend::run).
#include "frontend/frontend.h"

#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/remove_mutation.h>

#include "frontend/frontend_impl.h"
#include "frontend/inline_calls.h"
#include "frontend/pass_attribute_writes.h"
#include "frontend/pass_carried_tuples.h"
#include "frontend/pass_dict_writes.h"
#include "frontend/pass_export_constants.h"
#include "frontend/pass_list_mutation.h"
#include "frontend/pass_nested_tensor.h"
#include "frontend/pass_scalar_constants.h"
#include "frontend/pass_unroll_list_loops.h"
#include "frontend/pass_view_writes.h"

namespace oxport {

namespace {

// The constant a context manager object's __init__ stored in attribute `name`, if one did.
std::optional<c10::IValue> constantAttribute(jit::Value* obj, const std::string& name) {
  for (const jit::Use& u : obj->uses())
    if (u.user->kind() == c10::prim::SetAttr && u.user->s(c10::attr::name) == name)
      return jit::toIValue(u.user->input(1));
  return std::nullopt;
}

// Whether the context manager object changes nothing the file computes. Grad mode: gradients play
// no part in the file. Autocast: a CUDA autocast region does not touch CPU kernels, so the model's
// CPU run (the reference) computes in full precision there, as the file does; a disabled one
// (`autocast(enabled=False)`, keeping a block in float32) does nothing. An enabled CPU autocast
// (TorchScript honours it: linear computes in bfloat16) is kept, and the example run refuses it.
bool isInertContext(jit::Value* obj) {
  auto cls = obj->type()->cast<c10::ClassType>();
  if (!cls || !cls->name()) return false;
  const std::string name = cls->name()->qualifiedName();
  if (name.find("torch.autograd.grad_mode.") != std::string::npos) return true;
  if (name.find("autocast_mode.autocast") == std::string::npos) return false;
  auto device = constantAttribute(obj, "device");
  if (device && device->isString() && device->toStringRef() == "cuda") return true;
  auto enabled = constantAttribute(obj, "_enabled");
  return enabled && enabled->isBool() && !enabled->toBool();
}

// `with torch.no_grad():` / `torch.enable_grad()` / `torch.set_grad_enabled(b)` in scripted code
// (F.gaussian_nll_loss clamps its variance under one), `with torch.cuda.amp.autocast(...)`: an
// object of the context manager's class (prim::CreateObject, its __init__ inlined into
// prim::SetAttr), entered and exited around the block. Where it changes nothing the file computes
// (isInertContext), the context manager goes and its block stays.
void removeInertContexts(jit::Block* b) {
  std::vector<jit::Node*> creates;
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* sb : n->blocks()) removeInertContexts(sb);
    if (n->kind() != c10::prim::CreateObject) continue;
    if (!isInertContext(n->output())) continue;
    bool only_context_uses = true;
    for (const jit::Use& u : n->output()->uses()) {
      const auto k = u.user->kind();
      only_context_uses = only_context_uses && (k == c10::prim::Enter || k == c10::prim::Exit ||
                                                k == c10::prim::SetAttr || k == c10::prim::GetAttr);
    }
  if (only_context_uses) creates.push_back(n);
  }
  for (jit::Node* create : creates) {
    std::vector<jit::Node*> users;
    for (const jit::Use& u : create->output()->uses()) users.push_back(u.user);
    for (jit::Node* u : users) {
      for (jit::Value* o : u->outputs()) {
        if (!o->hasUses()) continue;
        jit::WithInsertPoint guard(u);
        o->replaceAllUsesWith(u->owningGraph()->insertConstant(c10::IValue()));
      }
      u->destroy();
    }
    create->destroy();
  }
}

void removeConsoleOutput(jit::Block* b) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;
    for (jit::Block* sb : n->blocks()) removeConsoleOutput(sb);
    const std::string kind = n->kind().toQualString();
    if ((kind == "prim::Print" || kind == "aten::warn") && n->outputs().empty()) n->destroy();
  }
}

// prim::unchecked_cast (Optional[T] -> T after `if x is not None`) of a value whose type is already
// T: after argument baking and inlining, an Optional argument that was given is the value itself
// (`block(x, (past_k, past_v))` into `layer_past: Optional[Tuple[Tensor, Tensor]]`). The cast
// would hide the TupleConstruct from LowerSimpleTuples and from the converters that look
// through constructed tuples and lists, so it goes.
void removeNoopUncheckedCasts(jit::Block* b) {
  for (auto it = b->nodes().begin(); it != b->nodes().end();) {
    jit::Node* n = *it;
    ++it;
    for (jit::Block* sb : n->blocks()) removeNoopUncheckedCasts(sb);
    if (n->kind() != c10::prim::unchecked_cast) continue;
    if (!n->input()->type()->isSubtypeOf(*n->output()->type())) continue;
    n->output()->replaceAllUsesWith(n->input());
    n->destroy();
  }
}

}  // namespace

Result<FrontendResult> Frontend::run() {
  report(Phase::Passes, 0.0, "inlining");
  graph_ = module_.get_method("forward").graph()->copy();
  inlineCallsAndForks(*graph_, module_._ivalue());
  removeInertContexts(graph_->block());
  OXPORT_TRY(bakeArguments());
  // self.cache = x, self.count += 1: a read after a write reads the value; the last write is
  // state for the next call, dropped (before the flags are folded: what stays read is the saved value).
  std::vector<Diagnostic> state_warnings = functionalizeAttributeWrites(*graph_);
  // No grad, no autocast, the training option, the modules' flags, the inputs' dtype, rank and
  // device, None-ness of Optional arguments: the fast paths they rule out go before anything runs.
  foldExportConstants(graph_, module_._ivalue(), options_.training);
  // `x.mean() * 0.25` traced: the 0-dim float64 constant is a Scalar, as the loaded model runs it.
  scalarizeTensorConstants(*graph_);
  // nn.TransformerEncoder's nested-tensor fast path: its test on the mask and the padded path.
  nested_refusal_ = lowerNestedFastPath(graph_, module_._ivalue(), options_.training);
  functionalizeViewWrites(*graph_, &state_warnings);  // y[:, i] = v and friends, before the mutation passes
  functionalizeDictWrites(*graph_);  // result["out"] = x: a new dict per write
  splitTupleLists(*graph_);  // pairs.append((r, c)): a list per element
  removeNoopUncheckedCasts(graph_->block());
  // for _ in range(self.levels - 1): pyramid.append(...): a list of static length (its count is folded).
  unrollListBuildingLoops(*graph_);
  // `return (a, b)` inside a loop, a tuple set in both branches: one carried value per element.
  splitCarriedTuples(*graph_);
  jit::LowerSimpleTuples(graph_);
  try {
    // `[x.transpose(1, 0) for x in (query, key)]` (nn.MultiheadAttention, batch_first, query not
    // key) builds an empty list and appends to it: without this the empty list is folded as a
    // constant and the dynamic tensors appended to it are baked at the example size.
    jit::RemoveListMutation(graph_);
    jit::RemoveTensorMutation(graph_);
  } catch (const std::exception&) {
    // Mutation that cannot be removed safely is executed as is by the example run.
  }
  // print() and warnings.warn() only talk to the console (scripted googlenet warns on every
  // call): the file has no console, and the example run must not write to ours.
  removeConsoleOutput(graph_->block());
  jit::EliminateDeadCode(graph_);
  // outs.append(t) in a loop: a new version of the list each time, carried by the loop (an ONNX
  // sequence). After the passes above, which need every node to have an operator.
  functionalizeListMutation(*graph_);
  if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
  report(Phase::Trace, 0.0, "running the model on the example inputs");
  OXPORT_TRY(exampleRunMetaFirst());
  report(Phase::Trace, 1.0, "example run done");
  Result<FrontendResult> res = lower();
  if (res.ok()) res->warnings.insert(res->warnings.begin(), state_warnings.begin(), state_warnings.end());
  return res;
}

void Frontend::report(Phase p, double f, const std::string& m) {
  if (progress_) progress_(p, f, m);
}

// Replace forward's non-tensor arguments by constants and flatten tensor containers into
// plain tensor inputs.
Status Frontend::bakeArguments() {
  jit::Graph& g = *graph_;
  size_t n = args_.values.size();
  if (g.inputs().size() != n + 1)
    return Error("internal", "forward graph has " + std::to_string(g.inputs().size() - 1) + " inputs, expected " +
                                 std::to_string(n));
  jit::WithInsertPoint guard(g.block()->nodes().front());
  std::vector<jit::Value*> old_inputs(g.inputs().begin() + 1, g.inputs().end());
  for (size_t i = 0; i < n; ++i) {
    jit::Value* in = old_inputs[i];
    const c10::IValue& v = args_.values[i];
    OXPORT_TRY(checkArgType(in->type(), v, args_.names[i]));
    jit::Value* repl = materialize(g, v, args_.names[i]);
    if (!repl) {
      Diagnostic d = makeError("unsupported-arg",
                               "argument '" + args_.names[i] + "' of type " + in->type()->annotation_str() +
                                   " cannot be exported",
                               "pass tensors, numbers, bools, strings, None, or lists and tuples of them");
      d.option = "args";
      return Error(d);
    }
    in->replaceAllUsesWith(repl);
  }
  for (size_t i = n; i > 0; --i) g.eraseInput(i);
  return okStatus();
}

namespace {

std::string describeValue(const c10::IValue& v) {
  if (v.isInt()) return "the int " + std::to_string(v.toInt());
  if (v.isDouble()) return "the float " + std::to_string(v.toDouble());
  if (v.isBool()) return std::string("the bool ") + (v.toBool() ? "True" : "False");
  if (v.isString()) return "the string '" + v.toStringRef() + "'";
  if (v.isNone()) return "None";
  if (v.isTensor()) return "a tensor";
  return "a " + v.type()->annotation_str();
}

}  // namespace

// An example argument of the wrong kind would specialise the graph's input to a type its ops
// have no overload for (libtorch then fails deep in alias analysis): say which argument instead.
// Only kinds that cannot convert are refused: a scalar where forward() takes a tensor (or an
// Optional tensor), a tensor where it takes no tensor at all.
Status Frontend::checkArgType(const c10::TypePtr& declared, const c10::IValue& v, const std::string& name) {
  const c10::TypePtr& t = declared->kind() == c10::TypeKind::OptionalType
                              ? declared->containedTypes().at(0)
                              : declared;
  bool scalar = v.isInt() || v.isDouble() || v.isBool() || v.isString();
  bool wrong = (scalar && t->kind() == c10::TypeKind::TensorType) ||
               (v.isNone() && declared->kind() == c10::TypeKind::TensorType) ||
               (v.isTensor() && !holdsTensorType(declared) && declared->kind() != c10::TypeKind::AnyType);
  if (!wrong) return okStatus();
  Diagnostic d = makeError("arg-type-mismatch",
                           "argument '" + name + "' of forward() is " + declared->annotation_str() +
                               ", but the example gives " + describeValue(v),
                           v.isTensor() ? "pass a plain number (on the command line: --arg 3, --arg 0.5, --arg true)"
                                        : "pass a tensor: on the command line a shape such as --arg 1x7 or "
                                          "--arg 7:float32 (a bare 7 is the int 7)");
  d.option = "args";
  return Error(d);
}

// A graph value holding `v`: new graph inputs for tensors, constants for the rest.
jit::Value* Frontend::materialize(jit::Graph& g, const c10::IValue& v, const std::string& name) {
  if (v.isTensor()) {
    jit::Value* in = g.addInput(name);
    in->setType(c10::TensorType::create(v.toTensor()));
    run_.inputs.push_back(v.toTensor());
    return in;
  }
  if (!holdsTensor(v)) {
    auto c = g.insertConstant(v);
    return c;
  }
  std::vector<c10::IValue> elems = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
  std::vector<jit::Value*> vals;
  for (size_t i = 0; i < elems.size(); ++i) {
    jit::Value* e = materialize(g, elems[i], name + "." + std::to_string(i));
    if (!e) return nullptr;
    vals.push_back(e);
  }
  jit::Node* node;
  if (v.isTuple()) {
    node = g.createTuple(vals);
  } else {
    node = g.createList(c10::TensorType::get(), vals);
  }
  g.insertNode(node);
  return node->output();
}

Result<FrontendResult> runFrontend(const jit::Module& module, const ExampleArgs& args,
                                   const ExportOptions& options, const ProgressFn& progress,
                                   const CancelToken& cancel, const ValueObserver* observer) {
  try {
    // The example run is the export's inference, as the reference run: without autograd (what
    // torch.is_grad_enabled() answers is folded to false before it, see pass_export_constants.h).
    torch::NoGradGuard no_grad;
    Frontend f(module, args, options, progress, cancel, observer);
    return f.run();
  } catch (const std::exception& e) {
    return Error("frontend-failed", std::string("preparing the TorchScript graph failed: ") + torchErrorMessage(e));
  }
}

}  // namespace oxport
