// The preset format: defaults, every key, every error the user can see, files and round trips.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "oxport/preset.h"

namespace oxport {
namespace {

namespace fs = std::filesystem;

std::string describe(const Error& e) { return e.message(); }

// Parses `text`, expecting errors; returns them.
std::vector<Diagnostic> errorsOf(std::string_view text) {
  auto r = parsePreset(text);
  EXPECT_FALSE(r.ok()) << "expected errors for:\n" << text;
  if (r.ok()) return {};
  for (const Diagnostic& d : r.error().diagnostics()) {
    EXPECT_EQ(d.severity, Severity::Error);
    EXPECT_FALSE(d.code.empty()) << d.toString();
    EXPECT_FALSE(d.message.empty()) << d.toString();
    EXPECT_FALSE(d.hint.empty()) << d.toString();
  }
  return r.error().diagnostics();
}

// Parses `text`, expecting exactly one error.
Diagnostic errorOf(std::string_view text) {
  const auto ds = errorsOf(text);
  if (ds.size() != 1) {
    std::string all;
    for (const auto& d : ds) all += d.toString() + "\n";
    ADD_FAILURE() << "expected one error, got " << ds.size() << " for:\n" << text << "\n" << all;
    return ds.empty() ? Diagnostic{} : ds.front();
  }
  return ds.front();
}

Preset parsed(std::string_view text) {
  auto r = parsePreset(text);
  if (!r.ok()) {
    ADD_FAILURE() << describe(r.error()) << "\nfor:\n" << text;
    return {};
  }
  return r.value();
}

// A one-argument preset whose tensor spec is `tensor_json`.
std::string withTensor(const std::string& tensor_json) { return R"({"args": [{"tensor": )" + tensor_json + "}]}"; }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const char* kFullExample = R"({
  "format": "oxport-preset", "version": 1,
  "model": "m.pt", "output": "m.onnx",
  "args": [ {"tensor": {"shape": [1, 3, 224, 224], "dtype": "float32", "fill": "randn", "seed": 0}},
            2, 0.5, true, null, "nearest", [1, 2.0, [false]] ],
  "kwargs": { "scale": 2.0, "mask": {"tensor": {"shape": [1, 1], "dtype": "bool", "fill": "ones"}} },
  "export_params": false, "verbose": true, "training": "TrainingMode.TRAINING",
  "input_names": ["x", "mask"], "output_names": ["y"],
  "operator_export_type": "ONNX_ATEN_FALLBACK", "opset_version": 13,
  "do_constant_folding": false,
  "dynamic_axes": { "x": {"0": "batch", "2": "h"}, "y": [0] },
  "keep_initializers_as_inputs": true, "custom_opsets": { "my.domain": 2 }, "graph_mode": "trace" })";

TensorSpec spec(std::vector<int64_t> shape, DType dtype = DType::Float32, FillKind fill = FillKind::Randn,
                uint64_t seed = 0, std::string npy = {}) {
  TensorSpec t;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.fill = fill;
  t.seed = seed;
  t.npy = std::move(npy);
  return t;
}

// ---- reading ----

TEST(Preset, EmptyObjectTakesTheSeedDefaults) {
  const Preset p = parsed("{}");
  EXPECT_EQ(p, Preset{});
  EXPECT_FALSE(p.model);
  EXPECT_FALSE(p.output);
  EXPECT_EQ(p.options.opset_version, 11);
  EXPECT_TRUE(p.options.do_constant_folding);
  EXPECT_EQ(p.options.operator_export_type, OperatorExportType::OnnxFallthrough);
}

TEST(Preset, ReadsEveryKey) {
  const Preset p = parsed(kFullExample);
  EXPECT_EQ(p.model, "m.pt");
  EXPECT_EQ(p.output, "m.onnx");
  const ExportOptions& o = p.options;
  ASSERT_EQ(o.args.size(), 7u);
  EXPECT_EQ(o.args[0], ArgValue::tensor(spec({1, 3, 224, 224})));
  EXPECT_EQ(o.args[1], ArgValue::integer(2));
  EXPECT_EQ(o.args[2], ArgValue::number(0.5));
  EXPECT_EQ(o.args[3], ArgValue::boolean(true));
  EXPECT_TRUE(o.args[4].isNone());
  EXPECT_EQ(o.args[5], ArgValue::string("nearest"));
  EXPECT_EQ(o.args[6],
            ArgValue::list({ArgValue::integer(1), ArgValue::number(2.0), ArgValue::list({ArgValue::boolean(false)})}));
  ASSERT_EQ(o.kwargs.size(), 2u);
  EXPECT_EQ(o.kwargs[0].first, "scale");
  EXPECT_EQ(o.kwargs[0].second, ArgValue::number(2.0));
  EXPECT_EQ(o.kwargs[1].first, "mask");
  EXPECT_EQ(o.kwargs[1].second, ArgValue::tensor(spec({1, 1}, DType::Bool, FillKind::Ones)));
  EXPECT_FALSE(o.export_params);
  EXPECT_TRUE(o.verbose);
  EXPECT_EQ(o.training, TrainingMode::Training);
  EXPECT_EQ(o.input_names, (std::vector<std::string>{"x", "mask"}));
  EXPECT_EQ(o.output_names, (std::vector<std::string>{"y"}));
  EXPECT_EQ(o.operator_export_type, OperatorExportType::OnnxAtenFallback);
  EXPECT_EQ(o.opset_version, 13);
  EXPECT_FALSE(o.do_constant_folding);
  ASSERT_EQ(o.dynamic_axes.size(), 2u);
  EXPECT_EQ(o.dynamic_axes.at("x"), (DynamicAxisSpec{false, {{0, "batch"}, {2, "h"}}}));
  EXPECT_EQ(o.dynamic_axes.at("y"), (DynamicAxisSpec{true, {{0, ""}}}));
  EXPECT_EQ(o.keep_initializers_as_inputs, true);
  EXPECT_EQ(o.custom_opsets, (std::map<std::string, int64_t>{{"my.domain", 2}}));
  EXPECT_EQ(o.graph_mode, GraphMode::Trace);
}

