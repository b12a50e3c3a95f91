// Export options: enum names, the seed's defaults, equality and validateOptions' messages.
#include <gtest/gtest.h>

#include <functional>

#include "oxport/options.h"

namespace oxport {
namespace {

TEST(Options, TrainingModeNames) {
  for (TrainingMode m : {TrainingMode::Eval, TrainingMode::Preserve, TrainingMode::Training})
    EXPECT_EQ(parseTrainingMode(trainingModeName(m)), m);
  EXPECT_STREQ(trainingModeName(TrainingMode::Eval), "EVAL");
  EXPECT_EQ(parseTrainingMode("eval"), TrainingMode::Eval);
  EXPECT_EQ(parseTrainingMode("TrainingMode.EVAL"), TrainingMode::Eval);
  EXPECT_EQ(parseTrainingMode("trainingmode.training"), TrainingMode::Training);
  EXPECT_EQ(parseTrainingMode("torch.onnx.TrainingMode.PRESERVE"), TrainingMode::Preserve);
  for (const char* s : {"", "EVALUATE", "Foo.EVAL", "TrainingMode.", "OperatorExportTypes.EVAL", "0"})
    EXPECT_FALSE(parseTrainingMode(s)) << s;
}

TEST(Options, OperatorExportTypeNames) {
  for (OperatorExportType t : {OperatorExportType::Onnx, OperatorExportType::OnnxFallthrough,
                               OperatorExportType::OnnxAten, OperatorExportType::OnnxAtenFallback})
    EXPECT_EQ(parseOperatorExportType(operatorExportTypeName(t)), t);
  EXPECT_STREQ(operatorExportTypeName(OperatorExportType::OnnxFallthrough), "ONNX_FALLTHROUGH");
  EXPECT_STREQ(operatorExportTypeName(OperatorExportType::OnnxAtenFallback), "ONNX_ATEN_FALLBACK");
  EXPECT_EQ(parseOperatorExportType("OperatorExportTypes.ONNX_FALLTHROUGH"), OperatorExportType::OnnxFallthrough);
  EXPECT_EQ(parseOperatorExportType("onnx_aten"), OperatorExportType::OnnxAten);
  EXPECT_EQ(parseOperatorExportType("torch.onnx.OperatorExportTypes.ONNX"), OperatorExportType::Onnx);
  for (const char* s : {"", "ONNX_FOO", "TrainingMode.ONNX", "ONNX ATEN", "OperatorExportType.ONNX"})
    EXPECT_FALSE(parseOperatorExportType(s)) << s;
}

TEST(Options, GraphModeNames) {
  for (GraphMode m : {GraphMode::Script, GraphMode::Trace}) EXPECT_EQ(parseGraphMode(graphModeName(m)), m);
  EXPECT_STREQ(graphModeName(GraphMode::Script), "script");
  EXPECT_STREQ(graphModeName(GraphMode::Trace), "trace");
  EXPECT_EQ(parseGraphMode("TRACE"), GraphMode::Trace);
  for (const char* s : {"", "traced", "scripted", "jit", "trace "}) EXPECT_FALSE(parseGraphMode(s)) << s;
}

TEST(Options, FillKindNames) {
  for (FillKind f : {FillKind::Randn, FillKind::Rand, FillKind::Zeros, FillKind::Ones, FillKind::Arange, FillKind::Npy,
                     FillKind::Smooth})
    EXPECT_EQ(parseFillKind(fillKindName(f)), f);
  EXPECT_STREQ(fillKindName(FillKind::Arange), "arange");
  EXPECT_STREQ(fillKindName(FillKind::Smooth), "smooth");
  EXPECT_EQ(parseFillKind("ZEROS"), FillKind::Zeros);
  EXPECT_FALSE(parseFillKind("zero"));
  EXPECT_FALSE(parseFillKind(""));
}

TEST(Options, DefaultsAreExportToOnnxDefaults) {
  const ExportOptions o;
  EXPECT_TRUE(o.args.empty());
  EXPECT_TRUE(o.kwargs.empty());
  EXPECT_TRUE(o.export_params);
  EXPECT_FALSE(o.verbose);
  EXPECT_EQ(o.training, TrainingMode::Eval);
  EXPECT_TRUE(o.input_names.empty());
  EXPECT_TRUE(o.output_names.empty());
  EXPECT_EQ(o.operator_export_type, OperatorExportType::OnnxFallthrough);
  EXPECT_EQ(o.opset_version, 11);
  EXPECT_TRUE(o.do_constant_folding);
  EXPECT_TRUE(o.dynamic_axes.empty());
  EXPECT_FALSE(o.keep_initializers_as_inputs.has_value());
  EXPECT_TRUE(o.custom_opsets.empty());
  EXPECT_EQ(o.graph_mode, GraphMode::Script);  // oxport's own: keep the control flow
  EXPECT_TRUE(validateOptions(o).empty());
}

TEST(Options, EqualityLooksAtEveryField) {
  const std::vector<std::function<void(ExportOptions&)>> changes = {
      [](ExportOptions& o) { o.args.push_back(ArgValue::integer(1)); },
      [](ExportOptions& o) { o.kwargs.emplace_back("k", ArgValue::none()); },
      [](ExportOptions& o) { o.export_params = false; },
      [](ExportOptions& o) { o.verbose = true; },
      [](ExportOptions& o) { o.training = TrainingMode::Training; },
      [](ExportOptions& o) { o.input_names = {"x"}; },
      [](ExportOptions& o) { o.output_names = {"y"}; },
      [](ExportOptions& o) { o.operator_export_type = OperatorExportType::Onnx; },
      [](ExportOptions& o) { o.opset_version = 13; },
      [](ExportOptions& o) { o.do_constant_folding = false; },
      [](ExportOptions& o) {
        o.dynamic_axes["x"] = DynamicAxisSpec{true, {{0, ""}}};
      },
      [](ExportOptions& o) { o.keep_initializers_as_inputs = false; },
      [](ExportOptions& o) { o.custom_opsets["d"] = 1; },
      [](ExportOptions& o) { o.graph_mode = GraphMode::Trace; },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    ExportOptions changed;
    changes[i](changed);
    EXPECT_FALSE(changed == ExportOptions{}) << "change " << i;
    ExportOptions same;
    changes[i](same);
    EXPECT_TRUE(changed == same) << "change " << i;
  }
}

TEST(Options, ArgValueDistinguishesIntegerAndNumber) {
  EXPECT_FALSE(ArgValue::integer(2) == ArgValue::number(2.0));
  EXPECT_TRUE(ArgValue::number(2.0) == ArgValue::number(2.0));
}

// The one diagnostic validateOptions gives for `o`; every diagnostic is an error with a hint.
Diagnostic singleError(const ExportOptions& o) {
  const auto ds = validateOptions(o);
  if (ds.size() != 1) {
    std::string all;
    for (const auto& d : ds) all += d.toString() + "\n";
    ADD_FAILURE() << "expected one diagnostic, got " << ds.size() << ":\n" << all;
    return ds.empty() ? Diagnostic{} : ds.front();
  }
  EXPECT_EQ(ds[0].severity, Severity::Error);
  EXPECT_FALSE(ds[0].hint.empty()) << ds[0].toString();
  return ds[0];
}

TEST(ValidateOptions, OpsetRange) {
  for (int v : {kMinOpset, kDefaultOpset, kMaxOpset}) {
    ExportOptions o;
    o.opset_version = v;
    EXPECT_TRUE(validateOptions(o).empty()) << v;
  }
  ExportOptions o;
  o.opset_version = 8;
  Diagnostic d = singleError(o);
  EXPECT_EQ(d.option, "opset_version");
  EXPECT_EQ(d.message, "opset_version 8 is not supported");
  EXPECT_NE(d.hint.find("opsets 9 to 17"), std::string::npos) << d.hint;
  o.opset_version = 18;
  EXPECT_EQ(singleError(o).message, "opset_version 18 is not supported");
}

TEST(ValidateOptions, DuplicateAndEmptyNames) {
  ExportOptions o;
  o.input_names = {"x", "y", "x"};
  Diagnostic d = singleError(o);
  EXPECT_EQ(d.option, "input_names[2]");
  EXPECT_EQ(d.message, "input name \"x\" is given twice (input_names[0] and input_names[2])");

  o = {};
  o.output_names = {"out", ""};
  d = singleError(o);
  EXPECT_EQ(d.option, "output_names[1]");
  EXPECT_EQ(d.message, "output name 1 is empty");
}

TEST(ValidateOptions, NegativeDynamicAxis) {
  ExportOptions o;
  o.dynamic_axes["x"] = DynamicAxisSpec{false, {{-1, "batch"}, {0, "n"}}};
  Diagnostic d = singleError(o);
  EXPECT_EQ(d.option, "dynamic_axes.x");
  EXPECT_EQ(d.message, "dynamic_axes entry \"x\" has the negative axis -1");

  o = {};
  o.dynamic_axes["input.1"] = DynamicAxisSpec{true, {{-2, ""}}};
  EXPECT_EQ(singleError(o).option, "dynamic_axes[\"input.1\"]");

  o = {};
  o.dynamic_axes[""] = DynamicAxisSpec{true, {{0, ""}}};
  EXPECT_EQ(singleError(o).option, "dynamic_axes[\"\"]");
}

TEST(ValidateOptions, CustomOpsets) {
  ExportOptions o;
  o.custom_opsets = {{"my.domain", 2}, {"com.microsoft", 1}};
  EXPECT_TRUE(validateOptions(o).empty());

  o.custom_opsets = {{"", 1}};
  Diagnostic d = singleError(o);
  EXPECT_EQ(d.option, "custom_opsets[\"\"]");
  EXPECT_EQ(d.message, "custom_opsets names the default ONNX domain \"\"");
  EXPECT_NE(d.hint.find("opset_version"), std::string::npos);

  o.custom_opsets = {{"ai.onnx", 12}};
  EXPECT_EQ(singleError(o).option, "custom_opsets[\"ai.onnx\"]");

  o.custom_opsets = {{"my.domain", 0}};
  d = singleError(o);
  EXPECT_EQ(d.option, "custom_opsets[\"my.domain\"]");
  EXPECT_EQ(d.message, "custom_opsets gives the domain \"my.domain\" version 0");
}

TEST(ValidateOptions, TensorSpecs) {
  TensorSpec bad;
  bad.shape = {1, -3};
  TensorSpec good;
  good.shape = {2};

  ExportOptions o;
  o.args = {ArgValue::tensor(bad)};
  Diagnostic d = singleError(o);
  EXPECT_EQ(d.option, "args[0].tensor.shape[1]");
  EXPECT_EQ(d.message, "dimension 1 of the example tensor is -3");

  o.args = {ArgValue::integer(3), ArgValue::list({ArgValue::tensor(good), ArgValue::tensor(bad)})};
  EXPECT_EQ(singleError(o).option, "args[1][1].tensor.shape[1]");

  o.args = {};
  o.kwargs = {{"mask", ArgValue::tensor(bad)}};
  EXPECT_EQ(singleError(o).option, "kwargs.mask.tensor.shape[1]");

  TensorSpec npy;
  npy.fill = FillKind::Npy;
  o.kwargs = {};
  o.args = {ArgValue::tensor(npy)};
  d = singleError(o);
  EXPECT_EQ(d.option, "args[0].tensor.fill");
  npy.npy = "x.npy";
  o.args = {ArgValue::tensor(npy)};
  EXPECT_TRUE(validateOptions(o).empty());
}

TEST(ValidateOptions, Kwargs) {
  ExportOptions o;
  o.kwargs = {{"a", ArgValue::none()}, {"b", ArgValue::none()}, {"a", ArgValue::integer(1)}};
  Diagnostic d = singleError(o);
  EXPECT_EQ(d.option, "kwargs.a");
  EXPECT_EQ(d.message, "the named argument \"a\" is given twice");

  o.kwargs = {{"", ArgValue::none()}};
  EXPECT_EQ(singleError(o).option, "kwargs[\"\"]");
}

TEST(ValidateOptions, ReportsEveryProblemAtOnce) {
  ExportOptions o;
  o.opset_version = 30;
  o.input_names = {"x", "x"};
  o.custom_opsets = {{"", 0}};
  const auto ds = validateOptions(o);
  ASSERT_EQ(ds.size(), 4u);
  for (const Diagnostic& d : ds) {
    EXPECT_FALSE(d.option.empty()) << d.toString();
    EXPECT_FALSE(d.hint.empty()) << d.toString();
    EXPECT_FALSE(d.code.empty()) << d.toString();
  }
}

}  // namespace
}  // namespace oxport
