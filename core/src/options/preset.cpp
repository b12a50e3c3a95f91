// The preset file (docs/PRESET.md): JSON <-> Preset, and the CLI's compact tensor specs.
#include "oxport/preset.h"

#include <cctype>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>

#include "base/key_path.h"
#include "oxport/atomic_file.h"

namespace oxport {

namespace {

// ordered_json keeps the file's key order, which matters for kwargs.
using json = nlohmann::ordered_json;
using detail::closestMatch;
using detail::indexPath;
using detail::joinQuoted;
using detail::jsonQuoted;
using detail::keyPath;

constexpr int kPresetVersion = 1;
constexpr const char* kPresetFormat = "oxport-preset";
constexpr int kMaxArgDepth = 32;

const std::vector<std::string> kTopLevelKeys = {"format",        "version",
                                                "model",         "output",
                                                "args",          "kwargs",
                                                "export_params", "verbose",
                                                "training",      "input_names",
                                                "output_names",  "operator_export_type",
                                                "opset_version", "do_constant_folding",
                                                "dynamic_axes",  "keep_initializers_as_inputs",
                                                "custom_opsets", "graph_mode",
                                                "load_libraries"};
const std::vector<std::string> kTensorKeys = {"shape", "dtype", "fill", "seed"};
const std::vector<std::string> kDTypeNames = {"float32", "float64", "float16", "bfloat16", "int8",
                                              "uint8",   "int16",   "int32",   "int64",    "bool"};
const std::vector<std::string> kDTypeAliases = {"float", "double", "half", "short", "int", "long"};
const std::vector<std::string> kFillNames = {"randn", "rand", "smooth", "zeros", "ones", "arange"};

// "did you mean "x"? The ..." when there is a guess, else just the rest.
std::string withGuess(const std::string& guess, std::string rest) {
  if (guess.empty()) return rest;
  if (!rest.empty()) rest[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
  return "did you mean " + jsonQuoted(guess) + "? " + rest;
}

// A short rendition of a JSON value for messages: `"abc"`, `12`, `[1, 2]` (cut when long).
std::string shortValue(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

const char* typeDescription(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number with a fraction";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    default: return "an unexpected value";
  }
}

std::optional<int64_t> asInt64(const json& j) {
  if (j.is_number_unsigned()) {
    const auto u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  return std::nullopt;
}

// Collects every problem of one preset, in file order.
class PresetReader {
 public:
  std::vector<Diagnostic> errors;

  void error(std::string code, std::string path, std::string message, std::string hint) {
    Diagnostic d = makeError(std::move(code), std::move(message), std::move(hint));
    d.option = std::move(path);
    errors.push_back(std::move(d));
  }

  void wrongType(const std::string& path, const json& j, const std::string& expected, std::string hint = {}) {
    if (hint.empty()) hint = "write " + path + " as " + expected;
    error("preset.type", path,
          path + " must be " + expected + ", not " + typeDescription(j) + " (" + shortValue(j) + ")", std::move(hint));
  }

  void unknownKey(const std::string& parent, const std::string& key, const std::vector<std::string>& known) {
    const std::string path = keyPath(parent, key);
    const std::string guess = closestMatch(key, known);
    std::string where = parent.empty() ? "the preset" : parent;
    error("preset.unknown-key", path, "unknown key " + jsonQuoted(key) + " in " + where,
          withGuess(guess, "the keys allowed here are " + joinQuoted(known)));
  }

  std::optional<bool> readBool(const json& j, const std::string& path) {
    if (j.is_boolean()) return j.get<bool>();
    wrongType(path, j, "true or false");
    return std::nullopt;
  }

  std::optional<std::string> readString(const json& j, const std::string& path) {
    if (j.is_string()) return j.get<std::string>();
    wrongType(path, j, "a string");
    return std::nullopt;
  }

  // "model"/"output": a non-empty path or null.
  std::optional<std::string> readPath(const json& j, const std::string& path) {
    if (j.is_null()) return std::nullopt;
    auto s = readString(j, path);
    if (s && s->empty()) {
      error("preset.value", path, path + " is an empty path",
            "give a file name (relative to the preset's folder), or null when it is not set");
      return std::nullopt;
    }
    return s;
  }

  std::vector<std::string> readNames(const json& j, const std::string& path) {
    std::vector<std::string> names;
    if (j.is_null()) return names;
    if (!j.is_array()) {
      wrongType(path, j, "a list of strings", "write " + path + " as a list, e.g. [\"input\"]");
      return names;
    }
    for (size_t i = 0; i < j.size(); ++i) {
      if (auto s = readString(j[i], indexPath(path, i))) names.push_back(*s);
    }
    return names;
  }

  // A string naming a member of an enum (`parse` says which), else a diagnostic with the
  // spellings it accepts: `type_hint` when the value is no string, `allowed` when no member.
  template <typename E>
  void readEnum(const json& j, const std::string& key, const std::string& what,
                std::optional<E> (*parse)(const std::string&), const std::string& type_hint,
                const std::string& allowed, E& out) {
    if (!j.is_string()) {
      wrongType(key, j, "a string", type_hint);
      return;
    }
    if (auto v = parse(j.get<std::string>())) {
      out = *v;
      return;
    }
    error("preset.value", key, key + " " + jsonQuoted(j.get<std::string>()) + " is not " + what, allowed);
  }

  void readTraining(const json& j, TrainingMode& out) {
    readEnum(j, "training", "a training mode", parseTrainingMode,
             "write training as \"EVAL\", \"PRESERVE\" or \"TRAINING\"",
             "use \"EVAL\", \"PRESERVE\" or \"TRAINING\" (\"TrainingMode.EVAL\" is accepted too)", out);
  }

  void readOperatorExportType(const json& j, OperatorExportType& out) {
    const char* allowed =
        "use \"ONNX\", \"ONNX_FALLTHROUGH\", \"ONNX_ATEN\" or \"ONNX_ATEN_FALLBACK\" "
        "(\"OperatorExportTypes.ONNX\" is accepted too)";
    readEnum(j, "operator_export_type", "an operator export type", parseOperatorExportType, allowed, allowed, out);
  }

  void readGraphMode(const json& j, GraphMode& out) {
    const char* allowed =
        "use \"script\" (keep if/loops as ONNX If/Loop) or \"trace\" (record the path the example inputs take)";
    readEnum(j, "graph_mode", "a graph mode", parseGraphMode, allowed, allowed, out);
  }

  void readOpset(const json& j, int& out) {
    const auto v = asInt64(j);
    if (!v) {
      wrongType("opset_version", j, "an integer",
                "write opset_version as a number from " + std::to_string(kMinOpset) + " to " +
                    std::to_string(kMaxOpset) + ", e.g. 11");
      return;
    }
    if (*v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max()) {
      // validateOptions reports the range for values it can hold; this one it cannot.
      error("options.opset", "opset_version", "opset_version " + std::to_string(*v) + " is not supported",
            "oxport writes opsets " + std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                "; the default is " + std::to_string(kDefaultOpset));
      return;
    }
    out = static_cast<int>(*v);
  }

  std::optional<TensorSpec> readTensor(const json& j, const std::string& path) {
    if (!j.is_object()) {
      wrongType(path, j, "an object",
                "write a tensor as {\"shape\": [1, 3, 224, 224], \"dtype\": \"float32\", \"fill\": \"randn\"}");
      return std::nullopt;
    }
    TensorSpec t;
    bool ok = true;
    bool fill_known = true;
    for (const auto& [key, value] : j.items()) {
      const std::string p = keyPath(path, key);
      if (key == "shape") {
        if (!value.is_array()) {
          wrongType(p, value, "a list of sizes", "write the shape as a list, e.g. [1, 3, 224, 224] ([] for a scalar)");
          ok = false;
          continue;
        }
        for (size_t i = 0; i < value.size(); ++i) {
          // Negative sizes are kept: validateOptions reports them.
          if (auto d = asInt64(value[i])) {
            t.shape.push_back(*d);
          } else {
            wrongType(indexPath(p, i), value[i], "an integer", "sizes are whole numbers, 0 or more");
            ok = false;
          }
        }
      } else if (key == "dtype") {
        if (!value.is_string()) {
          wrongType(p, value, "a string", "write the dtype as a name, e.g. \"float32\" or \"int64\"");
          ok = false;
        } else if (auto dt = parseDType(value.get<std::string>())) {
          t.dtype = *dt;
        } else {
          std::vector<std::string> all = kDTypeNames;
          all.insert(all.end(), kDTypeAliases.begin(), kDTypeAliases.end());
          const std::string guess = closestMatch(value.get<std::string>(), all);
          error("preset.value", p, "dtype " + jsonQuoted(value.get<std::string>()) + " is not known",
                withGuess(guess, "the dtypes are " + joinQuoted(kDTypeNames) + " (PyTorch's aliases " +
                                     joinQuoted(kDTypeAliases) + " and \"torch.float32\" are accepted too)"));
          ok = false;
        }
      } else if (key == "fill") {
        if (!readFill(value, p, t)) {
          ok = false;
          fill_known = false;
        }
      } else if (key == "seed") {
        if (value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0)) {
          t.seed = value.get<uint64_t>();
        } else {
          wrongType(p, value, "an integer, 0 or more", "the seed makes random fills reproducible; e.g. 0");
          ok = false;
        }
      } else {
        unknownKey(path, key, kTensorKeys);
        ok = false;
      }
    }
    if (fill_known && t.fill != FillKind::Npy && !j.contains("shape")) {
      error("preset.missing-key", keyPath(path, "shape"), path + " has no shape",
            "give the shape, e.g. \"shape\": [1, 3, 224, 224] ([] for a scalar); only a tensor filled from "
            "{\"npy\": \"file.npy\"} takes its shape from the file");
      ok = false;
    }
    if (!ok) return std::nullopt;
    return t;
  }

  bool readFill(const json& value, const std::string& p, TensorSpec& t) {
    const std::string allowed = "use " + joinQuoted(kFillNames) + ", or {\"npy\": \"file.npy\"} to read a NumPy file";
    if (value.is_string()) {
      const std::string s = value.get<std::string>();
      const auto f = parseFillKind(s);
      if (f && *f == FillKind::Npy) {
        error("preset.value", p, "fill \"npy\" needs the file name", "write the fill as {\"npy\": \"file.npy\"}");
        return false;
      }
      if (!f) {
        const std::string guess = closestMatch(s, kFillNames);
        error("preset.value", p, "fill " + jsonQuoted(s) + " is not known", withGuess(guess, allowed));
        return false;
      }
      t.fill = *f;
      return true;
    }
    if (value.is_object()) {
      bool ok = true;
      bool has_npy = false;
      for (const auto& [k, v] : value.items()) {
        const std::string kp = keyPath(p, k);
        if (k != "npy") {
          unknownKey(p, k, {"npy"});
          ok = false;
        } else if (!v.is_string()) {
          wrongType(kp, v, "a string", "write the .npy file's path, relative to the preset's folder");
          ok = false;
        } else if (v.get<std::string>().empty()) {
          error("preset.value", kp, kp + " is an empty path",
                "write the .npy file's path, relative to the preset's folder");
          ok = false;
        } else {
          has_npy = true;
          t.npy = v.get<std::string>();
        }
      }
      if (!has_npy && ok) {
        error("preset.missing-key", keyPath(p, "npy"), p + " is an object without \"npy\"",
              "write the fill as {\"npy\": \"file.npy\"}");
        ok = false;
      }
      if (ok) t.fill = FillKind::Npy;
      return ok;
    }
    wrongType(p, value, "a string or {\"npy\": ...}", allowed);
    return false;
  }

  std::optional<ArgValue> readArg(const json& j, const std::string& path, int depth) {
    switch (j.type()) {
      case json::value_t::null: return ArgValue::none();
      case json::value_t::boolean: return ArgValue::boolean(j.get<bool>());
      case json::value_t::number_integer:
      case json::value_t::number_unsigned:
        if (auto i = asInt64(j)) return ArgValue::integer(*i);
        error("preset.value", path, path + " (" + shortValue(j) + ") does not fit in a 64-bit integer",
              "TorchScript integers are 64-bit: use a smaller value");
        return std::nullopt;
      case json::value_t::number_float: return ArgValue::number(j.get<double>());
      case json::value_t::string: return ArgValue::string(j.get<std::string>());
      case json::value_t::array: {
        if (depth >= kMaxArgDepth) {
          error("preset.value", path, path + " is nested more than " + std::to_string(kMaxArgDepth) + " lists deep",
                "flatten the argument");
          return std::nullopt;
        }
        ArgValue::List list;
        bool ok = true;
        for (size_t i = 0; i < j.size(); ++i) {
          if (auto a = readArg(j[i], indexPath(path, i), depth + 1))
            list.push_back(std::move(*a));
          else
            ok = false;
        }
        if (!ok) return std::nullopt;
        return ArgValue::list(std::move(list));
      }
      case json::value_t::object: {
        bool ok = true;
        std::optional<TensorSpec> tensor;
        bool has_tensor = false;
        for (const auto& [key, value] : j.items()) {
          if (key == "tensor") {
            has_tensor = true;
            tensor = readTensor(value, keyPath(path, key));
          } else {
            error("preset.unknown-key", keyPath(path, key),
                  "unknown key " + jsonQuoted(key) + " in the argument " + path,
                  "an argument object must be {\"tensor\": {...}}; named arguments go in \"kwargs\"");
            ok = false;
          }
        }
        if (!has_tensor && ok) {
          error("preset.missing-key", keyPath(path, "tensor"), path + " is an empty object",
                "write a tensor argument as {\"tensor\": {\"shape\": [...]}} or use null for None");
          return std::nullopt;
        }
        if (!ok || !tensor) return std::nullopt;
        return ArgValue::tensor(std::move(*tensor));
      }
      default:
        error("preset.type", path, path + " has an unexpected JSON value",
              "use a tensor, number, bool, string, list or null");
        return std::nullopt;
    }
  }

  void readArgs(const json& j, ExportOptions& o) {
    // A single tensor stands for a 1-tuple, as in export_to_onnx.
    if (j.is_object()) {
      if (auto a = readArg(j, "args", 0)) o.args = {std::move(*a)};
      return;
    }
    if (!j.is_array()) {
      wrongType("args", j, "a list of arguments",
                "write args as a list, e.g. [{\"tensor\": {\"shape\": [1, 3, 224, 224]}}]");
      return;
    }
    for (size_t i = 0; i < j.size(); ++i)
      if (auto a = readArg(j[i], indexPath("args", i), 0)) o.args.push_back(std::move(*a));
  }

  void readKwargs(const json& j, ExportOptions& o) {
    if (j.is_null()) return;
    if (!j.is_object()) {
      wrongType("kwargs", j, "an object", "write kwargs as {\"name\": value, ...}");
      return;
    }
    for (const auto& [key, value] : j.items())
      if (auto a = readArg(value, keyPath("kwargs", key), 0)) o.kwargs.emplace_back(key, std::move(*a));
  }

  // "0", "-1": a whole decimal int64 and nothing else (no blanks, no '+').
  static std::optional<int64_t> parseAxisKey(const std::string& s) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
  }

  void readDynamicAxes(const json& j, ExportOptions& o) {
    if (j.is_null()) return;
    if (!j.is_object()) {
      wrongType("dynamic_axes", j, "an object",
                "write dynamic_axes as {\"input\": {\"0\": \"batch\"}} or {\"input\": [0]}");
      return;
    }
    for (const auto& [name, value] : j.items()) {
      const std::string path = keyPath("dynamic_axes", name);
      DynamicAxisSpec spec;
      bool ok = true;
      if (value.is_array()) {
        spec.list_form = true;
        for (size_t i = 0; i < value.size(); ++i) {
          const auto axis = asInt64(value[i]);
          if (!axis) {
            wrongType(indexPath(path, i), value[i], "an axis index (an integer)",
                      "e.g. [0] makes the first axis dynamic");
            ok = false;
          } else if (!spec.axes.emplace(*axis, std::string()).second) {
            error("preset.value", indexPath(path, i), "axis " + std::to_string(*axis) + " is listed twice in " + path,
                  "list each dynamic axis once");
            ok = false;
          }
        }
      } else if (value.is_object()) {
        for (const auto& [axis_key, axis_name] : value.items()) {
          const auto axis = parseAxisKey(axis_key);
          if (!axis) {
            error("preset.value", path, "the axis " + jsonQuoted(axis_key) + " in " + path + " is not an integer",
                  "the keys are axis indices written as strings, e.g. {\"0\": \"batch\"}");
            ok = false;
            continue;
          }
          if (!axis_name.is_string()) {
            wrongType(keyPath(path, axis_key), axis_name, "a string (the axis' name)", "e.g. {\"0\": \"batch\"}");
            ok = false;
            continue;
          }
          if (!spec.axes.emplace(*axis, axis_name.get<std::string>()).second) {
            error("preset.value", path, "axis " + std::to_string(*axis) + " appears twice in " + path,
                  "give each dynamic axis once");
            ok = false;
          }
        }
      } else {
        wrongType(path, value, "a list of axes or an object of axis names", "e.g. [0] or {\"0\": \"batch\"}");
        ok = false;
      }
      if (ok) o.dynamic_axes[name] = std::move(spec);
    }
  }

  void readCustomOpsets(const json& j, ExportOptions& o) {
    if (j.is_null()) return;
    if (!j.is_object()) {
      wrongType("custom_opsets", j, "an object", "write custom_opsets as {\"my.domain\": 1}");
      return;
    }
    for (const auto& [domain, value] : j.items()) {
      // Range problems (version < 1, default domain) are validateOptions'.
      if (auto v = asInt64(value))
        o.custom_opsets[domain] = *v;
      else
        wrongType(keyPath("custom_opsets", domain), value, "an integer (the opset version)", "e.g. {\"my.domain\": 1}");
    }
  }

  // The format and version decide whether the rest can be read at all.
  bool readHeader(const json& root) {
    bool readable = true;
    if (auto it = root.find("format"); it != root.end()) {
      if (!it->is_string() || it->get<std::string>() != kPresetFormat) {
        error("preset.format", "format", "this file is not an oxport preset (format is " + shortValue(*it) + ")",
              "an oxport preset has \"format\": \"oxport-preset\"");
        readable = false;
      }
    }
    if (auto it = root.find("version"); it != root.end()) {
      const auto v = asInt64(*it);
      if (!v) {
        wrongType("version", *it, "an integer", "this oxport reads preset version 1");
      } else if (*v > kPresetVersion) {
        error("preset.version", "version",
              "the preset is version " + std::to_string(*v) + "; this oxport reads version " +
                  std::to_string(kPresetVersion),
              "use a newer oxport, or write the preset with version 1 keys only");
        readable = false;
      } else if (*v < 1) {
        error("preset.version", "version", "preset version " + std::to_string(*v) + " does not exist",
              "write \"version\": 1");
      }
    }
    return readable;
  }

  void readRoot(const json& root, Preset& p) {
    ExportOptions& o = p.options;
    for (const auto& [key, value] : root.items()) {
      if (key == "format" || key == "version") {
        continue;  // readHeader
      } else if (key == "model") {
        p.model = readPath(value, key);
      } else if (key == "output") {
        p.output = readPath(value, key);
      } else if (key == "load_libraries") {
        std::vector<std::string> paths = readNames(value, key);
        for (size_t i = 0; i < paths.size(); ++i)
          if (paths[i].empty())
            error("preset.value", indexPath(key, i), "load_libraries[" + std::to_string(i) + "] is an empty path",
                  "give the path of a shared library (.so), relative to the preset's folder or absolute");
        p.load_libraries = std::move(paths);
      } else if (key == "args") {
        readArgs(value, o);
      } else if (key == "kwargs") {
        readKwargs(value, o);
      } else if (key == "export_params") {
        if (auto b = readBool(value, key)) o.export_params = *b;
      } else if (key == "verbose") {
        if (auto b = readBool(value, key)) o.verbose = *b;
      } else if (key == "training") {
        readTraining(value, o.training);
      } else if (key == "input_names") {
        o.input_names = readNames(value, key);
      } else if (key == "output_names") {
        o.output_names = readNames(value, key);
      } else if (key == "operator_export_type") {
        readOperatorExportType(value, o.operator_export_type);
      } else if (key == "opset_version") {
        readOpset(value, o.opset_version);
      } else if (key == "do_constant_folding") {
        if (auto b = readBool(value, key)) o.do_constant_folding = *b;
      } else if (key == "dynamic_axes") {
        readDynamicAxes(value, o);
      } else if (key == "keep_initializers_as_inputs") {
        if (value.is_null())
          o.keep_initializers_as_inputs = std::nullopt;
        else if (auto b = readBool(value, key))
          o.keep_initializers_as_inputs = *b;
      } else if (key == "custom_opsets") {
        readCustomOpsets(value, o);
      } else if (key == "graph_mode") {
        readGraphMode(value, o.graph_mode);
      } else {
        unknownKey("", key, kTopLevelKeys);
      }
    }
  }
};

// Reports keys given twice in one object: nlohmann keeps only one of them silently.
class DuplicateKeyFinder {
 public:
  std::vector<Diagnostic> errors;

