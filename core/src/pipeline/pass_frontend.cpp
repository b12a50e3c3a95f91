// The pipeline's TorchScript passes: options, forward's arguments, the frontend, checks on its graph.
#include "pipeline/pipeline.h"

namespace oxport {

Status passValidateOptions(ExportState& s) {
  auto errors = validateOptions(s.options);
  if (!errors.empty()) return Error(errors);
  if (s.out.file.empty() && !s.out.stream) return Error("no-output", "no output file was given", "pass -o OUT.onnx");
  return okStatus();
}

Status passExampleArgs(ExportState& s) {
  OXPORT_ASSIGN(s.args, buildExampleArgs(s.impl.module, s.options));
  return okStatus();
}

Status passFrontend(ExportState& s) {
  OXPORT_ASSIGN(s.frontend, runFrontend(s.impl.module, s.args, s.options, s.progress, s.cancel));
  s.result.stats.example_run = s.frontend.example_run;
  for (auto& w : s.frontend.warnings) s.result.diagnostics.push_back(w);
  return okStatus();
}

Status passTorchChecks(ExportState& s) {
  const ts::Graph& g = *s.frontend.graph;
  if (s.impl.info.kind == ModelKind::TracedModule && s.impl.info.training && s.options.training == TrainingMode::Eval) {
    Diagnostic w = makeWarning("traced-in-training-mode",
                               "the module was traced in training mode, so its trace has training behaviour "
                               "baked in (dropout, batch statistics); the ONNX model follows training=EVAL, "
                               "but libtorch's own run of this file (verify) keeps the training behaviour",
                               "trace the module after model.eval(), or export with training=PRESERVE or TRAINING");
    w.option = "training";
    s.result.diagnostics.push_back(w);
  }
  s.result.stats.torch_nodes = static_cast<int>(g.nodes.size());
  for (const auto* n : g.nodes) ++s.result.stats.torch_op_histogram[n->kind];
  if (s.out.graph_views) s.result.torch_graph = tsGraphView(g);
  if (s.options.input_names.size() > static_cast<size_t>(g.inputs.size())) {
    Diagnostic d = makeError("too-many-input-names",
                             "input_names has " + std::to_string(s.options.input_names.size()) +
                                 " names but the exported graph has " + std::to_string(g.inputs.size()) + " inputs",
                             "give at most one name per tensor input (in the order of args, flattened)");
    d.option = "input_names";
    return Error(d);
  }
  return okStatus();
}

}  // namespace oxport
