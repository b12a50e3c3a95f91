// localizeExport: the first TorchScript node whose ONNX values differ from libtorch's.
//   1. read the file and its mapping (metadata "oxport.torch_map", see pass_torch_map.cpp);
//   2. run a copy of it in ONNX Runtime with the mapped values exposed as graph outputs;
//   3. run the model's graph in libtorch node by node (the frontend's example run, on real tensors,
//      with an observer) and compare each mapped value the moment it is computed, then drop it;
//   4. report in topological order: the first divergent node with its inputs and outputs, then
//      the divergent nodes downstream, grouped by module.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "onnx/expose.h"
#include "oxport/localize.h"
#include "oxport/model.h"
#include "oxport/runtime.h"
#include "frontend/frontend.h"
#include "pipeline/model_impl.h"

namespace oxport {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct MapNode {
  int id = -1;
  std::string kind, module, source;
  std::vector<std::string> in;
  std::vector<std::pair<std::string, std::string>> out;  // TorchScript value -> ONNX value ("" none)
  std::vector<std::string> onnx;
};

struct TorchMap {
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<MapNode> nodes;
};

Result<TorchMap> parseMap(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [](const std::string& why) {
    return Error("localize-bad-map", std::string("the file's ") + onnx_ir::kTorchMapKey + " metadata is malformed: " + why,
                 "export the model again with this oxport to rewrite the mapping");
  };
  if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
  if (!j.contains("version") || j["version"] != 1) return bad("unknown version (this oxport reads version 1)");
  TorchMap m;
  try {
    for (const auto& p : j.at("inputs")) m.inputs.emplace_back(p.at(0).get<std::string>(), p.at(1).get<std::string>());
    for (const auto& jn : j.at("nodes")) {
      MapNode n;
      n.id = jn.at("id").get<int>();
      n.kind = jn.at("kind").get<std::string>();
      n.module = jn.value("module", "");
      n.source = jn.value("source", "");
      for (const auto& v : jn.at("in")) n.in.push_back(v.get<std::string>());
      for (const auto& p : jn.at("out")) n.out.emplace_back(p.at(0).get<std::string>(), p.at(1).get<std::string>());
      for (const auto& v : jn.at("onnx")) n.onnx.push_back(v.get<std::string>());
      m.nodes.push_back(std::move(n));
    }
  } catch (const std::exception& e) {
    return bad(e.what());
  }
  return m;
}

// A folder removed with its content on destruction.
struct ScratchDir {
  fs::path path;
  void remove() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
    path.clear();
  }
  ~ScratchDir() { remove(); }
};

Result<fs::path> makeScratch(const fs::path& near, ScratchDir& dir) {
  std::error_code ec;
  fs::path base = near.empty() ? fs::temp_directory_path(ec) : near;
  if (base.empty() || ec) base = "/tmp";
  std::string tmpl = (base / ".oxport-localize-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    return Error("localize-failed", "cannot create a scratch folder in " + base.string(),
                 near.empty() ? "set TMPDIR to a writable folder with free space"
                              : "the file has external data, so its exposed copy must sit beside it: make " +
                                    base.string() + " writable");
  dir.path = tmpl;
  return dir.path;
}

// libtorch's value as a host tensor: tensors as they are, numbers as 0-d tensors.
std::optional<HostTensor> hostValue(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined() || t.is_meta() || t.is_sparse() || t.is_mkldnn()) return std::nullopt;
    bool ok = true;
    dtypeFromScalarType(t.scalar_type(), &ok);
    if (!ok) return std::nullopt;
    return hostTensorFromAt(t);
  }
  if (v.isInt()) return HostTensor::fromVector<int64_t>(DType::Int64, {}, {v.toInt()});
  if (v.isDouble()) return HostTensor::fromVector<double>(DType::Float64, {}, {v.toDouble()});
  if (v.isBool()) return HostTensor::fromVector<uint8_t>(DType::Bool, {}, {static_cast<uint8_t>(v.toBool())});
  return std::nullopt;
}

