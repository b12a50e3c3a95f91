// The ONNX Runtime runner (node + tools/ort_run.js + onnxruntime-node) on tiny models made at
// test time with the `onnx` Python package, the errors when parts of it are missing, and the
// comparison rule and reports used by verification.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "oxport/runtime.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

// Sets an environment variable for one scope and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

fs::path makeTempDir(const char* stem) {
  std::string tmpl = (fs::temp_directory_path() / (std::string(stem) + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) return {};
  return tmpl;
}

class RuntimeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = makeTempDir("oxport-runtime-test");
    ASSERT_FALSE(dir_.empty());
    // add.onnx: y = a + b (float32, batch dynamic); two.onnx: s = a + b, p = a * b (int64).
    std::ofstream(dir_ / "make_models.py") << R"(import sys, onnx
from onnx import helper, TensorProto as T
d = sys.argv[1]
def save(nodes, ins, outs, name):
    g = helper.make_graph(nodes, name, ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, f'{d}/{name}.onnx')
vi = helper.make_tensor_value_info
save([helper.make_node('Add', ['a', 'b'], ['y'])],
     [vi('a', T.FLOAT, ['batch', 3]), vi('b', T.FLOAT, ['batch', 3])], [vi('y', T.FLOAT, ['batch', 3])], 'add')
save([helper.make_node('Add', ['a', 'b'], ['s']), helper.make_node('Mul', ['a', 'b'], ['p'])],
     [vi('a', T.INT64, [2]), vi('b', T.INT64, [2])], [vi('s', T.INT64, [2]), vi('p', T.INT64, [2])], 'two')
)";
    const std::string cmd =
        std::string(OXPORT_PYTHON) + " " + (dir_ / "make_models.py").string() + " " + dir_.string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << "could not make the test models with " << OXPORT_PYTHON
                                           << " and the onnx package; run tools/setup.sh";
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static fs::path dir_;
};
fs::path RuntimeTest::dir_;

HostTensor floats(std::vector<int64_t> shape, std::vector<float> v) {
  return HostTensor::fromVector<float>(DType::Float32, std::move(shape), std::move(v));
}

}  // namespace

TEST_F(RuntimeTest, RunsAddModelAndCleansUp) {
  const fs::path tmp = makeTempDir("oxport-runtime-tmpdir");
  ScopedEnv tmpdir("TMPDIR", tmp.string());
  auto rt = makeDefaultRuntime();
  ASSERT_TRUE(rt.ok()) << rt.error().message();
  EXPECT_NE((*rt)->describe().find("1.20.1"), std::string::npos) << (*rt)->describe();

  // Batch 2 although nothing fixes it: the axis is dynamic in the model.
  auto out = (*rt)->run(dir_ / "add.onnx", {{"a", floats({2, 3}, {1, 2, 3, 4, 5, 6})},
                                           {"b", floats({2, 3}, {0.5f, 0.25f, -3, 1e6f, 0, -6})}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].name, "y");
  EXPECT_EQ((*out)[0].tensor.dtype, DType::Float32);
  EXPECT_EQ((*out)[0].tensor.shape, (std::vector<int64_t>{2, 3}));
  const float want[] = {1.5f, 2.25f, 0, 1e6f + 4, 5, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ((*out)[0].tensor.as<float>()[i], want[i]) << i;

  EXPECT_TRUE(fs::is_empty(tmp)) << "the run folder was not removed";
  fs::remove_all(tmp);
}

TEST_F(RuntimeTest, RunsTwoOutputInt64Model) {
  auto rt = makeDefaultRuntime();
  ASSERT_TRUE(rt.ok()) << rt.error().message();
  const int64_t big = int64_t(1) << 40;
  auto a = HostTensor::fromVector<int64_t>(DType::Int64, {2}, {big, -7});
  auto b = HostTensor::fromVector<int64_t>(DType::Int64, {2}, {3, 5});
  auto out = (*rt)->run(dir_ / "two.onnx", {{"b", b}, {"a", a}});  // order does not matter
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "s");
  EXPECT_EQ((*out)[1].name, "p");
  EXPECT_EQ((*out)[0].tensor.as<int64_t>()[0], big + 3);
  EXPECT_EQ((*out)[0].tensor.as<int64_t>()[1], -2);
  EXPECT_EQ((*out)[1].tensor.as<int64_t>()[0], big * 3);
  EXPECT_EQ((*out)[1].tensor.as<int64_t>()[1], -35);
}

