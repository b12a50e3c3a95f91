// The core's own mirror of a TorchScript graph after the passes and the example run.
// Converters read this IR only: no libtorch header is needed to write one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "oxport/diagnostic.h"
#include "oxport/tensor.h"

namespace oxport::ts {

enum class ValueType { Tensor, Int, Float, Bool, None, String, Device, List, Tuple, Other };
const char* valueTypeName(ValueType t);

// A value known at export time (a TorchScript constant, a parameter, a baked argument, or
// the result of folding).
struct Constant {
  using List = std::vector<Constant>;
  std::variant<std::monostate, bool, int64_t, double, std::string, HostTensor, List> v;

  bool isNone() const { return v.index() == 0; }
  bool isBool() const { return std::holds_alternative<bool>(v); }
  bool isInt() const { return std::holds_alternative<int64_t>(v); }
  bool isDouble() const { return std::holds_alternative<double>(v); }
  bool isString() const { return std::holds_alternative<std::string>(v); }
  bool isTensor() const { return std::holds_alternative<HostTensor>(v); }
  bool isList() const { return std::holds_alternative<List>(v); }
  bool isNumber() const { return isBool() || isInt() || isDouble(); }
  double toDouble() const;  // bool/int/double; 1-element tensor too
  int64_t toInt() const;    // bool/int; integral double; 1-element tensor
  const HostTensor& tensor() const { return std::get<HostTensor>(v); }
  const List& list() const { return std::get<List>(v); }
  const std::string& str() const { return std::get<std::string>(v); }
  std::string toString() const;  // short printable form
};

struct TensorMeta {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;  // the example run's shape
  bool known = false;
  // A complex tensor (docs/ARCHITECTURE.md, "Complex values"): `dtype` is its component dtype
  // (complex64 -> Float32), `shape` PyTorch's shape; converted, it is a real tensor of shape
  // shape + [2] (real, imag), torch.view_as_real's layout.
  bool complex = false;
  int rank() const { return static_cast<int>(shape.size()); }
  std::string toString() const;  // "Float(1, 3, 224, 224)"
};

struct Node;

struct Value {
  int id = -1;
  std::string name;                // TorchScript debug name, for messages
  ValueType type = ValueType::Other;
  ValueType elem_type = ValueType::Other;  // for lists
  TensorMeta meta;                 // tensors: shape/dtype seen in the example run
  std::vector<TensorMeta> elem_meta;  // lists/tuples of tensors
  std::optional<Constant> constant;   // static: known at export time
  std::optional<Constant> example;    // dynamic scalars: the value seen in the example run
  std::string param_name;          // parameters/buffers: "layer1.0.conv1.weight"
  // A static tensor computed from parameters/buffers at export time (weight.t(), a folded
  // product of weights): a weight of the written model, as torch.onnx keeps such folds.
  bool from_weights = false;
  // Such a tensor's constant sizes that the fold used (cls.expand(3, -1, -1), repeat(2, 1)): tracing
  // records len(x) and int(x.shape[0]) as constants, so a folded weight can carry an input's
  // example size (baked-dynamic-size reads them).
  std::vector<int64_t> folded_sizes;
  Node* producer = nullptr;
  int offset = 0;                  // output index at producer
  std::vector<Node*> users;

  bool isConstant() const { return constant.has_value(); }
  bool isNone() const { return type == ValueType::None || (constant && constant->isNone()); }
  bool isTensor() const { return type == ValueType::Tensor; }
  std::string typeString() const;
};

struct Block;

struct Node {
  int id = -1;
  std::string kind;                  // "aten::conv2d"
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;
  std::vector<std::string> arg_names;  // schema argument names, parallel to inputs
  std::string schema;                // the operator's schema, for messages
  std::string module_path;           // "layer1.0.conv1" ("" at top level)
  std::vector<std::string> scope;    // instance names per level: {"layer1", "0", "conv1"}
  std::vector<std::string> scope_types;  // class names per level
  SourceLocation location;
  bool nondeterministic = false;
  std::vector<std::unique_ptr<Block>> blocks;  // prim::If / prim::Loop bodies

  Value* input(size_t i) const { return inputs.at(i); }
  Value* output(size_t i = 0) const { return outputs.at(i); }
  // Index of the schema argument `name`, or -1.
  int argIndex(const std::string& name) const;
  // Diagnostic located at this node.
  Diagnostic error(std::string code, std::string message, std::string hint = {}) const;
  Diagnostic warning(std::string code, std::string message, std::string hint = {}) const;
};

struct Block {
  std::vector<Value*> inputs;
  std::vector<Value*> outputs;
  std::vector<Node*> nodes;
};

class Graph {
 public:
  Value* newValue(ValueType t, std::string name = {});
  Value* newConstant(Constant c, std::string name = {});
  Node* newNode(std::string kind);  // not placed in `nodes`; the caller appends it

  std::vector<Value*> inputs;    // tensor inputs, flattened, in graph-input order
  std::vector<std::string> input_param_names;  // parallel to inputs: "" for user inputs
  std::vector<Value*> outputs;   // flattened outputs
  std::vector<Node*> nodes;      // top-level nodes, topological order

  size_t valueCount() const { return values_.size(); }
  std::string toText() const;

 private:
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
};

ValueType typeOfConstant(const Constant& c);

// Drops top-level nodes none of whose results is used (by a node, a block's results or the
// graph's outputs), repeatedly, with everything nested in them; nodes without results (raise,
// print) stay. What a dropped shape assert alone used (a loop over sizes) goes this way.
// Returns how many nodes were dropped.
size_t removeUnusedNodes(Graph& g);

}  // namespace oxport::ts
