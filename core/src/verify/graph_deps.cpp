// readGraphDeps and the tie copies: one walk of the main graph in node order (ONNX graphs are
// topologically sorted), carrying for every value the random and tie-ordered nodes it depends on.
// A node with a body (If, Loop, Scan) depends on everything its body reads from outside, and a
// random node inside a body makes its results random.
#include "verify/graph_deps.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <unordered_map>

namespace oxport::verify_detail {

namespace {

namespace fs = std::filesystem;

bool isRandomOp(const std::string& op) {
  return op == "RandomNormal" || op == "RandomUniform" || op == "RandomNormalLike" || op == "RandomUniformLike" ||
         op == "Multinomial" || op == "Bernoulli";
}

bool isTieOp(const std::string& op) { return op == "TopK" || op == "ArgMax" || op == "ArgMin"; }

int64_t intAttr(const ::onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

// A bool constant's value when `name` is an initializer or a Constant node's output.
std::optional<bool> constBool(const ::onnx::GraphProto& g, const std::string& name) {
  auto read = [](const ::onnx::TensorProto& t) -> std::optional<bool> {
    if (t.int32_data_size() > 0) return t.int32_data(0) != 0;
    if (!t.raw_data().empty()) return t.raw_data()[0] != 0;
    return std::nullopt;
  };
  for (const auto& t : g.initializer())
    if (t.name() == name) return read(t);
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == name)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) return read(a.t());
  return std::nullopt;
}

// Dropout draws only in training mode (its third input true); ratio 0 keeps everything.
bool isRandomNode(const ::onnx::GraphProto& g, const ::onnx::NodeProto& n) {
  if (isRandomOp(n.op_type())) return true;
  if (n.op_type() != "Dropout" || n.input_size() < 3 || n.input(2).empty()) return false;
  const auto training = constBool(g, n.input(2));
  return !training || *training;
}

// Names a body reads (its nodes' inputs, nested bodies included) and whether it holds random or
// tie-ordered nodes.
void scanBody(const ::onnx::GraphProto& body, std::set<std::string>& reads, std::vector<std::string>& random_ops,
              bool& ties) {
  for (const auto& n : body.node()) {
    for (const auto& i : n.input()) reads.insert(i);
    if (isRandomNode(body, n)) random_ops.push_back(n.op_type());
    if (isTieOp(n.op_type())) ties = true;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) scanBody(a.g(), reads, random_ops, ties);
      for (const auto& sg : a.graphs()) scanBody(sg, reads, random_ops, ties);
    }
  }
}

// ONNX node name -> its TorchScript kind and "aten::dropout in drop (model.py:12)", from the file's
// torch map.
struct Source {
  std::string kind, where;
};
std::map<std::string, Source> sourcesFromTorchMap(const ::onnx::ModelProto& m) {
  std::map<std::string, Source> out;
  for (const auto& p : m.metadata_props()) {
    if (p.key() != "oxport.torch_map") continue;
    const auto j = nlohmann::json::parse(p.value(), nullptr, false);
    if (!j.is_object() || !j.contains("nodes") || !j["nodes"].is_array()) break;
    for (const auto& n : j["nodes"]) {
      if (!n.is_object() || !n.contains("onnx") || !n["onnx"].is_array()) continue;
      const std::string kind = n.value("kind", std::string());
      std::string where = kind;
      if (const std::string mod = n.value("module", std::string()); !mod.empty()) where += " in " + mod;
      if (const std::string src = n.value("source", std::string()); !src.empty()) where += " (" + src + ")";
      for (const auto& o : n["onnx"])
        if (o.is_string()) out[o.get<std::string>()] = {kind, where};
    }
  }
  return out;
}

Result<::onnx::ModelProto> readModel(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  ::onnx::ModelProto m;
  if (!in || !m.ParseFromIstream(&in))
    return Error("verify-mismatch", "cannot read the ONNX file " + file.string() + " to see which outputs depend on which nodes",
                 "check that the file is an .onnx model and not truncated");
  return m;
}

Status writeModel(const ::onnx::ModelProto& m, const fs::path& out) {
  std::ofstream os(out, std::ios::binary | std::ios::trunc);
  if (!os || !m.SerializeToOstream(&os) || !os.flush())
    return Error("verify-mismatch", "cannot write a copy of the model to " + out.string(),
                 "free space in the ONNX file's folder, or make it writable");
  return okStatus();
}

}  // namespace