TEST_F(RuntimeTest, OnnxRuntimeErrorsComeBackAsText) {
  auto rt = makeDefaultRuntime();
  ASSERT_TRUE(rt.ok()) << rt.error().message();

  auto wrong_name = (*rt)->run(dir_ / "add.onnx", {{"a", floats({1, 3}, {1, 2, 3})}, {"x", floats({1, 3}, {1, 2, 3})}});
  ASSERT_FALSE(wrong_name.ok());
  EXPECT_EQ(wrong_name.error().code(), "runtime-failed");
  EXPECT_NE(wrong_name.error().first().message.find("no input named 'x'"), std::string::npos)
      << wrong_name.error().first().message;

  auto wrong_type = (*rt)->run(dir_ / "add.onnx", {{"a", floats({1, 3}, {1, 2, 3})},
                                                  {"b", HostTensor::fromVector<int32_t>(DType::Int32, {1, 3}, {1, 2, 3})}});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.error().first().message.find("tensor(int32)"), std::string::npos)
      << wrong_type.error().first().message;

  auto missing = (*rt)->run(dir_ / "nope.onnx", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().first().message.find("nope.onnx"), std::string::npos);

  std::ofstream(dir_ / "garbage.onnx") << "not a protobuf";
  auto garbage = (*rt)->run(dir_ / "garbage.onnx", {});
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.error().first().message.find("cannot load"), std::string::npos)
      << garbage.error().first().message;
}

TEST_F(RuntimeTest, RunnerThatCrashesIsReportedWithItsOutput) {
  const fs::path fake = dir_ / "crash.js";
  std::ofstream(fake) << "process.stderr.write('something broke inside the runner\\n'); process.exit(3);\n";
  ScopedEnv runner("OXPORT_ORT_RUNNER", fake.string());
  ScopedEnv node_path("NODE_PATH", std::string(OXPORT_SOURCE_DIR) + "/node_modules");
  auto rt = makeDefaultRuntime();
  ASSERT_TRUE(rt.ok()) << rt.error().message();
  auto out = (*rt)->run(dir_ / "add.onnx", {});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code(), "runtime-failed");
  EXPECT_NE(out.error().first().message.find("exited with status 3"), std::string::npos)
      << out.error().first().message;
  EXPECT_NE(out.error().first().message.find("something broke inside the runner"), std::string::npos);
}

TEST(RuntimeMissing, BadRunnerPath) {
  ScopedEnv runner("OXPORT_ORT_RUNNER", std::string("/nonexistent/oxport/ort_run.js"));
  auto rt = makeDefaultRuntime();
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.error().code(), "runtime-missing");
  EXPECT_NE(rt.error().first().message.find("/nonexistent/oxport/ort_run.js"), std::string::npos);
  EXPECT_NE(rt.error().first().hint.find("run tools/setup.sh (npm ci --ignore-scripts)"), std::string::npos)
      << rt.error().first().hint;
}

