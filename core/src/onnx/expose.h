// Private: reading an ONNX file for localization (its top-level nodes, its metadata) and writing
// a copy whose chosen intermediate values are graph outputs, so ONNX Runtime returns them.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "oxport/diagnostic.h"

namespace onnx {
class ModelProto;
}

namespace oxport::onnx_ir {

// The key of oxport's TorchScript mapping in the model's metadata_props.
inline constexpr const char* kTorchMapKey = "oxport.torch_map";

struct FileNode {
  std::string name, op_type, domain;
  std::vector<std::string> outputs;
};

class OnnxFile {
 public:
  static Result<OnnxFile> read(const std::filesystem::path& file);
  OnnxFile(OnnxFile&&) noexcept;
  OnnxFile& operator=(OnnxFile&&) noexcept;
  ~OnnxFile();

  const std::vector<FileNode>& nodes() const { return nodes_; }   // the main graph's, in order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::vector<std::string>& inputs() const { return inputs_; }    // graph inputs, in order
  const std::vector<std::string>& outputs() const { return outputs_; }
  const std::string& producer() const { return producer_; }  // "oxport 0.9.0", "pytorch 1.13.1"
  std::set<std::string> domains() const;                     // of the main graph's nodes
  const std::set<std::string>& produced() const { return produced_; }  // node outputs, main graph
  bool externalData() const { return external_; }

  // Writes a copy with `values` (produced by main-graph nodes) appended to the graph outputs,
  // typed from value_info where the file records it. With external data the copy must sit in
  // the original's folder (its tensors are found relative to it).
  Status writeExposed(const std::vector<std::string>& values, const std::filesystem::path& out) const;

 private:
  OnnxFile() = default;
  std::unique_ptr<::onnx::ModelProto> proto_;
  std::vector<FileNode> nodes_;
  std::map<std::string, std::string> metadata_;
  std::vector<std::string> inputs_, outputs_;
  std::string producer_;
  std::set<std::string> produced_;
  bool external_ = false;
};

}  // namespace oxport::onnx_ir