TEST(Preset, IntegersAndFloatsStayApart) {
  const Preset p = parsed(R"({"args": [2, 2.0, -3, 1e2, 9223372036854775807, -9223372036854775808]})");
  ASSERT_EQ(p.options.args.size(), 6u);
  EXPECT_EQ(p.options.args[0], ArgValue::integer(2));
  EXPECT_EQ(p.options.args[1], ArgValue::number(2.0));
  EXPECT_EQ(p.options.args[2], ArgValue::integer(-3));
  EXPECT_EQ(p.options.args[3], ArgValue::number(100.0));
  EXPECT_EQ(p.options.args[4], ArgValue::integer(INT64_MAX));
  EXPECT_EQ(p.options.args[5], ArgValue::integer(INT64_MIN));
}

TEST(Preset, KwargsKeepFileOrder) {
  const Preset p = parsed(R"({"kwargs": {"zeta": 1, "alpha": 2, "mid": 3}})");
  ASSERT_EQ(p.options.kwargs.size(), 3u);
  EXPECT_EQ(p.options.kwargs[0].first, "zeta");
  EXPECT_EQ(p.options.kwargs[1].first, "alpha");
  EXPECT_EQ(p.options.kwargs[2].first, "mid");
  // ... and saving keeps that order.
  const std::string text = presetToJson(p);
  EXPECT_LT(text.find("\"zeta\""), text.find("\"alpha\""));
  EXPECT_LT(text.find("\"alpha\""), text.find("\"mid\""));
}

TEST(Preset, TensorDefaults) {
  const Preset p = parsed(withTensor(R"({"shape": [4]})"));
  EXPECT_EQ(p.options.args.at(0), ArgValue::tensor(spec({4})));
  const Preset scalar = parsed(withTensor(R"({"shape": [], "dtype": "long", "fill": "arange", "seed": 7})"));
  EXPECT_EQ(scalar.options.args.at(0), ArgValue::tensor(spec({}, DType::Int64, FillKind::Arange, 7)));
}

TEST(Preset, EveryFill) {
  for (const char* fill : {"randn", "rand", "smooth", "zeros", "ones", "arange"}) {
    const Preset p = parsed(withTensor(std::string(R"({"shape": [2], "fill": ")") + fill + "\"}"));
    EXPECT_EQ(std::get<TensorSpec>(p.options.args.at(0).v).fill, parseFillKind(fill)) << fill;
  }
}

TEST(Preset, NpyFillNeedsNoShapeOrDtype) {
  const Preset p = parsed(withTensor(R"({"fill": {"npy": "inputs/x.npy"}})"));
  EXPECT_EQ(p.options.args.at(0), ArgValue::tensor(spec({}, DType::Float32, FillKind::Npy, 0, "inputs/x.npy")));
  const Preset typed = parsed(withTensor(R"({"fill": {"npy": "x.npy"}, "shape": [2, 3], "dtype": "int64"})"));
  EXPECT_EQ(typed.options.args.at(0), ArgValue::tensor(spec({2, 3}, DType::Int64, FillKind::Npy, 0, "x.npy")));
}

TEST(Preset, SingleTensorArgsIsAOneTuple) {
  const Preset p = parsed(R"({"args": {"tensor": {"shape": [1, 3]}}})");
  ASSERT_EQ(p.options.args.size(), 1u);
  EXPECT_EQ(p.options.args[0], ArgValue::tensor(spec({1, 3})));
}

TEST(Preset, NullsMeanNotSet) {
  const Preset p = parsed(R"({"model": null, "output": null, "input_names": null, "dynamic_axes": null,
                              "keep_initializers_as_inputs": null, "custom_opsets": null, "kwargs": null})");
  EXPECT_EQ(p, Preset{});
}

TEST(Preset, GraphModeIsScriptUnlessSaidOtherwise) {
  EXPECT_EQ(parsed("{}").options.graph_mode, GraphMode::Script);
  EXPECT_EQ(parsed(R"({"graph_mode": "script"})").options.graph_mode, GraphMode::Script);
  EXPECT_EQ(parsed(R"({"graph_mode": "Trace"})").options.graph_mode, GraphMode::Trace);
}

TEST(PresetErrors, BadGraphModeSaysWhichModesExist) {
  Diagnostic d = errorOf(R"({"graph_mode": "unroll"})");
  EXPECT_EQ(d.code, "preset.value");
  EXPECT_EQ(d.option, "graph_mode");
  EXPECT_EQ(d.message, "graph_mode \"unroll\" is not a graph mode");
  EXPECT_TRUE(contains(d.hint, "\"script\"") && contains(d.hint, "\"trace\"")) << d.hint;
  d = errorOf(R"({"graph_mode": true})");
  EXPECT_EQ(d.option, "graph_mode");
  EXPECT_TRUE(contains(d.message, "must be a string")) << d.message;
  EXPECT_TRUE(contains(d.hint, "\"trace\"")) << d.hint;
}

