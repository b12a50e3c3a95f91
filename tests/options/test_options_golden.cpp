// Golden comparisons with torch.onnx.export 1.13: for each case of make_models.py, oxport exports
// the TorchScript model with the case's preset, and the written model's structure is compared
// with what torch.onnx wrote for the same eager model and options, aspect by aspect (the case
// lists which aspects apply; see make_models.py for why some differ by design).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "oxport/model.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"

#include "../support/newest_runtime.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

struct GoldenCase {
  std::string name, dir;
  std::vector<std::string> compare;
};

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

std::vector<GoldenCase> loadManifest() {
  std::vector<GoldenCase> out;
  std::ifstream f(fs::path(OXPORT_OPTIONS_DIR) / "manifest.json");
  if (!f) return out;
  for (const auto& c : nlohmann::json::parse(f))
    out.push_back({c["name"], c["dir"], c["compare"].get<std::vector<std::string>>()});
  return out;
}

onnx::ModelProto loadProto(const fs::path& p) {
  onnx::ModelProto m;
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(f) << p;
  EXPECT_TRUE(m.ParseFromIstream(&f)) << p;
  return m;
}

std::string dimsText(const onnx::ValueInfoProto& vi) {
  std::string s = "[";
  const auto& shape = vi.type().tensor_type().shape();
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    s += (i ? "," : "") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  }
  return s + "]";
}

std::vector<std::string> dims(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& vs,
                              const std::set<std::string>& skip = {}) {
  std::vector<std::string> out;
  for (const auto& v : vs)
    if (!skip.count(v.name())) out.push_back(dimsText(v));
  return out;
}

std::set<std::string> initNames(const onnx::GraphProto& g) {
  std::set<std::string> s;
  for (const auto& i : g.initializer()) s.insert(i.name());
  return s;
}

std::vector<std::string> names(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& vs,
                               const std::set<std::string>& skip = {}) {
  std::vector<std::string> out;
  for (const auto& v : vs)
    if (!skip.count(v.name())) out.push_back(v.name());
  return out;
}

// Op multiset without the nodes that only carry constants (torch.onnx writes Constant nodes where
// oxport writes initializers).
std::multiset<std::string> ops(const onnx::GraphProto& g, bool custom_only = false) {
  std::multiset<std::string> s;
  for (const auto& n : g.node()) {
    if (n.op_type() == "Constant" || n.op_type() == "Identity") continue;
    if (custom_only && n.domain().empty()) continue;
    s.insert(n.domain().empty() ? n.op_type() : n.domain() + "::" + n.op_type());
  }
  return s;
}

const onnx::NodeProto* firstNode(const onnx::GraphProto& g, const std::string& op) {
  for (const auto& n : g.node())
    if (n.op_type() == op) return &n;
  return nullptr;
}

std::map<std::string, std::string> attrs(const onnx::NodeProto& n) {
  std::map<std::string, std::string> m;
  for (const auto& a : n.attribute()) {
    std::string v;
    if (a.type() == onnx::AttributeProto::INT) v = std::to_string(a.i());
    else if (a.type() == onnx::AttributeProto::FLOAT) v = std::to_string(a.f());
    else if (a.type() == onnx::AttributeProto::STRING) v = a.s();
    else if (a.type() == onnx::AttributeProto::INTS) for (auto x : a.ints()) v += std::to_string(x) + ",";
    else v = "type" + std::to_string(a.type());
    m[a.name()] = v;
  }
  return m;
}

