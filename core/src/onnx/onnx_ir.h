// The core's own ONNX graph, built by the converters and written by writer.cpp. Plain C++: no
// protobuf here, so converters and passes compile fast and the UI can preview it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "oxport/graph_view.h"
#include "oxport/tensor.h"

namespace oxport::onnx_ir {

struct Graph;

struct Attribute {
  std::string name;
  std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
               std::vector<std::string>, HostTensor, std::shared_ptr<Graph>>
      value;
  std::string toString() const;
};

// A dimension: a fixed size, a symbolic name, or unknown.
struct Dim {
  int64_t value = -1;  // >= 0 when fixed
  std::string param;   // symbolic name, when dynamic
  static Dim fixed(int64_t v) { Dim d; d.value = v; return d; }
  static Dim symbol(std::string p) { Dim d; d.param = std::move(p); return d; }
  static Dim unknown() { return Dim{}; }
};

struct ValueInfo {
  std::string name;
  DType dtype = DType::Float32;  // a sequence's: its tensors' dtype
  bool sequence = false;         // a sequence of tensors (a list built in a loop), not a tensor
  bool has_shape = false;
  std::vector<Dim> shape;
};

struct Node {
  std::string op_type;
  std::string domain;  // "" = ai.onnx
  std::string name;
  std::vector<std::string> inputs;   // "" = absent optional input
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;
  std::string doc_string;
  std::vector<int> origins;          // ids of the TorchScript nodes it came from
  std::string module_path;
  SourceLocation location;

  const Attribute* attr(const std::string& n) const;
};

struct Initializer {
  std::string name;
  HostTensor tensor;
  // A weight: a parameter or buffer of the module, or computed from them (a folded batch norm, a
  // transposed weight). With keep_initializers_as_inputs, exactly these become graph inputs.
  // Other initializers hold what the export computed (shapes, scales, axes, index tables): the
  // constants-as-nodes pass writes them as Constant nodes, never as overridable inputs.
  bool weight = false;
  // Set for a large 2-D tensor written transposed (the weight of a linear layer that MatMul
  // reads): `tensor` has the written dtype, shape and size but no data, and the bytes are those
  // of `transposed_of` transposed, made block by block as the file is written, so that the
  // export never holds a transposed copy of the weight.
  std::shared_ptr<const HostTensor> transposed_of;
};

// Writes the initializer's bytes (`tensor`'s, or `transposed_of`'s transposed), in blocks of
// about 4 MiB. `block_written`, if given, is called with each block's size after it is written;
// when it returns false the write stops there and this returns false (a cancelled export).
bool writeInitializerBytes(std::ostream& os, const Initializer& init,
                           const std::function<bool(size_t)>& block_written = {});

struct Graph {
  std::string name = "main_graph";
  std::vector<Node> nodes;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<Initializer> initializers;
  std::vector<ValueInfo> value_info;
  std::string doc_string;
};

struct Model {
  Graph graph;
  std::map<std::string, int64_t> opset_imports;  // domain -> version ("" = ai.onnx)
  std::string producer_name = "oxport";
  std::string producer_version;
  std::string doc_string;
  int64_t ir_version = 6;
  // The model's metadata_props, in order (oxport.torch_map: see pipeline/pass_torch_map.cpp).
  std::vector<std::pair<std::string, std::string>> metadata_props;
};

// The IR version a model with this opset should carry (opset 9 -> 4 ... opset 17 -> 8).
int64_t irVersionForOpset(int opset);

// A view for the preview and `inspect`.
GraphView toGraphView(const Graph& g);

// The model as text, one node a line with its attributes and module (`--print-after`):
//   %y = Conv(%x, %conv.weight) {kernel_shape=[3, 3]}  # layer1.0.conv1
// Subgraphs (If branches, Loop bodies) are indented under their node; initializers show their
// dtype and shape, not their data.
std::string toText(const Model& m);

}  // namespace oxport::onnx_ir