TEST(RuntimeMissing, NoOnnxRuntimePackage) {
  // A runner copied where no node_modules can be found from it.
  const fs::path dir = makeTempDir("oxport-runtime-lonely");
  fs::copy_file(fs::path(OXPORT_SOURCE_DIR) / "tools" / "ort_run.js", dir / "ort_run.js");
  ScopedEnv runner("OXPORT_ORT_RUNNER", (dir / "ort_run.js").string());
  ScopedEnv node_path("NODE_PATH", std::nullopt);
  ScopedEnv home("HOME", dir.string());
  auto rt = makeDefaultRuntime();
  fs::remove_all(dir);
  for (fs::path d = dir.parent_path(); !d.empty(); d = d.parent_path()) {
    if (fs::exists(d / "node_modules" / "onnxruntime-node"))
      GTEST_SKIP() << "onnxruntime-node is installed above the temporary folder, in " << d;
    if (d == d.root_path()) break;
  }
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.error().code(), "runtime-missing");
  EXPECT_NE(rt.error().first().message.find("onnxruntime-node is not installed"), std::string::npos)
      << rt.error().first().message;
  EXPECT_NE(rt.error().first().hint.find("npm ci --ignore-scripts"), std::string::npos);
}

TEST(RuntimeMissing, NoNode) {
  ScopedEnv path("PATH", std::string("/nonexistent-bin"));
  auto rt = makeDefaultRuntime();
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.error().code(), "runtime-missing");
  EXPECT_NE(rt.error().first().message.find("node"), std::string::npos);
  EXPECT_NE(rt.error().first().hint.find("tools/setup.sh"), std::string::npos);
}

// ---- compareTensors: max abs error <= tolerance x the output's largest |expected| ----

TEST(CompareTensors, IdenticalPasses) {
  auto c = compareTensors("y", floats({3}, {1, -2, 3}), floats({3}, {1, -2, 3}), 1e-4);
  EXPECT_TRUE(c.passed);
  EXPECT_EQ(c.max_abs_error, 0);
  EXPECT_EQ(c.max_magnitude, 3);
  EXPECT_TRUE(c.note.empty()) << c.note;
}

TEST(CompareTensors, ToleranceIsRelativeToLargestMagnitude) {
  // Largest |value| 1000: up to 0.1 absolute error anywhere is accepted ...
  auto ok = compareTensors("y", floats({2}, {1000, 1}), floats({2}, {1000.0625f, 1.0625f}), 1e-4);
  EXPECT_TRUE(ok.passed) << ok.note;
  EXPECT_DOUBLE_EQ(ok.max_abs_error, 0.0625);
  EXPECT_DOUBLE_EQ(ok.max_rel_error, 0.0625 / 1000);
  // ... and 0.25 is not, even on the small element.
  auto bad = compareTensors("y", floats({2}, {1000, 1}), floats({2}, {1000, 1.25f}), 1e-4);
  EXPECT_FALSE(bad.passed);
  EXPECT_NE(bad.note.find("exceeds"), std::string::npos) << bad.note;
  // Small outputs are held to the same relative standard.
  EXPECT_FALSE(compareTensors("y", floats({1}, {1e-6f}), floats({1}, {1.01e-6f}), 1e-4).passed);
  EXPECT_TRUE(compareTensors("y", floats({1}, {1e-6f}), floats({1}, {1.00001e-6f}), 1e-4).passed);
}

TEST(CompareTensors, AllZeroExpectedMustMatchExactly) {
  EXPECT_TRUE(compareTensors("y", floats({2}, {0, 0}), floats({2}, {0, -0.0f}), 1e-4).passed);
  auto c = compareTensors("y", floats({2}, {0, 0}), floats({2}, {0, 1e-12f}), 1e-4);
  EXPECT_FALSE(c.passed);
  EXPECT_TRUE(std::isinf(c.max_rel_error));
}

