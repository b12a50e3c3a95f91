// Scripted transformers (tests/transformers/gen_transformers.py): each model is exported at opsets
// 11, 14 and 17 with the default options and its example arguments, then verified against libtorch
// in ONNX Runtime, then verified again at a second batch size and sequence length (dynamic axes)
// with other masks. Their scripted code holds PyTorch's fast paths behind conditions fixed at export
// time and asserts on shapes; none of it may reach the file. A case with an error code must fail
// with it, naming the node and its source line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "oxport/model.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

struct TransformerCase {
  std::string name, model, error;
  nlohmann::json args, kwargs, input_names, output_names, dynamic_axes, args2, kwargs2;
  int opset = 11;
};

std::string caseName(const TransformerCase& c) { return c.name + "_opset" + std::to_string(c.opset); }

void PrintTo(const TransformerCase& c, std::ostream* os) { *os << caseName(c); }

std::vector<TransformerCase> loadCases() {
  std::vector<TransformerCase> out;
  std::ifstream f(fs::path(OXPORT_TRANSFORMERS_DIR) / "manifest.json");
  if (!f) return out;
  for (const auto& row : nlohmann::json::parse(f)) {
    for (int opset : {11, 14, 17}) {
      TransformerCase c;
      c.name = row["name"];
      c.model = row["model"];
      c.error = row["error"];
      c.args = row["args"];
      c.kwargs = row["kwargs"];
      c.input_names = row.value("input_names", nlohmann::json::array());
      c.output_names = row.value("output_names", nlohmann::json::array());
      c.dynamic_axes = row.value("dynamic_axes", nlohmann::json::object());
      c.args2 = row.value("args2", nlohmann::json());
      c.kwargs2 = row.value("kwargs2", nlohmann::json::object());
      c.opset = opset;
      out.push_back(c);
    }
  }
  return out;
}

OnnxRuntime& runtime() {
  static std::unique_ptr<OnnxRuntime> rt = [] {
    auto r = makeDefaultRuntime();
    return r.ok() ? std::move(*r) : std::unique_ptr<OnnxRuntime>();
  }();
  return *rt;
}

class ScriptedTransformerTest : public ::testing::TestWithParam<TransformerCase> {};

TEST_P(ScriptedTransformerTest, ExportsAndMatchesLibtorch) {
  const TransformerCase& c = GetParam();
  auto model = Model::load(fs::path(OXPORT_TRANSFORMERS_DIR) / c.model);
  ASSERT_TRUE(model.ok()) << model.error().message();
  auto makePreset = [&](const nlohmann::json& args, const nlohmann::json& kwargs) {
    nlohmann::json preset = {{"args", args}, {"opset_version", c.opset}};
    if (!kwargs.empty()) preset["kwargs"] = kwargs;
    if (!c.input_names.empty()) preset["input_names"] = c.input_names;
    if (!c.output_names.empty()) preset["output_names"] = c.output_names;
    if (!c.dynamic_axes.empty()) preset["dynamic_axes"] = c.dynamic_axes;
    return parsePreset(preset.dump());
  };
  auto p = makePreset(c.args, c.kwargs);
  ASSERT_TRUE(p.ok()) << p.error().message();
  const ExportOptions& options = p->options;
  if (!c.error.empty()) {
    std::ostringstream sink;
    auto r = model->exportOnnx(options, OutputTarget::toStream(sink));
    ASSERT_FALSE(r.ok()) << "the export of " << c.name << " should fail";
    const Diagnostic& d = r.error().first();
    EXPECT_EQ(d.code, c.error) << d.toString();
    EXPECT_FALSE(d.node_kind.empty()) << d.toString();
    EXPECT_GT(d.location.line, 0) << d.toString();
    EXPECT_FALSE(d.hint.empty()) << d.toString();
    return;
  }
  ASSERT_TRUE(makeDefaultRuntime().ok()) << "ONNX Runtime is not available";
  fs::path out = fs::path(OXPORT_TRANSFORMERS_DIR) / "out" / (caseName(c) + ".onnx");
  fs::create_directories(out.parent_path());
  auto r = model->exportOnnx(options, OutputTarget::toFile(out));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stats.checker_passed);
  // The export-time conditions are decided: no data-dependent control flow is left.
  EXPECT_EQ(r->stats.onnx_op_histogram["If"], 0);
  EXPECT_EQ(r->stats.onnx_op_histogram["Loop"], 0);
  VerifyOptions vo;
  vo.extra_sizes = false;
  auto report = verifyExport(*model, options, out, runtime(), vo);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(report->passed) << report->toText();
  // The same file at the second batch size and sequence length (dynamic axes), with other masks:
  // a condition on the mask's values decided at run time, not by the example's mask.
  if (!c.args2.is_null()) {
    auto p2 = makePreset(c.args2, c.kwargs2);
    ASSERT_TRUE(p2.ok()) << p2.error().message();
    auto report2 = verifyExport(*model, p2->options, out, runtime(), vo);
    ASSERT_TRUE(report2.ok()) << report2.error().message();
    EXPECT_TRUE(report2->passed) << "second size: " << report2->toText();
  }
}

INSTANTIATE_TEST_SUITE_P(Transformers, ScriptedTransformerTest, ::testing::ValuesIn(loadCases()),
                         [](const ::testing::TestParamInfo<TransformerCase>& i) { return caseName(i.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ScriptedTransformerTest);

}  // namespace
