// The pipeline's ONNX passes, after conversion, and the write.
#include <chrono>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <thread>

#include "convert/util.h"
#include "onnx/legalize_types.h"
#include "onnx/passes.h"
#include "onnx/writer.h"
#include "pipeline/pipeline.h"

namespace oxport {

namespace {

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

Status passAtenOverloadNames(ExportState& s) {
  // ATen nodes carry `overload_name` as torch.onnx 1.13 writes it: empty for the default overload.
  for (auto& n : s.model.graph.nodes)
    if (n.op_type == "ATen" && n.domain == "org.pytorch.aten" && !n.attr("overload_name"))
      n.attributes.push_back(convert::attrString("overload_name", ""));
  return okStatus();
}

Status passEliminateIdentities(ExportState& s) {
  onnx_ir::eliminateIdentities(s.model.graph);
  return okStatus();
}

Status passFoldConstantCasts(ExportState& s) {
  if (s.options.do_constant_folding) onnx_ir::foldConstantCasts(s.model.graph);
  return okStatus();
}

Status passEliminateNoops(ExportState& s) {
  onnx_ir::eliminateNoops(s.model.graph);
  return okStatus();
}

Status passGuardCastsToBool(ExportState& s) {
  onnx_ir::guardCastsToBool(s.model.graph);
  return okStatus();
}

Status passFoldBatchNorm(ExportState& s) {
  // As torch.onnx 1.13 (its eval peephole): batch norm is folded into the conv only with EVAL, not
  // with PRESERVE of a module in eval mode; and only when the weights are in the file.
  if (s.options.training == TrainingMode::Eval && s.options.export_params) onnx_ir::foldBatchNormIntoConv(s.model.graph);
  return okStatus();
}

Status passDeadCode(ExportState& s) {
  onnx_ir::eliminateDeadNodes(s.model.graph);
  return okStatus();
}

Status passLegalizeTypes(ExportState& s) {
  auto done = onnx_ir::legalizeTypes(s.model);
  if (!done.ok()) {
    if (done.error().code() == "opset-too-old") return done.error();
    s.result.diagnostics.push_back(makeWarning("shape-inference", done.error().first().message));
    return okStatus();
  }
  for (const auto& op : *done) {
    const std::string what = std::to_string(op.count) + " " + op.op_type + " node(s) compute in " + op.to +
                             " between Casts: ONNX opset " + std::to_string(s.options.opset_version) +
                             " (or ONNX Runtime) has no " + op.op_type + " for " + op.from +
                             "; the values around it stay " + op.from;
    const std::string hint = "a newer opset may accept " + op.from + " for " + op.op_type;
    Diagnostic d = op.to == "int32" ? makeWarning("computed-in-int32", what, hint)
                                    : makeWarning("computed-in-float32", what, hint);
    d.severity = Severity::Note;
    s.result.diagnostics.push_back(std::move(d));
  }
  return okStatus();
}

Status passDedupInitializers(ExportState& s) {
  if (s.options.do_constant_folding && onnx_ir::deduplicateInitializers(s.model.graph, s.cancel) < 0)
    return Error("cancelled", "the export was cancelled");
  return okStatus();
}

Status passUnusedInitializers(ExportState& s) {
  onnx_ir::removeUnusedInitializers(s.model.graph);
  return okStatus();
}

Status passUnusedParamInputs(ExportState& s) {
  auto& graph = s.model.graph;
  std::set<std::string> used;
  for (const auto& n : graph.nodes)
    for (const auto& i : n.inputs) used.insert(i);
  for (const auto& o : graph.outputs) used.insert(o.name);
  std::vector<onnx_ir::ValueInfo> kept;
  for (const auto& in : graph.inputs) {
    if (s.param_inputs.count(in.name) && !used.count(in.name)) continue;
    kept.push_back(in);
  }
  graph.inputs = std::move(kept);
  return okStatus();
}

Status passConstantsAsNodes(ExportState& s) {
  onnx_ir::constantsAsNodes(s.model.graph, kConstantNodeMaxBytes);
  return okStatus();
}

Status passWeightsAsInputs(ExportState& s) {
  if (!keepInitializersAsInputs(s.options)) return okStatus();
  auto& graph = s.model.graph;
  for (const auto& init : graph.initializers) {
    if (!init.weight) continue;
    onnx_ir::ValueInfo vi;
    vi.name = init.name;
    vi.dtype = init.tensor.dtype;
    vi.has_shape = true;
    for (auto d : init.tensor.shape) vi.shape.push_back(onnx_ir::Dim::fixed(d));
    graph.inputs.push_back(vi);
  }
  return okStatus();
}

Status passOpsetImports(ExportState& s) {
  // Nodes inside If branches and Loop bodies count too.
  std::set<std::string> domains;
  std::function<void(const onnx_ir::Graph&)> collect = [&](const onnx_ir::Graph& g) {
    for (const auto& n : g.nodes) {
      if (!n.domain.empty()) domains.insert(n.domain);
      for (const auto& a : n.attributes)
        if (const auto* sg = std::get_if<std::shared_ptr<onnx_ir::Graph>>(&a.value); sg && *sg) collect(**sg);
    }
  };
  collect(s.model.graph);
  for (const auto& d : domains) {
    auto it = s.options.custom_opsets.find(d);
    s.model.opset_imports[d] = it == s.options.custom_opsets.end() ? 1 : it->second;
  }
  for (const auto& [d, v] : s.options.custom_opsets)
    if (!domains.count(d)) {
      Diagnostic w = makeWarning("custom-opset-unused",
                                 "custom_opsets names domain '" + d + "', which no node of the model uses",
                                 "remove it from custom_opsets");
      w.option = "custom_opsets." + d;
      s.result.diagnostics.push_back(w);
    }
  return okStatus();
}

Status passDocString(ExportState& s) {
  if (!s.options.verbose) return okStatus();
  std::ostringstream doc;
  doc << "exported by oxport " << OXPORT_VERSION << " from " << s.impl.info.path.filename().string();
  s.model.graph.doc_string = doc.str();
  s.result.verbose_log = s.frontend.graph->toText();
  return okStatus();
}

Status passOutputShapes(ExportState& s) {
  // Output shapes that dynamic_axes did not fix come from ONNX shape inference. What it leaves
  // open is the example size when nothing is dynamic, and a named symbolic dimension otherwise.
  Status st = onnx_ir::inferOutputShapes(s.model);
  if (!st.ok()) s.result.diagnostics.push_back(makeWarning("shape-inference", st.error().first().message));
  const bool any_dynamic = !s.options.dynamic_axes.empty();
  auto& outputs = s.model.graph.outputs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto& vi = outputs[i];
    const ts::TensorMeta* m = i < s.out_metas.size() ? &s.out_metas[i] : nullptr;
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
  return okStatus();
}

Status passWrite(ExportState& s) {
  onnx_ir::WriteSettings ws;
  // Test-only: a lower external-data threshold (bytes), so tests need not write 2 GiB.
  if (const char* th = std::getenv("OXPORT_EXTERNAL_DATA_THRESHOLD")) {
    char* end = nullptr;
    long long v = std::strtoll(th, &end, 10);
    if (end && *end == '\0' && v > 0) ws.external_data_threshold = v;
  }
  ws.cancel = s.cancel;
  ws.progress = s.progress;
  // Test-only: a pause (milliseconds) after each block of weights written, so that a test can
  // cancel a write of a small model while it runs.
  if (const char* d = std::getenv("OXPORT_TEST_WRITE_BLOCK_DELAY_MS")) {
    const long ms = std::strtol(d, nullptr, 10);
    if (ms > 0)
      ws.progress = [ms, progress = s.progress](Phase phase, double fraction, const std::string& message) {
        if (progress) progress(phase, fraction, message);
        if (phase == Phase::Serialize && fraction > 0.0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      };
  }
  OXPORT_ASSIGN(onnx_ir::WriteReport wr, onnx_ir::writeModel(s.model, s.out, ws));
  ExportResult& result = s.result;
  ExportStats& stats = result.stats;
  const auto& graph = s.model.graph;
  for (auto& w : wr.warnings) result.diagnostics.push_back(w);
  stats.checker_passed = wr.checker_passed;
  stats.shape_inference_passed = wr.shape_inference_passed;
  stats.file_bytes = wr.bytes;
  stats.external_data = wr.external_data;
  stats.onnx_nodes = static_cast<int>(graph.nodes.size());
  for (const auto& n : graph.nodes) ++stats.onnx_op_histogram[n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type];
  stats.initializers = static_cast<int>(graph.initializers.size());
  for (const auto& init : graph.initializers) stats.initializer_bytes += static_cast<int64_t>(init.tensor.nbytes);
  for (const auto& in : graph.inputs) result.input_names.push_back(in.name);
  for (const auto& o : graph.outputs) result.output_names.push_back(o.name);
  // The preview shows every value's dtype and shape: what shape inference found (written into
  // the file too, see WriteSettings::record_value_info).
  std::set<std::string> known;
  for (const auto& vi : s.model.graph.value_info) known.insert(vi.name);
  for (auto& vi : wr.inferred_value_info)
    if (known.insert(vi.name).second) s.model.graph.value_info.push_back(std::move(vi));
  if (s.out.graph_views) result.onnx_graph = onnx_ir::toGraphView(graph);
  result.output = s.out.file;
  return okStatus();
}

}  // namespace oxport
