// Model::exportOnnx and friends: the pipeline driver. Phases: passes + example run (frontend),
// convert (registry), optimize (ONNX passes), serialize + check (writer).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <sstream>
#include <unordered_map>

#include "convert/driver.h"
#include "convert/registry.h"
#include "diagnose.h"
#include "onnx/passes.h"
#include "onnx/writer.h"
#include "torch/frontend.h"
#include "torch/model_impl.h"

namespace oxport {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

GraphView tsGraphView(const ts::Graph& g) {
  GraphView v;
  v.title = "TorchScript";
  std::unordered_map<const ts::Value*, int> edge_of;
  auto edge = [&](const ts::Value* val) -> int {
    auto it = edge_of.find(val);
    if (it != edge_of.end()) return it->second;
    GraphViewEdge e;
    e.id = static_cast<int>(v.edges.size());
    e.name = val->param_name.empty() ? val->name : val->param_name;
    e.type = val->typeString();
    if (val->constant) {
      e.is_initializer = val->constant->isTensor();
      e.summary = val->constant->toString();
    }
    v.edges.push_back(e);
    edge_of[val] = e.id;
    return e.id;
  };
  for (const auto* in : g.inputs) {
    int id = edge(in);
    v.edges[id].is_graph_input = true;
    v.inputs.push_back(id);
  }
  for (const ts::Node* n : g.nodes) {
    GraphViewNode gn;
    gn.id = n->id;
    gn.name = n->outputs.empty() ? n->kind : "%" + n->outputs[0]->name;
    gn.op = n->kind;
    gn.module_path = n->module_path;
    gn.location = n->location;
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const ts::Value* in = n->inputs[i];
      if (in->constant && !in->constant->isTensor()) {
        std::string an = i < n->arg_names.size() ? n->arg_names[i] : "arg" + std::to_string(i);
        gn.attributes.emplace_back(an, in->constant->toString());
        continue;
      }
      int id = edge(in);
      v.edges[id].consumers.push_back(gn.id);
      gn.inputs.push_back(id);
    }
    for (const auto* o : n->outputs) {
      int id = edge(o);
      v.edges[id].producer = gn.id;
      gn.outputs.push_back(id);
    }
    v.nodes.push_back(std::move(gn));
  }
  for (const auto* o : g.outputs) {
    int id = edge(o);
    v.edges[id].is_graph_output = true;
    v.outputs.push_back(id);
  }
  return v;
}

// Switches the module's training flags for a reference run and restores them afterwards.
class TrainingGuard {
 public:
  TrainingGuard(torch::jit::Module& m, TrainingMode mode) : m_(m), was_(m.is_training()) {
    if (mode == TrainingMode::Eval) m_.eval();
    else if (mode == TrainingMode::Training) m_.train(true);
  }
  ~TrainingGuard() { m_.train(was_); }

 private:
  torch::jit::Module& m_;
  bool was_;
};

void flattenIValue(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) out.push_back(v.toTensor());
  else if (v.isList()) for (const auto& e : v.toListRef()) flattenIValue(e, out);
  else if (v.isTuple()) for (const auto& e : v.toTupleRef().elements()) flattenIValue(e, out);
  else if (v.isGenericDict()) for (const auto& kv : v.toGenericDict()) flattenIValue(kv.value(), out);
}

// forward()'s result as the exported graph's outputs: tensors, and numbers outside lists as the 0-d
// tensors the export makes of them (int -> int64, float -> float32, bool -> bool; see collect in
// exportOnnx), so a scripted model's count or flag is compared too.
void flattenResult(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isInt()) out.push_back(at::scalar_tensor(v.toInt(), at::kLong));
  else if (v.isDouble()) out.push_back(at::scalar_tensor(v.toDouble(), at::kFloat));
  else if (v.isBool()) out.push_back(at::scalar_tensor(v.toBool(), at::kBool));
  else if (v.isTuple()) for (const auto& e : v.toTupleRef().elements()) flattenResult(e, out);
  else if (v.isGenericDict()) for (const auto& kv : v.toGenericDict()) flattenResult(kv.value(), out);
  else flattenIValue(v, out);
}

