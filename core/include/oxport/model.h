// Loading a TorchScript file and exporting it. The public face of the core.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "oxport/diagnostic.h"
#include "oxport/graph_view.h"
#include "oxport/options.h"
#include "oxport/progress.h"
#include "oxport/tensor.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

enum class ModelKind { TracedModule, ScriptedModule, ScriptFunction };
const char* modelKindName(ModelKind k);

// One argument of forward(), from its TorchScript schema (self excluded).
struct ArgumentInfo {
  std::string name;
  std::string type;            // TorchScript type: "Tensor", "int", "Optional[Tensor]", "List[Tensor]"
  bool has_default = false;
  std::string default_value;   // printed default, when has_default
  bool keyword_only = false;
};

struct ModelInfo {
  std::filesystem::path path;
  ModelKind kind = ModelKind::TracedModule;
  std::vector<ArgumentInfo> arguments;  // forward's arguments, self excluded
  std::string return_type;
  bool training = false;                // the saved module's training flag
  int64_t parameter_count = 0;          // elements in parameters and buffers
  int64_t parameter_bytes = 0;
  std::string schema;                   // "forward(Tensor x, int n=2) -> Tensor"
  // For arguments typed Tensor, the best example shape the saved graph allows. A saved file keeps
  // no input shapes (its code says only `Tensor`), so this is read from what consumes the input:
  // the first conv/linear/embedding/RNN weight, or a view/reshape with constant sizes. Sizes the
  // graph does not show are defaults (batch 1, images 224x224, sequences 16); `reason` says which.
  struct InputGuess {
    std::vector<int64_t> shape;
    DType dtype = DType::Float32;
    std::string reason;  // "channels 3 from conv1.weight [64, 3, 7, 7]; batch 1 and 224x224 are defaults"
  };
  std::map<std::string, InputGuess> input_guesses;
  // What loading said besides the model itself: an op library oxport loaded for it
  // (op-library-loaded, a note), one the user loaded that it does not use (a warning).
  std::vector<Diagnostic> load_notes;
};

// Per-phase wall time in milliseconds, op histogram and sizes of a finished export.
struct ExportStats {
  std::map<std::string, double> phase_ms;  // per stage of the pipeline (its passes summed)
  std::vector<std::pair<std::string, double>> pass_ms;  // per pass, in the order they ran
  std::map<std::string, int> onnx_op_histogram;
  std::map<std::string, int> torch_op_histogram;
  int onnx_nodes = 0;
  int torch_nodes = 0;
  int initializers = 0;
  int64_t initializer_bytes = 0;
  int64_t file_bytes = 0;
  bool external_data = false;
  bool checker_passed = false;
  bool shape_inference_passed = false;
  // How the example run went: "meta" (values that depend on the inputs ran as meta tensors, shapes
  // and dtypes only), or "real (fallback: <why>)" / "real (OXPORT_META_RUN=0)" (the model ran once
  // on the real example inputs).
  std::string example_run;
};

// The stats as JSON text: the "stats" object of `oxport export --report` (and of the Python API's
// result and report).
std::string toJson(const ExportStats& stats);

struct ExportResult {
  std::filesystem::path output;             // empty when written to a stream
  std::vector<Diagnostic> diagnostics;      // warnings and notes (errors make the Result fail)
  ExportStats stats;
  std::vector<std::string> input_names;     // graph inputs as written
  std::vector<std::string> output_names;
  GraphView torch_graph;                    // TorchScript graph after the passes
  GraphView onnx_graph;                     // the ONNX graph as written
  std::string verbose_log;                  // the graph printout when options.verbose
};

// One pass of the export pipeline, as `oxport export --list-passes` prints it.
struct PassDescription {
  std::string name;     // "constants-as-nodes"
  std::string stage;    // "passes+trace", "convert", "optimize" or "serialize+check"
  std::string summary;  // what it does, one line
};
// The passes of Model::exportOnnx, in the order they run.
std::vector<PassDescription> exportPasses();

