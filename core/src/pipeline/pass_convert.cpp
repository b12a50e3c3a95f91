// The pipeline's conversion passes: graph inputs, the converters, graph outputs.
#include <algorithm>
#include <functional>
#include <map>

#include "convert/driver.h"
#include "frontend/diagnose.h"
#include "onnx/passes.h"
#include "pipeline/pipeline.h"

namespace oxport {

namespace {

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
    if (ctx.isSequence(v)) {
      std::string msg = "the model returns list %" + v->name +
                        ", whose length depends on the inputs (it is built in a loop or an if: an ONNX sequence); "
                        "oxport writes a list output as plain tensors, one per element, which needs a length fixed "
                        "at export time";
      std::string hint = "return torch.stack(list) (or torch.cat) instead, with the length as a second output if "
                         "the caller needs it; or export with graph_mode \"trace\" (--graph-mode trace), which "
                         "fixes the length the example inputs give";
      return Error(v->producer ? v->producer->error("unsupported-output", msg, hint)
                               : makeError("unsupported-output", msg, hint));
    }
    OXPORT_ASSIGN(auto names, ctx.tensorList(v));
    return names;
  }
  if (v->type == ts::ValueType::Int || v->type == ts::ValueType::Float || v->type == ts::ValueType::Bool) {
    OXPORT_ASSIGN(std::string s, ctx.tensor(v));
    out.push_back(s);
    return out;
  }
  // None in a returned tuple (scripted GoogLeNet's aux logits in eval, an Optional left empty)
  // is no output, as libtorch's flattened result has no tensor there either.
  if (v->isNone()) return out;
  return Error("unsupported-output", "the model returns a value of type " + v->typeString() +
                                         ", which cannot be an ONNX output",
               "return tensors, or tuples/lists/dicts of tensors");
}

// The flattened outputs' example dtypes and shapes (numbers become 0-d tensors).
std::vector<ts::TensorMeta> outputMetas(const ts::Graph& g) {
  std::vector<ts::TensorMeta> out;
  std::function<void(const ts::Value*)> collect = [&](const ts::Value* v) {
    if (v->type == ts::ValueType::Tensor) { out.push_back(v->meta); return; }
    if (v->producer && (v->producer->kind == "prim::TupleConstruct" || v->producer->kind == "prim::ListConstruct")) {
      for (auto* e : v->producer->inputs) collect(e);
      return;
    }
    if (v->producer && v->producer->kind == "prim::DictConstruct") {
      for (size_t i = 1; i < v->producer->inputs.size(); i += 2) collect(v->producer->inputs[i]);
      return;
    }
    for (const auto& m : v->elem_meta) out.push_back(m);
    ts::TensorMeta m;
    m.known = true;
    if (v->type == ts::ValueType::Int) { m.dtype = DType::Int64; out.push_back(m); }
    if (v->type == ts::ValueType::Float) { m.dtype = DType::Float32; out.push_back(m); }
    if (v->type == ts::ValueType::Bool) { m.dtype = DType::Bool; out.push_back(m); }
  };
  for (const auto* o : g.outputs) collect(o);
  return out;
}

// dynamic_axes keys must name inputs or outputs, and their axes must exist.
Status checkDynamicAxes(const ExportState& s) {
  std::vector<Diagnostic> errs;
  std::set<std::string> valid;
  std::map<std::string, int> ranks;
  const auto& graph = s.model.graph;
  for (const auto& in : graph.inputs) {
    valid.insert(in.name);
    ranks[in.name] = static_cast<int>(in.shape.size());
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    valid.insert(graph.outputs[i].name);
    if (i < s.out_metas.size() && s.out_metas[i].known)
      ranks[graph.outputs[i].name] = static_cast<int>(s.out_metas[i].shape.size());
  }
  for (const auto& [name, spec] : s.options.dynamic_axes) {
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
    if (rit == ranks.end()) continue;
    for (const auto& [axis, an] : spec.axes)
      if (axis >= rit->second) {
        Diagnostic d = makeError("dynamic-axes-out-of-range",
                                 "dynamic_axes." + name + " marks axis " + std::to_string(axis) + " but '" + name +
                                     "' has rank " + std::to_string(rit->second),
                                 "use axes 0 to " + std::to_string(rit->second - 1));
        d.option = "dynamic_axes." + name;
        errs.push_back(d);
      }
  }
  if (!errs.empty()) return Error(errs);
  return okStatus();
}

}  // namespace