TEST(Preset, EnumsAcceptQualifiedNames) {
  const Preset p = parsed(R"({"training": "preserve", "operator_export_type": "OperatorExportTypes.ONNX"})");
  EXPECT_EQ(p.options.training, TrainingMode::Preserve);
  EXPECT_EQ(p.options.operator_export_type, OperatorExportType::Onnx);
}

// ---- errors ----

TEST(PresetErrors, SyntaxErrorGivesLineAndColumn) {
  const Diagnostic d = errorOf("{\n  \"opset_version\": 11,\n  \"verbose\" true\n}");
  EXPECT_EQ(d.code, "preset.syntax");
  // The column is where the reader stopped: the end of the unexpected `true`.
  EXPECT_EQ(d.location.line, 3);
  EXPECT_EQ(d.location.column, 16);
  EXPECT_TRUE(contains(d.message, "line 3, column 16")) << d.message;
  EXPECT_TRUE(contains(d.message, "expected ':'")) << d.message;
}

TEST(PresetErrors, TruncatedAndEmptyText) {
  Diagnostic d = errorOf("{\"args\": [");
  EXPECT_EQ(d.code, "preset.syntax");
  EXPECT_EQ(d.location.line, 1);
  EXPECT_TRUE(contains(d.message, "unexpected end of input")) << d.message;
  d = errorOf("");
  EXPECT_EQ(d.code, "preset.syntax");
}

TEST(PresetErrors, HugeNumber) {
  const Diagnostic d = errorOf(R"({"args": [1e999]})");
  EXPECT_EQ(d.code, "preset.syntax");
  EXPECT_TRUE(contains(d.message, "1e999")) << d.message;
}

TEST(PresetErrors, RootMustBeAnObject) {
  const Diagnostic d = errorOf("[1, 2]");
  EXPECT_EQ(d.message, "the preset must be a JSON object ({...}), not a list");
}

TEST(PresetErrors, UnknownTopLevelKeySuggestsTheRightOne) {
  const Diagnostic d = errorOf(R"({"opset": 13})");
  EXPECT_EQ(d.code, "preset.unknown-key");
  EXPECT_EQ(d.option, "opset");
  EXPECT_EQ(d.message, "unknown key \"opset\" in the preset");
  EXPECT_TRUE(contains(d.hint, "did you mean \"opset_version\"?")) << d.hint;
  // Far from every key: the hint lists them.
  const Diagnostic far = errorOf(R"({"qqqqqqqqqqqq": 1})");
  EXPECT_TRUE(contains(far.hint, "\"keep_initializers_as_inputs\"")) << far.hint;
  EXPECT_FALSE(contains(far.hint, "did you mean")) << far.hint;
  // A part of two keys suggests neither.
  const Diagnostic ambiguous = errorOf(R"({"names": ["x"]})");
  EXPECT_FALSE(contains(ambiguous.hint, "did you mean")) << ambiguous.hint;
  EXPECT_TRUE(contains(errorOf(R"({"opset_verison": 11})").hint, "did you mean \"opset_version\"?"));
}

TEST(PresetErrors, UnknownKeyInTensorSpec) {
  // Without a real "shape", both the typo and the missing shape are reported, the typo first.
  const auto both = errorsOf(withTensor(R"({"shap": [1]})"));
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].option, "args[0].tensor.shap");
  EXPECT_EQ(both[1].option, "args[0].tensor.shape");
  const auto ds = errorsOf(withTensor(R"({"shap": [1], "shape": [1]})"));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].option, "args[0].tensor.shap");
  EXPECT_EQ(ds[0].message, "unknown key \"shap\" in args[0].tensor");
  EXPECT_TRUE(contains(ds[0].hint, "did you mean \"shape\"?")) << ds[0].hint;
}

TEST(PresetErrors, WrongTypes) {
  Diagnostic d = errorOf(R"({"verbose": "yes"})");
  EXPECT_EQ(d.code, "preset.type");
  EXPECT_EQ(d.option, "verbose");
  EXPECT_EQ(d.message, "verbose must be true or false, not a string (\"yes\")");

  d = errorOf(R"({"opset_version": "11"})");
  EXPECT_EQ(d.option, "opset_version");
  EXPECT_EQ(d.message, "opset_version must be an integer, not a string (\"11\")");

  d = errorOf(R"({"opset_version": 11.5})");
  EXPECT_EQ(d.message, "opset_version must be an integer, not a number with a fraction (11.5)");

  d = errorOf(R"({"input_names": "x"})");
  EXPECT_EQ(d.option, "input_names");
  d = errorOf(R"({"input_names": ["x", 3]})");
  EXPECT_EQ(d.option, "input_names[1]");
  EXPECT_EQ(d.message, "input_names[1] must be a string, not an integer (3)");

  d = errorOf(R"({"args": "x"})");
  EXPECT_EQ(d.option, "args");
  d = errorOf(R"({"kwargs": []})");
  EXPECT_EQ(d.option, "kwargs");
  d = errorOf(R"({"custom_opsets": {"my.domain": "2"}})");
  EXPECT_EQ(d.option, "custom_opsets[\"my.domain\"]");
  d = errorOf(R"({"keep_initializers_as_inputs": 1})");
  EXPECT_EQ(d.option, "keep_initializers_as_inputs");
  d = errorOf(R"({"training": 0})");
  EXPECT_EQ(d.option, "training");
  EXPECT_TRUE(contains(d.hint, "\"EVAL\"")) << d.hint;
}