  bool operator()(int /*depth*/, nlohmann::json::parse_event_t event, json& parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (event) {
      case E::object_start: stack_.push_back({false, 0, childPath(), {}, {}}); break;
      case E::array_start: stack_.push_back({true, 0, childPath(), {}, {}}); break;
      case E::key: {
        Frame& f = stack_.back();
        f.current_key = parsed.get<std::string>();
        if (!f.keys.insert(f.current_key).second) {
          Diagnostic d = makeError("preset.duplicate-key",
                                   "the key " + jsonQuoted(f.current_key) + " appears twice in " +
                                       (f.path.empty() ? std::string("the preset") : f.path),
                                   "keep one of them: JSON readers disagree on which one counts");
          d.option = keyPath(f.path, f.current_key);
          errors.push_back(std::move(d));
        }
        break;
      }
      case E::object_end:
      case E::array_end:
        stack_.pop_back();
        advance();
        break;
      case E::value: advance(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool is_array;
    size_t index;
    std::string path;
    std::set<std::string> keys;
    std::string current_key;
  };
  std::vector<Frame> stack_;

  std::string childPath() const {
    if (stack_.empty()) return "";
    const Frame& f = stack_.back();
    return f.is_array ? indexPath(f.path, f.index) : keyPath(f.path, f.current_key);
  }
  void advance() {
    if (!stack_.empty() && stack_.back().is_array) ++stack_.back().index;
  }
};

Diagnostic syntaxError(std::string_view text, const nlohmann::json::parse_error& e) {
  // e.byte is the 1-based position of the last character read.
  const size_t idx = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < idx; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  const int column = static_cast<int>(idx - line_start) + 1;
  // nlohmann's text: "[json.exception.parse_error.101] parse error at line 2, column 7: <detail>".
  std::string detail = e.what();
  if (const size_t at = detail.find(": "); at != std::string::npos) detail = detail.substr(at + 2);
  Diagnostic d = makeError("preset.syntax",
                           "the preset is not valid JSON: line " + std::to_string(line) + ", column " +
                               std::to_string(column) + ": " + detail,
                           "look for a missing comma, quote or bracket at or just before that place");
  d.location.line = line;
  d.location.column = column;
  return d;
}

json tensorToJson(const TensorSpec& t) {
  json j = json::object();
  if (t.fill == FillKind::Npy) {
    // Shape and dtype come from the file; write them only when they were given.
    if (!t.shape.empty()) j["shape"] = t.shape;
    if (t.dtype != DType::Float32) j["dtype"] = dtypeName(t.dtype);
    j["fill"] = {{"npy", t.npy}};
    if (t.seed != 0) j["seed"] = t.seed;
    return j;
  }
  j["shape"] = t.shape;
  j["dtype"] = dtypeName(t.dtype);
  j["fill"] = fillKindName(t.fill);
  j["seed"] = t.seed;
  return j;
}

json argToJson(const ArgValue& a) {
  struct Visitor {
    json operator()(std::monostate) const { return nullptr; }
    json operator()(bool b) const { return b; }
    json operator()(int64_t i) const { return i; }
    json operator()(double d) const { return d; }
    json operator()(const std::string& s) const { return s; }
    json operator()(const TensorSpec& t) const { return json{{"tensor", tensorToJson(t)}}; }
    json operator()(const ArgValue::List& l) const {
      json arr = json::array();
      for (const ArgValue& x : l) arr.push_back(argToJson(x));
      return arr;
    }
  };
  return std::visit(Visitor{}, a.v);
}

}  // namespace

Result<Preset> parsePreset(std::string_view json_text) {
  DuplicateKeyFinder duplicates;
  json root;
  try {
    root = json::parse(json_text.begin(), json_text.end(), std::ref(duplicates));
  } catch (const nlohmann::json::parse_error& e) {
    return Error(syntaxError(json_text, e));
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range.406: a number too large for a double.
    std::string detail = e.what();
    if (const size_t at = detail.find("] "); at != std::string::npos) detail = detail.substr(at + 2);
    return Error(makeError("preset.syntax", "the preset cannot be read: " + detail,
                           "numbers must fit in a 64-bit integer or a double"));
  }
  if (!root.is_object())
    return Error(makeError("preset.type",
                           std::string("the preset must be a JSON object ({...}), not ") + typeDescription(root),
                           "start from a preset saved by oxport, or see docs/PRESET.md"));

  PresetReader reader;
  reader.errors = std::move(duplicates.errors);
  if (!reader.readHeader(root)) return Error(std::move(reader.errors));

  Preset p;
  reader.readRoot(root, p);
  for (Diagnostic& d : validateOptions(p.options)) reader.errors.push_back(std::move(d));
  if (!reader.errors.empty()) return Error(std::move(reader.errors));
  return p;
}

Result<Preset> loadPreset(const std::filesystem::path& file) {
  const std::string name = file.string();
  auto ioError = [&](const std::string& what, const std::string& hint) {
    Diagnostic d = makeError("preset.io", "cannot read the preset " + name + ": " + what, hint);
    d.location.file = name;
    return Error(std::move(d));
  };

  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (status.type() == std::filesystem::file_type::not_found)
    return ioError("no such file", "check the path; relative paths are taken from the current folder");
  if (status.type() == std::filesystem::file_type::directory)
    return ioError("it is a folder", "name the preset file itself, e.g. " + (file / "model.json").string());

  std::FILE* f = std::fopen(name.c_str(), "rb");
  if (!f) return ioError(std::strerror(errno), "check that the file exists and that you may read it");
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) return ioError(std::strerror(err), "check that the file is readable");