Status passGraphInputs(ExportState& s) {
  ts::Graph& g = *s.frontend.graph;
  const ExportOptions& options = s.options;
  s.model.producer_version = OXPORT_VERSION;
  s.model.opset_imports[""] = options.opset_version;
  s.model.ir_version = onnx_ir::irVersionForOpset(options.opset_version);
  convert::Settings settings;
  settings.opset = options.opset_version;
  settings.export_type = options.operator_export_type;
  settings.training = options.training;
  settings.model_training_flag = s.impl.info.training;
  settings.verbose = options.verbose;
  s.ctx = std::make_unique<convert::Context>(s.model, g, settings);

  const std::vector<size_t> input_order = inputOrder(g, s.impl.module);
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
      for (int k = 1; s.used_names.count(name) || std::find(options.input_names.begin(), options.input_names.end(),
                                                            name) != options.input_names.end();
           ++k)
        name = base + "_" + std::to_string(k);
    }
    if (!g.input_param_names[i].empty()) s.param_inputs.insert(name);
    s.ctx->bind(in, name);
    s.used_names.insert(name);
    onnx_ir::ValueInfo vi;
    vi.name = name;
    vi.dtype = in->meta.dtype;
    vi.has_shape = true;
    auto it = options.dynamic_axes.find(name);
    vi.shape = dimsFor(in->meta.shape, it == options.dynamic_axes.end() ? nullptr : &it->second, name);
    s.model.graph.inputs.push_back(vi);
  }
  std::vector<std::string> names;
  for (const auto& vi : s.model.graph.inputs) names.push_back(vi.name);
  const std::vector<DynamicSize> sizes = dynamicSizes(g, names, options);
  const bool recorded = s.impl.info.kind == ModelKind::TracedModule || options.graph_mode == GraphMode::Trace;
  for (auto& d : findBakedSizes(g, sizes, recorded, s.frontend.recorded_literals)) s.result.diagnostics.push_back(d);
  // A traced model's Python branches on sizes left nothing in the graph; its source may tell.
  if (!sizes.empty() && s.impl.info.kind == ModelKind::TracedModule)
    for (auto& d : findSizeBranches(tracedUserFrames(s.impl.module), sizes, s.impl.info.path.parent_path()))
      s.result.diagnostics.push_back(d);
  return okStatus();
}

Status passConvert(ExportState& s) {
  const ts::Graph& g = *s.frontend.graph;
  std::vector<const ts::Node*> nodes(g.nodes.begin(), g.nodes.end());
  Status st = convert::convertNodes(*s.ctx, nodes, s.result.diagnostics, &s.progress, &s.cancel);
  s.ctx->setCurrent(nullptr);
  if (st.ok()) return okStatus();
  // With ONNX, an op without a standard form is refused because of operator_export_type
  // (ONNX_FALLTHROUGH or ONNX_ATEN_FALLBACK would keep it): say so in the diagnostic.
  std::vector<Diagnostic> ds = st.error().diagnostics();
  if (s.options.operator_export_type == OperatorExportType::Onnx)
    for (auto& d : ds)
      if (d.option.empty() && (d.code == "unsupported-op" || d.code == "unsupported-form"))
        d.option = "operator_export_type";
  return Error(ds);
}

