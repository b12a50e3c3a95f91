// Private: serializing the core's ONNX IR with libonnx's protobuf types, the checker, shape
// inference, atomic writes and external data.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "onnx/onnx_ir.h"
#include "oxport/diagnostic.h"
#include "oxport/model.h"
#include "oxport/progress.h"

namespace oxport::onnx_ir {

struct WriteReport {
  bool checker_passed = false;
  bool shape_inference_passed = false;
  int64_t bytes = 0;
  bool external_data = false;
  std::vector<Diagnostic> warnings;
  // Types of the intermediate values, from the checking pass of ONNX shape inference (for the
  // studio's inspector; written into the file's value_info with record_value_info).
  std::vector<ValueInfo> inferred_value_info;
};

struct WriteSettings {
  bool check = true;
  // Above this many bytes of initializers, large tensors go to "<file>.data" beside the model.
  int64_t external_data_threshold = int64_t(1800) * 1024 * 1024;
  std::vector<std::string> dynamic_output_names;  // outputs whose unknown dims stay symbolic
  // Record the dtype and shape that the checking pass of shape inference gives each
  // intermediate value of the main graph in the file's value_info (runtimes and viewers then
  // see them without inferring). Needs `check`.
  bool record_value_info = true;
  // Phase::Serialize with the fraction of the weights' bytes written, after each block of about
  // 4 MiB. The cancel is polled there too (and before the check and each file): a cancelled write
  // returns "cancelled", removes its temporary file and leaves an earlier file at the path as it was.
  ProgressFn progress;
  CancelToken cancel;
};

// Runs ONNX shape inference and fills in output shapes that the exporter left unknown.
Status inferOutputShapes(Model& model);

// The element type ONNX type inference gives each value of the model (inputs, initializers, node
// outputs, and the same inside If/Loop/Scan bodies, whose names are unique across scopes), without
// checking types against the schemas (so a graph that breaks them still gets its types). Values
// without a known type are left out.
Result<std::map<std::string, DType>> inferValueTypes(const Model& model);

// Full check (checker + strict shape inference), then writes. The file is written atomically.
Result<WriteReport> writeModel(const Model& model, const OutputTarget& target, const WriteSettings& settings);

}  // namespace oxport::onnx_ir
