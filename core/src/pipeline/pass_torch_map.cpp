// The pipeline's torch-map pass: records in the file which TorchScript node and value each ONNX
// node and value comes from, so that `oxport verify --localize` can pair the values of a file
// written earlier (or edited since) with libtorch's. Model metadata "oxport.torch_map", JSON:
//
//   {"version": 1,
//    "inputs": [["x.1", "image"], ...],           TorchScript graph inputs -> ONNX graph inputs
//    "nodes": [{"id": 12,                          the node's id (the studio's TorchScript view)
//               "kind": "aten::conv2d", "module": "layer1.0.conv1", "source": "model.py:33",
//               "in": ["x.1", "input.3"],          its dynamic inputs (TorchScript debug names)
//               "out": [["input.5", "/layer1/0/conv1/Conv_output_0"]],  value -> ONNX value ("" none)
//               "onnx": ["/layer1/0/conv1/Conv"]}, ...]}   the ONNX nodes made from it
//
// Only the main graph: values inside If/Loop bodies are not graph values ONNX Runtime can expose,
// so a Loop is compared by its results. A value is mapped only when its ONNX name survived the
// optimizing passes with the same meaning (an Identity removed, a batch norm folded into its
// convolution: the convolution's own value is gone, the batch norm's is the convolution's output);
// graph outputs renamed to output_names are followed.
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "onnx/expose.h"
#include "pipeline/pipeline.h"

namespace oxport {

namespace {

using json = nlohmann::json;

bool comparable(const ts::Value* v) {
  if (v->isConstant()) return false;
  switch (v->type) {
    case ts::ValueType::Tensor:
    case ts::ValueType::Int:
    case ts::ValueType::Float:
    case ts::ValueType::Bool:
      return true;
    default:
      return false;
  }
}

// The flattened graph outputs as TorchScript values, the way pass_convert flattens them
// (tensors and numbers; tuples, lists and dicts built in the graph are opened).
void flattenOutputs(const ts::Value* v, std::vector<const ts::Value*>& out, bool& ok) {
  if (v->type == ts::ValueType::Tensor || (v->constant && v->constant->isTensor())) {
    out.push_back(v);
    return;
  }
  if (v->producer && (v->producer->kind == "prim::TupleConstruct" || v->producer->kind == "prim::ListConstruct")) {
    for (const ts::Value* e : v->producer->inputs) flattenOutputs(e, out, ok);
    return;
  }
  if (v->producer && v->producer->kind == "prim::DictConstruct") {
    for (size_t i = 1; i < v->producer->inputs.size(); i += 2) flattenOutputs(v->producer->inputs[i], out, ok);
    return;
  }
  if (v->type == ts::ValueType::Int || v->type == ts::ValueType::Float || v->type == ts::ValueType::Bool) {
    out.push_back(v);
    return;
  }
  ok = false;  // a list made elsewhere: positions cannot be followed
}

std::string sourceText(const SourceLocation& l) {
  if (!l.known()) return {};
  std::string file = l.file;
  return file + ":" + std::to_string(l.line);
}

}  // namespace

Status passTorchMap(ExportState& s) {
  if (!s.frontend.graph || !s.ctx) return okStatus();
  const ts::Graph& g = *s.frontend.graph;
  const onnx_ir::Graph& og = s.model.graph;

  std::unordered_set<std::string> produced;
  std::unordered_map<int, std::vector<std::string>> onnx_of;  // TorchScript node id -> ONNX node names
  for (const auto& n : og.nodes) {
    for (const auto& o : n.outputs) produced.insert(o);
    for (int id : n.origins) {
      auto& list = onnx_of[id];
      if (list.empty() || list.back() != n.name) list.push_back(n.name);
    }
  }
  // Graph outputs carry output_names now: follow them by position.
  std::unordered_map<const ts::Value*, std::string> output_name;
  {
    std::vector<const ts::Value*> flat;
    bool ok = true;
    for (const auto* o : g.outputs) flattenOutputs(o, flat, ok);
    if (ok && flat.size() == og.outputs.size())
      for (size_t i = 0; i < flat.size(); ++i) output_name.emplace(flat[i], og.outputs[i].name);
  }
  auto onnxName = [&](const ts::Value* v) -> std::string {
    if (auto it = output_name.find(v); it != output_name.end()) return it->second;
    auto b = s.ctx->boundName(v);
    if (b && produced.count(*b)) return *b;
    return {};
  };

  json j;
  j["version"] = 1;
  j["inputs"] = json::array();
  for (size_t i = 0; i < g.inputs.size() && i < og.inputs.size(); ++i) {
    auto b = s.ctx->boundName(g.inputs[i]);
    j["inputs"].push_back({g.inputs[i]->name, b ? *b : std::string()});
  }
  j["nodes"] = json::array();
  for (const ts::Node* n : g.nodes) {
    json jn;
    jn["id"] = n->id;
    jn["kind"] = n->kind;
    if (!n->module_path.empty()) jn["module"] = n->module_path;
    if (auto src = sourceText(n->location); !src.empty()) jn["source"] = src;
    json in = json::array();
    for (const ts::Value* v : n->inputs)
      if (comparable(v)) in.push_back(v->name);
    jn["in"] = std::move(in);
    json out = json::array();
    for (const ts::Value* v : n->outputs)
      out.push_back({v->name, comparable(v) ? onnxName(v) : std::string()});
    jn["out"] = std::move(out);
    auto it = onnx_of.find(n->id);
    jn["onnx"] = it == onnx_of.end() ? json::array() : json(it->second);
    j["nodes"].push_back(std::move(jn));
  }
  s.model.metadata_props.emplace_back(onnx_ir::kTorchMapKey, j.dump(-1, ' ', false, json::error_handler_t::replace));
  return okStatus();
}

}  // namespace oxport
