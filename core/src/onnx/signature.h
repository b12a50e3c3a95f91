// Private: the names of an ONNX file's graph inputs and outputs, read without parsing the rest of
// the file (initializers are skipped, so a model of any size costs a few reads).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "oxport/diagnostic.h"

namespace oxport::onnx_ir {

struct GraphSignature {
  std::vector<std::string> inputs;   // graph.input, in order (initializers kept as inputs included)
  std::vector<std::string> outputs;  // graph.output, in order
  std::vector<std::string> domains;  // opset_import domains ("" for ai.onnx)
};

Result<GraphSignature> readGraphSignature(const std::filesystem::path& file);

}  // namespace oxport::onnx_ir
