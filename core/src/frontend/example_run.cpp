// The example run: every node of the graph on the example inputs, meta tensors first (meta_rules.h),
// real ones when that cannot tell; If and Loop run as TorchScript runs them; which values are
// static (folded) and the metadata of every value.
#include <cstdlib>
#include <functional>

#include "frontend/frontend_impl.h"
#include "frontend/meta_rules.h"
#include "frontend/pass_list_mutation.h"
#include "frontend/shape_asserts.h"

namespace oxport {

static bool metaRunEnabled() {
  const char* e = std::getenv("OXPORT_META_RUN");
  return !(e && std::string(e) == "0");
}

Status Frontend::exampleRunMetaFirst() {
  if (observer_ && *observer_) {
    run_.description = "real (values observed)";
    return exampleRun();
  }
  if (!metaRunEnabled()) {
    run_.description = "real (OXPORT_META_RUN=0)";
    return exampleRun();
  }
  // Trace mode edits the graph while it runs (unrolling), and so does script mode for loops of a
  // fixed count that carry lists (unrollStaticLoop): keep a copy to start again from.
  std::shared_ptr<jit::Graph> saved;
  if (hasControlFlow(graph_->block())) saved = graph_->copy();
  std::string reason;
  run_.meta_mode = true;
  try {
    Status s = exampleRun();
    if (s.ok()) {
      run_.meta_mode = false;
      run_.description = "meta";
      return s;
    }
    if (cancel_.cancelled()) return s;
    reason = s.error().diagnostics().empty() ? "error" : s.error().diagnostics().front().message;
  } catch (const MetaFallback& e) {
    reason = e.what();
  } catch (const std::exception& e) {
    reason = torchErrorMessage(e);
  }
  run_.meta_mode = false;
  if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
  // Back to the state before the run. Only a graph the run edited is replaced by the copy: the
  // copy's values are new objects, and localize's torch map names the original's.
  if (saved && (options_.graph_mode == GraphMode::Trace || !run_.unrolled_loops.empty())) graph_ = saved;
  run_.unrolled_loops.clear();  // nodes of the graph just replaced
  {
    torch::NoGradGuard no_grad;
    for (auto& [t, before] : written_statics_) t.copy_(before);
    written_statics_.clear();
  }
  run_.restart();
  if (auto nl = reason.find('\n'); nl != std::string::npos) reason.resize(nl);
  if (reason.size() > 300) reason = reason.substr(0, 300) + "...";
  run_.description = "real (fallback: " + reason + ")";
  return exampleRun();
}

// Runs the op of `n` on `stack`. With a meta input, every tensor argument becomes meta first.
void Frontend::runOp(jit::Node* n, jit::Operation& op, jit::Stack& stack) {
  if (!run_.meta_mode) {
    op(stack);
    return;
  }
  bool any_meta = false;
  for (const auto& v : stack) any_meta = any_meta || holdsMeta(v);
  if (!any_meta) {
    op(stack);  // only real tensors (or none): runs as in the real run
    return;
  }
  const std::string kind = n->kind().toQualString();
  if (const c10::FunctionSchema* schema = n->maybeSchema()) {
    const auto& sargs = schema->arguments();
    for (size_t i = 0; i < sargs.size() && i < stack.size(); ++i) {
      const auto* alias = sargs[i].alias_info();
      if (alias && alias->isWrite() && holdsRealTensor(stack[i]))
        throw MetaFallback(kind + " writes into a tensor that does not depend on the inputs");
    }
  }
  // Running statistics updated in place although the schema does not say so.
  if ((kind == "aten::batch_norm" || kind == "aten::instance_norm") && stack.size() > 5 && stack[5].isBool() &&
      stack[5].toBool() && holdsRealTensor(stack[3]))
    throw MetaFallback(kind + " updates its running statistics");
  for (auto& v : stack) {
    if (v.isDevice() && v.toDevice().is_cpu()) v = c10::IValue(c10::Device(at::kMeta));
    else v = toMeta(v);
  }
  if (metaRule(kind, stack, n->outputs().size())) return;
  // An op whose results' shapes follow from the arguments' shapes alone, without a Meta kernel:
  // that op runs on zero-filled tensors, and the run stays meta.
  jit::Stack args;
  if (isShapeOnlyOp(kind)) args = stack;
  try {
    op(stack);
  } catch (const std::exception& e) {
    if (!args.empty()) {
      stack = std::move(args);
      runShapeOnlyOp(kind, op, stack);
      return;
    }
    std::string msg = torchErrorMessage(e);
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    throw MetaFallback(kind + " on meta tensors: " + msg);
  }
}

Status Frontend::exampleRun() {
  jit::Graph& g = *graph_;
  // Last top-level use of each value, to free activations early.
  std::unordered_map<jit::Value*, size_t> last_use;
  std::vector<jit::Node*> order(g.nodes().begin(), g.nodes().end());
  for (size_t i = 0; i < order.size(); ++i) {
    std::function<void(jit::Node*)> visit = [&](jit::Node* n) {
      for (auto* in : n->inputs()) last_use[in] = i;
      for (auto* b : n->blocks())
        for (auto* bn : b->nodes()) visit(bn);
      for (auto* b : n->blocks())
        for (auto* o : b->outputs()) last_use[o] = i;
    };
    visit(order[i]);
  }
  for (auto* o : g.outputs()) last_use[o] = order.size();

  run_.env[g.inputs()[0]] = module_._ivalue();
  run_.statics.insert(g.inputs()[0]);
  run_.paths[g.inputs()[0]] = "";
  for (size_t i = 1; i < g.inputs().size(); ++i) {
    run_.env[g.inputs()[i]] = run_.meta_mode ? toMeta(run_.inputs[i - 1]) : c10::IValue(run_.inputs[i - 1]);
    recordMeta(g.inputs()[i]);
  }
  if (options_.graph_mode == GraphMode::Trace && hasControlFlow(g.block())) {
    OXPORT_TRY(runUnrolling(g.block()->nodes().front(), g.block()->return_node()));
    jit::EliminateDeadCode(graph_);  // what only decided a branch or a trip count
    return okStatus();
  }
  for (size_t i = 0; i < order.size(); ++i) {
    if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
    jit::Node* n = order[i];
    if (i % 32 == 0) report(Phase::Trace, static_cast<double>(i) / order.size(), n->kind().toQualString());
    OXPORT_TRY(step(n));
    for (auto* in : n->inputs()) {
      auto it = last_use.find(in);
      if (it != last_use.end() && it->second == i && !run_.statics.count(in) && !run_.kept_alive.count(in))
        run_.env.erase(in);
    }
  }
  for (jit::Node* loop : run_.unrolled_loops) loop->destroy();  // their outputs have no uses left
  run_.unrolled_loops.clear();
  return okStatus();
}

// Ops kept as nodes even when their inputs are static: fake quantization of weights becomes
// QuantizeLinear/DequantizeLinear on the weights, as quantization-aware runtimes expect.
static bool keepAsNode(const jit::Node* n) {
  static const std::unordered_set<std::string> kinds = {
      "aten::fake_quantize_per_tensor_affine", "aten::fake_quantize_per_channel_affine",
      "aten::_fake_quantize_learnable_per_tensor_affine", "aten::_fake_quantize_learnable_per_channel_affine",
      "aten::_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", "aten::fused_moving_avg_obs_fake_quant",
      "aten::quantize_per_tensor", "aten::dequantize"};
  return kinds.count(n->kind().toQualString()) != 0;
}

static bool isInPlaceListOp(const jit::Node* n) {
  static const std::unordered_set<std::string> kinds = {"aten::append", "aten::insert", "aten::pop",
                                                        "aten::_set_item", "aten::Delete", "aten::clear",
                                                        "aten::extend", "aten::add_", "aten::reverse",
                                                        "aten::remove", "aten::sort"};
  return kinds.count(n->kind().toQualString()) != 0;
}

bool Frontend::hasStaticLength(const jit::Value* v) const {
  if (run_.statics.count(const_cast<jit::Value*>(v))) return true;
  if (v->type()->kind() != c10::TypeKind::ListType) return false;
  for (const jit::Use& u : v->uses())
    if (isInPlaceListOp(u.user)) return false;  // appended to, popped ...
  const jit::Node* p = v->node();
  const std::string kind = p->kind().toQualString();
  if (kind == "prim::ListConstruct") return true;
  if (kind == "aten::size") return p->inputs().size() == 1;
  if (kind == "aten::list" || kind == "aten::copy") return hasStaticLength(p->input(0));
  if (kind == "aten::add" && p->inputs().size() == 2) return hasStaticLength(p->input(0)) && hasStaticLength(p->input(1));
  if (kind == "aten::slice" && p->inputs().size() == 4) {
    for (size_t i = 1; i < 4; ++i)
      if (!run_.statics.count(p->input(i))) return false;
    return hasStaticLength(p->input(0));
  }
  return false;
}

// Whether a block of `n` (at any depth) changes a list of numbers in place.
static bool changesNumberList(const jit::Node* n) {
  for (const jit::Block* b : n->blocks())
    for (const jit::Node* bn : b->nodes()) {
      if (isInPlaceListOp(bn) && !bn->inputs().empty()) {
        auto lt = bn->input(0)->type()->cast<c10::ListType>();
        const auto k = lt ? lt->getElementType()->kind() : c10::TypeKind::AnyType;
        if (k == c10::TypeKind::IntType || k == c10::TypeKind::FloatType || k == c10::TypeKind::BoolType) return true;
      }
      if (changesNumberList(bn)) return true;
    }
  return false;
}

// Whether a branch of `n` changes in place a list made outside the If (shift_size[0] = 0 under
// `if window_size[0] >= pad_H` in torchvision's Swin): the list's value after the If then
// depends on the branch, which the example run folds like any static list.
static bool writesOuterList(const jit::Node* n) {
  std::function<bool(const jit::Block*)> visit = [&](const jit::Block* b) {
    for (const jit::Node* bn : b->nodes()) {
      if (isInPlaceListOp(bn) && !bn->inputs().empty() &&
          (bn->input(0)->type()->kind() == c10::TypeKind::ListType ||
           bn->input(0)->type()->kind() == c10::TypeKind::DictType)) {
        bool inside = false;
        for (const jit::Block* ob = bn->input(0)->node()->owningBlock(); ob && ob->owningNode();
             ob = ob->owningNode()->owningBlock())
          inside = inside || ob->owningNode() == n;
        if (!inside) return true;
      }
      for (const jit::Block* sb : bn->blocks())
        if (visit(sb)) return true;
    }
    return false;
  };
  for (const jit::Block* b : n->blocks())
    if (visit(b)) return true;
  return false;
}

void Frontend::warnBranchOnSizes(const jit::Node* n, bool cond) {
  if (options_.dynamic_axes.empty() || run_.shadow_depth > 0) return;
  Diagnostic w = makeWarning("size-branch-fixed",
                             std::string("this if on the inputs' sizes changes a list in place; it took its ") +
                                 (cond ? "then" : "else") +
                                 " branch at the example sizes, and the export keeps that branch at every size of "
                                 "the dynamic axes",
                             "verify at the sizes you will run (oxport verify tries others), or build a new list in "
                             "each branch instead of changing one in place");
  run_.warnings.push_back(atNode(w, n));
}

// Runs one node (its blocks included), then records which outputs are static and their metas.
Status Frontend::step(jit::Node* n) {
  Status s = stepNode(n);
  if (s.ok() && observer_ && *observer_ && run_.shadow_depth == 0 && n->owningBlock() == graph_->block())
    for (auto* o : n->outputs())
      if (auto it = run_.env.find(o); it != run_.env.end()) (*observer_)(o->debugName(), it->second);
  return s;
}

// Names the nested value, the branch that made it and why the rewrite into padded ops left it.
std::string Frontend::nestedMessage(const jit::Node* n, const jit::Value* v) const {
  std::string m = std::string(n->kind().toQualString()) + " makes a nested tensor (%" + v->debugName() +
                  ") on the example inputs, which has no ONNX form (nested tensors have no shape)";
  for (const jit::Block* b = n->owningBlock(); b->owningNode(); b = b->owningNode()->owningBlock()) {
    const jit::Node* branch = b->owningNode();
    SourceLocation at = locationOf(branch);
    if (branch->kind() == c10::prim::If && at.known()) {
      m += ", in the branch of the `if` at " + at.file + ":" + std::to_string(at.line) + " on %" +
           branch->input(0)->debugName();
      break;
    }
  }
  if (!nested_refusal_.empty()) m += "; it is not rewritten into padded-tensor ops because " + nested_refusal_;
  return m;
}

Status Frontend::stepNode(jit::Node* n) {
  if (n->kind() == c10::prim::If) return runIf(n);
  if (n->kind() == c10::prim::Loop) return runLoop(n);
  OXPORT_ASSIGN(bool replaced, appendAsNewList(n));
  if (!replaced) { OXPORT_ASSIGN(replaced, forwardsElement(n)); }
  if (replaced) return okStatus();
  OXPORT_TRY(execute(n));
  for (auto* o : n->outputs()) {
    auto it = run_.env.find(o);
    if (it != run_.env.end() && anyTensorIn(it->second, [](const at::Tensor& t) { return t.defined() && t.is_nested(); }))
      return nodeError(n, "nested-tensor", nestedMessage(n, o),
                       "construct nn.TransformerEncoder with mask_check=True (its default) or "
                       "enable_nested_tensor=False (the same results at the positions that are not padding), or do "
                       "not convert inputs to nested tensors in forward()");
  }
  bool all_static = !n->isNondeterministic() && !keepAsNode(n);
  for (auto* in : n->inputs()) all_static = all_static && run_.statics.count(in) && !run_.overwritten.count(in);
  if (n->kind() == c10::prim::Constant || isMetadataQuery(n)) all_static = true;
  // len() of a list whose length is fixed although its elements follow the inputs (x.size(),
  // [n, c] + list(x.size()[2:])): the rank never changes, so `for i in range(len(s))` has a
  // static trip count.
  if (!all_static && n->kind() == c10::aten::len && hasStaticLength(n->input(0))) all_static = true;
  if (all_static) {
    for (auto* o : n->outputs()) {
      const c10::IValue& v = run_.env[o];
      bool is_param_attr = n->kind() == c10::prim::GetAttr;
      bool tensorish = holdsTensor(v);
      if (is_param_attr && v.isTensor() && !options_.export_params) continue;  // params become inputs
      if (!tensorish || options_.do_constant_folding || is_param_attr || n->kind() == c10::prim::Constant ||
          n->kind() == c10::prim::ListConstruct || n->kind() == c10::prim::TupleConstruct)
        run_.statics.insert(o);
    }
  }
  for (auto* o : n->outputs()) recordMeta(o);
  // A list changed in place inside a loop or an if with values that depend on the inputs (one
  // pass_list_mutation.h left as is: not a list of tensors, or stored elsewhere too) has no ONNX
  // form, and folding it would write the example run's contents into the file. (Straight-line
  // appends of sizes keep the example's values, as before.)
  if (!all_static && !n->inputs().empty() && n->input(0)->type()->kind() == c10::TypeKind::ListType &&
      !inlinedBlock(n->owningBlock()) && isInPlaceListOp(n)) {
    const bool tensors = n->input(0)->type()->cast<c10::ListType>()->getElementType()->kind() ==
                         c10::TypeKind::TensorType;
    return nodeError(n, "unsupported-form",
                     std::string(n->kind().toQualString()) + " changes list %" + n->input(0)->debugName() + " (" +
                         n->input(0)->type()->annotation_str() +
                         ") in place inside a loop or an if, with values that depend on the inputs; " +
                         (tensors ? "the list is also stored in another list, a dict or a loop's state, so it "
                                    "cannot become an ONNX sequence"
                                  : "only lists of tensors become ONNX sequences"),
                     std::string(tensors ? "keep the list in one variable and append to it directly"
                                         : "append tensors instead (torch.tensor(i) for an int) and torch.stack "
                                           "them") +
                         ", or export with graph_mode \"trace\" (--graph-mode trace)");
  }
  return okStatus();
}

Status Frontend::runBlock(jit::Block* b) {
  for (jit::Node* n : b->nodes()) {
    if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
    OXPORT_TRY(step(n));
  }
  return okStatus();
}

// The branch not taken, run on the same values only to learn its shapes and dtypes (the
// converters need them). Failures only leave metas unknown; nothing is reported.
void Frontend::runForMetas(jit::Block* b) {
  ++run_.shadow_depth;
  Status s = runBlock(b);
  --run_.shadow_depth;
  // On meta tensors a failure may not be one on real tensors (a missing Meta kernel): only the
  // real run can tell which metas stay unknown.
  if (run_.meta_mode && !s.ok())
    throw MetaFallback("the branch not taken failed: " +
                       (s.error().diagnostics().empty() ? std::string("error") : s.error().diagnostics().front().message));
}

// prim::If: the taken branch runs. A static condition makes the If disappear at lowering (the
// taken branch is inlined); a dynamic one becomes an ONNX If, so the other branch is run too
// for its metadata.
Status Frontend::runIf(jit::Node* n) {
  const c10::IValue& c = run_.env.at(n->input(0));
  const bool cond = c.toBool();
  bool static_cond = run_.statics.count(n->input(0)) != 0;
  auto writes_outer_list = [&] {
    auto [it, fresh] = run_.writes_outer_list.try_emplace(n, false);
    if (fresh) it->second = writesOuterList(n);
    return it->second;
  };
  // A branch that builds a list of numbers in place (F.interpolate's size list under SAM's `if
  // rel_pos.shape[0] != max_rel_dist`) has no ONNX If form either; on sizes it is decided as below.
  if (!static_cond && (writes_outer_list() || (changesNumberList(n) && decidedByShapes(n->input(0))))) {
    if (!decidedByShapes(n->input(0)))
      return nodeError(n, "unsupported-form",
                       "a branch on values computed from the inputs' data changes a list or dict made outside it "
                       "in place; its contents after the if would depend on the data, and ONNX has no dicts and no "
                       "lists of numbers",
                       "build a new list in each branch (s = [0, s[1]] if cond else s), keep the values in a "
                       "tensor, or export with graph_mode \"trace\" (--graph-mode trace)");
    // Decided by the sizes alone: exact at the example's sizes, so the branch taken is kept, and
    // said when the sizes may change.
    run_.statics.insert(n->input(0));
    static_cond = true;
    warnBranchOnSizes(n, cond);
  }
  jit::Block* taken = n->blocks()[cond ? 0 : 1];
  jit::Block* other = n->blocks()[cond ? 1 : 0];
  size_t raise_branch = 0;
  // An assert on shapes inside a branch the example does not take (F.gaussian_nll_loss's `else:
  // raise` under `if var.size() != input.size()`): the example's shapes are not the ones that
  // branch would see, and asserts on shapes are left out of the file anyway (see lowerNodes).
  if (!static_cond && run_.shadow_depth > 0 && isShapeAssert(n, &raise_branch) && raise_branch == (cond ? 0u : 1u)) {
    run_.dropped_asserts.insert(n);
    return okStatus();
  }
  OXPORT_TRY(runBlock(taken));
  if (!static_cond && isShapeAssert(n, &raise_branch) && raise_branch != (cond ? 0u : 1u)) {
    // An assert on shapes that the example inputs pass: ONNX has no exceptions, and nothing but
    // the shapes decides it, so it is left out of the file (see lowerNodes).
    run_.dropped_asserts.insert(n);
    return okStatus();
  }
  // A check on values computed from the inputs that the example passes (nn.LSTM's
  // check_forward_args on a packed batch's sizes): ONNX has no exceptions, so the raising branch is
  // left out, as torch.onnx leaves it out, and the branch taken is inlined (lowerNodes), with a
  // warning that says the check is not in the file.
  bool inlined = static_cond;
  if (!static_cond && isCheck(n, &raise_branch) && raise_branch != (cond ? 0u : 1u)) {
    run_.dropped_checks[n] = cond ? 0 : 1;
    warnDroppedCheck(n);
    inlined = true;
  }
  if (!inlined) runForMetas(other);
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    jit::Value* bo = taken->outputs()[i];
    run_.env[n->outputs()[i]] = run_.env.at(bo);
    if (inlined && run_.statics.count(bo)) run_.statics.insert(n->outputs()[i]);
    recordMeta(n->outputs()[i]);
  }
  return okStatus();
}