// Printing the IR a pass leaves (`oxport export --print-after PASS`): for each pass named in
// `print_after` ("all" for every one), `print` gets the pass's name and the graph as text (the
// TorchScript IR up to conversion, the ONNX IR from then on).
struct PassTrace {
  std::set<std::string> print_after;
  std::function<void(const std::string& pass, const std::string& ir_text)> print;
};

// Where to write the model: a file (written atomically) or a stream.
struct OutputTarget {
  std::filesystem::path file;
  std::ostream* stream = nullptr;
  // Whether to fill ExportResult::torch_graph and onnx_graph (the studio's previews). The ONNX
  // view's summaries read every weight (min, max): 0.65 s of a 1.4 GB model's export. The CLI,
  // which shows neither, turns this off.
  bool graph_views = true;
  static OutputTarget toFile(std::filesystem::path p) { OutputTarget t; t.file = std::move(p); return t; }
  static OutputTarget toStream(std::ostream& s) { OutputTarget t; t.stream = &s; return t; }
};

// How Model::load guards against libtorch crashing on a malformed file (see load_probe.h).
//   ChildProcess (the default): the file is first read in a fork()ed child; a crash there becomes the
//     error `load-crashed` and this process is unharmed. The file is parsed twice.
//   CallerIsolated: the caller already runs in a process of its own whose crash is reported (the
//     `oxport` command does this), so the file is parsed once; the checks that need no child
//     (archive, CRC-32s, debug info) still run.
enum class LoadGuard { ChildProcess, CallerIsolated };
void setLoadGuard(LoadGuard guard);  // process-wide; set it before loading
LoadGuard loadGuard();

class Model {
 public:
  struct Impl;

  static Result<Model> load(const std::filesystem::path& path, const ProgressFn& progress = {},
                            const CancelToken& cancel = {});
  const ModelInfo& info() const;

  // forward's graph as saved, without running the model: quick (no shapes, nothing folded).
  Result<GraphView> savedGraph() const;

  // The TorchScript graph after the passes for these options (the example run included).
  Result<GraphView> inspect(const ExportOptions& options, const ProgressFn& progress = {},
                            const CancelToken& cancel = {}) const;

  // Builds the example inputs of `options` and runs the original module on them (libtorch).
  // A float16/bfloat16 model whose ops libtorch 1.13 cannot run on the CPU in that type runs in
  // float32 instead, each weight widened where forward reads it (no float32 copy of the module;
  // where that cannot run, a float32 copy of it), its floating outputs rounded back to the
  // model's type; `note` (if given) then says so.
  Result<std::vector<NamedTensor>> runReference(const ExportOptions& options,
                                                const std::vector<std::vector<int64_t>>& input_shapes = {},
                                                std::string* note = nullptr) const;

  // For a half-precision model whose reference ran so (weights widened where read; after
  // runReference): the same run with each op's result also rounded to the model's type, as a run
  // in that type holds it. Empty for other models. Verification compares the two to measure how
  // far the type's own rounding moves the outputs.
  Result<std::vector<NamedTensor>> runHalfRoundedReference(
      const ExportOptions& options, const std::vector<std::vector<int64_t>>& input_shapes = {}) const;

  // Example inputs as the exported graph receives them (flattened tensors, in graph-input order).
  Result<std::vector<HostTensor>> exampleInputs(const ExportOptions& options,
                                                const std::vector<std::vector<int64_t>>& input_shapes = {}) const;

  Result<ExportResult> exportOnnx(const ExportOptions& options, const OutputTarget& out,
                                  const ProgressFn& progress = {}, const CancelToken& cancel = {},
                                  const PassTrace* trace = nullptr) const;

  std::shared_ptr<Impl> impl() const { return impl_; }

 private:
  explicit Model(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

// The tensor an export makes for `spec` as an example input (its fill, seed, shape and dtype, as
// docs/PRESET.md describes them; an npy spec reads its file), with the same errors. Python's
// oxport.example_input.
Result<HostTensor> makeExampleTensor(const TensorSpec& spec);

// Versions of the libraries the core was built with.
struct Versions {
  std::string oxport, libtorch, onnx, protobuf;
};
Versions versions();

}  // namespace oxport
OXPORT_API_END