std::map<std::string, int64_t> opsets(const onnx::ModelProto& m) {
  std::map<std::string, int64_t> out;
  for (const auto& o : m.opset_import()) out[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  return out;
}

int initInputs(const onnx::GraphProto& g) {
  auto inits = initNames(g);
  int n = 0;
  for (const auto& i : g.input()) n += inits.count(i.name()) ? 1 : 0;
  return n;
}

// Where each input of each node comes from, per op type in node order (Identity nodes are
// looked through): "input" (a graph input that is not an initializer), "weight" (an
// initializer), "graph" (a Constant node, another node's output, or left out: decompositions
// differ there, and a value the graph computes is never overridable).
// torch.onnx 1.13 keeps the module's weights as initializers and writes what it computed at
// export time (shapes, scales, axes, pads) as Constant nodes; a runtime may treat an
// initializer listed as a graph input as overridable, so the two must not be mixed up.
std::map<std::string, std::vector<std::string>> operandKinds(const onnx::GraphProto& g) {
  const auto inits = initNames(g);
  std::set<std::string> inputs;
  for (const auto& i : g.input())
    if (!inits.count(i.name())) inputs.insert(i.name());
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& n : g.node())
    for (const auto& o : n.output()) producer[o] = &n;
  std::function<std::string(const std::string&)> kind = [&](const std::string& v) -> std::string {
    if (v.empty()) return "graph";
    if (inputs.count(v)) return "input";
    if (inits.count(v)) return "weight";
    auto it = producer.find(v);
    if (it == producer.end()) return "?";
    if (it->second->op_type() == "Identity") return kind(it->second->input(0));
    return "graph";
  };
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& n : g.node()) {
    if (n.op_type() == "Constant" || n.op_type() == "Identity") continue;
    std::string k;
    for (const auto& i : n.input()) k += (k.empty() ? "" : ",") + kind(i);
    out[n.op_type()].push_back(k);
  }
  return out;
}