TEST(CompareTensors, ShapeAndDTypeMismatchFail) {
  auto s = compareTensors("y", floats({2, 3}, {1, 2, 3, 4, 5, 6}), floats({3, 2}, {1, 2, 3, 4, 5, 6}), 1e-4);
  EXPECT_FALSE(s.passed);
  EXPECT_NE(s.note.find("shape mismatch: expected [2, 3], got [3, 2]"), std::string::npos) << s.note;

  auto d = compareTensors("y", HostTensor::fromVector<int64_t>(DType::Int64, {2}, {1, 2}),
                          HostTensor::fromVector<int32_t>(DType::Int32, {2}, {1, 2}), 1e-4);
  EXPECT_FALSE(d.passed);
  EXPECT_NE(d.note.find("dtype mismatch: expected int64, got int32"), std::string::npos) << d.note;
}

TEST(CompareTensors, NanAndInfinityMustMatch) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(compareTensors("y", floats({3}, {nan, inf, 1}), floats({3}, {nan, inf, 1}), 1e-4).passed);
  auto n = compareTensors("y", floats({3}, {nan, 2, 1}), floats({3}, {0, 2, 1}), 1e-4);
  EXPECT_FALSE(n.passed);
  EXPECT_NE(n.note.find("first at flat index 0"), std::string::npos) << n.note;
  EXPECT_FALSE(compareTensors("y", floats({2}, {1, 2}), floats({2}, {1, nan}), 1e-4).passed);
  EXPECT_FALSE(compareTensors("y", floats({2}, {inf, 2}), floats({2}, {-inf, 2}), 1e-4).passed);
}

TEST(CompareTensors, IntegersAndBoolsAreExact) {
  const int64_t big = int64_t(1) << 60;  // beyond double precision: must not be compared as double
  auto i = compareTensors("n", HostTensor::fromVector<int64_t>(DType::Int64, {2}, {big, 5}),
                          HostTensor::fromVector<int64_t>(DType::Int64, {2}, {big + 1, 5}), 1e-4);
  EXPECT_FALSE(i.passed);
  EXPECT_NE(i.note.find("1 of 2 elements differ"), std::string::npos) << i.note;
  // 1 in 1e6 would pass the float rule, not the integer one.
  EXPECT_FALSE(compareTensors("n", HostTensor::fromVector<int32_t>(DType::Int32, {2}, {1000000, 1}),
                              HostTensor::fromVector<int32_t>(DType::Int32, {2}, {1000000, 2}), 1e-4)
                   .passed);
  EXPECT_TRUE(compareTensors("b", HostTensor::fromVector<unsigned char>(DType::Bool, {2}, {1, 0}),
                             HostTensor::fromVector<unsigned char>(DType::Bool, {2}, {1, 0}), 1e-4)
                  .passed);
  EXPECT_FALSE(compareTensors("b", HostTensor::fromVector<unsigned char>(DType::Bool, {2}, {1, 0}),
                              HostTensor::fromVector<unsigned char>(DType::Bool, {2}, {1, 1}), 1e-4)
                   .passed);
}

TEST(CompareTensors, Float16ToleranceIsOneRoundingStep) {
  // 1.0 and the next float16 (1 + 2^-10): one rounding step apart.
  auto h = [](uint16_t bits) { return HostTensor::fromVector<uint16_t>(DType::Float16, {1}, {bits}); };
  auto c = compareTensors("y", h(0x3C00), h(0x3C01), 1e-4);
  EXPECT_TRUE(c.passed) << c.note;
  EXPECT_NE(c.note.find("tolerance raised"), std::string::npos);
  EXPECT_FALSE(compareTensors("y", h(0x3C00), h(0x3C03), 1e-4).passed);
}