TEST(PresetErrors, NegativeDimensionNamesTheDimension) {
  const Diagnostic d = errorOf(withTensor(R"({"shape": [1, 3, -224, 224]})"));
  EXPECT_EQ(d.option, "args[0].tensor.shape[2]");
  EXPECT_EQ(d.message, "dimension 2 of the example tensor is -224");
  EXPECT_TRUE(contains(d.hint, "0 or more")) << d.hint;
}

TEST(PresetErrors, BadDimensionTypes) {
  const auto ds = errorsOf(withTensor(R"({"shape": [1, 2.5, "3"]})"));
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[0].option, "args[0].tensor.shape[1]");
  EXPECT_EQ(ds[1].option, "args[0].tensor.shape[2]");
  EXPECT_EQ(errorOf(withTensor(R"({"shape": 3})")).option, "args[0].tensor.shape");
}

TEST(PresetErrors, UnknownDType) {
  const Diagnostic d = errorOf(withTensor(R"({"shape": [1], "dtype": "flaot32"})"));
  EXPECT_EQ(d.option, "args[0].tensor.dtype");
  EXPECT_EQ(d.message, "dtype \"flaot32\" is not known");
  EXPECT_TRUE(contains(d.hint, "did you mean \"float32\"?")) << d.hint;
  EXPECT_TRUE(contains(d.hint, "\"bfloat16\"")) << d.hint;
}

TEST(PresetErrors, BadFills) {
  Diagnostic d = errorOf(withTensor(R"({"shape": [1], "fill": "randm"})"));
  EXPECT_EQ(d.option, "args[0].tensor.fill");
  EXPECT_EQ(d.message, "fill \"randm\" is not known");
  EXPECT_TRUE(contains(d.hint, "did you mean \"randn\"?")) << d.hint;

  d = errorOf(withTensor(R"({"shape": [1], "fill": "npy"})"));
  EXPECT_EQ(d.message, "fill \"npy\" needs the file name");
  EXPECT_TRUE(contains(d.hint, "{\"npy\": \"file.npy\"}")) << d.hint;

  d = errorOf(withTensor(R"({"fill": {"npy": ""}})"));
  EXPECT_EQ(d.option, "args[0].tensor.fill.npy");

  d = errorOf(withTensor(R"({"fill": {"path": "x.npy"}})"));
  EXPECT_EQ(d.option, "args[0].tensor.fill.path");

  d = errorOf(withTensor(R"({"fill": {}})"));
  EXPECT_EQ(d.option, "args[0].tensor.fill.npy");

  d = errorOf(withTensor(R"({"shape": [1], "fill": 3})"));
  EXPECT_EQ(d.option, "args[0].tensor.fill");
}

TEST(PresetErrors, MissingShape) {
  const Diagnostic d = errorOf(withTensor(R"({"dtype": "float32"})"));
  EXPECT_EQ(d.code, "preset.missing-key");
  EXPECT_EQ(d.option, "args[0].tensor.shape");
  EXPECT_EQ(d.message, "args[0].tensor has no shape");
}

TEST(PresetErrors, BadSeed) {
  EXPECT_EQ(errorOf(withTensor(R"({"shape": [1], "seed": -1})")).option, "args[0].tensor.seed");
  EXPECT_EQ(errorOf(withTensor(R"({"shape": [1], "seed": 1.5})")).option, "args[0].tensor.seed");
}

TEST(PresetErrors, ArgumentObjects) {
  Diagnostic d = errorOf(R"({"args": [{"tensr": {"shape": [1]}}]})");
  EXPECT_EQ(d.option, "args[0].tensr");
  EXPECT_TRUE(contains(d.hint, "kwargs")) << d.hint;
  d = errorOf(R"({"args": [{}]})");
  EXPECT_EQ(d.option, "args[0].tensor");
  d = errorOf(R"({"args": [1, [2, {"tensor": 5}]]})");
  EXPECT_EQ(d.option, "args[1][1].tensor");
  d = errorOf(R"({"kwargs": {"mask": {"tensor": {"shape": [-1]}}}})");
  EXPECT_EQ(d.option, "kwargs.mask.tensor.shape[0]");
  d = errorOf(R"({"args": [18446744073709551615]})");
  EXPECT_EQ(d.option, "args[0]");
  EXPECT_TRUE(contains(d.message, "64-bit")) << d.message;
}

TEST(PresetErrors, DeepNestingIsAnErrorNotACrash) {
  std::string text = R"({"args": [)";
  for (int i = 0; i < 100; ++i) text += "[";
  for (int i = 0; i < 100; ++i) text += "]";
  text += "]}";
  const Diagnostic d = errorOf(text);
  EXPECT_TRUE(contains(d.message, "nested")) << d.message;
}

TEST(PresetErrors, OpsetOutOfRange) {
  Diagnostic d = errorOf(R"({"opset_version": 20})");
  EXPECT_EQ(d.option, "opset_version");
  EXPECT_EQ(d.message, "opset_version 20 is not supported");
  EXPECT_TRUE(contains(d.hint, "9 to 17")) << d.hint;
  d = errorOf(R"({"opset_version": 99999999999})");
  EXPECT_EQ(d.message, "opset_version 99999999999 is not supported");
}

TEST(PresetErrors, UnknownEnumValues) {
  Diagnostic d = errorOf(R"({"training": "EVALUATE"})");
  EXPECT_EQ(d.option, "training");
  EXPECT_EQ(d.message, "training \"EVALUATE\" is not a training mode");
  EXPECT_TRUE(contains(d.hint, "\"PRESERVE\"")) << d.hint;
  d = errorOf(R"({"operator_export_type": "ONNX_FOO"})");
  EXPECT_EQ(d.option, "operator_export_type");
  EXPECT_TRUE(contains(d.hint, "\"ONNX_ATEN_FALLBACK\"")) << d.hint;
}

