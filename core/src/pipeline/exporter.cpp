// Model::exportOnnx (the pipeline in pipeline.cpp runs it) and the Model methods beside it:
// the example inputs, the reference run, the saved graph and the inspected graph.
#include <algorithm>
#include <optional>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "frontend/frontend.h"
#include "pipeline/model_impl.h"
#include "pipeline/module_snapshot.h"
#include "pipeline/pipeline.h"

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

// Switches the module's training flags for a reference run and restores them afterwards, with the
// module's state (ModuleSnapshot). Fake-quantize observers left enabled are switched off for the
// run: an enabled observer updates its statistics in place from every input (libtorch's own reruns
// then differ), while the export uses the statistics as saved (warning observer-enabled); the
// reference computes what the file does.
class TrainingGuard {
 public:
  TrainingGuard(torch::jit::Module& m, TrainingMode mode) : m_(m), was_(m.is_training()), snapshot_(m) {
    if (mode == TrainingMode::Eval) m_.eval();
    else if (mode == TrainingMode::Training) m_.train(true);
    for (auto& [obj, slots] : snapshot_.saved()) {
      const auto& type = obj->type();
      for (size_t i = 0; i < slots.size() && i < type->numAttributes(); ++i)
        if (type->getAttributeName(i) == "observer_enabled" && slots[i].isTensor())
          obj->setSlot(i, at::zeros_like(slots[i].toTensor()));  // a new tensor: the saved one is untouched
    }
  }
  ~TrainingGuard() { m_.train(was_); }  // before snapshot_'s destructor restores the slots

 private:
  torch::jit::Module& m_;
  bool was_;
  ModuleSnapshot snapshot_;
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

// The half type (float16/bfloat16) of a model whose forward failed for lack of a CPU kernel in
// that type ("... not implemented for 'Half'"), if that is why it failed.
std::optional<at::ScalarType> halfTypeOf(const torch::jit::Module& m, const std::vector<c10::IValue>& inputs,
                                         const std::string& message) {
  std::optional<at::ScalarType> half;
  if (message.find("not implemented for 'Half'") != std::string::npos) half = at::kHalf;
  else if (message.find("not implemented for 'BFloat16'") != std::string::npos) half = at::kBFloat16;
  if (!half) return std::nullopt;
  for (const auto& p : m.parameters())
    if (p.scalar_type() == *half) return half;
  for (const auto& b : m.buffers())
    if (b.scalar_type() == *half) return half;
  std::vector<at::Tensor> flat;
  for (const auto& v : inputs) flattenIValue(v, flat);
  for (const auto& t : flat)
    if (t.scalar_type() == *half) return half;
  return std::nullopt;
}

// A float32 copy of the module (the module itself is left as it is).
Result<torch::jit::Module> floatCopy(const torch::jit::Module& m) {
  try {
    torch::jit::Module copy = m.deepcopy();
    copy.to(at::kFloat);
    return copy;
  } catch (const std::exception& e) {
    return Error("forward-failed", torchErrorMessage(e));
  }
}

// forward on the float32 copy with the inputs widened to float32.
Result<c10::IValue> runWidened(torch::jit::Module& copy, const std::vector<c10::IValue>& inputs, TrainingMode mode) {
  try {
    TrainingGuard guard(copy, mode);
    torch::NoGradGuard no_grad;
    std::vector<c10::IValue> wide;
    for (const auto& v : inputs)
      wide.push_back(mapTensors(v, [](const at::Tensor& t) {
        return (t.scalar_type() == at::kHalf || t.scalar_type() == at::kBFloat16) ? t.to(at::kFloat) : t;
      }));
    return copy.forward(wide);
  } catch (const std::exception& e) {
    return Error("forward-failed", torchErrorMessage(e));
  }
}

// forward's result as the graph's outputs (flattened, named), floating ones rounded to `rounded_to`.
std::vector<NamedTensor> namedOutputs(const c10::IValue& result, std::optional<at::ScalarType> rounded_to,
                                      const ExportOptions& options) {
  std::vector<at::Tensor> flat;
  flattenResult(result, flat);
  if (rounded_to)
    for (auto& t : flat)
      if (t.scalar_type() == at::kFloat) t = t.to(*rounded_to);
  std::vector<NamedTensor> out;
  for (size_t i = 0; i < flat.size(); ++i) {
    std::string name = i < options.output_names.size() ? options.output_names[i] : "output_" + std::to_string(i);
    out.push_back({name, hostTensorFromAt(flat[i])});
  }
  return out;
}

std::string halfName(at::ScalarType t) { return t == at::kHalf ? "float16" : "bfloat16"; }

// The line of libtorch's message that names the missing kernel ("slow_conv2d_cpu" not implemented
// for 'Half').
std::string kernelMissing(const std::string& message) {
  const size_t at = message.find(" not implemented for '");
  size_t begin = message.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  const size_t colon = message.find("Error: ", begin);
  if (colon != std::string::npos && colon < at) begin = colon + 7;
  const size_t end = message.find('\n', at);
  return message.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
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
                                                     const std::vector<std::vector<int64_t>>& shapes,
                                                     std::string* note) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl_->module, options, shapes));
  c10::IValue result;
  std::optional<at::ScalarType> rounded_to;
  Model::Impl& impl = *impl_;
  if (!impl.float_copy_of) {
    try {
      TrainingGuard guard(impl.module, options.training);
      torch::NoGradGuard no_grad;
      std::vector<c10::IValue> inputs = args.values;
      result = impl.module.forward(inputs);
    } catch (const std::exception& e) {
      const std::string message = torchErrorMessage(e);
      auto half = halfTypeOf(impl.module, args.values, e.what());
      if (!half)
        return Error("forward-failed", "the model fails on the example inputs: " + message,
                     "check the input shapes and dtypes in args");
      impl.float_copy_of = *half;
      impl.float_copy_note = "libtorch 1.13 cannot run this " + halfName(*half) + " model on the CPU (" + kernelMissing(e.what()) + ")";
      auto widened = widenedForward(impl.module, *half);
      if (widened.ok()) impl.widened = std::move(*widened);
    }
  }
  if (impl.float_copy_of && impl.widened && !impl.float_copy) {
    TrainingGuard guard(impl.module, options.training);
    torch::NoGradGuard no_grad;
    auto run = runWidenedForward(*impl.widened, impl.module, args.values);
    if (run.ok()) {
      result = std::move(*run);
      rounded_to = impl.float_copy_of;
      if (note)
        *note = impl.float_copy_note + ": the reference outputs come from float32 (each weight widened where it is "
                                       "read), rounded to " + halfName(*impl.float_copy_of);
    } else if (run.error().first().message.find("Half") == std::string::npos &&
               run.error().first().message.find("BFloat16") == std::string::npos) {
      // Not a half type's fault: the float32 copy would fail the same way.
      return Error("forward-failed", "the model fails on the example inputs (run in float32, each weight widened "
                                     "where it is read): " + run.error().first().message,
                   "check the input shapes and dtypes in args");
    } else {
      impl.widened.reset();  // e.g. a half tensor made inside forward: the whole module in float32, as before
    }
  }
  if (impl.float_copy_of && !impl.widened) {
    if (!impl.float_copy) {
      auto copy = floatCopy(impl.module);
      if (!copy.ok())
        return Error("forward-failed", "the model cannot run on the CPU in its half precision, and a float32 copy of "
                                       "it cannot be made: " + copy.error().message(),
                     "check the input shapes and dtypes in args");
      impl.float_copy = std::move(*copy);
    }
    auto widened = runWidened(*impl.float_copy, args.values, options.training);
    if (!widened.ok())
      return Error("forward-failed", "the model cannot run on the CPU in its half precision, and its float32 copy fails "
                                     "on the example inputs: " + widened.error().message(),
                   "check the input shapes and dtypes in args");
    result = std::move(*widened);
    rounded_to = impl.float_copy_of;
    if (note)
      *note = impl.float_copy_note + ": the reference outputs come from a float32 copy of it, rounded to " +
              halfName(*impl.float_copy_of);
  }
  return namedOutputs(result, rounded_to, options);
}

