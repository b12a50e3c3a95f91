// Dynamic-axis traps: sizes baked by tracing are warned about before writing (with the node and
// source line) and confirmed by verification at other sizes; clean models get neither.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "oxport/model.h"
#include "oxport/runtime.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

struct TrapCase {
  std::string name;
  std::vector<int64_t> shape, input_axes, output_axes;
  bool trap = false;
  std::string warns_about;  // what one of the baked-dynamic-size warnings must name ("'groups'")
  // Whether verification at other sizes fails too: not for a constant the traced reference holds
  // as well (torch.tensor([w, h]) recorded with the example's values), which only the warning names.
  bool verify_confirms = true;
};

void PrintTo(const TrapCase& c, std::ostream* os) { *os << c.name; }

std::vector<TrapCase> loadManifest() {
  std::vector<TrapCase> out;
  std::ifstream f(fs::path(OXPORT_TRAPS_DIR) / "manifest.json");
  if (!f) return out;
  for (const auto& j : nlohmann::json::parse(f)) {
    TrapCase c;
    c.name = j["name"];
    c.shape = j["shape"].get<std::vector<int64_t>>();
    c.input_axes = j["input_axes"].get<std::vector<int64_t>>();
    c.output_axes = j["output_axes"].get<std::vector<int64_t>>();
    c.trap = j["trap"];
    c.warns_about = j.value("warns_about", "");
    c.verify_confirms = j.value("verify_confirms", true);
    out.push_back(c);
  }
  return out;
}

class TrapTest : public ::testing::TestWithParam<TrapCase> {};

TEST_P(TrapTest, WarnedAndConfirmedOrClean) {
  const TrapCase& c = GetParam();
  auto model = Model::load(fs::path(OXPORT_TRAPS_DIR) / (c.name + ".pt"));
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions o;
  TensorSpec spec;
  spec.shape = c.shape;
  o.args.push_back(ArgValue::tensor(spec));
  o.input_names = {"x"};
  o.output_names = {"y"};
  DynamicAxisSpec in, out;
  for (auto a : c.input_axes) in.axes[a] = "d" + std::to_string(a);
  for (auto a : c.output_axes) out.axes[a] = "d" + std::to_string(a);
  o.dynamic_axes["x"] = in;
  o.dynamic_axes["y"] = out;
  fs::path file = fs::path(OXPORT_TRAPS_DIR) / (c.name + ".onnx");
  auto r = model->exportOnnx(o, OutputTarget::toFile(file));
  ASSERT_TRUE(r.ok()) << r.error().message();
  std::vector<Diagnostic> baked;
  for (const auto& d : r->diagnostics)
    if (d.code == "baked-dynamic-size") baked.push_back(d);
  auto rt = makeDefaultRuntime();
  ASSERT_TRUE(rt.ok()) << rt.error().message();
  auto report = verifyExport(*model, o, file, **rt);
  ASSERT_TRUE(report.ok()) << report.error().message();
  if (c.trap) {
    ASSERT_FALSE(baked.empty()) << "no warning for a baked size";
    // The warning points at the op that baked it, with the model's source line.
    EXPECT_FALSE(baked.front().node_kind.empty());
    EXPECT_TRUE(baked.front().location.known()) << baked.front().toString();
    EXPECT_NE(baked.front().location.file.find("make_traps.py"), std::string::npos);
    if (!c.warns_about.empty()) {
      bool named = false;
      for (const auto& d : baked) named = named || d.message.find(c.warns_about) != std::string::npos;
      EXPECT_TRUE(named) << "no baked-dynamic-size warning names " << c.warns_about;
    }
    if (c.verify_confirms)
      EXPECT_FALSE(report->passed) << "verification at other sizes should confirm the trap\n" << report->toText();
    else
      EXPECT_TRUE(report->passed) << "the traced reference holds the same constant\n" << report->toText();
  } else {
    for (const auto& d : baked) ADD_FAILURE() << "unexpected warning: " << d.toString();
    for (const auto& d : r->diagnostics)
      if (d.code == "python-size-branch") ADD_FAILURE() << "unexpected warning: " << d.toString();
    EXPECT_TRUE(report->passed) << report->toText();
    EXPECT_GE(report->runs.size(), 2u) << "verification should run at other sizes of the dynamic axes";
  }
}

