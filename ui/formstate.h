// How the studio's forms map onto a Preset: argument kinds from forward()'s schema, which arguments
// are passed positionally or by keyword, graph-input names and dynamic axes per tensor.
// Plain C++ (no widgets), so the mapping is tested on its own.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oxport/model.h"
#include "oxport/options.h"
#include "oxport/preset.h"

namespace oxport::studio {

enum class ArgKind { Tensor, TensorList, Int, Float, Bool, String, NumberList, None, Other };

struct ArgType {
  ArgKind kind = ArgKind::Other;
  bool optional = false;  // Optional[...]: None is allowed
  int fixed_count = -1;   // Tuple[Tensor, Tensor]: 2
};

// Parses a TorchScript type string ("Tensor", "Optional[int]", "List[Tensor]", "Tuple[int, int]").
ArgType argTypeOf(const std::string& type);
const char* argKindLabel(ArgKind k);  // "tensor", "number", "bool", "None", "list", "str", "other"

enum class Passing { Positional, Keyword, Default };
const char* passingLabel(Passing p);

// One argument of forward() as the form shows it.
struct ArgRow {
  std::string name;
  std::string type;
  ArgType kind;
  bool has_default = false;
  std::string default_value;
  bool keyword_only = false;
  Passing passing = Passing::Positional;
  ArgValue value;  // meaningful unless passing == Default
};

// A value for an argument when nothing is known but its type (for tensors, the model's guessed
// shape and dtype, ModelInfo::input_guesses; [1] without one).
ArgValue defaultValueFor(const ArgumentInfo& a, const ModelInfo* info);

// Rows from a preset's args/kwargs. With model info, one row per schema argument (absent ones
// passed by default); without, one row per value in the preset ("arg0", ... and the kwargs).
std::vector<ArgRow> rowsFromOptions(const ModelInfo* info, const ExportOptions& o);
// Writes args and kwargs back from rows (positional values first, then keywords in row order).
void rowsToOptions(const std::vector<ArgRow>& rows, ExportOptions& o);

// Graph inputs in order: one per tensor passed (list elements one each). `row` and `element`
// (-1 for a plain tensor) say where the tensor sits.
struct TensorLeaf {
  int row = -1;
  int element = -1;
  std::string suggested_name;  // "x", or "xs_0" for list elements
};
std::vector<TensorLeaf> tensorLeaves(const std::vector<ArgRow>& rows);

// Expected number of outputs from a return type ("Tensor": 1, "Tuple[Tensor, Tensor]": 2), 0 when
// not a tensor or tuple of tensors.
int outputCountOf(const std::string& return_type);

// The studio's starting form for a freshly loaded model: required arguments with guessed shapes,
// inputs named after the arguments, outputs "output" / "output_<i>", everything else the seed's
// defaults.
Preset defaultPresetFor(const ModelInfo& info);

// Problems the form can see that validateOptions cannot: positional arguments after keyword ones,
// required arguments left out, keyword-only arguments passed positionally, empty .npy paths.
std::vector<Diagnostic> checkForm(const ModelInfo* info, const ExportOptions& o);

// Dynamic axes <-> per-dimension flags. Empty labels everywhere: the list form; otherwise the
// dict form, unnamed axes named "<name>_dim<axis>".
DynamicAxisSpec dynamicSpecFrom(const std::string& name, const std::map<int64_t, std::string>& axes);

// "0:batch, 2:seq" <-> DynamicAxisSpec (list form prints "0, 2").
std::string formatAxes(const DynamicAxisSpec& s);
std::optional<DynamicAxisSpec> parseAxes(const std::string& name, const std::string& text, std::string* error);

// "ai.onnx.ml:3, com.example:1" <-> custom_opsets.
std::string formatOpsets(const std::map<std::string, int64_t>& m);
std::optional<std::map<std::string, int64_t>> parseOpsets(const std::string& text, std::string* error);

// "1, 2, 3" <-> a list of numbers (integers stay integers).
std::string formatNumberList(const ArgValue::List& l);
std::optional<ArgValue::List> parseNumberList(const std::string& text);

// Makes relative paths of a preset (model, output, npy files) absolute against `base_dir`, or
// relative to it (when below it) for saving.
Preset withAbsolutePaths(Preset p, const std::string& base_dir);
Preset withRelativePaths(Preset p, const std::string& base_dir);

}  // namespace oxport::studio
