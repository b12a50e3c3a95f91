// Export options: one field per parameter of horizon_plugin_pytorch's export_to_onnx, same defaults.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "oxport/diagnostic.h"
#include "oxport/tensor.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

enum class TrainingMode { Eval, Preserve, Training };
enum class OperatorExportType { Onnx, OnnxFallthrough, OnnxAten, OnnxAtenFallback };
// How a ScriptModule's graph is exported (an oxport option; export_to_onnx has no such parameter).
//   Script (the default): the control flow is kept: a data-dependent prim::If becomes ONNX If, a
//     prim::Loop becomes Loop, so the model is right for every input.
//   Trace: the graph is re-traced on the example inputs, as torch.jit.trace would record it: every
//     If is replaced by the branch the example inputs take and every loop is unrolled by its
//     example count. For constructs with no ONNX form (strings, raise, dict mutation) on paths the
//     example inputs do not take; the result is right only for inputs that take the same path.
enum class GraphMode { Script, Trace };

const char* trainingModeName(TrainingMode m);                      // "EVAL", "PRESERVE", "TRAINING"
std::optional<TrainingMode> parseTrainingMode(const std::string& s);  // also "TrainingMode.EVAL"
const char* operatorExportTypeName(OperatorExportType t);          // "ONNX_FALLTHROUGH", ...
std::optional<OperatorExportType> parseOperatorExportType(const std::string& s);
const char* graphModeName(GraphMode m);                            // "script", "trace"
std::optional<GraphMode> parseGraphMode(const std::string& s);     // case-insensitive

constexpr int kMinOpset = 9;
constexpr int kMaxOpset = 17;
constexpr int kDefaultOpset = 11;

// How an example tensor is filled. Smooth: a low-frequency random field in [0, 1] over the last
// two axes (images with blobs and edges rather than per-pixel noise; docs/PRESET.md).
enum class FillKind { Randn, Rand, Zeros, Ones, Arange, Npy, Smooth };
const char* fillKindName(FillKind f);
std::optional<FillKind> parseFillKind(const std::string& s);

struct TensorSpec {
  std::vector<int64_t> shape;
  DType dtype = DType::Float32;
  FillKind fill = FillKind::Randn;
  std::string npy;  // path, when fill == Npy (resolved against the preset's folder)
  uint64_t seed = 0;
  bool operator==(const TensorSpec& o) const {
    return shape == o.shape && dtype == o.dtype && fill == o.fill && npy == o.npy && seed == o.seed;
  }
};

// An argument of forward(): a tensor (becomes a graph input) or a value baked into the graph.
struct ArgValue {
  using List = std::vector<ArgValue>;
  std::variant<std::monostate, bool, int64_t, double, std::string, TensorSpec, List> v;

  ArgValue() = default;
  static ArgValue none() { return {}; }
  static ArgValue tensor(TensorSpec t) { ArgValue a; a.v = std::move(t); return a; }
  static ArgValue boolean(bool b) { ArgValue a; a.v = b; return a; }
  static ArgValue integer(int64_t i) { ArgValue a; a.v = i; return a; }
  static ArgValue number(double d) { ArgValue a; a.v = d; return a; }
  static ArgValue string(std::string s) { ArgValue a; a.v = std::move(s); return a; }
  static ArgValue list(List l) { ArgValue a; a.v = std::move(l); return a; }

  bool isNone() const { return v.index() == 0; }
  bool isTensor() const { return std::holds_alternative<TensorSpec>(v); }
  bool isList() const { return std::holds_alternative<List>(v); }
  bool operator==(const ArgValue& o) const { return v == o.v; }
};

// One entry of dynamic_axes: the list form ([0, 2]) or the dict form ({0: "batch"}).
struct DynamicAxisSpec {
  bool list_form = false;             // true when given as a list; names are generated then
  std::map<int64_t, std::string> axes;  // axis index -> name (empty name in list form)
  bool operator==(const DynamicAxisSpec& o) const { return list_form == o.list_form && axes == o.axes; }
};

struct ExportOptions {
  // args: positional arguments, then the trailing dict of named arguments (kwargs).
  std::vector<ArgValue> args;
  std::vector<std::pair<std::string, ArgValue>> kwargs;

  bool export_params = true;
  bool verbose = false;
  TrainingMode training = TrainingMode::Eval;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  OperatorExportType operator_export_type = OperatorExportType::OnnxFallthrough;
  int opset_version = kDefaultOpset;
  bool do_constant_folding = true;
  std::map<std::string, DynamicAxisSpec> dynamic_axes;  // key: input or output name
  std::optional<bool> keep_initializers_as_inputs;      // nullopt: the seed's default (None)
  std::map<std::string, int64_t> custom_opsets;         // domain -> version
  GraphMode graph_mode = GraphMode::Script;             // oxport's own option (see GraphMode)

  bool operator==(const ExportOptions& o) const;
};

// Checks that do not need the model: opset range, unique names, dynamic_axes well-formed.
// Each error names the option (Diagnostic::option).
std::vector<Diagnostic> validateOptions(const ExportOptions& o);

}  // namespace oxport
OXPORT_API_END
