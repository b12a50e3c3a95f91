// The export pipeline: the ordered list of passes and the driver that runs them.
#include "pipeline/pipeline.h"

#include <chrono>

namespace oxport {

const std::vector<ExportPass>& exportPipeline() {
  static const std::vector<ExportPass> passes = {
      // ---- the TorchScript side
      {"validate-options", "passes+trace", "check the options on their own (opset, names, dynamic_axes, ...)",
       PassIr::None, passValidateOptions},
      {"example-args", "passes+trace", "build forward's arguments: args, then kwargs by name, then defaults and None",
       PassIr::None, passExampleArgs},
      {"frontend", "passes+trace",
       "inline, bake non-tensor arguments, run the graph on the example inputs (folding what does not depend "
       "on them), lower to oxport's TorchScript IR",
       PassIr::TorchScript, passFrontend},
      {"torch-checks", "passes+trace", "warn about a trace made in training mode; check input_names against the inputs",
       PassIr::TorchScript, passTorchChecks},
      // ---- conversion
      {"graph-inputs", "convert",
       "name the graph inputs (input_names, then forward's argument names), give them dynamic_axes, "
       "warn about sizes baked into the graph",
       PassIr::Onnx, passGraphInputs},
      {"convert", "convert", "convert every TorchScript node with the registry's converter for the opset",
       PassIr::Onnx, passConvert},
      {"graph-outputs", "convert",
       "flatten and name the outputs (output_names), type them, check dynamic_axes and names",
       PassIr::Onnx, passGraphOutputs},
      // ---- ONNX passes
      {"aten-overload-names", "optimize", "give ATen fallback nodes their overload_name, as torch.onnx writes it",
       PassIr::Onnx, passAtenOverloadNames},
      {"eliminate-identity", "optimize", "remove Identity nodes that do not produce a graph output",
       PassIr::Onnx, passEliminateIdentities},
      {"fold-constant-casts", "optimize",
       "cast small computed constants at export time (x * 2 gets a float 2, not a Cast of an int64 2; "
       "do_constant_folding)",
       PassIr::Onnx, passFoldConstantCasts},
      {"eliminate-noops", "optimize", "remove x + 0, x - 0, x * 1 and x / 1 with a 0-d constant; write a floating 1 / x as Reciprocal", PassIr::Onnx,
       passEliminateNoops},
      {"fold-batchnorm", "optimize",
       "fold inference BatchNormalization into the preceding Conv (training EVAL with the weights exported)",
       PassIr::Onnx, passFoldBatchNorm},
      {"dead-code", "optimize", "remove nodes whose outputs nothing uses", PassIr::Onnx, passDeadCode},
      {"legalize-types", "optimize",
       "run ops that the opset has no float16/bfloat16 form of in float32 between Casts",
       PassIr::Onnx, passLegalizeTypes},
      {"dedup-initializers", "optimize", "keep identical initializers once (do_constant_folding)", PassIr::Onnx,
       passDedupInitializers},
      {"unused-initializers", "optimize", "remove initializers nothing uses", PassIr::Onnx, passUnusedInitializers},
      {"unused-param-inputs", "optimize", "remove parameters given as inputs (export_params=False) that nothing uses",
       PassIr::Onnx, passUnusedParamInputs},
      {"constants-as-nodes", "optimize",
       "write what the export computed (shapes, scales, axes, pads) as Constant nodes; only weights stay initializers",
       PassIr::Onnx, passConstantsAsNodes},
      {"weights-as-inputs", "optimize", "list the weights as graph inputs (keep_initializers_as_inputs)", PassIr::Onnx,
       passWeightsAsInputs},
      {"opset-imports", "optimize", "import every custom domain a node uses (custom_opsets, else version 1)",
       PassIr::Onnx, passOpsetImports},
      {"doc-string", "optimize", "describe the export in the graph's doc_string (verbose)", PassIr::None,
       passDocString},
      {"output-shapes", "optimize", "fill the output shapes dynamic_axes left open from ONNX shape inference",
       PassIr::Onnx, passOutputShapes},
      {"torch-map", "optimize",
       "record which TorchScript node and value each ONNX node and value comes from (metadata oxport.torch_map, "
       "for verify --localize)",
       PassIr::None, passTorchMap},
      // ---- the file
      {"write", "serialize+check",
       "check (checker, strict shape inference), record value_info, write atomically (external data past 2 GiB)",
       PassIr::None, passWrite},
  };
  return passes;
}

std::vector<PassDescription> exportPasses() {
  std::vector<PassDescription> out;
  for (const auto& p : exportPipeline()) out.push_back({p.name, p.stage, p.summary});
  return out;
}

namespace {

Phase phaseOf(const std::string& stage) {
  if (stage == "convert") return Phase::Convert;
  if (stage == "optimize") return Phase::Optimize;
  if (stage == "serialize+check") return Phase::Serialize;
  return Phase::Passes;
}

const char* startMessage(const std::string& stage) {
  if (stage == "convert") return "converting";
  if (stage == "optimize") return "optimizing";
  if (stage == "serialize+check") return "writing";
  return "";
}

std::string irText(const ExportState& s, PassIr ir) {
  switch (ir) {
    case PassIr::TorchScript: return s.frontend.graph ? s.frontend.graph->toText() : std::string();
    case PassIr::Onnx: return onnx_ir::toText(s.model);
    case PassIr::None: break;
  }
  return s.model.graph.nodes.empty() ? (s.frontend.graph ? s.frontend.graph->toText() : std::string())
                                     : onnx_ir::toText(s.model);
}

}  // namespace

Status runPipeline(ExportState& s, const PassTrace* trace) {
  using Clock = std::chrono::steady_clock;
  std::string stage;
  for (const auto& p : exportPipeline()) {
    if (stage != p.stage) {
      stage = p.stage;
      // The frontend reports its own phases (inlining, the example run).
      if (s.progress && *startMessage(stage)) s.progress(phaseOf(stage), 0.0, startMessage(stage));
    }
    // After the progress report, so that a cancel made there stops the next pass (the write).
    if (s.cancel.cancelled()) return Error("cancelled", "the export was cancelled");
    const auto t = Clock::now();
    OXPORT_TRY(p.run(s));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
    s.result.stats.pass_ms.emplace_back(p.name, ms);
    s.result.stats.phase_ms[p.stage] += ms;
    if (trace && trace->print && (trace->print_after.count(p.name) || trace->print_after.count("all")))
      trace->print(p.name, irText(s, p.ir));
  }
  if (s.progress) s.progress(Phase::Check, 1.0, "done");
  return okStatus();
}

}  // namespace oxport
