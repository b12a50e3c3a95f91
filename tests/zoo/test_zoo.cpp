// Model-zoo tests: every model of tests/zoo/gen_zoo.py (torchvision classifiers, transformer
// encoders with and without PyTorch's fused fast paths, LSTM/GRU) is exported by oxport at each
// opset, checked (checker + strict shape inference), run in ONNX Runtime and compared with
// libtorch at the traced size and at other sizes of its dynamic axes. Each export's time, node
// count and errors are printed, and appended to zoo_report.jsonl next to the fixtures.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "oxport/localize.h"
#include "oxport/model.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"

#include "../support/newest_runtime.h"

// test_zoo runs the manifest's "zoo" models, test_zoo_full (-DOXPORT_ZOO_FULL=ON) its slow "zoo-full" ones.
#ifndef OXPORT_ZOO_LABEL
#define OXPORT_ZOO_LABEL "zoo"
#endif

namespace fs = std::filesystem;
using namespace oxport;

namespace {

struct ZooModel {
  std::string name, dir;
  std::vector<int> opsets;
  double tolerance = 1e-4;
  bool meta_run = true;  // false: the example run needs data (NMS, counts decided by values)
};

void PrintTo(const ZooModel& m, std::ostream* os) { *os << m.name; }

std::vector<ZooModel> loadManifest() {
  std::vector<ZooModel> out;
  std::ifstream f(fs::path(OXPORT_ZOO_DIR) / "manifest.json");
  if (!f) return out;
  auto j = nlohmann::json::parse(f);
  for (const auto& c : j) {
    if (c.value("label", std::string("zoo")) != OXPORT_ZOO_LABEL) continue;
    ZooModel m;
    m.name = c["name"];
    m.dir = c["dir"];
    m.tolerance = c["tolerance"];
    m.meta_run = c.value("meta_run", true);
    m.opsets = c["opsets"].get<std::vector<int>>();
    out.push_back(m);
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

std::string shapeText(const std::vector<std::vector<int64_t>>& shapes) {
  std::string s;
  for (const auto& sh : shapes) {
    if (!s.empty()) s += " ";
    s += "(";
    for (size_t i = 0; i < sh.size(); ++i) s += (i ? "," : "") + std::to_string(sh[i]);
    s += ")";
  }
  return s;
}

class ZooTest : public ::testing::TestWithParam<ZooModel> {};

void runModel(const ZooModel& m, const Model& model, int opset) {
  fs::path dir = fs::path(OXPORT_ZOO_DIR) / m.dir;
  auto preset = loadPreset(dir / "preset.json");
  ASSERT_TRUE(preset.ok()) << preset.error().message();
  ExportOptions options = preset->options;
  options.opset_version = opset;
  fs::path out = fs::path(OXPORT_ZOO_DIR) / "out" / (m.name + "_opset" + std::to_string(opset) + ".onnx");
  fs::create_directories(out.parent_path());
  auto t0 = std::chrono::steady_clock::now();
  auto r = model.exportOnnx(options, OutputTarget::toFile(out));
  double export_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stats.checker_passed);
  EXPECT_TRUE(r->stats.shape_inference_passed);
  for (const auto& d : r->diagnostics)
    EXPECT_NE(d.code, "fallback-op") << "op fell back to a custom node: " << d.toString();
  // Every zoo model but the detectors runs its example run on meta tensors, and the file is the
  // one the real run makes, byte for byte (checked at the first opset: the real run is the slow
  // part). A detector's NMS needs the data: its run falls back, and says so.
  if (!m.meta_run) {
    EXPECT_EQ(r->stats.example_run.rfind("real (fallback: ", 0), 0u) << r->stats.example_run;
  } else {
    EXPECT_EQ(r->stats.example_run, "meta");
  }
  if (m.meta_run && opset == m.opsets.front()) {
    fs::path real_out = out;
    real_out.replace_extension(".real.onnx");
    ::setenv("OXPORT_META_RUN", "0", 1);
    auto real = model.exportOnnx(options, OutputTarget::toFile(real_out));
    ::unsetenv("OXPORT_META_RUN");
    ASSERT_TRUE(real.ok()) << real.error().message();
    EXPECT_EQ(real->stats.example_run, "real (OXPORT_META_RUN=0)");
    auto bytes = [](const fs::path& p) {
      std::ifstream f(p, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    };
    EXPECT_TRUE(bytes(out) == bytes(real_out)) << "the meta and the real example run gave different files";
    fs::remove(real_out);
  }
  VerifyOptions vo;
  vo.tolerance = m.tolerance;
  auto v0 = std::chrono::steady_clock::now();
  auto report = verifyExport(model, options, out, runtime(), vo);
  double verify_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - v0).count();
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(report->passed) << report->toText();
  // The newest ONNX Runtime too, at the newest opset (its newer shape rules are where files
  // written with the seed's defaults failed to load).
  if (opset == m.opsets.back()) {
    auto newest = oxport::testing::verifyInNewestRuntime(model, options, out, vo);
    ASSERT_TRUE(newest.ok()) << newest.error().message();
    EXPECT_TRUE(newest->passed) << "newest ONNX Runtime:\n" << newest->toText();
  }

  // A file that verifies localizes to no divergence: every TorchScript value that has an ONNX
  // counterpart agrees (at the first opset; its cost beside one verification goes in the report).
  // Not the detectors: their intermediate values legitimately differ where the outputs agree
  // (tied scores in TopK, boxes within rounding of remove_small_boxes' threshold), as localize
  // reports (data-dependent models are those whose example run cannot be on meta tensors).
  double localize_ms = -1;
  if (report->passed && opset == m.opsets.front() && m.meta_run) {
    LocalizeOptions lo;
    lo.tolerance = m.tolerance;
    auto l0 = std::chrono::steady_clock::now();
    auto loc = localizeExport(model, options, out, runtime(), lo);
    localize_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - l0).count();
    ASSERT_TRUE(loc.ok()) << loc.error().message();
    EXPECT_TRUE(loc->mapped) << loc->message;
    EXPECT_GT(loc->compared, 0) << loc->toText();
    EXPECT_FALSE(loc->diverged()) << loc->toText();
  }

  nlohmann::json row{{"model", m.name}, {"opset", opset}, {"export_ms", export_ms}, {"verify_ms", verify_ms},
                     {"localize_ms", localize_ms},
                     {"onnx_nodes", r->stats.onnx_nodes}, {"passed", report->passed},
                     {"example_run", r->stats.example_run}};
  std::cout << "[zoo] " << m.name << " opset " << opset << ": export " << static_cast<int>(export_ms) << " ms, "
            << r->stats.onnx_nodes << " nodes, example run " << r->stats.example_run << ", verify "
            << static_cast<int>(verify_ms) << " ms";
  if (localize_ms >= 0) std::cout << ", localize " << static_cast<int>(localize_ms) << " ms";
  for (const auto& run : report->runs) {
    double rel = 0;
    for (const auto& o : run.outputs) {
      rel = std::max(rel, o.max_rel_error);
      // An output that is zero everywhere would make the comparison vacuous.
      EXPECT_GT(o.max_magnitude, 0.0) << m.name << ": output " << o.name << " is all zeros";
    }
    row["runs"].push_back({{"shapes", run.input_shapes}, {"max_rel_error", rel}, {"passed", run.passed}});
    std::cout << "; " << shapeText(run.input_shapes) << " rel " << rel << (run.passed ? "" : " FAILED");
  }
  std::cout << std::endl;
  std::ofstream(fs::path(OXPORT_ZOO_DIR) / "zoo_report.jsonl", std::ios::app) << row.dump() << "\n";
  fs::remove(out);  // the large models would fill the disk otherwise
}

// One test per model; each opset is a scoped trace inside it (the model is loaded once).
TEST_P(ZooTest, ExportsChecksAndMatches) {
  const ZooModel& m = GetParam();
  auto model = Model::load(fs::path(OXPORT_ZOO_DIR) / m.dir / "model.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  for (int opset : m.opsets) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    runModel(m, *model, opset);
  }
}

std::string modelName(const ::testing::TestParamInfo<ZooModel>& info) { return info.param.name; }

}  // namespace

INSTANTIATE_TEST_SUITE_P(Zoo, ZooTest, ::testing::ValuesIn(loadManifest()), modelName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ZooTest);