Status passGraphOutputs(ExportState& s) {
  const ts::Graph& g = *s.frontend.graph;
  const ExportOptions& options = s.options;
  auto& graph = s.model.graph;
  convert::Context& ctx = *s.ctx;
  std::vector<std::string> out_names;
  for (const auto* o : g.outputs) {
    OXPORT_ASSIGN(auto names, flattenOutput(ctx, o));
    out_names.insert(out_names.end(), names.begin(), names.end());
  }
  if (out_names.empty())
    return Error("unsupported-output", "the model returns nothing an ONNX file can hold (None, or only Nones)",
                 "return the tensors the caller needs from forward()");
  if (options.output_names.size() > out_names.size()) {
    Diagnostic d = makeError("too-many-output-names",
                             "output_names has " + std::to_string(options.output_names.size()) +
                                 " names but the model has " + std::to_string(out_names.size()) + " outputs",
                             "give at most one name per output (tuples, lists and dicts are flattened)");
    d.option = "output_names";
    return Error(d);
  }
  std::set<std::string> input_set, init_set, seen;
  std::map<std::string, std::string> renamed;  // a tensor made an output: its name before -> after
  for (const auto& in : graph.inputs) input_set.insert(in.name);
  for (const auto& init : graph.initializers) init_set.insert(init.name);
  for (size_t i = 0; i < out_names.size(); ++i) {
    std::string src = out_names[i];
    std::string want = i < options.output_names.size() ? options.output_names[i] : "output_" + std::to_string(i);
    if (i >= options.output_names.size()) {
      // Keep generated names clear of input names.
      while (s.used_names.count(want) || init_set.count(want)) want += "_";
    } else if (s.used_names.count(want) || init_set.count(want)) {
      Diagnostic d = makeError("output-name-taken",
                               "output_names[" + std::to_string(i) + "] is '" + want + "', which is already the name of " +
                                   (init_set.count(want) ? "a weight (initializer)" : "a graph input"),
                               "give the outputs names that no input or parameter has");
      d.option = "output_names";
      return Error(d);
    }
    // The same tensor returned twice (`return y, y`) was renamed by its first output: the second
    // copies it under that name.
    const std::string original = src;
    if (auto r = renamed.find(src); r != renamed.end()) src = r->second;
    const bool copy = input_set.count(src) || init_set.count(src) || seen.count(src) || s.used_names.count(want);
    if (copy) {
      ctx.setCurrent(nullptr);
      src = ctx.emit1("Identity", {src});
    }
    onnx_ir::renameTensor(graph, src, want);
    if (!copy) renamed[original] = want;
    seen.insert(want);
    s.used_names.insert(want);
    onnx_ir::ValueInfo vi;
    vi.name = want;
    graph.outputs.push_back(vi);
  }
  // Output dtypes and shapes: from the example run's metadata of the flattened outputs.
  s.out_metas = outputMetas(g);
  for (size_t i = 0; i < s.out_metas.size(); ++i)
    if (s.out_metas[i].complex)
      return Error("complex-value",
                   "output " + std::to_string(i) + " of the model is a complex tensor (" +
                       s.out_metas[i].toString() + "); ONNX and ONNX Runtime have no complex tensors to return",
                   "return torch.view_as_real(x) (a trailing axis of 2: real, imag), or x.abs() / x.angle()");
  for (size_t i = 0; i < graph.outputs.size() && i < s.out_metas.size(); ++i) {
    auto& vi = graph.outputs[i];
    vi.dtype = s.out_metas[i].dtype;
    auto it = options.dynamic_axes.find(vi.name);
    if (it != options.dynamic_axes.end()) {
      vi.has_shape = true;
      vi.shape = dimsFor(s.out_metas[i].shape, &it->second, vi.name);
      // Axes not named dynamic are filled by shape inference later (static if it proves so).
      for (size_t k = 0; k < vi.shape.size(); ++k)
        if (!it->second.axes.count(static_cast<int64_t>(k))) vi.shape[k] = onnx_ir::Dim::unknown();
    }
  }
  OXPORT_TRY(checkDynamicAxes(s));
  // A name in input_names that is also a weight's (initializer's) name.
  std::set<std::string> inits;
  for (const auto& init : graph.initializers) inits.insert(init.name);
  for (size_t k = 0; k < options.input_names.size(); ++k)
    if (inits.count(options.input_names[k])) {
      Diagnostic d = makeError("input-name-taken",
                               "input_names[" + std::to_string(k) + "] is '" + options.input_names[k] +
                                   "', which is already the name of a weight (initializer)",
                               "give the inputs names that no parameter of the model has");
      d.option = "input_names";
      return Error(d);
    }
  for (auto& w : ctx.warnings()) s.result.diagnostics.push_back(w);
  return okStatus();
}

}  // namespace oxport