Result<std::vector<NamedTensor>> Model::runHalfRoundedReference(const ExportOptions& options,
                                                                const std::vector<std::vector<int64_t>>& shapes) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Model::Impl& impl = *impl_;
  if (!impl.float_copy_of || !impl.widened || !impl.widened->rounded_code) return std::vector<NamedTensor>{};
  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl.module, options, shapes));
  TrainingGuard guard(impl.module, options.training);
  torch::NoGradGuard no_grad;
  OXPORT_ASSIGN(c10::IValue result, runWidenedForward(*impl.widened, impl.module, args.values, /*rounded=*/true));
  return namedOutputs(result, impl.float_copy_of, options);
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
  ModuleSnapshot snapshot(impl_->module);
  OXPORT_ASSIGN(ExampleArgs args, buildExampleArgs(impl_->module, options));
  OXPORT_ASSIGN(FrontendResult fr, runFrontend(impl_->module, args, options, progress, cancel));
  return tsGraphView(*fr.graph);
}

Result<ExportResult> Model::exportOnnx(const ExportOptions& options, const OutputTarget& out,
                                       const ProgressFn& progress, const CancelToken& cancel,
                                       const PassTrace* trace) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  ModuleSnapshot snapshot(impl_->module);
  ExportState state(*impl_, options, out, progress, cancel);
  OXPORT_TRY(runPipeline(state, trace));
  return std::move(state.result);
}

std::string toJson(const ExportStats& s) {
  nlohmann::ordered_json j;
  j["phase_ms"] = s.phase_ms;
  j["pass_ms"] = nlohmann::ordered_json::array();
  for (const auto& [name, ms] : s.pass_ms) j["pass_ms"].push_back({{"pass", name}, {"ms", ms}});
  j["onnx_nodes"] = s.onnx_nodes;
  j["torch_nodes"] = s.torch_nodes;
  j["initializers"] = s.initializers;
  j["initializer_bytes"] = s.initializer_bytes;
  j["file_bytes"] = s.file_bytes;
  j["external_data"] = s.external_data;
  j["checker_passed"] = s.checker_passed;
  j["shape_inference_passed"] = s.shape_inference_passed;
  j["example_run"] = s.example_run;
  j["onnx_op_histogram"] = s.onnx_op_histogram;
  j["torch_op_histogram"] = s.torch_op_histogram;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace oxport