// Runs the file in the pinned ONNX Runtime and in the newest one (OXPORT_ORT_PACKAGE), against
// libtorch, at the traced size and at other sizes of its dynamic axes.
void expectRunsInBothRuntimes(const Model& model, const ExportOptions& o, const fs::path& file) {
  auto rt = makeDefaultRuntime();
  ASSERT_TRUE(rt.ok()) << rt.error().message();
  auto pinned = verifyExport(model, o, file, **rt);
  ASSERT_TRUE(pinned.ok()) << pinned.error().message();
  EXPECT_TRUE(pinned->passed) << pinned->toText();
  auto newest = oxport::testing::verifyInNewestRuntime(model, o, file);
  ASSERT_TRUE(newest.ok()) << newest.error().message();
  EXPECT_TRUE(newest->passed) << "newest ONNX Runtime:\n" << newest->toText();
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, MatchesTorchOnnx) {
  const GoldenCase& c = GetParam();
  const fs::path dir = c.dir;
  auto preset = loadPreset(dir / "preset.json");
  ASSERT_TRUE(preset.ok()) << preset.error().message();
  auto model = Model::load(*preset->model);
  ASSERT_TRUE(model.ok()) << model.error().message();
  const fs::path out = dir / "oxport.onnx";
  auto r = model->exportOnnx(preset->options, OutputTarget::toFile(out));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stats.checker_passed);
  const onnx::ModelProto ours = loadProto(out), ref = loadProto(dir / "torch.onnx");
  const auto& og = ours.graph();
  const auto& rg = ref.graph();
  // Graph inputs that are initializers, as listed: compared separately (init_inputs).
  const auto oi = initNames(og), ri = initNames(rg);
  for (const std::string& what : c.compare) {
    SCOPED_TRACE(what);
    if (what == "opsets") EXPECT_EQ(opsets(ours), opsets(ref));
    else if (what == "ir_version") EXPECT_EQ(ours.ir_version(), ref.ir_version());
    else if (what == "producer") {
      EXPECT_EQ(ours.producer_name(), "oxport");
      EXPECT_FALSE(ours.producer_version().empty());
    } else if (what == "input_count") EXPECT_EQ(og.input_size(), rg.input_size());
    else if (what == "output_count") EXPECT_EQ(og.output_size(), rg.output_size());
    else if (what == "ops") EXPECT_EQ(ops(og), ops(rg));
    else if (what == "custom_ops") EXPECT_EQ(ops(og, true), ops(rg, true));
    else if (what == "input_dims") EXPECT_EQ(dims(og.input(), oi), dims(rg.input(), ri));
    else if (what == "output_dims") EXPECT_EQ(dims(og.output()), dims(rg.output()));
    else if (what == "input_names") EXPECT_EQ(names(og.input(), oi), names(rg.input(), ri));
    else if (what == "output_names") EXPECT_EQ(names(og.output()), names(rg.output()));
    else if (what.rfind("input_names:", 0) == 0 || what.rfind("output_names:", 0) == 0) {
      const bool in = what[0] == 'i';
      // ":N": the first N names; ":-1": all but the first (the user input, which torch.onnx names
      // after the traced graph's value, oxport after forward's argument).
      const int k = std::stoi(what.substr(what.find(':') + 1));
      auto a = in ? names(og.input(), oi) : names(og.output());
      auto b = in ? names(rg.input(), ri) : names(rg.output());
      if (k < 0) {
        EXPECT_EQ(std::vector<std::string>(a.begin() + 1, a.end()), std::vector<std::string>(b.begin() + 1, b.end()));
        continue;
      }
      ASSERT_GE(a.size(), static_cast<size_t>(k));
      ASSERT_GE(b.size(), static_cast<size_t>(k));
      EXPECT_EQ(std::vector<std::string>(a.begin(), a.begin() + k), std::vector<std::string>(b.begin(), b.begin() + k));
    } else if (what == "initializer_count") EXPECT_EQ(og.initializer_size(), rg.initializer_size());
    else if (what == "param_names") {
      // Initializers named after the model's state_dict; generated names differ (torch.onnx:
      // "onnx::<Op>_<n>"; oxport: "onnx::Constant_<n>", and "<param>_bnfold" for folded batch norm).
      std::set<std::string> a, b;
      for (const auto& n : oi)
        if (n.rfind("onnx::", 0) != 0 && n.find("_bnfold") == std::string::npos) a.insert(n);
      for (const auto& n : ri) if (n.rfind("onnx::", 0) != 0) b.insert(n);
      EXPECT_EQ(a, b);
    } else if (what.rfind("has_ops:", 0) == 0) {
      std::stringstream ss(what.substr(8));
      std::string op;
      auto a = ops(og), b = ops(rg);
      while (std::getline(ss, op, ',')) {
        EXPECT_TRUE(a.count(op)) << "oxport has no " << op;
        EXPECT_TRUE(b.count(op)) << "torch.onnx has no " << op;
      }
    }
    else if (what == "init_inputs") EXPECT_EQ(initInputs(og), initInputs(rg));
    else if (what.rfind("attrs:", 0) == 0) {
      std::string op = what.substr(6), only;
      if (auto p = op.find(':'); p != std::string::npos) { only = op.substr(p + 1); op = op.substr(0, p); }
      // Every node of that type, in order.
      std::vector<std::map<std::string, std::string>> a, b;
      for (const auto& n : og.node()) if (n.op_type() == op) a.push_back(attrs(n));
      for (const auto& n : rg.node()) if (n.op_type() == op) b.push_back(attrs(n));
      if (!only.empty()) {
        std::multiset<std::string> sa, sb;
        for (auto& m : a) sa.insert(m[only]);
        for (auto& m : b) sb.insert(m[only]);
        EXPECT_EQ(sa, sb);
      } else {
        EXPECT_EQ(a, b);
      }
    } else if (what.rfind("node_outputs:", 0) == 0 || what.rfind("node_inputs:", 0) == 0) {
      const bool outs = what[5] == 'o';
      std::string op = what.substr(what.find(':') + 1);
      const auto* a = firstNode(og, op);
      const auto* b = firstNode(rg, op);
      ASSERT_TRUE(a && b) << op;
      if (outs) EXPECT_EQ(a->output_size(), b->output_size());
      else EXPECT_EQ(a->input_size(), b->input_size());
    } else if (what == "operand_kinds") {
      // Op types that both files have equally often (the decompositions may differ elsewhere).
      const auto a = operandKinds(og), b = operandKinds(rg);
      int compared = 0;
      for (const auto& [op, kinds] : a) {
        auto it = b.find(op);
        if (it == b.end() || it->second.size() != kinds.size()) continue;
        EXPECT_EQ(kinds, it->second) << "operands of the " << op << " nodes";
        ++compared;
      }
      EXPECT_GT(compared, 0);
    } else if (what == "runs") {
      // Not compared with torch.onnx: the file oxport wrote loads and matches libtorch.
      expectRunsInBothRuntimes(*model, preset->options, out);
    } else {
      ADD_FAILURE() << "unknown aspect " << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Options, Golden, ::testing::ValuesIn(loadManifest()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