TEST(VerifyReportText, TextAndJsonCarryEveryRun) {
  VerifyReport r;
  r.tolerance = 1e-4;
  VerifyRun ok;
  ok.input_shapes = {{1, 3, 32, 32}};
  ok.outputs.push_back(compareTensors("logits", floats({1, 2}, {1, 2}), floats({1, 2}, {1, 2.00001f}), 1e-4));
  ok.passed = true;
  VerifyRun bad;
  bad.input_shapes = {{2, 3, 32, 32}};
  bad.outputs.push_back(compareTensors("logits", floats({2, 1}, {1, 2}), floats({1, 2}, {1, 2}), 1e-4));
  VerifyRun failed;
  failed.input_shapes = {{3, 3, 32, 32}};
  failed.error = "ONNX Runtime failed: Non-zero status code";
  r.runs = {ok, bad, failed};
  r.passed = false;

  const std::string text = r.toText();
  EXPECT_NE(text.find("ONNX Runtime check: FAILED"), std::string::npos) << text;
  EXPECT_NE(text.find("run 1, input shapes [1, 3, 32, 32]: passed"), std::string::npos) << text;
  EXPECT_NE(text.find("logits [1, 2]: max abs error"), std::string::npos) << text;
  EXPECT_NE(text.find("run 2, input shapes [2, 3, 32, 32]: FAILED"), std::string::npos) << text;
  EXPECT_NE(text.find("shape mismatch"), std::string::npos) << text;
  EXPECT_NE(text.find("error: ONNX Runtime failed: Non-zero status code"), std::string::npos) << text;

  const auto j = nlohmann::json::parse(r.toJson());
  EXPECT_EQ(j["passed"], false);
  EXPECT_DOUBLE_EQ(j["tolerance"].get<double>(), 1e-4);
  ASSERT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["runs"][0]["input_shapes"][0], nlohmann::json({1, 3, 32, 32}));
  EXPECT_EQ(j["runs"][0]["outputs"][0]["name"], "logits");
  EXPECT_EQ(j["runs"][0]["outputs"][0]["passed"], true);
  EXPECT_GT(j["runs"][0]["outputs"][0]["max_abs_error"].get<double>(), 0);
  EXPECT_EQ(j["runs"][1]["outputs"][0]["actual_shape"], nlohmann::json({1, 2}));
  EXPECT_EQ(j["runs"][2]["error"], "ONNX Runtime failed: Non-zero status code");

  VerifyReport zero;
  VerifyRun z;
  z.outputs.push_back(compareTensors("y", floats({1}, {0}), floats({1}, {1}), 1e-4));
  zero.runs = {z};
  const auto jz = nlohmann::json::parse(zero.toJson());  // infinity must still be valid JSON
  EXPECT_TRUE(jz["runs"][0]["outputs"][0]["max_rel_error"].is_null());
}

// The outcomes that pass without equal values say so in the first line, per output and in JSON.
TEST(VerifyReportText, TieOrderAndRandomOutcomes) {
  VerifyReport r;
  VerifyRun run;
  run.passed = true;
  OutputComparison idx = compareTensors("idx", floats({2}, {0, 1}), floats({2}, {1, 0}), 1e-4);
  idx.passed = true;
  idx.tie_order = true;
  idx.tied_elements = 2;
  OutputComparison noise = compareTensors("noise", floats({2}, {0.3f, 0.1f}), floats({2}, {0.7f, 0.2f}), 1e-4);
  noise.passed = true;
  noise.random = true;
  run.outputs = {idx, noise};
  r.runs = {run};
  r.passed = true;
  EXPECT_EQ(r.outcome(), "passed except tie order, random outputs not compared");
  const std::string text = r.toText();
  EXPECT_NE(text.find("tie order at output idx: up to 2 index elements whose selected values are equal"),
            std::string::npos) << text;
  EXPECT_NE(text.find("noise [2]: values not compared  ok (random: not compared)"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(r.toJson());
  EXPECT_EQ(j["outcome"], "passed except tie order, random outputs not compared");
  EXPECT_EQ(j["runs"][0]["outputs"][0]["status"], "tie-order");
  EXPECT_EQ(j["runs"][0]["outputs"][1]["status"], "random");
  r.passed = false;
  EXPECT_EQ(r.outcome(), "FAILED");
  r.runs[0].outputs.pop_back();
  r.passed = true;
  EXPECT_EQ(r.outcome(), "passed except tie order");
}
