// What a converter sees: the TorchScript node being converted (our own IR) and a builder for
// the ONNX graph. Converters never touch libtorch or protobuf.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ts_ir.h"
#include "onnx/onnx_ir.h"
#include "oxport/options.h"

namespace oxport::convert {

class AxisDynamics;

using ts::Node;
using ts::Value;
using onnx_ir::Attribute;

Attribute attrInt(const std::string& name, int64_t v);
Attribute attrFloat(const std::string& name, float v);
Attribute attrString(const std::string& name, std::string v);
Attribute attrInts(const std::string& name, std::vector<int64_t> v);
Attribute attrFloats(const std::string& name, std::vector<float> v);
Attribute attrTensor(const std::string& name, HostTensor t);
// A host tensor of the given shape (default: 0-d) holding `value` converted to `dtype`.
HostTensor scalarHostTensor(double value, DType dtype, std::vector<int64_t> shape = {});

struct Settings {
  int opset = kDefaultOpset;
  OperatorExportType export_type = OperatorExportType::OnnxFallthrough;
  TrainingMode training = TrainingMode::Eval;
  bool model_training_flag = false;  // the saved module's own flag (for PRESERVE)
  bool verbose = false;
  bool constant_folding = true;
};

class Context {
 public:
  Context(onnx_ir::Model& model, ts::Graph& graph, const Settings& settings);
  ~Context();

  // ---- settings
  int opset() const { return settings_.opset; }
  const Settings& settings() const { return settings_; }
  // True when ops should be exported in their training form (dropout active, BN batch stats).
  bool trainingForm() const;

  // ---- the node being converted (set by the driver)
  void setCurrent(const Node* n) { current_ = n; }
  const Node* current() const { return current_; }

  // ---- static (export-time) arguments; errors name the argument and the node
  bool isNone(const Value* v) const;
  bool isStatic(const Value* v) const { return v->isConstant(); }
  Result<int64_t> constInt(const Value* v) const;
  Result<double> constDouble(const Value* v) const;
  Result<bool> constBool(const Value* v) const;
  Result<std::string> constString(const Value* v) const;
  // int[] (or a single int, returned as one element)
  Result<std::vector<int64_t>> constInts(const Value* v) const;
  Result<std::vector<double>> constDoubles(const Value* v) const;
  std::optional<int64_t> maybeInt(const Value* v) const;

  // Elements of a list or tuple value (from its ListConstruct/TupleConstruct, or a constant list).
  Result<std::vector<const Value*>> listElements(const Value* v);

  // ---- tensors in the ONNX graph
  // The ONNX tensor carrying v. Constant tensors become initializers (once); static scalars
  // become 0-d constants; dynamic scalars are already 0-d tensors.
  Result<std::string> tensor(const Value* v);
  // Like tensor(), but a scalar (static or dynamic) is made a 0-d tensor of `dtype`.
  Result<std::string> tensorOfType(const Value* v, DType dtype);
  // A 1-D int64 tensor for an int[] value whose elements may be dynamic (Concat of Unsqueezes).
  Result<std::string> intsTensor(const Value* v);
  // A list of tensors (from ListConstruct, a split, or a constant list).
  Result<std::vector<std::string>> tensorList(const Value* v);

  // A tensor computed at export time. It is written as a weight (an initializer, a graph input
  // with keep_initializers_as_inputs) when `from` is a parameter or was computed from parameters
  // (a transposed or split weight), and as a constant (a Constant node) otherwise.
  std::string constant(HostTensor t, const std::string& hint = "Constant", const Value* from = nullptr);
  // Where the weight whose bytes `w` holds is read: (node, input index) for every value that
  // holds the same bytes (tied parameters reached through two attribute paths are one weight),
  // in blocks too. Empty when `w` is not a constant tensor.
  const std::vector<std::pair<const Node*, size_t>>& weightUses(const Value* w);
  // The 2-D tensor `t` transposed, as constant() writes it. A large one is not transposed in
  // memory: its bytes are made from `t` as the file is written (Initializer::transposed_of).
  std::string transposedConstant(const HostTensor& t, const std::string& hint, const Value* from);
  std::string constInt64s(const std::vector<int64_t>& v, bool scalar = false);
  std::string constScalar(double v, DType dtype);  // 0-d