Result<std::vector<std::string>> flattenOutput(convert::Context& ctx, const ts::Value* v) {
  std::vector<std::string> out;
  if (v->type == ts::ValueType::Tensor || (v->constant && v->constant->isTensor())) {
    OXPORT_ASSIGN(std::string s, ctx.tensor(v));
    out.push_back(s);
    return out;
  }
  if (v->producer && (v->producer->kind == "prim::TupleConstruct" || v->producer->kind == "prim::ListConstruct")) {
    for (const ts::Value* e : v->producer->inputs) {
      OXPORT_ASSIGN(auto sub, flattenOutput(ctx, e));
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
  }
  if (v->producer && v->producer->kind == "prim::DictConstruct") {
    for (size_t i = 1; i < v->producer->inputs.size(); i += 2) {
      OXPORT_ASSIGN(auto sub, flattenOutput(ctx, v->producer->inputs[i]));
      out.insert(out.end(), sub.begin(), sub.end());
    }
    return out;
  }
  if (v->type == ts::ValueType::List) {
    OXPORT_ASSIGN(auto names, ctx.tensorList(v));
    return names;
  }
  if (v->type == ts::ValueType::Int || v->type == ts::ValueType::Float || v->type == ts::ValueType::Bool) {
    OXPORT_ASSIGN(std::string s, ctx.tensor(v));
    out.push_back(s);
    return out;
  }
  return Error("unsupported-output", "the model returns a value of type " + v->typeString() +
                                         ", which cannot be an ONNX output",
               "return tensors, or tuples/lists/dicts of tensors");
}

std::vector<onnx_ir::Dim> dimsFor(const std::vector<int64_t>& shape, const DynamicAxisSpec* spec,
                                  const std::string& tensor_name) {
  // torch.onnx 1.13 names the axes of the list form "<name>_dynamic_axes_<k>", k counting the
  // list's entries from 1 (not the axis index). Axes are kept sorted, so [2, 0] numbers axis 0 first.
  std::vector<onnx_ir::Dim> dims;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (spec) {
      auto it = spec->axes.find(static_cast<int64_t>(i));
      if (it != spec->axes.end()) {
        const auto k = std::distance(spec->axes.begin(), it) + 1;
        std::string name = it->second.empty() ? tensor_name + "_dynamic_axes_" + std::to_string(k) : it->second;
        dims.push_back(onnx_ir::Dim::symbol(name));
        continue;
      }
    }
    dims.push_back(onnx_ir::Dim::fixed(shape[i]));
  }
  return dims;
}

// The module's state_dict names in state_dict order: per module its parameters, then its buffers,
// then its children. torch.onnx lists parameters given as inputs (export_params=False) so.
void stateDictNames(const torch::jit::Module& m, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& p : m.named_parameters(/*recurse=*/false)) out.push_back(prefix + p.name);
  for (const auto& b : m.named_buffers(/*recurse=*/false)) out.push_back(prefix + b.name);
  for (const auto& c : m.named_children()) stateDictNames(c.value, prefix + c.name + ".", out);
}

// Graph input order: the user's tensors as given, then parameters in state_dict order.
std::vector<size_t> inputOrder(const ts::Graph& g, const torch::jit::Module& module) {
  std::vector<size_t> order(g.inputs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<std::string> names;
  stateDictNames(module, "", names);
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < names.size(); ++i) rank.emplace(names[i], i);
  auto key = [&](size_t i) {
    const std::string& p = g.input_param_names[i];
    if (p.empty()) return std::make_pair(size_t(0), i);
    auto it = rank.find(p);
    return std::make_pair(size_t(1), it == rank.end() ? names.size() + i : it->second);
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  return order;
}

// Computed constants above this size stay initializers (not inputs) rather than Constant nodes,
// so their bytes stream to the file or to external data like the weights'.
constexpr size_t kConstantNodeMaxBytes = size_t(1) << 20;

bool keepInitializersAsInputs(const ExportOptions& o) {
  // The seed's rule (as in torch.onnx 1.13): None means True, except with operator_export_type
  // ONNX, where it means False.
  if (o.keep_initializers_as_inputs) return *o.keep_initializers_as_inputs;
  return o.operator_export_type != OperatorExportType::Onnx;
}

}  // namespace

