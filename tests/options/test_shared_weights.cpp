// Weights written once and not copied. Shared weights stay shared: a GPT-like decoder whose token embedding is tied to its output
// projection (make_models.py's TiedLM) is written with each parameter once, the transposed use
// reading the one initializer; an ordinary linear layer keeps its folded transposed weight.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "oxport/model.h"
#include "oxport/runtime.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

fs::path modelsDir() { return fs::path(OXPORT_OPTIONS_DIR) / "models"; }

int64_t elementSize(int data_type) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: return 4;
    case onnx::TensorProto::INT64: case onnx::TensorProto::DOUBLE: return 8;
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16: case onnx::TensorProto::INT16: return 2;
    default: return 1;
  }
}

int64_t initializerBytes(const onnx::GraphProto& g) {
  int64_t total = 0;
  for (const auto& t : g.initializer()) {
    int64_t n = elementSize(t.data_type());
    for (auto d : t.dims()) n *= d;
    total += n;
  }
  return total;
}

int countOp(const onnx::GraphProto& g, const std::string& op) {
  int n = 0;
  for (const auto& x : g.node()) n += x.op_type() == op;
  return n;
}

OnnxRuntime* runtime() {
  static std::unique_ptr<OnnxRuntime> rt = [] {
    auto r = makeDefaultRuntime();
    return r.ok() ? std::move(*r) : nullptr;
  }();
  return rt.get();
}

struct Case {
  std::string model;
  int opset;
};

class SharedWeights : public ::testing::TestWithParam<Case> {};

TEST_P(SharedWeights, EachParameterOnceCheckedAndMatching) {
  const Case& c = GetParam();
  nlohmann::json expected;
  std::ifstream(modelsDir() / "tied.json") >> expected;
  auto m = Model::load(modelsDir() / (c.model + ".pt"));
  ASSERT_TRUE(m.ok()) << m.error().message();
  ExportOptions o;
  TensorSpec ids;
  ids.shape = {2, 5};
  ids.dtype = DType::Int64;
  ids.fill = FillKind::Arange;
  o.args = {ArgValue::tensor(ids)};
  o.opset_version = c.opset;
  const fs::path out = fs::temp_directory_path() / (c.model + "_" + std::to_string(c.opset) + "_" +
                                                    std::to_string(::getpid()) + ".onnx");
  auto r = m->exportOnnx(o, OutputTarget::toFile(out));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stats.checker_passed);
  EXPECT_TRUE(r->stats.shape_inference_passed);
  onnx::ModelProto proto;
  std::ifstream f(out, std::ios::binary);
  ASSERT_TRUE(proto.ParseFromIstream(&f));
  const auto& g = proto.graph();
  // Each parameter once: the embedding is not written a second time, transposed.
  EXPECT_EQ(initializerBytes(g), expected.at(c.model).get<int64_t>());
  EXPECT_EQ(r->stats.initializer_bytes, expected.at(c.model).get<int64_t>());
  // The tied projection transposes the one embedding at run time; fc (its weight read once)
  // keeps its weight folded, transposed, as before.
  EXPECT_EQ(countOp(g, "Transpose"), 1);
  ASSERT_TRUE(runtime()) << "no ONNX Runtime";
  VerifyOptions vo;
  vo.extra_sizes = false;
  auto v = verifyExport(*m, o, out, *runtime(), vo);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_TRUE(v->passed) << v->toText();
  fs::remove(out);
}

INSTANTIATE_TEST_SUITE_P(TiedEmbedding, SharedWeights,
                         ::testing::Values(Case{"tied_matmul", 11}, Case{"tied_matmul", 14}, Case{"tied_linear", 11},
                                           Case{"tied_linear", 14}, Case{"tied_head", 11}, Case{"tied_head", 14}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return i.param.model + "_opset" + std::to_string(i.param.opset);
                         });

// A large weight that MatMul reads transposed is transposed as the file is written (no copy in
// memory): the bytes must be right in a file, in a stream and in external data.
TEST(TransposedAsWritten, FileStreamAndExternalDataMatch) {
  auto m = Model::load(modelsDir() / "wide.pt");
  ASSERT_TRUE(m.ok()) << m.error().message();
  ExportOptions o;
  TensorSpec x;
  x.shape = {2, 3, 1024};
  o.args = {ArgValue::tensor(x)};
  o.keep_initializers_as_inputs = false;
  const std::string tag = std::to_string(::getpid());
  const fs::path file = fs::temp_directory_path() / ("wide_" + tag + ".onnx");
  auto r = m->exportOnnx(o, OutputTarget::toFile(file));
  ASSERT_TRUE(r.ok()) << r.error().message();
  onnx::ModelProto proto;
  {
    std::ifstream f(file, std::ios::binary);
    ASSERT_TRUE(proto.ParseFromIstream(&f));
  }
  bool found = false;
  for (const auto& t : proto.graph().initializer())
    found = found || (t.dims_size() == 2 && t.dims(0) == 1024 && t.dims(1) == 300 && t.raw_data().size() == 1024 * 300 * 4);
  EXPECT_TRUE(found) << "the first layer's weight, transposed to [1024, 300]";
  ASSERT_TRUE(runtime()) << "no ONNX Runtime";
  VerifyOptions vo;
  vo.extra_sizes = false;
  auto v = verifyExport(*m, o, file, *runtime(), vo);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_TRUE(v->passed) << v->toText();
  // The same bytes through a stream.
  std::ostringstream os;
  ASSERT_TRUE(m->exportOnnx(o, OutputTarget::toStream(os)).ok());
  std::ifstream f(file, std::ios::binary);
  std::ostringstream written;
  written << f.rdbuf();
  EXPECT_TRUE(os.str() == written.str()) << "the stream differs from the file";
  // In external data.
  const fs::path ext = fs::temp_directory_path() / ("wide_ext_" + tag + ".onnx");
  ::setenv("OXPORT_EXTERNAL_DATA_THRESHOLD", "100000", 1);
  auto e = m->exportOnnx(o, OutputTarget::toFile(ext));
  ::unsetenv("OXPORT_EXTERNAL_DATA_THRESHOLD");
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_TRUE(e->stats.external_data);
  auto ve = verifyExport(*m, o, ext, *runtime(), vo);
  ASSERT_TRUE(ve.ok()) << ve.error().message();
  EXPECT_TRUE(ve->passed) << ve->toText();
  fs::remove(file);
  fs::remove(ext);
  fs::remove(fs::path(ext.string() + ".data"));
}

}  // namespace