// A size used in a Python branch (`if x.shape[0] > 1:` while tracing) leaves nothing in the saved
// graph: torch.jit.trace records only the ops of the branch taken, and the aten::size it read is
// dead code that tracing removes. What the file keeps is the Python stack of every node
// ("make_traps.py(52): forward"), so the exporter reads the function in the source file (still on
// disk here) and warns at the branch. Verification cannot confirm it: its reference is the saved
// traced module, which lost the other branch too, so ONNX Runtime and libtorch agree at every size,
// size 1 included. This test pins both facts down.
ExportOptions branchOptions() {
  ExportOptions o;
  TensorSpec spec;
  spec.shape = {4, 3};
  o.args.push_back(ArgValue::tensor(spec));
  o.input_names = {"x"};
  o.output_names = {"y"};
  o.dynamic_axes["x"].axes[0] = "batch";
  o.dynamic_axes["y"].axes[0] = "batch";
  return o;
}

std::string lineOf(const SourceLocation& loc) {
  std::ifstream in(loc.file);
  std::string text;
  for (int k = 0; k < loc.line && std::getline(in, text); ++k) {
  }
  return text;
}

TEST(PythonBranch, WarnedFromTheSourceButNotSeenByVerification) {
  auto model = Model::load(fs::path(OXPORT_TRAPS_DIR) / "python_branch.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  EXPECT_EQ(model->info().kind, ModelKind::TracedModule);
  ExportOptions o = branchOptions();
  auto graph = model->inspect(o);
  ASSERT_TRUE(graph.ok()) << graph.error().message();
  std::vector<std::string> ops;
  for (const auto& n : graph->nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"aten::mul"})) << graph->toText();
  fs::path file = fs::path(OXPORT_TRAPS_DIR) / "python_branch.onnx";
  auto r = model->exportOnnx(o, OutputTarget::toFile(file));
  ASSERT_TRUE(r.ok()) << r.error().message();
  std::vector<Diagnostic> branches;
  for (const auto& d : r->diagnostics) {
    EXPECT_NE(d.code, "baked-dynamic-size") << d.toString();
    if (d.code == "python-size-branch") branches.push_back(d);
  }
  ASSERT_EQ(branches.size(), 1u);
  EXPECT_NE(branches[0].location.file.find("make_traps.py"), std::string::npos) << branches[0].toString();
  EXPECT_NE(lineOf(branches[0].location).find("if x.shape[0] > 1:"), std::string::npos) << branches[0].toString();
  EXPECT_NE(branches[0].message.find("'batch'"), std::string::npos) << branches[0].toString();

  auto rt = makeDefaultRuntime();
  ASSERT_TRUE(rt.ok()) << rt.error().message();
  auto report = verifyExport(*model, o, file, **rt);  // traced size + 1 and 2x
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(report->passed) << report->toText();
  VerifyOptions at_one;
  at_one.extra_shapes = {{{1, 3}}};
  auto one = verifyExport(*model, o, file, **rt, at_one);
  ASSERT_TRUE(one.ok()) << one.error().message();
  // Python would take the other branch at size 1 (x + 1); the traced reference does not.
  EXPECT_TRUE(one->passed) << one->toText();
}

TEST(PythonBranch, NoWarningWithoutDynamicAxesOrOnAFixedAxis) {
  auto model = Model::load(fs::path(OXPORT_TRAPS_DIR) / "python_branch.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions fixed = branchOptions();
  fixed.dynamic_axes.clear();
  std::ostringstream sink;
  auto r = model->exportOnnx(fixed, OutputTarget::toStream(sink));
  ASSERT_TRUE(r.ok()) << r.error().message();
  for (const auto& d : r->diagnostics) EXPECT_NE(d.code, "python-size-branch") << d.toString();

  auto static_axis = Model::load(fs::path(OXPORT_TRAPS_DIR) / "python_branch_static_axis.pt");
  ASSERT_TRUE(static_axis.ok()) << static_axis.error().message();
  std::ostringstream sink2;
  auto r2 = static_axis->exportOnnx(branchOptions(), OutputTarget::toStream(sink2));
  ASSERT_TRUE(r2.ok()) << r2.error().message();
  for (const auto& d : r2->diagnostics) EXPECT_NE(d.code, "python-size-branch") << d.toString();
}

std::string caseName(const ::testing::TestParamInfo<TrapCase>& info) { return info.param.name; }

}  // namespace

INSTANTIATE_TEST_SUITE_P(Traps, TrapTest, ::testing::ValuesIn(loadManifest()), caseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TrapTest);