TEST(PresetErrors, DynamicAxes) {
  Diagnostic d = errorOf(R"({"dynamic_axes": {"x": {"a": "batch"}}})");
  EXPECT_EQ(d.option, "dynamic_axes.x");
  EXPECT_EQ(d.message, "the axis \"a\" in dynamic_axes.x is not an integer");
  EXPECT_TRUE(contains(d.hint, "{\"0\": \"batch\"}")) << d.hint;

  d = errorOf(R"({"dynamic_axes": {"x": {"0": 1}}})");
  EXPECT_EQ(d.option, "dynamic_axes.x[\"0\"]");

  d = errorOf(R"({"dynamic_axes": {"x": [0, "1"]}})");
  EXPECT_EQ(d.option, "dynamic_axes.x[1]");

  d = errorOf(R"({"dynamic_axes": {"x": [0, 0]}})");
  EXPECT_EQ(d.option, "dynamic_axes.x[1]");
  EXPECT_EQ(d.message, "axis 0 is listed twice in dynamic_axes.x");

  d = errorOf(R"({"dynamic_axes": {"x": {" 1": "a"}}})");
  EXPECT_EQ(d.message, "the axis \" 1\" in dynamic_axes.x is not an integer");
  d = errorOf(R"({"dynamic_axes": {"x": {"99999999999999999999": "a"}}})");
  EXPECT_EQ(d.option, "dynamic_axes.x");
  EXPECT_TRUE(parsePreset(R"({"dynamic_axes": {"x": {"9223372036854775807": "a"}}})").ok());

  d = errorOf(R"({"dynamic_axes": {"x": {"0": "a", "00": "b"}}})");
  EXPECT_EQ(d.message, "axis 0 appears twice in dynamic_axes.x");

  d = errorOf(R"({"dynamic_axes": {"input.1": [-1]}})");
  EXPECT_EQ(d.option, "dynamic_axes[\"input.1\"]");
  EXPECT_EQ(d.message, "dynamic_axes entry \"input.1\" has the negative axis -1");

  d = errorOf(R"({"dynamic_axes": {"x": 0}})");
  EXPECT_EQ(d.option, "dynamic_axes.x");
  d = errorOf(R"({"dynamic_axes": [["x", 0]]})");
  EXPECT_EQ(d.option, "dynamic_axes");
}

TEST(PresetErrors, CustomOpsets) {
  Diagnostic d = errorOf(R"({"custom_opsets": {"": 1}})");
  EXPECT_EQ(d.option, "custom_opsets[\"\"]");
  EXPECT_TRUE(contains(d.message, "default ONNX domain")) << d.message;
  d = errorOf(R"({"custom_opsets": {"my.domain": 0}})");
  EXPECT_EQ(d.option, "custom_opsets[\"my.domain\"]");
  EXPECT_TRUE(contains(d.hint, "start at 1")) << d.hint;
}

TEST(PresetErrors, Names) {
  Diagnostic d = errorOf(R"({"input_names": ["x", "x"]})");
  EXPECT_EQ(d.option, "input_names[1]");
  d = errorOf(R"({"output_names": [""]})");
  EXPECT_EQ(d.option, "output_names[0]");
  d = errorOf(R"({"model": ""})");
  EXPECT_EQ(d.option, "model");
  EXPECT_EQ(d.message, "model is an empty path");
}

TEST(PresetErrors, FormatAndVersion) {
  // A foreign file or a newer preset: the other keys are not worth reporting.
  Diagnostic d = errorOf(R"({"format": "netron-layout", "nodes": [], "opset_version": 3})");
  EXPECT_EQ(d.code, "preset.format");
  EXPECT_EQ(d.option, "format");
  EXPECT_EQ(d.message, "this file is not an oxport preset (format is \"netron-layout\")");

  d = errorOf(R"({"format": "oxport-preset", "version": 2, "new_key": true})");
  EXPECT_EQ(d.code, "preset.version");
  EXPECT_EQ(d.option, "version");
  EXPECT_EQ(d.message, "the preset is version 2; this oxport reads version 1");

  d = errorOf(R"({"version": 0})");
  EXPECT_EQ(d.option, "version");
  d = errorOf(R"({"version": "1"})");
  EXPECT_EQ(d.option, "version");
  EXPECT_TRUE(parsePreset(R"({"format": "oxport-preset", "version": 1})").ok());
}

TEST(PresetErrors, DuplicateKeys) {
  Diagnostic d = errorOf(R"({"opset_version": 11, "opset_version": 13})");
  EXPECT_EQ(d.code, "preset.duplicate-key");
  EXPECT_EQ(d.option, "opset_version");
  EXPECT_EQ(d.message, "the key \"opset_version\" appears twice in the preset");

  d = errorOf(R"({"args": [1, {"tensor": {"shape": [1], "shape": [2]}}]})");
  EXPECT_EQ(d.option, "args[1].tensor.shape");
  EXPECT_EQ(d.message, "the key \"shape\" appears twice in args[1].tensor");

  d = errorOf(R"({"kwargs": {"a": 1, "b": 2, "a": 3}})");
  EXPECT_EQ(d.option, "kwargs.a");
}

