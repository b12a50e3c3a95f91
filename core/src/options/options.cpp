// Export options: enum names, equality, and the checks that need no model.
#include "oxport/options.h"

#include <cctype>
#include <map>

#include "base/enum_names.h"
#include "base/key_path.h"

namespace oxport {

namespace {

std::string toUpper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string toLower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

constexpr EnumName<TrainingMode> kTrainingModes[] = {
    {TrainingMode::Eval, "EVAL"}, {TrainingMode::Preserve, "PRESERVE"}, {TrainingMode::Training, "TRAINING"}};
constexpr EnumName<OperatorExportType> kOperatorExportTypes[] = {
    {OperatorExportType::Onnx, "ONNX"},
    {OperatorExportType::OnnxFallthrough, "ONNX_FALLTHROUGH"},
    {OperatorExportType::OnnxAten, "ONNX_ATEN"},
    {OperatorExportType::OnnxAtenFallback, "ONNX_ATEN_FALLBACK"}};
constexpr EnumName<GraphMode> kGraphModes[] = {{GraphMode::Script, "script"}, {GraphMode::Trace, "trace"}};
constexpr EnumName<FillKind> kFillKinds[] = {{FillKind::Randn, "randn"}, {FillKind::Rand, "rand"},
                                             {FillKind::Zeros, "zeros"}, {FillKind::Ones, "ones"},
                                             {FillKind::Arange, "arange"}, {FillKind::Npy, "npy"},
                                             {FillKind::Smooth, "smooth"}};

// "EVAL", "TrainingMode.EVAL" and "torch.onnx.TrainingMode.EVAL" all name the member EVAL.
// Returns the upper-cased member name, or nullopt when a qualifier names another class.
std::optional<std::string> enumMember(const std::string& s, const char* enum_class) {
  const size_t dot = s.rfind('.');
  if (dot == std::string::npos) return toUpper(s);
  const std::string qualifier = s.substr(0, dot);
  const size_t qdot = qualifier.rfind('.');
  const std::string cls = qdot == std::string::npos ? qualifier : qualifier.substr(qdot + 1);
  if (toUpper(cls) != toUpper(enum_class)) return std::nullopt;
  return toUpper(s.substr(dot + 1));
}

}  // namespace

const char* trainingModeName(TrainingMode m) { return enumName(kTrainingModes, m); }

std::optional<TrainingMode> parseTrainingMode(const std::string& s) {
  const auto member = enumMember(s, "TrainingMode");
  return member ? enumNamed(kTrainingModes, *member) : std::nullopt;
}

const char* operatorExportTypeName(OperatorExportType t) { return enumName(kOperatorExportTypes, t); }

std::optional<OperatorExportType> parseOperatorExportType(const std::string& s) {
  const auto member = enumMember(s, "OperatorExportTypes");
  return member ? enumNamed(kOperatorExportTypes, *member) : std::nullopt;
}

const char* graphModeName(GraphMode m) { return enumName(kGraphModes, m); }

std::optional<GraphMode> parseGraphMode(const std::string& s) { return enumNamed(kGraphModes, toLower(s)); }

const char* fillKindName(FillKind f) { return enumName(kFillKinds, f); }

std::optional<FillKind> parseFillKind(const std::string& s) { return enumNamed(kFillKinds, toLower(s)); }

bool ExportOptions::operator==(const ExportOptions& o) const {
  return args == o.args && kwargs == o.kwargs && export_params == o.export_params && verbose == o.verbose &&
         training == o.training && input_names == o.input_names && output_names == o.output_names &&
         operator_export_type == o.operator_export_type && opset_version == o.opset_version &&
         do_constant_folding == o.do_constant_folding && dynamic_axes == o.dynamic_axes &&
         keep_initializers_as_inputs == o.keep_initializers_as_inputs && custom_opsets == o.custom_opsets &&
         graph_mode == o.graph_mode;
}

namespace {

using detail::indexPath;
using detail::jsonQuoted;
using detail::keyPath;

Diagnostic optionError(std::string code, std::string option, std::string message, std::string hint) {
  Diagnostic d = makeError(std::move(code), std::move(message), std::move(hint));
  d.option = std::move(option);
  return d;
}

void checkNames(const std::vector<std::string>& names, const char* key, const char* what,
                std::vector<Diagnostic>& out) {
  std::map<std::string, size_t> first_index;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string path = indexPath(key, i);
    if (names[i].empty()) {
      out.push_back(optionError("options.empty-name", path,
                                std::string(what) + " name " + std::to_string(i) + " is empty",
                                "give every " + std::string(what) + " a non-empty name"));
      continue;
    }
    auto [it, inserted] = first_index.emplace(names[i], i);
    if (!inserted)
      out.push_back(optionError("options.duplicate-name", path,
                                std::string(what) + " name " + jsonQuoted(names[i]) + " is given twice (" +
                                    indexPath(key, it->second) + " and " + path + ")",
                                std::string("names in ") + key + " must be unique"));
  }
}

void checkTensorSpec(const TensorSpec& t, const std::string& path, std::vector<Diagnostic>& out) {
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i] < 0)
      out.push_back(
          optionError("options.tensor-shape", indexPath(path + ".shape", i),
                      "dimension " + std::to_string(i) + " of the example tensor is " + std::to_string(t.shape[i]),
                      "dimensions are sizes: 0 or more (use dynamic_axes to make an axis dynamic)"));
  }
  if (t.fill == FillKind::Npy && t.npy.empty())
    out.push_back(optionError("options.tensor-npy", path + ".fill",
                              "the example tensor is filled from a .npy file, but no file is named",
                              "write the fill as {\"npy\": \"file.npy\"} (relative to the preset's folder)"));
}