Result<GraphDeps> readGraphDeps(const fs::path& file) {
  OXPORT_ASSIGN(const ::onnx::ModelProto m, readModel(file));
  const auto& g = m.graph();
  const auto sources = sourcesFromTorchMap(m);
  GraphDeps deps;
  std::unordered_map<std::string, OutputDeps> of;  // value -> what it depends on
  auto merge = [](OutputDeps& into, const OutputDeps& from) {
    for (size_t t : from.ties)
      if (std::find(into.ties.begin(), into.ties.end(), t) == into.ties.end()) into.ties.push_back(t);
    for (size_t r : from.randoms)
      if (std::find(into.randoms.begin(), into.randoms.end(), r) == into.randoms.end()) into.randoms.push_back(r);
  };
  for (const auto& n : g.node()) {
    OutputDeps d;
    for (const auto& i : n.input())
      if (auto it = of.find(i); it != of.end()) merge(d, it->second);
    std::set<std::string> reads;
    std::vector<std::string> body_random;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) scanBody(a.g(), reads, body_random, deps.nested_ties);
      for (const auto& sg : a.graphs()) scanBody(sg, reads, body_random, deps.nested_ties);
    }
    for (const auto& r : reads)
      if (auto it = of.find(r); it != of.end()) merge(d, it->second);
    auto source = [&](const std::string& name) {
      auto it = sources.find(name);
      return it == sources.end() ? Source{} : it->second;
    };
    auto where = [&](const std::string& name) { return source(name).where; };
    for (const auto& op : body_random) {
      d.randoms.push_back(deps.randoms.size());
      deps.randoms.push_back({n.name(), op + " inside " + n.op_type(), where(n.name())});
    }
    if (isRandomNode(g, n)) {
      d.randoms.push_back(deps.randoms.size());
      deps.randoms.push_back({n.name(), n.op_type(), where(n.name())});
    }
    const bool tie = isTieOp(n.op_type()) && n.input_size() >= 1 && n.output_size() >= 1;
    for (int k = 0; k < n.output_size(); ++k) {
      OutputDeps od = d;
      // TopK's values (output 0) are the same whichever tied position is picked; its indices and
      // ArgMax/ArgMin's only output are not.
      const bool index_out = tie && (n.op_type() == "TopK" ? k == 1 : k == 0);
      if (index_out) {
        TieNode t;
        t.name = n.name();
        t.op_type = n.op_type();
        t.data = n.input(0);
        t.indices = n.output(k);
        t.torch_kind = source(n.name()).kind;
        if (n.op_type() == "TopK") {
          t.k = n.input_size() > 1 ? n.input(1) : std::string();
          t.largest = intAttr(n, "largest", 1) != 0;
        } else {
          t.largest = n.op_type() == "ArgMax";
          t.keepdims = intAttr(n, "keepdims", 1) != 0;
          t.select_last = intAttr(n, "select_last_index", 0) != 0;
        }
        t.axis = intAttr(n, "axis", n.op_type() == "TopK" ? -1 : 0);
        od.ties.push_back(deps.ties.size());
        deps.ties.push_back(std::move(t));
      }
      if (!n.output(k).empty()) of[n.output(k)] = std::move(od);
    }
  }
  for (const auto& o : g.output()) {
    auto it = of.find(o.name());
    deps.outputs.push_back(it == of.end() ? OutputDeps{} : it->second);
  }
  return deps;
}

Status writeTieExposed(const fs::path& file, const std::vector<TieNode>& ties, const fs::path& out) {
  OXPORT_ASSIGN(::onnx::ModelProto m, readModel(file));
  auto* g = m.mutable_graph();
  std::set<std::string> present;
  for (const auto& o : g->output()) present.insert(o.name());
  for (const auto& t : ties)
    for (const auto& v : {t.data, t.indices})
      if (present.insert(v).second) g->add_output()->set_name(v);  // untyped: ONNX Runtime infers it
  return writeModel(m, out);
}

Status writeTieSubstituted(const fs::path& file, const std::vector<TieNode>& ties, const fs::path& out) {
  OXPORT_ASSIGN(::onnx::ModelProto m, readModel(file));
  auto* g = m.mutable_graph();
  for (const auto& t : ties) {
    for (auto& n : *g->mutable_node())
      for (auto& o : *n.mutable_output())
        if (o == t.indices) o = t.indices + "__oxport_replaced";
    auto* in = g->add_input();
    in->set_name(t.indices);
    in->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::INT64);
  }
  return writeModel(m, out);
}

}  // namespace oxport::verify_detail
