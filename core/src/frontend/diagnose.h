// Diagnostics about the traced graph that do not stop an export: sizes baked by tracing into
// what should follow a dynamic axis.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ts_ir.h"
#include "oxport/options.h"

namespace oxport {

// A dynamic axis of a graph input with the size it had in the example run.
struct DynamicSize {
  std::string input;  // graph input name
  int64_t axis = 0;
  int64_t size = 0;
  std::string label;  // the dim_param name
  size_t index = 0;   // position among the graph's inputs
};

std::vector<DynamicSize> dynamicSizes(const ts::Graph& g, const std::vector<std::string>& input_names,
                                      const ExportOptions& options);

// Static tensors that began as a tensor constant of the recorded graph (the tracer records
// torch.tensor([w, h]) and torch.as_tensor(shapes) with the example's values), or were computed
// from such constants alone, with the source line that made each. findBakedSizes reads their values.
using RecordedLiterals = std::unordered_map<const ts::Value*, SourceLocation>;

// Warnings (code "baked-dynamic-size") for constants that equal the example size of a dynamic
// axis and feed a shape-like argument (view/reshape/expand/repeat/new tensors/arange/slice/
// interpolate sizes), or constant tensors (not parameters) that have such a size and meet the
// inputs. A note (code "dynamic-axis-size-one") when a dynamic axis was traced at size 1, where
// tracing cannot tell it from a constant. `recorded` says whether the graph was recorded by
// tracing (a traced model, or graph_mode trace): only tracing turns sizes into constants; in a
// scripted graph a constant is a literal of the source, and only the size-one note applies.
std::vector<Diagnostic> findBakedSizes(const ts::Graph& g, const std::vector<DynamicSize>& sizes, bool recorded,
                                       const RecordedLiterals& literals = {});

// One frame of the Python call stack that torch.jit.trace recorded for a node: a user function
// the trace ran through (frames of torch itself and of the code that called trace are dropped).
struct PythonFrame {
  std::string file;      // as recorded (the path Python used)
  int line = 0;          // the line running in that frame
  std::string function;  // the function's name
  std::string module_path;  // module scope of the first node seen with this frame
};

// Parses a traced node's recorded stack ("path(line): function" per line, innermost first) into
// its user frames.
std::vector<PythonFrame> userFramesOfTraceStack(const std::string& stack);

// A branch in Python source that reads a tensor size: `if x.shape[0] > 1:`, `while n < x.size(1)`,
// `for i in range(x.shape[0])`, `a if x.size(0) == 1 else b`, or the same on a name assigned from a
// size (`b, c = x.shape` ... `if b > c:`).
struct SizeBranch {
  int line = 0;                 // 1-based
  std::string code;             // the line, trimmed
  std::optional<int64_t> axis;  // the axis read, when the source says (shape[0], size(1), unpacking)
};

// The size branches in the body of the function `function` that contains line `line` of `lines`
// (the source file's lines). Empty when no such function is found there.
std::vector<SizeBranch> sizeBranchesInFunction(const std::vector<std::string>& lines, int line,
                                               const std::string& function);

// Warnings (code "python-size-branch") for size branches in the Python functions a traced model
// ran through, when a dynamic axis is declared: tracing kept only the branch taken at the example
// size. The source files are read from disk when they still exist (the path as recorded, or its
// name next to the model); branches on an axis no dynamic axis uses are skipped.
std::vector<Diagnostic> findSizeBranches(const std::vector<PythonFrame>& frames, const std::vector<DynamicSize>& sizes,
                                         const std::filesystem::path& model_dir);

}  // namespace oxport