TEST(PresetErrors, AllErrorsAtOnceInFileOrder) {
  const auto ds = errorsOf(R"({
    "verbose": 1,
    "args": [{"tensor": {"shape": [1, -2], "dtype": "float33"}}],
    "opset_version": 42,
    "trainig": "EVAL",
    "dynamic_axes": {"x": {"b": "batch"}}
  })");
  std::vector<std::string> options;
  for (const auto& d : ds) options.push_back(d.option);
  // The tensor with a bad dtype is not kept, so its negative size is not reported twice.
  EXPECT_EQ(options, (std::vector<std::string>{"verbose", "args[0].tensor.dtype", "trainig", "dynamic_axes.x",
                                               "opset_version"}));
}

// ---- writing ----

TEST(PresetWrite, WritesEveryKeyInOrder) {
  const std::string text = presetToJson(Preset{});
  const auto j = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"format", "version", "model", "output", "args", "kwargs", "export_params",
                                            "verbose", "training", "input_names", "output_names",
                                            "operator_export_type", "opset_version", "do_constant_folding",
                                            "dynamic_axes", "keep_initializers_as_inputs", "custom_opsets",
                                            "graph_mode", "load_libraries"}));
  EXPECT_TRUE(j["load_libraries"].is_array() && j["load_libraries"].empty());
  EXPECT_EQ(j["format"], "oxport-preset");
  EXPECT_EQ(j["version"], 1);
  EXPECT_TRUE(j["model"].is_null());
  EXPECT_EQ(j["training"], "EVAL");
  EXPECT_EQ(j["operator_export_type"], "ONNX_FALLTHROUGH");
  EXPECT_EQ(j["opset_version"], 11);
  EXPECT_EQ(j["do_constant_folding"], true);
  EXPECT_TRUE(j["keep_initializers_as_inputs"].is_null());
  EXPECT_EQ(j["graph_mode"], "script");
  // Pretty, two-space indent, newline at the end.
  EXPECT_EQ(text.substr(0, 30), "{\n  \"format\": \"oxport-preset\",");
  EXPECT_EQ(text.back(), '\n');
}

TEST(PresetWrite, KeepsTheDynamicAxesForm) {
  const Preset p = parsed(R"({"dynamic_axes": {"x": {"0": "batch"}, "y": [0, 1]}})");
  const auto j = nlohmann::json::parse(presetToJson(p));
  EXPECT_EQ(j["dynamic_axes"]["x"], nlohmann::json({{"0", "batch"}}));
  EXPECT_EQ(j["dynamic_axes"]["y"], nlohmann::json::array({0, 1}));
}

TEST(PresetWrite, TensorSpecs) {
  Preset p;
  p.options.args = {ArgValue::tensor(spec({1, 3}, DType::Int64, FillKind::Arange, 5)),
                    ArgValue::tensor(spec({}, DType::Float32, FillKind::Npy, 0, "x.npy"))};
  const auto j = nlohmann::json::parse(presetToJson(p));
  EXPECT_EQ(j["args"][0],
            nlohmann::json::parse(R"({"tensor": {"shape": [1, 3], "dtype": "int64", "fill": "arange", "seed": 5}})"));
  // From a file: shape and dtype only when given.
  EXPECT_EQ(j["args"][1], nlohmann::json::parse(R"({"tensor": {"fill": {"npy": "x.npy"}}})"));
}

TEST(PresetWrite, FloatsStayFloats) {
  Preset p;
  p.options.args = {ArgValue::number(2.0), ArgValue::integer(2), ArgValue::number(0.1), ArgValue::number(-0.0)};
  const std::string text = presetToJson(p);
  EXPECT_TRUE(contains(text, "2.0")) << text;
  EXPECT_EQ(parsed(text), p);
}

TEST(PresetWrite, RoundTripsTheFullExample) {
  const Preset p = parsed(kFullExample);
  const std::string text = presetToJson(p);
  EXPECT_EQ(parsed(text), p);
  EXPECT_EQ(presetToJson(parsed(text)), text);
}

// ---- files ----

class PresetFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("oxport_test_preset_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_ / "locked.json", fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  void write(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }
  fs::path dir_;
};

TEST_F(PresetFiles, LoadsAFile) {
  write(dir_ / "m.json", kFullExample);
  auto r = loadPreset(dir_ / "m.json");
  ASSERT_TRUE(r.ok()) << describe(r.error());
  EXPECT_EQ(r->model, "m.pt");
}

TEST_F(PresetFiles, MissingFile) {
  auto r = loadPreset(dir_ / "nope.json");
  ASSERT_FALSE(r.ok());
  const Diagnostic& d = r.error().first();
  EXPECT_EQ(d.code, "preset.io");
  EXPECT_EQ(d.message, "cannot read the preset " + (dir_ / "nope.json").string() + ": no such file");
}

TEST_F(PresetFiles, Directory) {
  auto r = loadPreset(dir_);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().first().message, "it is a folder")) << r.error().message();
}

TEST_F(PresetFiles, Unreadable) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  write(dir_ / "locked.json", "{}");
  fs::permissions(dir_ / "locked.json", fs::perms::none);
  auto r = loadPreset(dir_ / "locked.json");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().first().message, "Permission denied")) << r.error().message();
}

TEST_F(PresetFiles, ReadFailure) {
  // Opens fine, fails on read (EIO), also when running as root.
  if (!fs::exists("/proc/self/mem")) GTEST_SKIP() << "needs Linux /proc";
  auto r = loadPreset("/proc/self/mem");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().first().code, "preset.io");
  EXPECT_TRUE(contains(r.error().first().message, "cannot read the preset /proc/self/mem: ")) << r.error().message();
}

