// Scripted control flow (tests/control/gen_control.py): each torch.jit.script model is exported
// once (opsets 11 and 13) with its first input set, then the same ONNX file is verified against
// libtorch on every input set of the case: different branches taken, different loop counts,
// other sizes of the dynamic axes.
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

struct ControlCase {
  std::string name, model;
  std::vector<nlohmann::json> input_sets;
  nlohmann::json dynamic;
  std::vector<std::string> ops;
  int opset = 11;
};

void PrintTo(const ControlCase& c, std::ostream* os) { *os << c.name << "_opset" << c.opset; }

std::vector<ControlCase> loadCases() {
  std::vector<ControlCase> out;
  std::ifstream f(fs::path(OXPORT_CONTROL_DIR) / "manifest.json");
  if (!f) return out;
  for (const auto& row : nlohmann::json::parse(f)) {
    for (int opset : {11, 13}) {
      ControlCase c;
      c.name = row["name"];
      c.model = row["model"];
      for (const auto& s : row["input_sets"]) c.input_sets.push_back(s);
      c.dynamic = row["dynamic"];
      c.ops = row["ops"].get<std::vector<std::string>>();
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

ExportOptions optionsFor(const ControlCase& c, const nlohmann::json& args) {
  nlohmann::json preset = {{"args", args}, {"input_names", {"x"}}, {"dynamic_axes", c.dynamic},
                           {"opset_version", c.opset}};
  auto p = parsePreset(preset.dump());
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message());
  return p.ok() ? p->options : ExportOptions{};
}

class ControlFlowTest : public ::testing::TestWithParam<ControlCase> {};

TEST_P(ControlFlowTest, MatchesLibtorchOnEveryInputSet) {
  const ControlCase& c = GetParam();
  if (c.name == "raises_on_data") GTEST_SKIP() << "an error case (see RaiseInDataDependentBranch)";
  ASSERT_TRUE(makeDefaultRuntime().ok()) << "ONNX Runtime is not available";
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / c.model);
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions options = optionsFor(c, c.input_sets.at(0));
  fs::path out = fs::path(OXPORT_CONTROL_DIR) / "out" / (c.name + "_opset" + std::to_string(c.opset) + ".onnx");
  fs::create_directories(out.parent_path());
  auto r = model->exportOnnx(options, OutputTarget::toFile(out));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stats.checker_passed);
  for (const auto& op : c.ops) EXPECT_GT(r->stats.onnx_op_histogram[op], 0) << op << " missing";
  for (size_t i = 0; i < c.input_sets.size(); ++i) {
    ExportOptions run = optionsFor(c, c.input_sets[i]);
    VerifyOptions vo;
    vo.extra_sizes = false;
    auto report = verifyExport(*model, run, out, runtime(), vo);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_TRUE(report->passed) << "input set " << i << ": " << c.input_sets[i].dump() << "\n" << report->toText();
  }
}

INSTANTIATE_TEST_SUITE_P(Control, ControlFlowTest, ::testing::ValuesIn(loadCases()),
                         [](const ::testing::TestParamInfo<ControlCase>& i) {
                           return i.param.name + "_opset" + std::to_string(i.param.opset);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ControlFlowTest);

// A raise on a data-dependent branch has no ONNX form: the error names it, its line, and the way out.
TEST(ControlFlowErrors, RaiseInDataDependentBranch) {
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "raises_on_data.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions options;
  options.args = {ArgValue::tensor(TensorSpec{{2, 3}})};
  std::ostringstream sink;
  auto r = model->exportOnnx(options, OutputTarget::toStream(sink));
  ASSERT_FALSE(r.ok());
  const Diagnostic& d = r.error().first();
  EXPECT_EQ(d.code, "unsupported-form");
  EXPECT_NE(d.message.find("raises an exception (\"input too large\")"), std::string::npos) << d.message;
  EXPECT_EQ(d.node_kind, "prim::RaiseException");
  EXPECT_GT(d.location.line, 0);
  EXPECT_NE(d.hint.find("torch.jit.trace"), std::string::npos) << d.hint;
}

// Control flow needs opset 11 (as torch.onnx): older opsets say so.
TEST(ControlFlowErrors, OpsetBelow11) {
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "data_if.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions options;
  options.opset_version = 10;
  options.operator_export_type = OperatorExportType::Onnx;
  options.args = {ArgValue::tensor(TensorSpec{{2, 3}})};
  std::ostringstream sink;
  auto r = model->exportOnnx(options, OutputTarget::toStream(sink));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().first().code, "opset-too-old");
}

}  // namespace
