// The export pipeline: the ordered list of passes and the driver that runs them.
#include "pipeline/pipeline.h"

#include <chrono>

namespace oxport {

const std::vector<ExportPass>& exportPipeline() {
  static const std::vector<ExportPass> passes = {
#define OXPORT_PASS(name, stage, ir, function, summary) {name, stage, summary, PassIr::ir, function},
#include "pipeline/passes.def"
#undef OXPORT_PASS
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