TEST_F(PresetFiles, ErrorsNameTheFile) {
  write(dir_ / "bad.json", "{\n  \"opset_version\": 3\n}");
  auto r = loadPreset(dir_ / "bad.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().first().location.file, (dir_ / "bad.json").string());
  EXPECT_TRUE(contains(r.error().message(), "at " + (dir_ / "bad.json").string())) << r.error().message();

  write(dir_ / "syntax.json", "{\n  \"opset_version\": 3,\n}");
  r = loadPreset(dir_ / "syntax.json");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.error().message(), "at " + (dir_ / "syntax.json").string() + ":3:1")) << r.error().message();
}

TEST_F(PresetFiles, SaveThenLoad) {
  const Preset p = parsed(kFullExample);
  const fs::path file = dir_ / "saved.json";
  write(file, "old contents");
  const Status s = savePreset(p, file);
  ASSERT_TRUE(s.ok()) << describe(s.error());
  auto r = loadPreset(file);
  ASSERT_TRUE(r.ok()) << describe(r.error());
  EXPECT_EQ(*r, p);
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, presetToJson(p));
}

TEST_F(PresetFiles, SaveRefusesTextThatIsNotUtf8) {
  Preset p;
  p.options.input_names = {"caf\xe9"};  // Latin-1, not UTF-8
  const fs::path file = dir_ / "latin1.json";
  const Status s = savePreset(p, file);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), "preset.encoding");
  EXPECT_EQ(s.error().first().message, "cannot save the preset " + file.string() + ": some of its text is not valid UTF-8");
  EXPECT_FALSE(fs::exists(file));
  // presetToJson cannot fail: it writes U+FFFD instead.
  EXPECT_TRUE(contains(presetToJson(p), "caf\xef\xbf\xbd")) << presetToJson(p);
}

TEST_F(PresetFiles, SaveIntoAMissingFolderFails) {
  const Status s = savePreset(Preset{}, dir_ / "no" / "such" / "folder" / "p.json");
  EXPECT_FALSE(s.ok());
}

TEST(PresetSample, TheBundledSampleLoadsAndRoundTrips) {
  const fs::path file = fs::path(OXPORT_SOURCE_DIR) / "resources" / "samples" / "sample_cnn.preset.json";
  if (!fs::exists(file)) GTEST_SKIP() << "no bundled sample at " << file;
  auto r = loadPreset(file);
  ASSERT_TRUE(r.ok()) << describe(r.error());
  EXPECT_EQ(r->model, "sample_cnn.pt");
  ASSERT_EQ(r->options.args.size(), 1u);
  EXPECT_TRUE(r->options.args[0].isTensor());
  EXPECT_EQ(parsed(presetToJson(*r)), *r);
}

TEST(PresetPaths, ResolveAgainstThePresetFolder) {
  EXPECT_EQ(resolvePresetPath("/work/presets/a.json", "m.pt"), fs::path("/work/presets/m.pt"));
  EXPECT_EQ(resolvePresetPath("/work/presets/a.json", "../models/m.pt"), fs::path("/work/models/m.pt"));
  EXPECT_EQ(resolvePresetPath("/work/presets/a.json", "/abs/m.pt"), fs::path("/abs/m.pt"));
  EXPECT_EQ(resolvePresetPath("a.json", "m.pt"), fs::path("m.pt"));
  EXPECT_EQ(resolvePresetPath("rel/a.json", "./in/x.npy"), fs::path("rel/in/x.npy"));
}

TEST(PresetPaths, ResolvePresetPathsReachesEveryPathItHolds) {
  auto r = parsePreset(R"({"model": "m.pt", "output": "/abs/out.onnx",
    "args": [{"tensor": {"fill": {"npy": "x.npy"}}},
             [{"tensor": {"fill": {"npy": "in/y.npy"}}}, {"tensor": {"shape": [2]}}]],
    "kwargs": {"mask": {"tensor": {"fill": {"npy": "../m.npy"}}}}})");
  ASSERT_TRUE(r.ok()) << r.error().message();
  const Preset p = resolvePresetPaths(*r, "/p/q/a.json");
  EXPECT_EQ(p.model, "/p/q/m.pt");
  EXPECT_EQ(p.output, "/abs/out.onnx");
  EXPECT_EQ(std::get<TensorSpec>(p.options.args[0].v).npy, "/p/q/x.npy");
  const auto& list = std::get<ArgValue::List>(p.options.args[1].v);
  EXPECT_EQ(std::get<TensorSpec>(list[0].v).npy, "/p/q/in/y.npy");
  EXPECT_EQ(std::get<TensorSpec>(list[1].v).fill, FillKind::Randn);
  EXPECT_EQ(std::get<TensorSpec>(p.options.kwargs.at(0).second.v).npy, "/p/m.npy");
  // The preset as written is not changed: saving it keeps relative paths.
  EXPECT_EQ(r->model, "m.pt");
}

// ---- compact tensor specs ----

TensorSpec specOf(std::string_view text) {
  auto r = parseTensorSpec(text);
  if (!r.ok()) {
    ADD_FAILURE() << describe(r.error());
    return {};
  }
  return r.value();
}

std::string specError(std::string_view text) {
  auto r = parseTensorSpec(text);
  if (r.ok()) {
    ADD_FAILURE() << "expected an error for " << text;
    return {};
  }
  EXPECT_EQ(r.error().code(), "tensor-spec.syntax");
  EXPECT_FALSE(r.error().first().hint.empty());
  return r.error().first().message;
}

TEST(TensorSpecText, Shapes) {
  EXPECT_EQ(specOf("1x3x224x224"), spec({1, 3, 224, 224}));
  EXPECT_EQ(specOf("1,3,224,224"), spec({1, 3, 224, 224}));
  EXPECT_EQ(specOf(" 1 X 3 "), spec({1, 3}));
  EXPECT_EQ(specOf("0"), spec({0}));
  EXPECT_EQ(specOf("7"), spec({7}));
}