// (condition, carried...): iterated as TorchScript does. A loop whose inputs and free values are
// all static is folded; otherwise it becomes an ONNX Loop.
Status Frontend::runLoop(jit::Node* n) {
  if (unrollsStaticLoop(n)) return unrollStaticLoop(n);
  if (unrollsRankLoop(n)) return unrollRankLoop(n);
  jit::Block* body = n->blocks()[0];
  bool all_static = true;
  for (auto* in : n->inputs()) all_static = all_static && run_.statics.count(in);
  std::unordered_set<jit::Value*> free;
  freeValues(body, free);
  for (auto* v : free) all_static = all_static && run_.statics.count(v);
  const int64_t max_trip = run_.env.at(n->input(0)).toInt();
  bool cond = run_.env.at(n->input(1)).toBool();
  std::vector<c10::IValue> carried;
  for (size_t k = 2; k < n->inputs().size(); ++k) carried.push_back(run_.env.at(n->input(k)));
  auto setBodyInputs = [&](int64_t i) {
    run_.env[body->inputs()[0]] = c10::IValue(i);
    for (size_t k = 0; k < carried.size(); ++k) run_.env[body->inputs()[k + 1]] = carried[k];
    for (auto* v : body->inputs()) {
      if (all_static) run_.statics.insert(v);
      recordMeta(v);
    }
  };
  int64_t i = 0;
  for (; i < max_trip && cond; ++i) {
    if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
    setBodyInputs(i);
    OXPORT_TRY(runBlock(body));
    cond = run_.env.at(body->outputs()[0]).toBool();
    for (size_t k = 0; k < carried.size(); ++k) carried[k] = run_.env.at(body->outputs()[k + 1]);
  }
  if (i == 0 && !all_static) {
    // Never entered on the example inputs: one run for the body's metadata only.
    setBodyInputs(0);
    runForMetas(body);
    carried.clear();
    for (size_t k = 2; k < n->inputs().size(); ++k) carried.push_back(run_.env.at(n->input(k)));
  }
  for (size_t k = 0; k < n->outputs().size(); ++k) {
    run_.env[n->outputs()[k]] = carried[k];
    if (all_static) run_.statics.insert(n->outputs()[k]);
    recordMeta(n->outputs()[k]);
  }
  return okStatus();
}

void Frontend::recordMeta(jit::Value* v) {
  auto it = run_.env.find(v);
  if (it == run_.env.end()) return;
  const c10::IValue& iv = it->second;
  if (iv.isTensor()) {
    run_.meta[v] = metaOf(iv.toTensor());
  } else if (iv.isTensorList() || (iv.isList() && holdsTensor(iv))) {
    std::vector<ts::TensorMeta> ms;
    for (const auto& e : iv.toListRef())
      if (e.isTensor()) ms.push_back(metaOf(e.toTensor()));
    run_.elem_meta[v] = std::move(ms);
  } else if (iv.isTuple() && holdsTensor(iv)) {
    std::vector<ts::TensorMeta> ms;
    for (const auto& e : iv.toTupleRef().elements())
      if (e.isTensor()) ms.push_back(metaOf(e.toTensor()));
    run_.elem_meta[v] = std::move(ms);
  } else if (iv.isInt() || iv.isDouble() || iv.isBool()) {
    bool ok;
    run_.scalar_example[v] = constantFromIValue(iv, &ok);
  }
}

}  // namespace oxport
