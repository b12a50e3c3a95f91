// Model::exportOnnx (the pipeline in pipeline.cpp runs it) and the Model methods beside it:
// the example inputs, the reference run, the saved graph and the inspected graph.
#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "torch/frontend.h"
#include "torch/model_impl.h"
#include "torch/pipeline.h"

namespace oxport {

GraphView tsGraphView(const ts::Graph& g) {
  GraphView v;
  v.title = "TorchScript";
  std::unordered_map<const ts::Value*, int> edge_of;
  auto edge = [&](const ts::Value* val) -> int {
    auto it = edge_of.find(val);
    if (it != edge_of.end()) return it->second;
    GraphViewEdge e;
    e.id = static_cast<int>(v.edges.size());
    e.name = val->param_name.empty() ? val->name : val->param_name;
    e.type = val->typeString();
    if (val->constant) {
      e.is_initializer = val->constant->isTensor();
      e.summary = val->constant->toString();
    }
    v.edges.push_back(e);
    edge_of[val] = e.id;
    return e.id;
  };
  for (const auto* in : g.inputs) {
    int id = edge(in);
    v.edges[id].is_graph_input = true;
    v.inputs.push_back(id);
  }
  for (const ts::Node* n : g.nodes) {
    GraphViewNode gn;
    gn.id = n->id;
    gn.name = n->outputs.empty() ? n->kind : "%" + n->outputs[0]->name;
    gn.op = n->kind;
    gn.module_path = n->module_path;
    gn.location = n->location;
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const ts::Value* in = n->inputs[i];
      if (in->constant && !in->constant->isTensor()) {
        std::string an = i < n->arg_names.size() ? n->arg_names[i] : "arg" + std::to_string(i);
        gn.attributes.emplace_back(an, in->constant->toString());
        continue;
      }
      int id = edge(in);
      v.edges[id].consumers.push_back(gn.id);
      gn.inputs.push_back(id);
    }
    for (const auto* o : n->outputs) {
      int id = edge(o);
      v.edges[id].producer = gn.id;
      gn.outputs.push_back(id);
    }
    v.nodes.push_back(std::move(gn));
  }
  for (const auto* o : g.outputs) {
    int id = edge(o);
    v.edges[id].is_graph_output = true;
    v.outputs.push_back(id);
  }
  return v;
}

namespace {

// Switches the module's training flags for a reference run and restores them afterwards.
class TrainingGuard {
 public:
  TrainingGuard(torch::jit::Module& m, TrainingMode mode) : m_(m), was_(m.is_training()) {
    if (mode == TrainingMode::Eval) m_.eval();
    else if (mode == TrainingMode::Training) m_.train(true);
  }
  ~TrainingGuard() { m_.train(was_); }

 private:
  torch::jit::Module& m_;
  bool was_;
};

void flattenIValue(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) out.push_back(v.toTensor());
  else if (v.isList()) for (const auto& e : v.toListRef()) flattenIValue(e, out);
  else if (v.isTuple()) for (const auto& e : v.toTupleRef().elements()) flattenIValue(e, out);
  else if (v.isGenericDict()) for (const auto& kv : v.toGenericDict()) flattenIValue(kv.value(), out);
}

// forward()'s result as the exported graph's outputs: tensors, and numbers outside lists as the 0-d
// tensors the export makes of them (int -> int64, float -> float32, bool -> bool; see collect in
// exportOnnx), so a scripted model's count or flag is compared too.
void flattenResult(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isInt()) out.push_back(at::scalar_tensor(v.toInt(), at::kLong));
  else if (v.isDouble()) out.push_back(at::scalar_tensor(v.toDouble(), at::kFloat));
  else if (v.isBool()) out.push_back(at::scalar_tensor(v.toBool(), at::kBool));
  else if (v.isTuple()) for (const auto& e : v.toTupleRef().elements()) flattenResult(e, out);
  else if (v.isGenericDict()) for (const auto& kv : v.toGenericDict()) flattenResult(kv.value(), out);
  else flattenIValue(v, out);
}

}  // namespace

Result<std::vector<HostTensor>> Model::exampleInputs(const ExportOptions& options,
                                                     const std::vector<std::vector<int64_t>>& shapes) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl_->module, options, shapes));
  std::vector<at::Tensor> flat;
  for (const auto& v : args.values) flattenIValue(v, flat);
  std::vector<HostTensor> out;
  for (const auto& t : flat) out.push_back(hostTensorFromAt(t));
  return out;
}

Result<std::vector<NamedTensor>> Model::runReference(const ExportOptions& options,
                                                     const std::vector<std::vector<int64_t>>& shapes) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl_->module, options, shapes));
  c10::IValue result;
  try {
    TrainingGuard guard(impl_->module, options.training);
    torch::NoGradGuard no_grad;
    std::vector<c10::IValue> inputs = args.values;
    result = impl_->module.forward(inputs);
  } catch (const std::exception& e) {
    return Error("forward-failed", "the model fails on the example inputs: " + torchErrorMessage(e),
                 "check the input shapes and dtypes in args");
  }
  std::vector<at::Tensor> flat;
  flattenResult(result, flat);
  std::vector<NamedTensor> out;
  for (size_t i = 0; i < flat.size(); ++i) {
    std::string name = i < options.output_names.size() ? options.output_names[i] : "output_" + std::to_string(i);
    out.push_back({name, hostTensorFromAt(flat[i])});
  }
  return out;
}

Result<GraphView> Model::savedGraph() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  try {
    return savedGraphView(impl_->module);
  } catch (const std::exception& e) {
    return Error("frontend-failed", std::string("reading the saved forward graph failed: ") + torchErrorMessage(e));
  }
}

Result<GraphView> Model::inspect(const ExportOptions& options, const ProgressFn& progress,
                                 const CancelToken& cancel) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl_->module, options));
  OXPORT_ASSIGN(FrontendResult fr, runFrontend(impl_->module, args, options, progress, cancel));
  return tsGraphView(*fr.graph);
}

Result<ExportResult> Model::exportOnnx(const ExportOptions& options, const OutputTarget& out,
                                       const ProgressFn& progress, const CancelToken& cancel,
                                       const PassTrace* trace) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  ExportState state(*impl_, options, out, progress, cancel);
  OXPORT_TRY(runPipeline(state, trace));
  return std::move(state.result);
}

}  // namespace oxport