void checkArg(const ArgValue& a, const std::string& path, std::vector<Diagnostic>& out) {
  if (const auto* t = std::get_if<TensorSpec>(&a.v)) {
    checkTensorSpec(*t, path + ".tensor", out);
  } else if (const auto* list = std::get_if<ArgValue::List>(&a.v)) {
    for (size_t i = 0; i < list->size(); ++i) checkArg((*list)[i], indexPath(path, i), out);
  }
}

}  // namespace

std::vector<Diagnostic> validateOptions(const ExportOptions& o) {
  std::vector<Diagnostic> out;

  for (size_t i = 0; i < o.args.size(); ++i) checkArg(o.args[i], indexPath("args", i), out);
  std::map<std::string, bool> kwarg_seen;
  for (const auto& [name, value] : o.kwargs) {
    const std::string path = keyPath("kwargs", name);
    if (name.empty())
      out.push_back(optionError("options.empty-name", path, "a named argument (kwargs) has an empty name",
                                "kwargs keys are the names of forward()'s parameters"));
    else if (kwarg_seen[name])
      out.push_back(optionError("options.duplicate-name", path,
                                "the named argument " + jsonQuoted(name) + " is given twice",
                                "give each of forward()'s parameters at most one value"));
    kwarg_seen[name] = true;
    checkArg(value, path, out);
  }

  if (o.opset_version < kMinOpset || o.opset_version > kMaxOpset)
    out.push_back(optionError("options.opset", "opset_version",
                              "opset_version " + std::to_string(o.opset_version) + " is not supported",
                              "oxport writes opsets " + std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                                  "; the default is " + std::to_string(kDefaultOpset)));

  checkNames(o.input_names, "input_names", "input", out);
  checkNames(o.output_names, "output_names", "output", out);

  for (const auto& [name, spec] : o.dynamic_axes) {
    const std::string path = keyPath("dynamic_axes", name);
    if (name.empty())
      out.push_back(optionError("options.dynamic-axes", path, "dynamic_axes has an entry with an empty name",
                                "dynamic_axes keys are names from input_names or output_names"));
    for (const auto& [axis, axis_name] : spec.axes) {
      if (axis < 0)
        out.push_back(
            optionError("options.dynamic-axes", path,
                        "dynamic_axes entry " + jsonQuoted(name) + " has the negative axis " + std::to_string(axis),
                        "axes are counted from 0 (the first dimension); negative indices are not accepted"));
    }
  }

  for (const auto& [domain, version] : o.custom_opsets) {
    const std::string path = keyPath("custom_opsets", domain);
    if (domain.empty() || domain == "ai.onnx")
      out.push_back(optionError("options.custom-opset", path,
                                "custom_opsets names the default ONNX domain " + jsonQuoted(domain),
                                "custom_opsets is for other domains; the default domain's version is opset_version"));
    if (version < 1)
      out.push_back(
          optionError("options.custom-opset", path,
                      "custom_opsets gives the domain " + jsonQuoted(domain) + " version " + std::to_string(version),
                      "opset versions start at 1"));
  }
  return out;
}

}  // namespace oxport
