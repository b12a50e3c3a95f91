// Running an exported model in ONNX Runtime, and verifying it against libtorch.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "oxport/diagnostic.h"
#include "oxport/progress.h"
#include "oxport/tensor.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

class Model;
struct ExportOptions;

// Runs an ONNX file on named inputs. The core does not care how: the default implementation
// drives ONNX Runtime through tools/ort_run.js (npm's onnxruntime-node) in a child process.
class OnnxRuntime {
 public:
  virtual ~OnnxRuntime() = default;
  virtual Result<std::vector<NamedTensor>> run(const std::filesystem::path& model,
                                               const std::vector<NamedTensor>& inputs) = 0;
  virtual std::string describe() const = 0;
};

// Finds node and the runner script (OXPORT_ORT_RUNNER, next to the executable, or the source
// tree). The error says how to install the runtime when it is missing.
Result<std::unique_ptr<OnnxRuntime>> makeDefaultRuntime();

struct OutputComparison {
  std::string name;
  std::vector<int64_t> expected_shape, actual_shape;
  double max_abs_error = 0;
  double max_rel_error = 0;     // max abs error / max |expected|
  double max_magnitude = 0;
  bool passed = false;
  std::string note;             // shape or dtype mismatch, missing output ...
  // Outcomes that pass without the values matching element for element (`note` says why):
  // tie_order: it differs only where a TopK/ArgMax/ArgMin (sort, max(dim)) picked another of
  // several equal candidates; computed from libtorch's picks the file's output matches.
  // random: it depends on a random node (dropout in training mode, rand_like, multinomial ...):
  // only its shape and dtype are compared.
  bool tie_order = false;
  int64_t tied_elements = 0;    // index elements picked differently among equal values
  bool random = false;
};

struct VerifyRun {
  std::vector<std::vector<int64_t>> input_shapes;  // shapes used for this run
  std::vector<OutputComparison> outputs;
  bool passed = false;
  std::string error;  // when the run itself failed (ONNX Runtime error text)
};

struct VerifyReport {
  double tolerance = 1e-4;  // relative to the output's largest magnitude
  std::vector<VerifyRun> runs;
  bool passed = false;
  // Not run: the file has nodes ONNX Runtime cannot run (ops kept in their own domain under
  // ONNX_FALLTHROUGH or as ATen nodes); `skip_reason` says which. Not a failure of the export.
  bool skipped = false;
  std::string skip_reason;
  // How the comparison was made when it differs from the plain rule (a float16 model's reference
  // computed by a float32 copy of it, ...), once each.
  std::vector<std::string> notes;
  // "passed", "passed except tie order", "passed, random outputs not compared",
  // "passed except tie order, random outputs not compared", "FAILED" or "not run".
  std::string outcome() const;
  std::string toText() const;
  std::string toJson() const;
};

struct VerifyOptions {
  double tolerance = 1e-4;
  // Extra input shape sets to try. Empty: for every dynamic axis, traced size + 1 and 2x.
  std::vector<std::vector<std::vector<int64_t>>> extra_shapes;
  bool extra_sizes = true;
};

// Progress: Phase::Verify once before each shape set (fraction = sets done / sets) and 1.0 at the
// end. Cancel is checked before each set and after each ONNX Runtime run (a run itself is not
// interrupted); the ONNX file is only read.
Result<VerifyReport> verifyExport(const Model& model, const ExportOptions& options,
                                  const std::filesystem::path& onnx_file, OnnxRuntime& runtime,
                                  const VerifyOptions& vopts = {}, const CancelToken& cancel = {},
                                  const ProgressFn& progress = {});

OutputComparison compareTensors(const std::string& name, const HostTensor& expected,
                                const HostTensor& actual, double tolerance);

}  // namespace oxport
OXPORT_API_END