Result<std::vector<HostTensor>> Model::exampleInputs(const ExportOptions& options,
                                                     const std::vector<std::vector<int64_t>>& shapes) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl_->module, options, shapes));
  std::vector<at::Tensor> flat;
  for (const auto& v : args.values) flattenIValue(v, flat);
  std::vector<HostTensor> out;
  for (const auto& t : flat) out.push_back(hostTensorFromAt(t));
  return out;
}

Result<std::vector<NamedTensor>> Model::runReference(const ExportOptions& options,
                                                     const std::vector<std::vector<int64_t>>& shapes) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl_->module, options, shapes));
  c10::IValue result;
  try {
    TrainingGuard guard(impl_->module, options.training);
    torch::NoGradGuard no_grad;
    std::vector<c10::IValue> inputs = args.values;
    result = impl_->module.forward(inputs);
  } catch (const std::exception& e) {
    return Error("forward-failed", "the model fails on the example inputs: " + torchErrorMessage(e),
                 "check the input shapes and dtypes in args");
  }
  std::vector<at::Tensor> flat;
  flattenResult(result, flat);
  std::vector<NamedTensor> out;
  for (size_t i = 0; i < flat.size(); ++i) {
    std::string name = i < options.output_names.size() ? options.output_names[i] : "output_" + std::to_string(i);
    out.push_back({name, hostTensorFromAt(flat[i])});
  }
  return out;
}

Result<GraphView> Model::savedGraph() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  try {
    return savedGraphView(impl_->module);
  } catch (const std::exception& e) {
    return Error("frontend-failed", std::string("reading the saved forward graph failed: ") + torchErrorMessage(e));
  }
}

Result<GraphView> Model::inspect(const ExportOptions& options, const ProgressFn& progress,
                                 const CancelToken& cancel) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl_->module, options));
  OXPORT_ASSIGN(FrontendResult fr, runFrontend(impl_->module, args, options, progress, cancel));
  return tsGraphView(*fr.graph);
}