  // ---- emitting ONNX nodes (named after the current node's module scope)
  std::vector<std::string> emit(const std::string& op_type, const std::vector<std::string>& inputs,
                                int num_outputs = 1, std::vector<Attribute> attrs = {},
                                const std::string& domain = "");
  std::string emit1(const std::string& op_type, const std::vector<std::string>& inputs,
                    std::vector<Attribute> attrs = {}, const std::string& domain = "") {
    return emit(op_type, inputs, 1, std::move(attrs), domain).front();
  }
  // Helpers with opset-dependent forms.
  std::string cast(const std::string& x, DType to);
  std::string unsqueeze(const std::string& x, const std::vector<int64_t>& axes);
  std::string squeeze(const std::string& x, const std::vector<int64_t>& axes);
  std::string reshape(const std::string& x, const std::vector<int64_t>& shape);
  std::string shapeOf(const std::string& x);
  // Slice along axes with static starts/ends/steps (handles opset 9's attribute form).
  std::string slice(const std::string& x, const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                    const std::vector<int64_t>& steps = {});
  // Splits into pieces of the given sizes along axis (opset 13's input form when needed).
  std::vector<std::string> split(const std::string& x, int64_t axis, const std::vector<int64_t>& sizes);

  // Bind a TorchScript value to an ONNX tensor (or to a list of tensors).
  void bind(const Value* v, const std::string& onnx_name);
  void bindList(const Value* v, std::vector<std::string> names);
  bool isBound(const Value* v) const;
  // A list whose elements are known values (a list of static length built by append, insert ...).
  void bindListValues(const Value* v, std::vector<const Value*> elems);
  // A list as an ONNX sequence (its length depends on the inputs: built in a Loop or an If).
  void bindSequence(const Value* v, const std::string& onnx_name);
  bool isSequence(const Value* v) const;
  // The ONNX sequence holding list `v`: its binding, or one made here from its elements
  // (SequenceConstruct, or SequenceEmpty of `elem` when it has none). Needs opset 11.
  Result<std::string> sequence(const Value* v, DType elem);
  std::optional<std::string> boundName(const Value* v) const;

  // ---- emitting into a subgraph (If branches, Loop bodies)
  // Until the matching popGraph, emitted nodes go to `g` (constants stay initializers of the
  // main graph, visible in every subgraph). Bindings made meanwhile are dropped by popGraph: a
  // tensor computed inside the subgraph is not visible outside it.
  void pushGraph(onnx_ir::Graph* g);
  void popGraph();
  onnx_ir::Graph& targetGraph() { return targets_.empty() ? model_.graph : *targets_.back().graph; }
  int graphDepth() const { return static_cast<int>(targets_.size()); }

  // ---- metadata from the example run
  const ts::TensorMeta& meta(const Value* v) const { return v->meta; }
  int rank(const Value* v) const { return v->meta.rank(); }
  DType dtype(const Value* v) const { return v->meta.dtype; }
  // Whether axis `axis` of tensor `v` may have another size when the file runs than in the
  // example run: it follows a dynamic axis of a graph input, or a number read from the inputs'
  // data (axis_dynamics.h; errs towards true). Asked after the graph inputs are bound.
  bool axisMayVary(const Value* v, int64_t axis);
  // Normalizes a possibly negative dim against rank.
  int64_t normDim(int64_t dim, int rank) const { return dim < 0 ? dim + rank : dim; }

  // ---- diagnostics at the current node
  Diagnostic error(std::string code, std::string message, std::string hint = {}) const;
  Diagnostic needsOpset(int opset, const std::string& what) const;
  void warn(std::string code, std::string message, std::string hint = {});
  std::vector<Diagnostic>& warnings() { return warnings_; }

  onnx_ir::Model& model() { return model_; }
  ts::Graph& graph() { return graph_; }
  std::string uniqueName(const std::string& base);

 private:
  std::string nodeName(const std::string& op_type);
  std::string scopePrefix() const;

  onnx_ir::Model& model_;
  ts::Graph& graph_;
  Settings settings_;
  const Node* current_ = nullptr;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_map<const Value*, std::vector<std::string>> lists_;
  std::unordered_map<std::string, int> name_counts_;
  std::unordered_map<const Value*, std::vector<const Value*>> const_list_elems_;
  std::vector<Diagnostic> warnings_;
  int const_counter_ = 0;
  // Parameters by their bytes: one initializer however many values read them.
  struct WeightName {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
  };
  std::unordered_map<const void*, std::vector<WeightName>> weight_names_;
  std::optional<std::unordered_map<const void*, std::vector<std::pair<const Node*, size_t>>>> weight_uses_;
  struct Target {
    onnx_ir::Graph* graph;
    std::unordered_map<const Value*, std::string> names;  // bindings before the push
    std::unordered_map<const Value*, std::vector<std::string>> lists;
    std::unordered_map<const Value*, std::vector<const Value*>> list_values;
  };
  std::unordered_map<const Value*, std::vector<const Value*>> list_values_;
  std::unordered_map<const Value*, bool> sequences_;
  std::vector<Target> targets_;
  std::unique_ptr<AxisDynamics> axis_dynamics_;  // made at the first axisMayVary
};

}  // namespace oxport::convert
