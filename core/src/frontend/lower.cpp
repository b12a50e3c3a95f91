// Lowering: the run graph and what the example run learned of its values become the core's
// ts IR (static values constants, the rest nodes with their metadata).
#include "frontend/frontend_impl.h"
#include "frontend/weight_views.h"

#include <functional>
#include <set>

namespace oxport {

namespace {

// The constant size arguments of the ops that gave a static tensor new dimensions on its way (expand,
// repeat, tile, new_zeros ...; a view of a weight only rearranges it), as ints: see ts::Value::folded_sizes. Sizes computed from the weights
// (weight.shape[0]) are left out: they never derive from an input's size.
void foldedSizes(jit::Value* v, const ExampleRun& run, const std::function<bool(jit::Value*)>& from_weights,
                 std::unordered_set<jit::Value*>& seen, std::vector<int64_t>& out) {
  static const std::unordered_set<std::string> sized = {
      "aten::expand", "aten::repeat", "aten::tile", "aten::broadcast_to", "aten::new_zeros", "aten::new_ones", "aten::new_full", "aten::new_empty"};
  if (!run.statics.count(v) || !seen.insert(v).second || seen.size() > 4096) return;
  jit::Node* n = v->node();
  if (sized.count(n->kind().toQualString()) && n->inputs().size() > 1 && !from_weights(n->input(1))) {
    auto it = run.env.find(n->input(1));
    if (it != run.env.end() && it->second.isIntList())
      for (int64_t s : it->second.toIntVector()) out.push_back(s);
    else if (it != run.env.end() && it->second.isInt())
      out.push_back(it->second.toInt());
  }
  for (auto* in : n->inputs()) foldedSizes(in, run, from_weights, seen, out);
}

}  // namespace

// ---- lowering to ts IR
ts::Value* Frontend::tsValue(jit::Value* v) {
  auto it = map_.find(v);
  if (it != map_.end()) return it->second;
  // Static values become constants on first use.
  if (run_.statics.count(v)) {
    bool ok = true;
    const c10::IValue& iv = run_.env.at(v);
    // A complex constant is kept as its real pair (shape + [2]), the layout converters use.
    const bool cplx = iv.isTensor() && iv.toTensor().is_complex();
    ts::Constant c = constantFromIValue(cplx ? c10::IValue(at::view_as_real(iv.toTensor().resolve_conj())) : iv, &ok);
    ts::Value* tv;
    if (ok) {
      tv = out_->newConstant(std::move(c), v->debugName());
      if (cplx) {
        tv->meta.complex = true;
        tv->meta.shape.pop_back();
      }
    } else {
      tv = out_->newValue(ts::ValueType::Other, v->debugName());
    }
    auto pit = run_.paths.find(v);
    if (pit != run_.paths.end() && iv.isTensor()) tv->param_name = pit->second;
    // Numbers too (weight.shape[0] // heads): such a number is never a size of the inputs, which
    // baked-dynamic-size reads (diagnose.cpp); only tensors become initializers (Context::constant).
    tv->from_weights = fromWeights(v);
    if (iv.isTensor() && !tv->from_weights && tv->param_name.empty() && recordedLiteral(v))
      recorded_literals_[tv] = locationOf(v->node());
    if (tv->from_weights && iv.isTensor()) {
      std::unordered_set<jit::Value*> seen;
      foldedSizes(v, run_, [this](jit::Value* x) { return fromWeights(x); }, seen, tv->folded_sizes);
    }
    map_[v] = tv;
    return tv;
  }
  // Parameters as graph inputs (export_params=False): one input per parameter, however many reads
  // reach it (a tied weight read through two modules is one path, one input, as in torch.onnx).
  auto pit = run_.paths.find(v);
  if (pit != run_.paths.end() && run_.meta.count(v)) {
    for (ts::Value* p : param_inputs_)
      if (p->param_name == pit->second) return map_[v] = p;
    ts::Value* tv = out_->newValue(ts::ValueType::Tensor, pit->second);
    tv->meta = run_.meta[v];
    tv->param_name = pit->second;
    param_inputs_.push_back(tv);
    map_[v] = tv;
    return tv;
  }
  return nullptr;
}

// Whether a static tensor is a tensor constant of the graph (what the tracer records for
// torch.tensor / as_tensor / new_tensor of Python numbers), or was computed at export time from
// such constants (casts, selects, stacks of it: Deformable DETR's offset normalizer from
// spatial_shapes), with no input from the weights or the inputs.
bool Frontend::recordedLiteral(jit::Value* v) {
  if (auto it = recorded_literal_memo_.find(v); it != recorded_literal_memo_.end()) return it->second;
  recorded_literal_memo_[v] = false;
  jit::Node* n = v->node();
  bool literal = false;
  if (n->kind() == c10::prim::Constant) {
    literal = v->type()->kind() == c10::TypeKind::TensorType;
  } else if (n->kind() != c10::prim::Param && n->blocks().empty() && !fromWeights(v)) {
    bool all_static = true;
    for (jit::Value* in : n->inputs()) {
      if (!run_.statics.count(in)) { all_static = false; break; }
      if (recordedLiteral(in)) literal = true;  // a tensor, or a list holding one (torch.stack's)
    }
    literal = literal && all_static;
  }
  recorded_literal_memo_[v] = literal;
  return literal;
}

// Whether a static value was computed from the module's parameters or buffers (a tensor
// attribute reached through GetAttr, or a node folded with such an input, blocks included).
// Such tensors are weights of the written model; what the export computed from constants
// alone (shapes, scales, index tables) is not.
bool Frontend::fromWeights(jit::Value* v) {
  if (auto it = from_weights_.find(v); it != from_weights_.end()) return it->second;
  from_weights_[v] = false;  // cycles cannot occur in a graph; this guards re-entry only
  bool w = false;
  if (auto pit = run_.paths.find(v); pit != run_.paths.end()) {
    auto eit = run_.env.find(v);
    w = eit != run_.env.end() && holdsTensor(eit->second);
  }
  if (!w && v->node()->kind() != c10::prim::Param) {
    jit::Node* n = v->node();
    for (auto* in : n->inputs())
      if (fromWeights(in)) { w = true; break; }
    if (!w && !n->blocks().empty()) {
      std::unordered_set<jit::Value*> free;
      for (auto* b : n->blocks()) freeValues(b, free);
      for (auto* f : free)
        if (fromWeights(f)) { w = true; break; }
    }
  }
  from_weights_[v] = w;
  return w;
}

void Frontend::fillValue(ts::Value* tv, jit::Value* v) {
  ts::ValueType elem;
  tv->type = valueTypeOf(v->type(), &elem);
  tv->elem_type = elem;
  if (auto m = run_.meta.find(v); m != run_.meta.end()) {
    tv->meta = m->second;
    tv->type = ts::ValueType::Tensor;
  }
  if (auto m = run_.elem_meta.find(v); m != run_.elem_meta.end()) tv->elem_meta = m->second;
  if (auto s = run_.scalar_example.find(v); s != run_.scalar_example.end()) {
    tv->example = s->second;
    // A dynamic number is a 0-d tensor in ONNX: its meta says which (int64, float32, bool), so
    // arithmetic on numbers (n += 1 in a loop, size(0) * 2) keeps their dtype.
    if (tv->type == ts::ValueType::Int || tv->type == ts::ValueType::Float || tv->type == ts::ValueType::Bool) {
      tv->meta.dtype = tv->type == ts::ValueType::Int ? DType::Int64
                       : tv->type == ts::ValueType::Bool ? DType::Bool : DType::Float32;
      tv->meta.shape.clear();
      tv->meta.known = true;
    }
  }
  // None where the static type allows it; a tensor, number or list that is None in the example
  // run is prim::Uninitialized (the value of a path that returned early) and keeps its type.
  const auto kind = v->type()->kind();
  const bool never_none = kind == c10::TypeKind::TensorType || kind == c10::TypeKind::IntType ||
                          kind == c10::TypeKind::FloatType || kind == c10::TypeKind::BoolType ||
                          kind == c10::TypeKind::ListType;
  if (auto e = run_.env.find(v); e != run_.env.end() && e->second.isNone() && !never_none) tv->type = ts::ValueType::None;
}

// The lowered value for v: a constant, a parameter input, or the value made by its producer.
ts::Value* Frontend::lookup(jit::Value* v) {
  if (ts::Value* tv = tsValue(v)) return tv;
  ts::Value* tv = out_->newValue(ts::ValueType::Other, v->debugName());
  fillValue(tv, v);
  map_[v] = tv;
  return tv;
}

// Lowers the nodes of `b` into `out` (a graph's or a block's node list). Nodes whose results
// are all static are left out (their values become constants where used); an If on a static
// condition is replaced by the nodes of the branch taken.
Status Frontend::lowerNodes(jit::Block* b, std::vector<ts::Node*>& out) {
  for (jit::Node* n : b->nodes()) {
    bool all_static = !n->outputs().empty();
    for (auto* o : n->outputs()) all_static = all_static && run_.statics.count(o);
    if (all_static && !weight_views_.count(n)) continue;
    if (n->kind() == c10::prim::GetAttr) {
      if (tsValue(n->output())) continue;  // a parameter input
    }
    if (run_.dropped_asserts.count(n)) {
      warnDroppedAssert(n);
      continue;
    }
    if (auto check = run_.dropped_checks.find(n); check != run_.dropped_checks.end()) {
      // A check the example passes (runIf): the branch kept, inlined.
      jit::Block* kept = n->blocks()[check->second];
      OXPORT_TRY(lowerNodes(kept, out));
      for (size_t i = 0; i < n->outputs().size(); ++i) map_[n->outputs()[i]] = lookup(kept->outputs()[i]);
      continue;
    }
    if (n->kind() == c10::prim::If && run_.statics.count(n->input(0))) {
      auto it = run_.env.find(n->input(0));
      if (it == run_.env.end()) continue;  // in a branch that did not run: its values are unknown
      jit::Block* taken = n->blocks()[it->second.toBool() ? 0 : 1];
      OXPORT_TRY(lowerNodes(taken, out));
      for (size_t i = 0; i < n->outputs().size(); ++i) map_[n->outputs()[i]] = lookup(taken->outputs()[i]);
      continue;
    }
    ts::Node* tn = out_->newNode(n->kind().toQualString());
    for (auto* in : n->inputs()) {
      ts::Value* tv = tsValue(in);
      if (!tv) {
        auto mit = map_.find(in);
        if (mit != map_.end()) {
          tv = mit->second;
        } else {
          tv = out_->newValue(ts::ValueType::Other, in->debugName());
          map_[in] = tv;
        }
      }
      tn->inputs.push_back(tv);
      tv->users.push_back(tn);
    }
    if (auto schema = n->maybeSchema()) {
      tn->schema = c10::toString(*schema);
      for (const auto& a : schema->arguments()) tn->arg_names.push_back(a.name());
      tn->arg_names.resize(tn->inputs.size());
    }
    ScopeInfo s = scopeOf(n);
    tn->module_path = s.path;
    tn->scope = s.names;
    tn->scope_types = s.types;
    tn->location = locationOf(n);
    tn->nondeterministic = n->isNondeterministic();
    for (jit::Block* jb : n->blocks()) {
      auto blk = std::make_unique<ts::Block>();
      for (jit::Value* bi : jb->inputs()) {
        ts::Value* tv = out_->newValue(ts::ValueType::Other, bi->debugName());
        fillValue(tv, bi);
        map_[bi] = tv;
        blk->inputs.push_back(tv);
      }
      OXPORT_TRY(lowerNodes(jb, blk->nodes));
      for (jit::Value* bo : jb->outputs()) blk->outputs.push_back(lookup(bo));
      tn->blocks.push_back(std::move(blk));
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      jit::Value* o = n->outputs()[i];
      ts::Value* tv = out_->newValue(ts::ValueType::Other, o->debugName());
      fillValue(tv, o);
      tv->producer = tn;
      tv->offset = static_cast<int>(i);
      tn->outputs.push_back(tv);
      map_[o] = tv;
    }
    out.push_back(tn);
  }
  return okStatus();
}

Result<FrontendResult> Frontend::lower() {
  out_ = std::make_unique<ts::Graph>();
  jit::Graph& g = *graph_;
  FrontendResult res;
  for (size_t i = 1; i < g.inputs().size(); ++i) {
    jit::Value* in = g.inputs()[i];
    ts::Value* tv = out_->newValue(ts::ValueType::Tensor, in->debugName());
    fillValue(tv, in);
    map_[in] = tv;
    out_->inputs.push_back(tv);
    out_->input_param_names.push_back("");
    res.input_debug_names.push_back(in->debugName());
  }
  res.user_input_count = static_cast<int>(out_->inputs.size());
  // Folded views of a weight that is also read in another form stay nodes over the one weight.
  WeightViewQueries q;
  q.is_static = [&](jit::Value* v) { return run_.statics.count(v) != 0; };
  q.is_weight = [&](jit::Value* v) {
    auto e = run_.env.find(v);
    return run_.paths.count(v) && e != run_.env.end() && e->second.isTensor();
  };
  q.value = [&](jit::Value* v) -> const c10::IValue* {
    auto e = run_.env.find(v);
    return run_.statics.count(v) && e != run_.env.end() ? &e->second : nullptr;
  };
  if (options_.do_constant_folding) weight_views_ = sharedWeightViews(g.block(), q);
  OXPORT_TRY(lowerNodes(g.block(), out_->nodes));
  for (auto* p : param_inputs_) {
    out_->inputs.push_back(p);
    out_->input_param_names.push_back(p->param_name);
  }
  for (auto* o : g.outputs()) {
    ts::Value* tv = tsValue(o);
    if (!tv) tv = map_.count(o) ? map_[o] : nullptr;
    if (!tv) return Error("internal", "graph output %" + o->debugName() + " was not lowered");
    out_->outputs.push_back(tv);
  }
  // What only a dropped assert read (the loop over sizes in F._verify_batch_size).
  if (!run_.dropped_asserts.empty() || !run_.dropped_checks.empty()) ts::removeUnusedNodes(*out_);
  res.graph = std::move(out_);
  res.recorded_literals = std::move(recorded_literals_);
  res.warnings = std::move(run_.warnings);
  res.example_run = run_.description;
  return res;
}

// Asserts on shapes are left out of the file; with dynamic axes an input of other sizes could
// fail one that the example inputs pass, so the export says so once.
void Frontend::warnDroppedAssert(const jit::Node* n) {
  if (options_.dynamic_axes.empty() || warned_assert_) return;
  warned_assert_ = true;
  Diagnostic w = makeWarning("shape-assert-dropped",
                             "an assert on shapes (and any like it) is left out of the ONNX file, which has no "
                             "exceptions: the example inputs pass it, but inputs of other sizes along the "
                             "dynamic axes that would fail it run without the check",
                             "keep the inputs' sizes consistent as forward() expects");
  run_.warnings.push_back(atNode(w, n));
}

// A check on the inputs' values left out of the file (runIf, unrollIf): said once per check's line,
// whether or not axes are dynamic (other values of any input can fail it).
void Frontend::warnDroppedCheck(const jit::Node* n) {
  const SourceLocation at = locationOf(n);
  if (!run_.warned_checks.insert(at.file + ":" + std::to_string(at.line)).second) return;
  std::string what = "the check at " + (at.known() ? at.file + ":" + std::to_string(at.line) : std::string("this if")) +
                     " (an `if` on %" + n->input(0)->debugName() +
                     " that raises) depends on values computed from the inputs; ONNX has no exceptions, so the check "
                     "is not in the ONNX file: the example inputs pass it, and inputs that would fail it run on "
                     "without an error (torch.onnx leaves such checks out too)";
  Diagnostic w = makeWarning("data-check-dropped", what,
                             "make sure the inputs given to the exported model satisfy the check, or check them "
                             "before calling it");
  run_.warnings.push_back(atNode(w, n));
}

}  // namespace oxport