Result<ExportResult> Model::exportOnnx(const ExportOptions& options, const OutputTarget& out,
                                       const ProgressFn& progress, const CancelToken& cancel) const {
  auto errors = validateOptions(options);
  if (!errors.empty()) return Error(errors);
  if (out.file.empty() && !out.stream)
    return Error("no-output", "no output file was given", "pass -o OUT.onnx");

  std::lock_guard<std::mutex> lock(impl_->mutex);
  ExportResult result;
  ExportStats& stats = result.stats;
  auto t = Clock::now();

  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl_->module, options));
  OXPORT_ASSIGN(FrontendResult fr, runFrontend(impl_->module, args, options, progress, cancel));
  stats.phase_ms["passes+trace"] = msSince(t);
  stats.example_run = fr.example_run;
  ts::Graph& g = *fr.graph;
  for (auto& w : fr.warnings) result.diagnostics.push_back(w);
  if (impl_->info.kind == ModelKind::TracedModule && impl_->info.training &&
      options.training == TrainingMode::Eval) {
    Diagnostic w = makeWarning("traced-in-training-mode",
                               "the module was traced in training mode, so its trace has training behaviour "
                               "baked in (dropout, batch statistics); the ONNX model follows training=EVAL, "
                               "but libtorch's own run of this file (verify) keeps the training behaviour",
                               "trace the module after model.eval(), or export with training=PRESERVE or TRAINING");
    w.option = "training";
    result.diagnostics.push_back(w);
  }
  stats.torch_nodes = static_cast<int>(g.nodes.size());
  for (const auto* n : g.nodes) ++stats.torch_op_histogram[n->kind];
  result.torch_graph = tsGraphView(g);

  // ---- names and dynamic axes, checked against the real inputs and outputs
  const int n_user = fr.user_input_count;
  if (options.input_names.size() > static_cast<size_t>(g.inputs.size())) {
    Diagnostic d = makeError("too-many-input-names",
                             "input_names has " + std::to_string(options.input_names.size()) +
                                 " names but the exported graph has " + std::to_string(g.inputs.size()) + " inputs",
                             "give at most one name per tensor input (in the order of args, flattened)");
    d.option = "input_names";
    return Error(d);
  }

  if (cancel.cancelled()) return Error("cancelled", "the export was cancelled");
  if (progress) progress(Phase::Convert, 0.0, "converting");
  t = Clock::now();
  onnx_ir::Model model;
  model.producer_version = OXPORT_VERSION;
  model.opset_imports[""] = options.opset_version;
  model.ir_version = onnx_ir::irVersionForOpset(options.opset_version);
  convert::Settings settings;
  settings.opset = options.opset_version;
  settings.export_type = options.operator_export_type;
  settings.training = options.training;
  settings.model_training_flag = impl_->info.training;
  settings.verbose = options.verbose;
  convert::Context ctx(model, g, settings);

  std::set<std::string> used_names, param_inputs;
  const std::vector<size_t> input_order = inputOrder(g, impl_->module);
  for (size_t pos = 0; pos < input_order.size(); ++pos) {
    const size_t i = input_order[pos];
    const ts::Value* in = g.inputs[i];
    std::string name;
    if (pos < options.input_names.size()) {
      name = options.input_names[pos];
    } else {
      // A generated name (forward's argument name, or the parameter's state_dict name) never takes
      // a name the user gave to another input.
      name = !g.input_param_names[i].empty() ? g.input_param_names[i] : in->name;
      const std::string base = name;
      for (int k = 1; used_names.count(name) || std::find(options.input_names.begin(), options.input_names.end(),
                                                          name) != options.input_names.end();
           ++k)
        name = base + "_" + std::to_string(k);
    }
    if (!g.input_param_names[i].empty()) param_inputs.insert(name);
    ctx.bind(in, name);
    used_names.insert(name);
    onnx_ir::ValueInfo vi;
    vi.name = name;
    vi.dtype = in->meta.dtype;
    vi.has_shape = true;
    auto it = options.dynamic_axes.find(name);
    vi.shape = dimsFor(in->meta.shape, it == options.dynamic_axes.end() ? nullptr : &it->second, name);
    model.graph.inputs.push_back(vi);
  }
  (void)n_user;
  {
    std::vector<std::string> names;
    for (const auto& vi : model.graph.inputs) names.push_back(vi.name);
    const std::vector<DynamicSize> sizes = dynamicSizes(g, names, options);
    for (auto& d : findBakedSizes(g, sizes)) result.diagnostics.push_back(d);
    // A traced model's Python branches on sizes left nothing in the graph; its source may tell.
    if (!sizes.empty() && impl_->info.kind == ModelKind::TracedModule)
      for (auto& d : findSizeBranches(tracedUserFrames(impl_->module), sizes, impl_->info.path.parent_path()))
        result.diagnostics.push_back(d);
  }

  {
    std::vector<const ts::Node*> nodes(g.nodes.begin(), g.nodes.end());
    Status s = convert::convertNodes(ctx, nodes, result.diagnostics, &progress, &cancel);
    ctx.setCurrent(nullptr);
    if (!s.ok()) {
      // With ONNX, an op without a standard form is refused because of operator_export_type
      // (ONNX_FALLTHROUGH or ONNX_ATEN_FALLBACK would keep it): say so in the diagnostic.
      std::vector<Diagnostic> ds = s.error().diagnostics();
      if (options.operator_export_type == OperatorExportType::Onnx)
        for (auto& d : ds)
          if (d.option.empty() && (d.code == "unsupported-op" || d.code == "unsupported-form"))
            d.option = "operator_export_type";
      return Error(ds);
    }
  }

  // ---- outputs
  std::vector<std::string> out_names;
  for (const auto* o : g.outputs) {
    OXPORT_ASSIGN(auto names, flattenOutput(ctx, o));
    out_names.insert(out_names.end(), names.begin(), names.end());
  }
  if (options.output_names.size() > out_names.size()) {
    Diagnostic d = makeError("too-many-output-names",
                             "output_names has " + std::to_string(options.output_names.size()) +
                                 " names but the model has " + std::to_string(out_names.size()) + " outputs",
                             "give at most one name per output (tuples, lists and dicts are flattened)");
    d.option = "output_names";
    return Error(d);
  }
  {
    std::set<std::string> input_set, init_set, seen;
    for (const auto& in : model.graph.inputs) input_set.insert(in.name);
    for (const auto& init : model.graph.initializers) init_set.insert(init.name);
    for (size_t i = 0; i < out_names.size(); ++i) {
      std::string src = out_names[i];
      std::string want = i < options.output_names.size() ? options.output_names[i] : "output_" + std::to_string(i);
      if (i >= options.output_names.size()) {
        // Keep generated names clear of input names.
        while (used_names.count(want) || init_set.count(want)) want += "_";
      } else if (used_names.count(want) || init_set.count(want)) {
        Diagnostic d = makeError("output-name-taken",
                                 "output_names[" + std::to_string(i) + "] is '" + want + "', which is already the name of " +
                                     (init_set.count(want) ? "a weight (initializer)" : "a graph input"),
                                 "give the outputs names that no input or parameter has");
        d.option = "output_names";
        return Error(d);
      }
      if (input_set.count(src) || init_set.count(src) || seen.count(src) || used_names.count(want)) {
        ctx.setCurrent(nullptr);
        src = ctx.emit1("Identity", {src});
      }
      onnx_ir::renameTensor(model.graph, src, want);
      seen.insert(want);
      used_names.insert(want);
      const ts::Value* tv = nullptr;
      (void)tv;
      onnx_ir::ValueInfo vi;
      vi.name = want;
      out_names[i] = want;
      model.graph.outputs.push_back(vi);
    }
  }
  // Output dtypes and shapes: from the example run's metadata of the flattened outputs.
  std::vector<ts::TensorMeta> out_metas;
  {
    std::function<void(const ts::Value*)> collect = [&](const ts::Value* v) {
      if (v->type == ts::ValueType::Tensor) { out_metas.push_back(v->meta); return; }
      if (v->producer && (v->producer->kind == "prim::TupleConstruct" || v->producer->kind == "prim::ListConstruct")) {
        for (auto* e : v->producer->inputs) collect(e);
        return;
      }
      if (v->producer && v->producer->kind == "prim::DictConstruct") {
        for (size_t i = 1; i < v->producer->inputs.size(); i += 2) collect(v->producer->inputs[i]);
        return;
      }
      for (const auto& m : v->elem_meta) out_metas.push_back(m);
      ts::TensorMeta m;
      m.known = true;
      if (v->type == ts::ValueType::Int) { m.dtype = DType::Int64; out_metas.push_back(m); }
      if (v->type == ts::ValueType::Float) { m.dtype = DType::Float32; out_metas.push_back(m); }
      if (v->type == ts::ValueType::Bool) { m.dtype = DType::Bool; out_metas.push_back(m); }
    };
    for (const auto* o : g.outputs) collect(o);
    for (size_t i = 0; i < model.graph.outputs.size() && i < out_metas.size(); ++i) {
      auto& vi = model.graph.outputs[i];
      vi.dtype = out_metas[i].dtype;
      auto it = options.dynamic_axes.find(vi.name);
      if (it != options.dynamic_axes.end()) {
        vi.has_shape = true;
        vi.shape = dimsFor(out_metas[i].shape, &it->second, vi.name);
        // Axes not named dynamic are filled by shape inference below (static if it proves so).
        for (size_t k = 0; k < vi.shape.size(); ++k)
          if (!it->second.axes.count(static_cast<int64_t>(k))) vi.shape[k] = onnx_ir::Dim::unknown();
      }
    }
  }

  // dynamic_axes keys must name inputs or outputs
  {
    std::vector<Diagnostic> errs;
    std::set<std::string> valid;
    std::map<std::string, int> ranks;
    for (size_t i = 0; i < model.graph.inputs.size(); ++i) {
      valid.insert(model.graph.inputs[i].name);
      ranks[model.graph.inputs[i].name] = static_cast<int>(model.graph.inputs[i].shape.size());
    }
    for (size_t i = 0; i < model.graph.outputs.size(); ++i) {
      valid.insert(model.graph.outputs[i].name);
      if (i < out_metas.size() && out_metas[i].known)
        ranks[model.graph.outputs[i].name] = static_cast<int>(out_metas[i].shape.size());
    }
    for (const auto& [name, spec] : options.dynamic_axes) {
      if (!valid.count(name)) {
        std::string list;
        for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
        Diagnostic d = makeError("dynamic-axes-unknown-name",
                                 "dynamic_axes names '" + name + "', which is not an input or output name",
                                 "valid names: " + list + " (set input_names/output_names to name them)");
        d.option = "dynamic_axes." + name;
        errs.push_back(d);
        continue;
      }
      auto rit = ranks.find(name);
      if (rit != ranks.end()) {
        for (const auto& [axis, an] : spec.axes)
          if (axis >= rit->second) {
            Diagnostic d = makeError("dynamic-axes-out-of-range",
                                     "dynamic_axes." + name + " marks axis " + std::to_string(axis) + " but '" +
                                         name + "' has rank " + std::to_string(rit->second),
                                     "use axes 0 to " + std::to_string(rit->second - 1));
            d.option = "dynamic_axes." + name;
            errs.push_back(d);
          }
      }
    }
    if (!errs.empty()) return Error(errs);
  }
  // A name in input_names that is also a weight's (initializer's) name.
  {
    std::set<std::string> inits;
    for (const auto& init : model.graph.initializers) inits.insert(init.name);
    for (size_t k = 0; k < options.input_names.size(); ++k)
      if (inits.count(options.input_names[k])) {
        Diagnostic d = makeError("input-name-taken",
                                 "input_names[" + std::to_string(k) + "] is '" + options.input_names[k] +
                                     "', which is already the name of a weight (initializer)",
                                 "give the inputs names that no parameter of the model has");
        d.option = "input_names";
        return Error(d);
      }
  }
  stats.phase_ms["convert"] = msSince(t);
  for (auto& w : ctx.warnings()) result.diagnostics.push_back(w);

  // ATen nodes carry `overload_name` as torch.onnx 1.13 writes it: empty for the default overload.
  for (auto& n : model.graph.nodes)
    if (n.op_type == "ATen" && n.domain == "org.pytorch.aten" && !n.attr("overload_name"))
      n.attributes.push_back(convert::attrString("overload_name", ""));

  // ---- ONNX passes
  if (progress) progress(Phase::Optimize, 0.0, "optimizing");
  t = Clock::now();
  onnx_ir::eliminateIdentities(model.graph);
  // As torch.onnx 1.13 (its eval peephole): batch norm is folded into the conv only with EVAL, not
  // with PRESERVE of a module in eval mode; and only when the weights are in the file.
  if (options.training == TrainingMode::Eval && options.export_params) onnx_ir::foldBatchNormIntoConv(model.graph);
  onnx_ir::eliminateDeadNodes(model.graph);
  if (options.do_constant_folding) onnx_ir::deduplicateInitializers(model.graph);
  onnx_ir::removeUnusedInitializers(model.graph);
  // Parameters given as graph inputs (export_params=False) that nothing uses any more.
  {
    std::set<std::string> used;
    for (const auto& n : model.graph.nodes)
      for (const auto& i : n.inputs) used.insert(i);
    for (const auto& o : model.graph.outputs) used.insert(o.name);
    std::vector<onnx_ir::ValueInfo> kept;
    for (const auto& in : model.graph.inputs) {
      if (param_inputs.count(in.name) && !used.count(in.name)) continue;
      kept.push_back(in);
    }
    model.graph.inputs = std::move(kept);
  }
  // What the export computed is written as Constant nodes (big tensors stay initializers that
  // are not inputs); only the weights remain initializers that may be listed as inputs.
  onnx_ir::constantsAsNodes(model.graph, kConstantNodeMaxBytes);
  if (keepInitializersAsInputs(options)) {
    for (const auto& init : model.graph.initializers) {
      if (!init.weight) continue;
      onnx_ir::ValueInfo vi;
      vi.name = init.name;
      vi.dtype = init.tensor.dtype;
      vi.has_shape = true;
      for (auto d : init.tensor.shape) vi.shape.push_back(onnx_ir::Dim::fixed(d));
      model.graph.inputs.push_back(vi);
    }
  }
  // Opset imports for the custom domains used.
  {
    std::set<std::string> domains;
    for (const auto& n : model.graph.nodes)
      if (!n.domain.empty()) domains.insert(n.domain);
    for (const auto& d : domains) {
      auto it = options.custom_opsets.find(d);
      model.opset_imports[d] = it == options.custom_opsets.end() ? 1 : it->second;
    }
    for (const auto& [d, v] : options.custom_opsets)
      if (!domains.count(d)) {
        Diagnostic w = makeWarning("custom-opset-unused",
                                   "custom_opsets names domain '" + d + "', which no node of the model uses",
                                   "remove it from custom_opsets");
        w.option = "custom_opsets." + d;
        result.diagnostics.push_back(w);
      }
  }
  if (options.verbose) {
    std::ostringstream doc;
    doc << "exported by oxport " << OXPORT_VERSION << " from " << impl_->info.path.filename().string();
    model.graph.doc_string = doc.str();
    result.verbose_log = g.toText();
  }
  // Output shapes that dynamic_axes did not fix come from ONNX shape inference. What it leaves
  // open is the example size when nothing is dynamic, and a named symbolic dimension otherwise.
  {
    Status s = onnx_ir::inferOutputShapes(model);
    if (!s.ok()) result.diagnostics.push_back(makeWarning("shape-inference", s.error().first().message));
    const bool any_dynamic = !options.dynamic_axes.empty();
    for (size_t i = 0; i < model.graph.outputs.size(); ++i) {
      auto& vi = model.graph.outputs[i];
      const ts::TensorMeta* m = i < out_metas.size() ? &out_metas[i] : nullptr;
      if (!vi.has_shape && m && m->known) {
        vi.has_shape = true;
        vi.shape.assign(m->shape.size(), onnx_ir::Dim::unknown());
      }
      for (size_t k = 0; k < vi.shape.size(); ++k) {
        auto& d = vi.shape[k];
        if (d.value >= 0 || !d.param.empty()) continue;
        if (!any_dynamic && m && k < m->shape.size()) d.value = m->shape[k];
        else d.param = vi.name + "_dim_" + std::to_string(k);
      }
    }
  }
  stats.phase_ms["optimize"] = msSince(t);
  if (cancel.cancelled()) return Error("cancelled", "the export was cancelled");

  // ---- write
  if (progress) progress(Phase::Serialize, 0.0, "writing");
  if (cancel.cancelled()) return Error("cancelled", "the export was cancelled");
  t = Clock::now();
  onnx_ir::WriteSettings ws;
  // Test-only: a lower external-data threshold (bytes), so tests need not write 2 GiB.
  if (const char* th = std::getenv("OXPORT_EXTERNAL_DATA_THRESHOLD")) {
    char* end = nullptr;
    long long v = std::strtoll(th, &end, 10);
    if (end && *end == '\0' && v > 0) ws.external_data_threshold = v;
  }
  OXPORT_ASSIGN(onnx_ir::WriteReport wr, onnx_ir::writeModel(model, out, ws));
  stats.phase_ms["serialize+check"] = msSince(t);
  for (auto& w : wr.warnings) result.diagnostics.push_back(w);
  stats.checker_passed = wr.checker_passed;
  stats.shape_inference_passed = wr.shape_inference_passed;
  stats.file_bytes = wr.bytes;
  stats.external_data = wr.external_data;
  stats.onnx_nodes = static_cast<int>(model.graph.nodes.size());
  for (const auto& n : model.graph.nodes) ++stats.onnx_op_histogram[n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type];
  stats.initializers = static_cast<int>(model.graph.initializers.size());
  for (const auto& init : model.graph.initializers) stats.initializer_bytes += static_cast<int64_t>(init.tensor.nbytes);
  for (const auto& in : model.graph.inputs) result.input_names.push_back(in.name);
  for (const auto& o : model.graph.outputs) result.output_names.push_back(o.name);
  // The preview shows every value's dtype and shape: add what shape inference found (the file
  // itself keeps only the value_info the passes wrote).
  {
    std::set<std::string> known;
    for (const auto& vi : model.graph.value_info) known.insert(vi.name);
    for (auto& vi : wr.inferred_value_info)
      if (known.insert(vi.name).second) model.graph.value_info.push_back(std::move(vi));
  }
  result.onnx_graph = onnx_ir::toGraphView(model.graph);
  result.output = out.file;
  if (progress) progress(Phase::Check, 1.0, "done");
  return result;
}

}  // namespace oxport