std::string nodeLabel(const MapNode& n) {
  std::string outs;
  for (const auto& [t, o] : n.out) outs += (outs.empty() ? "%" : ", %") + t;
  return outs.empty() ? n.kind : outs + " = " + n.kind;
}

}  // namespace

Result<LocalizeReport> localizeExport(const Model& model, const ExportOptions& options, const fs::path& onnx_file,
                                      OnnxRuntime& runtime, const LocalizeOptions& lopts, const CancelToken& cancel,
                                      const ProgressFn& progress) {
  const auto t_start = Clock::now();
  LocalizeReport report;
  report.tolerance = lopts.tolerance;
  auto say = [&](double f, const std::string& m) {
    if (progress) progress(Phase::Verify, f, m);
  };
  say(0.0, "reading " + onnx_file.filename().string());
  OXPORT_ASSIGN(onnx_ir::OnnxFile file, onnx_ir::OnnxFile::read(onnx_file));
  report.onnx_nodes = static_cast<int>(file.nodes().size());

  auto it = file.metadata().find(onnx_ir::kTorchMapKey);
  if (it == file.metadata().end()) {
    report.mapped = false;
    report.message = "the file carries no TorchScript mapping (metadata '" + std::string(onnx_ir::kTorchMapKey) +
                     "'; it was written by " + (file.producer().empty() ? "an unknown producer" : file.producer()) +
                     ", or by an oxport before 0.9), so its " + std::to_string(file.nodes().size()) +
                     " nodes cannot be paired with TorchScript nodes. What can be compared: the graph outputs "
                     "(plain `oxport verify` does). To localize, export the model with oxport and verify that file.";
    report.total_ms = msSince(t_start);
    return report;
  }
  OXPORT_ASSIGN(TorchMap map, parseMap(it->second));
  report.mapped = true;
  report.torch_nodes = static_cast<int>(map.nodes.size());
  {
    std::set<std::string> named;
    for (const auto& n : map.nodes) named.insert(n.onnx.begin(), n.onnx.end());
    for (const auto& n : file.nodes()) report.onnx_nodes_mapped += named.count(n.name) ? 1 : 0;
  }
  for (const auto& d : file.domains())
    if (!d.empty() && d != "ai.onnx" && d != "ai.onnx.ml" && d != "com.microsoft")
      return Error("localize-not-runnable",
                   "the file has nodes in the custom domain '" + d + "', which ONNX Runtime cannot run",
                   "localize needs a file ONNX Runtime can run: export at an opset where those ops convert");

  // What to expose: mapped values the main graph still produces (a file edited since may lack some).
  std::unordered_map<std::string, std::string> onnx_of;  // TorchScript value -> ONNX value
  std::unordered_map<std::string, int> uses;             // ONNX value -> mapped TorchScript values
  std::vector<std::string> expose;
  std::set<std::string> graph_outputs(file.outputs().begin(), file.outputs().end());
  std::unordered_map<std::string, std::string> lost;  // TorchScript value -> why not comparable
  for (const auto& n : map.nodes)
    for (const auto& [tv, ov] : n.out) {
      if (ov.empty()) continue;
      if (!file.produced().count(ov) && !graph_outputs.count(ov)) {
        lost[tv] = "ONNX value '" + ov + "' is no longer in the file";
        continue;
      }
      onnx_of[tv] = ov;
      if (uses[ov]++ == 0) expose.push_back(ov);
    }

  // ---- ONNX Runtime, once, with every mapped value exposed
  OXPORT_ASSIGN(std::vector<HostTensor> inputs, model.exampleInputs(options));
  if (file.inputs().size() < inputs.size())
    return Error("localize-failed",
                 "the ONNX file has " + std::to_string(file.inputs().size()) + " inputs but the example arguments give " +
                     std::to_string(inputs.size()) + " tensors",
                 "localize with the options the file was exported with (args, input shapes)");
  ScratchDir scratch;
  OXPORT_ASSIGN(fs::path dir, makeScratch(file.externalData() ? fs::absolute(onnx_file).parent_path() : fs::path(),
                                          scratch));
  const fs::path exposed = dir / "exposed.onnx";
  say(0.05, "writing the file with " + std::to_string(expose.size()) + " values exposed");
  OXPORT_TRY(file.writeExposed(expose, exposed));
  std::vector<NamedTensor> named;
  for (size_t i = 0; i < inputs.size(); ++i) named.push_back({file.inputs()[i], inputs[i]});
  if (cancel.cancelled()) return Error("cancelled", "localize was cancelled");
  say(0.1, "running ONNX Runtime with the intermediate values exposed");
  const auto t_onnx = Clock::now();
  auto ran = runtime.run(exposed, named);
  report.onnx_ms = msSince(t_onnx);
  if (!ran.ok()) return ran.error();
  std::unordered_map<std::string, HostTensor> onnx_values;
  for (auto& nt : *ran) onnx_values.emplace(nt.name, std::move(nt.tensor));
  ran->clear();
  scratch.remove();
  if (cancel.cancelled()) return Error("cancelled", "localize was cancelled");

  // ---- libtorch, node by node; each mapped value compared when computed
  say(0.5, "running libtorch node by node");
  std::unordered_map<std::string, ValueComparison> results;
  size_t observed = 0;
  ValueObserver observer = [&](const std::string& name, const c10::IValue& value) {
    auto m = onnx_of.find(name);
    if (m == onnx_of.end() || results.count(name)) return;
    auto o = onnx_values.find(m->second);
    if (o == onnx_values.end()) return;
    ValueComparison c;
    std::optional<HostTensor> expected;
    try {
      expected = hostValue(value);
    } catch (const std::exception&) {
      expected.reset();
    }
    if (!expected) {
      c.torch_value = name;
      c.onnx_value = m->second;
      c.note = "libtorch's value is not a dense tensor or a number";
    } else {
      c = compareValue(name, m->second, *expected, o->second, lopts.tolerance);
    }
    results.emplace(name, std::move(c));
    if (--uses[m->second] == 0) onnx_values.erase(o);  // nothing else needs it: free it now
    if (++observed % 64 == 0) say(0.5 + 0.45 * static_cast<double>(observed) / static_cast<double>(onnx_of.size() + 1),
                                  "compared " + std::to_string(observed) + " values");
  };
  const auto t_torch = Clock::now();
  {
    auto impl = model.impl();
    std::lock_guard<std::mutex> lock(impl->mutex);
    OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl->module, options));
    torch::NoGradGuard no_grad;
    OXPORT_ASSIGN(FrontendResult fr, runFrontend(impl->module, args, options, {}, cancel, &observer));
    (void)fr;
  }
  report.torch_ms = msSince(t_torch);
  onnx_values.clear();

  // ---- the report, in topological order
  std::set<std::string> graph_input_names;
  for (const auto& [tv, ov] : map.inputs) graph_input_names.insert(tv);
  auto comparison = [&](const std::string& tv) {
    if (auto r = results.find(tv); r != results.end()) return r->second;
    ValueComparison c;
    c.torch_value = tv;
    if (graph_input_names.count(tv)) {
      c.note = "graph input (the same tensor on both sides)";
      for (const auto& [t, o] : map.inputs)
        if (t == tv) c.onnx_value = o;
    } else if (auto l = lost.find(tv); l != lost.end()) {
      c.note = l->second;
    } else if (auto m = onnx_of.find(tv); m != onnx_of.end()) {
      c.onnx_value = m->second;
      c.note = "libtorch did not compute it on these inputs";
    } else {
      c.note = "no ONNX value of its own (folded, or merged into another node's)";
    }
    return c;
  };
  std::unordered_map<std::string, size_t> producer;  // TorchScript value -> its node in the map
  for (size_t k = 0; k < map.nodes.size(); ++k)
    for (const auto& [tv, ov] : map.nodes[k].out) producer.emplace(tv, k);
  std::map<std::string, size_t> module_index;
  int index = 0;
  for (const auto& mn : map.nodes) {
    LocalizedNode n;
    n.torch_id = mn.id;
    n.index = index++;
    n.torch_node = nodeLabel(mn);
    n.kind = mn.kind;
    n.module = mn.module;
    n.source = mn.source;
    n.onnx_nodes = mn.onnx;
    bool any = false;
    for (const auto& [tv, ov] : mn.out) {
      if (ov.empty() && !lost.count(tv)) continue;
      ValueComparison c = comparison(tv);
      if (c.compared) {
        any = true;
        ++report.compared;
        n.max_abs_error = std::max(n.max_abs_error, c.max_abs_error);
        n.max_rel_error = std::max(n.max_rel_error, c.max_rel_error);
        n.share_off = std::max(n.share_off, c.share_off);
        n.diverges = n.diverges || !c.passed;
      } else {
        ++report.not_compared;
      }
      n.outputs.push_back(std::move(c));
    }
    if (!any) continue;
    // The inputs; one with no ONNX value of its own (a convolution folded into its batch norm) is
    // followed up to the values that were compared, and its node is listed as merged into this one.
    std::set<std::string> seen;
    std::function<void(const std::string&, int)> addInput = [&](const std::string& tv, int depth) {
      if (!seen.insert(tv).second) return;
      ValueComparison c = comparison(tv);
      auto p = producer.find(tv);
      const bool follow = !c.compared && depth < 4 && p != producer.end() && !graph_input_names.count(tv) &&
                          !onnx_of.count(tv) && !lost.count(tv);
      if (c.compared) {
        ++n.inputs_compared;
        if (!c.passed) n.inputs_agree = false;
      }
      if (!follow) {
        if (depth > 0) c.note = c.note.empty() ? "upstream" : c.note + "; upstream";
        n.inputs.push_back(std::move(c));
        return;
      }
      const MapNode& pn = map.nodes[p->second];
      n.merged.push_back(nodeLabel(pn) + (pn.module.empty() ? "" : " in " + pn.module));
      if (depth == 0) n.inputs.push_back(std::move(c));
      for (const auto& up : pn.in) addInput(up, depth + 1);
    };
    for (const auto& tv : mn.in) addInput(tv, 0);
    report.nodes.push_back(n);
    if (!n.diverges) continue;
    ++report.divergent_nodes;
    if (!report.first_divergence) {
      report.first_divergence = n;
      continue;
    }
    auto [mi, fresh] = module_index.emplace(n.module, report.by_module.size());
    if (fresh) report.by_module.push_back({n.module, 0, 0, 0, n.torch_node});
    ModuleDivergence& md = report.by_module[mi->second];
    ++md.nodes;
    md.sources += n.inputs_agree && n.inputs_compared > 0 ? 1 : 0;
    md.max_rel_error = std::max(md.max_rel_error, n.max_rel_error);
    if (static_cast<int>(report.divergences.size()) < lopts.max_divergences) {
      LocalizedNode brief = n;
      brief.inputs.clear();
      brief.outputs.clear();
      report.divergences.push_back(std::move(brief));
    }
  }
  const int unmapped = report.onnx_nodes - report.onnx_nodes_mapped;
  if (!lost.empty() || unmapped > 0) {
    report.message = std::to_string(unmapped) + " ONNX node(s) are not named in the mapping (nodes the passes added, "
                     "or nodes added to the file since)";
    if (!lost.empty())
      report.message += "; " + std::to_string(lost.size()) + " mapped value(s) are no longer in the file (edited since)";
    report.message += ": their values are checked through the values downstream of them.";
  }
  report.total_ms = msSince(t_start);
  say(1.0, report.first_divergence ? "diverges at " + report.first_divergence->torch_node : "no divergence");
  return report;
}

}  // namespace oxport