TEST(TensorSpecText, DtypeFillSeedAndNpy) {
  EXPECT_EQ(specOf("1x3x224x224:float32:randn"), spec({1, 3, 224, 224}));
  EXPECT_EQ(specOf("2x5:int64:arange"), spec({2, 5}, DType::Int64, FillKind::Arange));
  EXPECT_EQ(specOf("float16:1x3:zeros"), spec({1, 3}, DType::Float16, FillKind::Zeros));
  EXPECT_EQ(specOf("zeros"), spec({}, DType::Float32, FillKind::Zeros));
  EXPECT_EQ(specOf("4:ones:seed=7"), spec({4}, DType::Float32, FillKind::Ones, 7));
  EXPECT_EQ(specOf("1x3x320x320:smooth:seed=4"), spec({1, 3, 320, 320}, DType::Float32, FillKind::Smooth, 4));
  EXPECT_EQ(specOf("torch.long:3"), spec({3}, DType::Int64));
  EXPECT_EQ(specOf("npy=inputs/x.npy"), spec({}, DType::Float32, FillKind::Npy, 0, "inputs/x.npy"));
  EXPECT_EQ(specOf("1x2:int32:npy=C:/data/x:1.npy"), spec({1, 2}, DType::Int32, FillKind::Npy, 0, "C:/data/x:1.npy"));
}

TEST(TensorSpecText, ErrorsPointAtTheBadPart) {
  EXPECT_EQ(specError("1x3:flaot32"),
            "bad tensor spec \"1x3:flaot32\" at column 5: \"flaot32\" is not a shape, dtype or fill; did you mean "
            "\"float32\"?");
  EXPECT_EQ(specError("1x-3"), "bad tensor spec \"1x-3\" at column 3: dimension -3 is negative; sizes are 0 or more");
  EXPECT_EQ(specError("1xx3"), "bad tensor spec \"1xx3\" at column 3: a dimension is missing");
  EXPECT_EQ(specError("1x3x"), "bad tensor spec \"1x3x\" at column 5: a dimension is missing");
  EXPECT_EQ(specError("1x3.5"), "bad tensor spec \"1x3.5\" at column 3: dimension \"3.5\" is not a whole number");
  EXPECT_EQ(specError("1x3:2x4"), "bad tensor spec \"1x3:2x4\" at column 5: the shape is given twice");
  EXPECT_EQ(specError("1x3::zeros"),
            "bad tensor spec \"1x3::zeros\" at column 5: empty part (two ':' in a row, or ':' at an end)");
  EXPECT_EQ(specError("1x3:"), "bad tensor spec \"1x3:\" at column 5: empty part (two ':' in a row, or ':' at an end)");
  EXPECT_EQ(specError("1:int8:int64"), "bad tensor spec \"1:int8:int64\" at column 8: the dtype is given twice");
  EXPECT_EQ(specError("1:zeros:ones"), "bad tensor spec \"1:zeros:ones\" at column 9: the fill is given twice");
  EXPECT_EQ(specError("1:npy"), "bad tensor spec \"1:npy\" at column 3: write npy=FILE to fill from a NumPy file");
  EXPECT_EQ(specError("1:npy="), "bad tensor spec \"1:npy=\" at column 3: npy= needs a file name");
  EXPECT_EQ(specError("1:seed=x"),
            "bad tensor spec \"1:seed=x\" at column 8: the seed \"x\" is not a whole number 0 or more");
  EXPECT_EQ(specError("99999999999999999999"),
            "bad tensor spec \"99999999999999999999\" at column 1: dimension 99999999999999999999 is too large");
  EXPECT_EQ(specError("9223372036854775808"),
            "bad tensor spec \"9223372036854775808\" at column 1: dimension 9223372036854775808 is too large");
  EXPECT_EQ(specError("  "), "the tensor spec is empty");
}

TEST(TensorSpecText, Format) {
  EXPECT_EQ(formatTensorSpec(spec({1, 3, 224, 224})), "1x3x224x224:float32:randn");
  EXPECT_EQ(formatTensorSpec(spec({}, DType::Int64, FillKind::Zeros, 3)), "int64:seed=3:zeros");
  EXPECT_EQ(formatTensorSpec(spec({2}, DType::Float32, FillKind::Npy, 0, "a:b.npy")), "2:float32:npy=a:b.npy");
}

// load_libraries: paths relative to the preset's folder, like model; kept as written when saved.
TEST(PresetLoadLibraries, ParsedRoundTripAndResolved) {
  const Preset p = parsed(R"({"model": "m.pt", "load_libraries": ["libvendor.so", "/opt/x/libops.so"]})");
  EXPECT_EQ(p.load_libraries, (std::vector<std::string>{"libvendor.so", "/opt/x/libops.so"}));
  auto again = parsePreset(presetToJson(p));
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(*again, p);
  const Preset r = resolvePresetPaths(p, "/home/u/presets/p.json");
  EXPECT_EQ(r.load_libraries, (std::vector<std::string>{"/home/u/presets/libvendor.so", "/opt/x/libops.so"}));
  const Diagnostic empty = errorOf(R"({"load_libraries": [""]})");
  EXPECT_EQ(empty.option, "load_libraries[0]");
  const Diagnostic wrong = errorOf(R"({"load_libraries": "libvendor.so"})");
  EXPECT_EQ(wrong.option, "load_libraries");
}

}  // namespace
}  // namespace oxport
