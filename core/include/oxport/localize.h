// Localizing a verification failure: which TorchScript node is the first whose ONNX values
// differ from libtorch's (`oxport verify --localize`, the studio's Localize action).
//
// The ONNX file is run in ONNX Runtime with the values of its main graph exposed as outputs, the
// model runs in libtorch node by node on the same inputs, and the values are paired through the
// mapping oxport writes into every file (model metadata "oxport.torch_map": per TorchScript node
// its output values, the ONNX values bound to them and the ONNX nodes made from it). Values are
// compared one by one as libtorch computes them; nothing is kept but the numbers.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "oxport/diagnostic.h"
#include "oxport/progress.h"
#include "oxport/tensor.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

class Model;
class OnnxRuntime;
struct ExportOptions;

// One TorchScript value against the ONNX value it was exported as.
struct ValueComparison {
  std::string torch_value;  // TorchScript debug name, "input.5"
  std::string onnx_value;   // "" when the value has no ONNX counterpart (a graph input, a folded value)
  std::vector<int64_t> expected_shape, actual_shape;
  double max_abs_error = 0;
  double max_rel_error = 0;  // max abs error / the expected value's largest magnitude
  double share_off = 0;      // share of the elements off by more than the tolerance allows
  bool compared = false;     // false: nothing to compare it with (see `note`)
  bool passed = true;
  std::string note;          // "graph input", "shape mismatch: ...", "not exported as a value"
};

// A TorchScript node with its compared outputs and inputs.
struct LocalizedNode {
  int torch_id = -1;         // the node's id in the exported TorchScript graph (GraphView ids)
  int index = -1;            // position in topological order
  std::string torch_node;    // "%input.5 = aten::conv2d"
  std::string kind;          // "aten::conv2d"
  std::string module;        // "layer1.0.conv1"
  std::string source;        // "model.py:33"
  std::vector<std::string> onnx_nodes;  // names of the ONNX nodes made from it
  std::vector<ValueComparison> outputs;
  std::vector<ValueComparison> inputs;
  double max_abs_error = 0, max_rel_error = 0, share_off = 0;  // worst over the outputs
  bool diverges = false;
  bool inputs_agree = true;  // every compared input matches: the divergence starts here
  int inputs_compared = 0;
  // Upstream nodes with no ONNX value of their own whose ONNX nodes this one's carry (a
  // convolution folded into its batch norm): "%input.4 = aten::conv2d in layer2.conv1".
  std::vector<std::string> merged;
};

// Divergent nodes after the first, per module.
struct ModuleDivergence {
  std::string module;
  int nodes = 0;           // divergent nodes in it
  int sources = 0;         // of which with all inputs in agreement (divergences of their own)
  double max_rel_error = 0;
  std::string first_node;  // the first divergent node in it
};

struct LocalizeReport {
  double tolerance = 1e-4;
  bool mapped = false;       // the file carries oxport's mapping
  std::string message;       // what could and could not be compared, in one paragraph
  int torch_nodes = 0;       // TorchScript nodes in the mapping
  int onnx_nodes = 0;        // top-level ONNX nodes in the file
  int onnx_nodes_mapped = 0; // of which named in the mapping
  int compared = 0;          // values compared
  int not_compared = 0;      // mapped values without a comparable ONNX value
  std::optional<LocalizedNode> first_divergence;
  std::vector<LocalizedNode> divergences;  // the next divergent nodes downstream, in order (capped)
  int divergent_nodes = 0;                 // all of them, first included
  std::vector<ModuleDivergence> by_module;
  // Every compared node (for colouring graphs): id, ONNX nodes and worst error.
  std::vector<LocalizedNode> nodes;
  double onnx_ms = 0, torch_ms = 0, total_ms = 0;

  bool diverged() const { return first_divergence.has_value(); }
  std::string toText() const;
  std::string toJson() const;  // the object under the report's "localize" key
};

struct LocalizeOptions {
  double tolerance = 1e-4;    // as verification: relative to each value's largest magnitude
  int max_divergences = 100;  // entries in `divergences`
};

// Runs both sides once on the example inputs of `options`. Fails only when nothing can run (the
// model fails, ONNX Runtime cannot load the file); a file without oxport's mapping gives a report
// with mapped == false and a message saying what can be compared (the graph outputs only).
Result<LocalizeReport> localizeExport(const Model& model, const ExportOptions& options,
                                      const std::filesystem::path& onnx_file, OnnxRuntime& runtime,
                                      const LocalizeOptions& lopts = {}, const CancelToken& cancel = {},
                                      const ProgressFn& progress = {});

// The comparison rule for one value (floating: |a - e| <= max(tol, dtype eps) * max|e|;
// integers and bools exactly). Shapes that differ with the same element count are compared
// flattened, with a note.
ValueComparison compareValue(const std::string& torch_value, const std::string& onnx_value,
                             const HostTensor& expected, const HostTensor& actual, double tolerance);

}  // namespace oxport
OXPORT_API_END
