// Private: from a loaded TorchScript module and example arguments to the core's own IR.
// Inline with module call stacks, bake non-tensor arguments, fold export-time constants (no grad,
// module flags, the inputs' metadata: pass_export_constants.h), run the graph node by node on the
// example inputs without autograd (shapes, dtypes, dynamic scalars; folding of input-independent
// values; asserts on shapes checked and left out: shape_asserts.h), lower.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/script.h>

#include "frontend/diagnose.h"
#include "ir/ts_ir.h"
#include "oxport/graph_view.h"
#include "oxport/options.h"
#include "oxport/progress.h"

namespace oxport {

struct FrontendResult {
  std::unique_ptr<ts::Graph> graph;
  std::vector<Diagnostic> warnings;
  std::vector<std::string> input_debug_names;  // user tensor inputs, flattened
  int user_input_count = 0;                    // graph inputs before the parameters
  std::string example_run;  // "meta" (dynamic values as meta tensors) or "real (...)" and why
  RecordedLiterals recorded_literals;  // tensor constants of a recorded graph (baked-dynamic-size)
};

struct ExampleArgs {
  std::vector<c10::IValue> values;  // one per forward argument after self (defaults filled in)
  std::vector<std::string> names;   // their schema names
};

// Builds forward's arguments from the options: positional args, then kwargs by name, then
// schema defaults, then None for Optional arguments. `shapes` overrides tensor shapes in order.
Result<ExampleArgs> buildExampleArgs(const torch::jit::Module& module, const ExportOptions& options,
                                     const std::vector<std::vector<int64_t>>& shapes = {});

// Sees each top-level node's outputs as the example run computes them (debug name, value). With
// an observer the run is on real tensors (no meta try); verify --localize compares the values.
using ValueObserver = std::function<void(const std::string& debug_name, const c10::IValue& value)>;

Result<FrontendResult> runFrontend(const torch::jit::Module& module, const ExampleArgs& args,
                                   const ExportOptions& options, const ProgressFn& progress,
                                   const CancelToken& cancel, const ValueObserver* observer = nullptr);

// forward's graph as saved, inlined, without running the model: structure, module scopes and
// source lines at once, but no shapes and nothing folded (the studio draws it while the example
// run computes the real preview). Constants become node attributes, parameters initializer edges.
GraphView savedGraphView(const torch::jit::Module& module);

// The source text recorded for a node: for a traced node the Python call stack that made it
// ("model.py(12): forward" lines down to torch/jit/_trace.py), for scripted code its Python
// source. `original` says whether it came from the model's own source (not the serialized code).
std::string recordedSource(const torch::jit::Node* n, bool* original = nullptr);
bool isTraceStack(const std::string& text);

// The Python stack torch.jit.trace recorded for the nodes of every method of every submodule:
// the user frames (file, line, function; see userFramesOfTraceStack), each with the module path
// of the first node seen with it. `traced` is set when any node carries such a stack, which only
// torch.jit.trace records (scripted code keeps its source text instead).
std::vector<PythonFrame> tracedUserFrames(const torch::jit::Module& module, bool* traced = nullptr);

// IValue <-> core types
ts::Constant constantFromIValue(const c10::IValue& v, bool* ok);
HostTensor hostTensorFromAt(const at::Tensor& t);
// The same value with every tensor in it (through lists, tuples and dicts) replaced by fn(tensor).
c10::IValue mapTensors(const c10::IValue& v, const std::function<at::Tensor(const at::Tensor&)>& fn);
at::Tensor atFromHostTensor(const HostTensor& t);
DType dtypeFromScalarType(c10::ScalarType s, bool* ok = nullptr);
c10::ScalarType scalarTypeFromDType(DType d);

}  // namespace oxport
