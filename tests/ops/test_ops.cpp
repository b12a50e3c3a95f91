// Per-op numeric tests: every case of tests/ops/cases_*.py, at each of its opsets, is exported by
// oxport, checked (checker + strict shape inference), run in ONNX Runtime and compared with
// libtorch on the same inputs (and at other sizes of its dynamic axes).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <optional>

#include "oxport/model.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"

#include "../support/newest_runtime.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

struct OpCase {
  std::string name, family, dir, expect;
  std::string reference;  // a model of the same inputs giving the expected outputs, if not model.pt
  std::vector<int> opsets;
  double tolerance = 1e-4;
};

void PrintTo(const OpCase& c, std::ostream* os) { *os << c.family << "/" << c.name; }

std::vector<OpCase> loadManifest() {
  std::vector<OpCase> out;
  std::ifstream f(fs::path(OXPORT_OPS_DIR) / "manifest.json");
  if (!f) return out;
  auto j = nlohmann::json::parse(f);
  for (const auto& c : j) {
    OpCase oc;
    oc.name = c["name"];
    oc.family = c["family"];
    oc.dir = c["dir"];
    oc.expect = c["expect"];
    oc.tolerance = c["tolerance"];
    oc.opsets = c["opsets"].get<std::vector<int>>();
    oc.reference = c.value("reference", "");
    out.push_back(oc);
  }
  return out;
}

OnnxRuntime& runtime() {
  static std::unique_ptr<OnnxRuntime> rt = [] {
    auto r = makeDefaultRuntime();
    if (!r.ok()) {
      ADD_FAILURE() << r.error().message();
      return std::unique_ptr<OnnxRuntime>();
    }
    return std::move(*r);
  }();
  return *rt;
}

class OpTest : public ::testing::TestWithParam<OpCase> {};

void runCase(const OpCase& c, int opset) {
  fs::path dir = fs::path(OXPORT_OPS_DIR) / c.dir;
  auto preset = loadPreset(dir / "preset.json");
  ASSERT_TRUE(preset.ok()) << preset.error().message();
  ExportOptions options = resolvePresetPaths(*preset, dir / "preset.json").options;
  options.opset_version = opset;
  auto model = Model::load(dir / "model.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  fs::path out = fs::path(OXPORT_OPS_DIR) / "out" / (c.name + "_opset" + std::to_string(opset) + ".onnx");
  fs::create_directories(out.parent_path());
  auto r = model->exportOnnx(options, OutputTarget::toFile(out));
  if (c.expect.rfind("error:", 0) == 0) {
    ASSERT_FALSE(r.ok()) << "the export should fail with " << c.expect;
    std::string code = c.expect.substr(6);
    bool found = false;
    for (const auto& d : r.error().diagnostics()) found = found || d.code == code;
    EXPECT_TRUE(found) << "expected a diagnostic " << code << ", got:\n" << r.error().message();
    EXPECT_FALSE(fs::exists(out));
    return;
  }
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stats.checker_passed);
  EXPECT_TRUE(r->stats.shape_inference_passed);
  for (const auto& d : r->diagnostics)
    EXPECT_NE(d.code, "fallback-op") << "op fell back to a custom node: " << d.toString();
  VerifyOptions vo;
  vo.tolerance = c.tolerance;
  std::optional<Model> reference;
  if (!c.reference.empty()) {
    auto ref = Model::load(dir / c.reference);
    ASSERT_TRUE(ref.ok()) << ref.error().message();
    reference.emplace(std::move(*ref));
  }
  auto report = verifyExport(reference ? *reference : *model, options, out, runtime(), vo);
  ASSERT_TRUE(report.ok()) << report.error().message();
  if (c.expect == "verify-skipped") {  // ONNX Runtime cannot run it; the export must say why
    EXPECT_TRUE(report->skipped) << report->toText();
    EXPECT_FALSE(report->skip_reason.empty());
    return;
  }
  EXPECT_TRUE(report->passed) << report->toText();
  // Operands that must be constant (sizes, scales, pads, shapes, bounds, repeats): the newest
  // runtime's shape rules read them at load time, so such files run there too.
  bool shaped = false;
  for (const char* op : {"Resize", "Upsample", "Pad", "Reshape", "Slice", "Expand", "Tile"})
    shaped = shaped || r->stats.onnx_op_histogram.count(op);
  if (shaped) {
    auto newest = oxport::testing::verifyInNewestRuntime(reference ? *reference : *model, options, out, vo);
    ASSERT_TRUE(newest.ok()) << newest.error().message();
    EXPECT_TRUE(newest->passed) << "newest ONNX Runtime:\n" << newest->toText();
  }
}

// One test per case; each of its opsets is a scoped trace inside it (one libtorch start-up per case).
TEST_P(OpTest, ExportsChecksAndMatches) {
  const OpCase& c = GetParam();
  for (int opset : c.opsets) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    runCase(c, opset);
  }
}

std::string caseName(const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; }

}  // namespace

INSTANTIATE_TEST_SUITE_P(Ops, OpTest, ::testing::ValuesIn(loadManifest()), caseName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OpTest);