  auto result = parsePreset(text);
  if (!result.ok()) {
    for (Diagnostic& d : result.error().diagnostics()) d.location.file = name;
  }
  return result;
}

namespace {

json presetJsonValue(const Preset& p) {
  const ExportOptions& o = p.options;
  json j = json::object();
  j["format"] = kPresetFormat;
  j["version"] = kPresetVersion;
  j["model"] = p.model ? json(*p.model) : json(nullptr);
  j["output"] = p.output ? json(*p.output) : json(nullptr);
  json args = json::array();
  for (const ArgValue& a : o.args) args.push_back(argToJson(a));
  j["args"] = std::move(args);
  json kwargs = json::object();
  for (const auto& [name, value] : o.kwargs) kwargs[name] = argToJson(value);
  j["kwargs"] = std::move(kwargs);
  j["export_params"] = o.export_params;
  j["verbose"] = o.verbose;
  j["training"] = trainingModeName(o.training);
  j["input_names"] = o.input_names;
  j["output_names"] = o.output_names;
  j["operator_export_type"] = operatorExportTypeName(o.operator_export_type);
  j["opset_version"] = o.opset_version;
  j["do_constant_folding"] = o.do_constant_folding;
  json axes = json::object();
  for (const auto& [name, spec] : o.dynamic_axes) {
    if (spec.list_form) {
      json list = json::array();
      for (const auto& kv : spec.axes) list.push_back(kv.first);
      axes[name] = std::move(list);
    } else {
      json dict = json::object();
      for (const auto& [axis, axis_name] : spec.axes) dict[std::to_string(axis)] = axis_name;
      axes[name] = std::move(dict);
    }
  }
  j["dynamic_axes"] = std::move(axes);
  j["keep_initializers_as_inputs"] =
      o.keep_initializers_as_inputs ? json(*o.keep_initializers_as_inputs) : json(nullptr);
  json opsets = json::object();
  for (const auto& [domain, version] : o.custom_opsets) opsets[domain] = version;
  j["custom_opsets"] = std::move(opsets);
  j["graph_mode"] = graphModeName(o.graph_mode);
  j["load_libraries"] = p.load_libraries;
  return j;
}

}  // namespace

std::string presetToJson(const Preset& p) {
  // JSON text is UTF-8: bytes that are not become U+FFFD here (savePreset refuses them instead).
  return presetJsonValue(p).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Status savePreset(const Preset& p, const std::filesystem::path& file) {
  std::string text;
  try {
    text = presetJsonValue(p).dump(2, ' ', false, json::error_handler_t::strict) + "\n";
  } catch (const nlohmann::json::type_error&) {
    return Error(makeError("preset.encoding",
                           "cannot save the preset " + file.string() + ": some of its text is not valid UTF-8",
                           "names, strings and paths in a preset are UTF-8; retype text that came from another "
                           "encoding"));
  }
  return writeFileAtomically(file, text);
}

std::filesystem::path resolvePresetPath(const std::filesystem::path& preset_file, const std::string& p) {
  const std::filesystem::path path(p);
  if (path.is_absolute()) return path.lexically_normal();
  return (preset_file.parent_path() / path).lexically_normal();
}

namespace {

void mapNpyPaths(ArgValue& v, const std::function<std::string(const std::string&)>& f) {
  if (auto* t = std::get_if<TensorSpec>(&v.v)) {
    if (t->fill == FillKind::Npy && !t->npy.empty()) t->npy = f(t->npy);
  } else if (auto* l = std::get_if<ArgValue::List>(&v.v)) {
    for (auto& x : *l) mapNpyPaths(x, f);
  }
}

}  // namespace

Preset mapPresetPaths(Preset p, const std::function<std::string(const std::string&)>& f) {
  if (p.model && !p.model->empty()) p.model = f(*p.model);
  if (p.output && !p.output->empty()) p.output = f(*p.output);
  for (auto& lib : p.load_libraries)
    if (!lib.empty()) lib = f(lib);
  for (auto& a : p.options.args) mapNpyPaths(a, f);
  for (auto& kv : p.options.kwargs) mapNpyPaths(kv.second, f);
  return p;
}

Preset resolvePresetPaths(Preset p, const std::filesystem::path& preset_file) {
  return mapPresetPaths(std::move(p), [&](const std::string& s) { return resolvePresetPath(preset_file, s).string(); });
}

// ---- compact tensor specs (grammar in preset.h) ----

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t'; }

// [begin, end) of s without surrounding blanks.
std::pair<size_t, size_t> trimmed(std::string_view s, size_t begin, size_t end) {
  while (begin < end && isSpace(s[begin])) ++begin;
  while (end > begin && isSpace(s[end - 1])) --end;
  return {begin, end};
}

bool allDigits(std::string_view s) {
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return !s.empty();
}

std::optional<uint64_t> parseDigits(std::string_view s) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

const char* kSpecGrammarHint =
    "a tensor spec is parts joined by ':' in any order: a shape (1x3x224x224 or 1,3,224,224), a dtype "
    "(float32, int64, ...), a fill (randn, rand, smooth, zeros, ones, arange), seed=N, and npy=FILE last; "
    "e.g. 1x3x224x224:float32:randn";

}  // namespace

Result<TensorSpec> parseTensorSpec(std::string_view text) {
  const std::string whole(text);
  auto fail = [&](size_t pos, const std::string& what) {
    return Error(
        makeError("tensor-spec.syntax",
                  "bad tensor spec " + jsonQuoted(whole) + " at column " + std::to_string(pos + 1) + ": " + what,
                  kSpecGrammarHint));
  };
  auto [begin, end] = trimmed(text, 0, text.size());
  if (begin == end) return Error(makeError("tensor-spec.syntax", "the tensor spec is empty", kSpecGrammarHint));

  TensorSpec spec;
  bool has_shape = false, has_dtype = false, has_fill = false, has_seed = false;
  size_t pos = begin;
  while (pos <= end) {
    size_t colon = text.find(':', pos);
    if (colon == std::string_view::npos || colon > end) colon = end;
    auto [pb, pe] = trimmed(text, pos, colon);
    const std::string_view part = text.substr(pb, pe - pb);

    if (part.substr(0, 4) == "npy=") {
      // The path is the rest of the text, ':' included.
      auto [nb, ne] = trimmed(text, pb + 4, end);
      if (nb == ne) return fail(pb, "npy= needs a file name");
      if (has_fill) return fail(pb, "the fill is given twice");
      spec.fill = FillKind::Npy;
      spec.npy = std::string(text.substr(nb, ne - nb));
      has_fill = true;
      break;
    }
    if (part.empty()) return fail(pb, "empty part (two ':' in a row, or ':' at an end)");

    if (part.substr(0, 5) == "seed=") {
      if (has_seed) return fail(pb, "the seed is given twice");
      const auto v = parseDigits(part.substr(5));
      if (!v && allDigits(part.substr(5)))
        return fail(pb + 5, "the seed " + std::string(part.substr(5)) + " is too large");
      if (!v)
        return fail(pb + 5, "the seed " + jsonQuoted(std::string(part.substr(5))) + " is not a whole number 0 or more");
      spec.seed = *v;
      has_seed = true;
    } else if ((part[0] >= '0' && part[0] <= '9') || part[0] == '-' || part[0] == '+') {
      if (has_shape) return fail(pb, "the shape is given twice");
      size_t dim_begin = pb;
      for (size_t i = pb; i <= pe; ++i) {
        if (i < pe && text[i] != 'x' && text[i] != 'X' && text[i] != ',') continue;
        auto [db, de] = trimmed(text, dim_begin, i);
        const std::string_view dim = text.substr(db, de - db);
        if (dim.empty()) return fail(db, "a dimension is missing");
        const auto v = parseDigits(dim);
        if (!v) {
          if (dim[0] == '-') return fail(db, "dimension " + std::string(dim) + " is negative; sizes are 0 or more");
          if (allDigits(dim)) return fail(db, "dimension " + std::string(dim) + " is too large");
          return fail(db, "dimension " + jsonQuoted(std::string(dim)) + " is not a whole number");
        }
        if (*v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          return fail(db, "dimension " + std::string(dim) + " is too large");
        spec.shape.push_back(static_cast<int64_t>(*v));
        dim_begin = i + 1;
      }
      has_shape = true;
    } else if (auto dt = parseDType(std::string(part))) {
      if (has_dtype) return fail(pb, "the dtype is given twice");
      spec.dtype = *dt;
      has_dtype = true;
    } else if (auto f = parseFillKind(std::string(part))) {
      if (*f == FillKind::Npy) return fail(pb, "write npy=FILE to fill from a NumPy file");
      if (has_fill) return fail(pb, "the fill is given twice");
      spec.fill = *f;
      has_fill = true;
    } else {
      std::vector<std::string> words = kDTypeNames;
      words.insert(words.end(), kDTypeAliases.begin(), kDTypeAliases.end());
      words.insert(words.end(), kFillNames.begin(), kFillNames.end());
      const std::string guess = closestMatch(std::string(part), words);
      return fail(pb, jsonQuoted(std::string(part)) + " is not a shape, dtype or fill" +
                          (guess.empty() ? std::string() : "; did you mean " + jsonQuoted(guess) + "?"));
    }
    pos = colon + 1;
  }
  return spec;
}

std::string formatTensorSpec(const TensorSpec& spec) {
  std::string out;
  for (size_t i = 0; i < spec.shape.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(spec.shape[i]);
  }
  if (!out.empty()) out += ':';
  out += dtypeName(spec.dtype);
  if (spec.seed != 0) out += ":seed=" + std::to_string(spec.seed);
  if (spec.fill == FillKind::Npy)
    out += ":npy=" + spec.npy;
  else
    out += std::string(":") + fillKindName(spec.fill);
  return out;
}

}  // namespace oxport
