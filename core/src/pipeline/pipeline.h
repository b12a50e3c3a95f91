// Private: the export pipeline. Model::exportOnnx is one ordered list of named passes over one
// ExportState, run by runPipeline, which checks cancellation between passes, reports progress by
// stage and times each pass for the report (stats.pass_ms, and phase_ms per stage). The list in
// passes.def is the catalogue: `oxport export --list-passes` prints it, `--print-after PASS`
// prints the IR a pass leaves. A new stage of the export is a new pass in that list.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "convert/context.h"
#include "onnx/onnx_ir.h"
#include "oxport/model.h"
#include "frontend/frontend.h"
#include "pipeline/model_impl.h"

namespace oxport {

// Everything the passes read and write. Each pass fills in what the ones after it need.
struct ExportState {
  ExportState(const Model::Impl& impl, const ExportOptions& options, const OutputTarget& out,
              const ProgressFn& progress, const CancelToken& cancel)
      : impl(impl), options(options), out(out), progress(progress), cancel(cancel) {}

  // Given.
  const Model::Impl& impl;
  const ExportOptions& options;
  const OutputTarget& out;
  const ProgressFn& progress;
  const CancelToken& cancel;

  // The TorchScript side: forward's arguments, then the frontend's graph (ts IR).
  ExampleArgs args;
  FrontendResult frontend;

  // The ONNX side: the model being built, and the converters' context over both graphs.
  onnx_ir::Model model;
  std::unique_ptr<convert::Context> ctx;
  std::set<std::string> used_names;    // graph input and output names given so far
  std::set<std::string> param_inputs;  // inputs that are parameters (export_params=False)
  std::vector<ts::TensorMeta> out_metas;  // the flattened outputs' example dtypes and shapes

  ExportResult result;
};

// Which IR a pass leaves behind (what --print-after prints).
enum class PassIr { None, TorchScript, Onnx };

struct ExportPass {
  const char* name;     // "fold-batchnorm"
  const char* stage;    // the report's phase: "passes+trace", "convert", "optimize", "serialize+check"
  const char* summary;  // one line, for --list-passes
  PassIr ir;
  Status (*run)(ExportState&);
};

// The export, in order.
const std::vector<ExportPass>& exportPipeline();

// Runs every pass of exportPipeline() on `s`. The first failing pass ends the run with its error.
Status runPipeline(ExportState& s, const PassTrace* trace);

// ---- the passes (pass_frontend.cpp, pass_convert.cpp, pass_onnx.cpp, pass_torch_map.cpp), in
// the list of passes.def
#define OXPORT_PASS(name, stage, ir, function, summary) Status function(ExportState& s);
#include "pipeline/passes.def"
#undef OXPORT_PASS

// Shared by exporter.cpp and the passes.
GraphView tsGraphView(const ts::Graph& g);

}  // namespace oxport
