// The reference run of a float16 model that libtorch 1.13 cannot run on the CPU in float16
// (no Half layer_norm or matmul): forward runs with each weight widened to float32 where it is
// read, not on a float32 copy of the whole module (which would hold twice the weights' bytes more:
// 8 GB for a 2B-parameter float16 model), and gives what the float32 copy gives. The half run
// (runHalfRoundedReference) rounds each op's result to float16 as a float16 run does.
#include <gtest/gtest.h>

#include <torch/script.h>

#include <filesystem>
#include <string>

#include "oxport/model.h"
#include "oxport/options.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("oxport_half_ref_" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A float16 module: LayerNorm with half parameters, a half matmul weight and a half buffer, the
// weight read twice (tied), on a float16 input [2, 8].
torch::jit::Module halfModule(const std::string& forward) {
  torch::jit::Module m("HalfNet");
  torch::manual_seed(0);
  m.register_parameter("g", torch::rand({8}).add(0.5).to(at::kHalf), false);
  m.register_parameter("w", torch::randn({8, 8}).div(3).to(at::kHalf), false);
  m.register_buffer("b", torch::randn({8}).to(at::kHalf));
  m.define(forward);
  return m;
}

// `m` saved as dir/name and loaded as oxport loads a model.
Result<Model> saveAndLoad(const TempDir& dir, const torch::jit::Module& m, const std::string& name) {
  const fs::path pt = dir.path / name;
  m.save(pt.string());
  return Model::load(pt);
}

const char* kForward = R"(
def forward(self, x):
    y = torch.layer_norm(x, [8], self.g, None, 1e-5, False)
    y = torch.matmul(y, self.w) + self.b
    return torch.matmul(y, self.w.t())
)";

ExportOptions halfInput(std::vector<int64_t> shape, DType dtype = DType::Float16) {
  ExportOptions o;
  TensorSpec spec;
  spec.shape = std::move(shape);
  spec.dtype = dtype;
  spec.fill = FillKind::Randn;
  o.args.push_back(ArgValue::tensor(spec));
  return o;
}

at::Tensor toAt(const HostTensor& h) {
  EXPECT_EQ(h.dtype, DType::Float16);
  return torch::from_blob(const_cast<void*>(h.data), h.shape, at::kHalf).clone();
}

}  // namespace

TEST(HalfReference, WeightsWidenedWhereReadMatchTheFloat32Copy) {
  TempDir dir;
  torch::jit::Module m = halfModule(kForward);
  auto model = saveAndLoad(dir, m, "half.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  const ExportOptions options = halfInput({2, 8});
  std::string note;
  auto ref = model->runReference(options, {}, &note);
  ASSERT_TRUE(ref.ok()) << ref.error().message();
  EXPECT_NE(note.find("cannot run this float16 model"), std::string::npos) << note;
  EXPECT_NE(note.find("each weight widened where it is read"), std::string::npos) << note;
  ASSERT_EQ(ref->size(), 1u);

  // What the whole module in float32 gives, rounded to float16.
  auto inputs = model->exampleInputs(options);
  ASSERT_TRUE(inputs.ok());
  torch::jit::Module copy = m.deepcopy();
  copy.to(at::kFloat);
  at::Tensor want = copy.forward({toAt((*inputs)[0]).to(at::kFloat)}).toTensor().to(at::kHalf);
  at::Tensor got = toAt((*ref)[0].tensor);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(torch::equal(got, want)) << got << "\n" << want;

  // Again at another size (the widened forward is kept): same note, same agreement.
  note.clear();
  auto ref2 = model->runReference(options, {{5, 8}}, &note);
  ASSERT_TRUE(ref2.ok()) << ref2.error().message();
  EXPECT_NE(note.find("each weight widened where it is read"), std::string::npos) << note;
  EXPECT_EQ((*ref2)[0].tensor.shape, (std::vector<int64_t>{5, 8}));
}

// What a float16 run of kForward gives: each op computed in float32 from float16 values and its
// result rounded to float16 (as a GPU's half kernels and ONNX Runtime's do). The transpose only
// moves values.
at::Tensor halfRun(const torch::jit::Module& m, const at::Tensor& x) {
  const auto r = [](const at::Tensor& t) { return t.to(at::kHalf).to(at::kFloat); };
  const at::Tensor g = m.attr("g").toTensor().to(at::kFloat), w = m.attr("w").toTensor().to(at::kFloat),
                   b = m.attr("b").toTensor().to(at::kFloat);
  at::Tensor y = r(at::layer_norm(x.to(at::kFloat), {8}, g, {}, 1e-5));
  y = r(r(at::matmul(y, w)) + b);
  return r(at::matmul(y, w.t())).to(at::kHalf);
}

TEST(HalfReference, TheHalfRunRoundsEachOpsResult) {
  const ExportOptions options = halfInput({2, 8});
  TempDir dir;
  torch::jit::Module m = halfModule(kForward);
  auto model = saveAndLoad(dir, m, "half_run.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  ASSERT_TRUE(model->runReference(options).ok());
  auto ref = model->runHalfRoundedReference(options);
  ASSERT_TRUE(ref.ok()) << ref.error().message();
  ASSERT_EQ(ref->size(), 1u);

  auto inputs = model->exampleInputs(options);
  ASSERT_TRUE(inputs.ok());
  const at::Tensor x = toAt((*inputs)[0]);
  const at::Tensor want = halfRun(m, x);
  at::Tensor got = toAt((*ref)[0].tensor);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(torch::equal(got, want)) << got << "\n" << want;
  // Not what the whole module in float32 gives, rounded once at the end (runReference).
  auto plain = model->runReference(options);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(torch::equal(got, toAt((*plain)[0].tensor)));

  // At another size too.
  ASSERT_TRUE(model->runReference(options, {{5, 8}}).ok());
  auto ref2 = model->runHalfRoundedReference(options, {{5, 8}});
  ASSERT_TRUE(ref2.ok()) << ref2.error().message();
  EXPECT_EQ((*ref2)[0].tensor.shape, (std::vector<int64_t>{5, 8}));
}

TEST(HalfReference, NoHalfRunForAFloat32Model) {
  TempDir dir;
  torch::jit::Module m = halfModule(kForward);
  m.to(at::kFloat);
  auto model = saveAndLoad(dir, m, "float.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  const ExportOptions options = halfInput({2, 8}, DType::Float32);
  ASSERT_TRUE(model->runReference(options).ok());
  auto ref = model->runHalfRoundedReference(options);
  ASSERT_TRUE(ref.ok()) << ref.error().message();
  EXPECT_TRUE(ref->empty());
}

TEST(HalfReference, ValuesTheModelCastsToFloat32AreNotRounded) {
  // softmax in float32, as mixed-precision models do it: a float16 run keeps those values in
  // float32 until the model casts them back, so the reference does not round them either.
  TempDir dir;
  torch::jit::Module m = halfModule(R"(
def forward(self, x):
    y = torch.matmul(x, self.w)
    s = torch.softmax(y.float() * 3.0, -1)
    return s.sum(-1, keepdim=True) - 1.0
)");
  auto model = saveAndLoad(dir, m, "half_wide.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  ASSERT_TRUE(model->runReference(halfInput({4, 8})).ok());
  auto ref = model->runHalfRoundedReference(halfInput({4, 8}));
  ASSERT_TRUE(ref.ok()) << ref.error().message();
  // The row sums of a float32 softmax are 1 to float32's precision, so the output is under 1e-6
  // (float16 holds that much as a subnormal); with the softmax or the sum rounded to float16 they
  // would be 1 or off from it by float16's step at 1, 2^-11 or more.
  const at::Tensor got = toAt((*ref)[0].tensor).to(at::kFloat);
  EXPECT_LT(got.abs().max().item<float>(), 1e-5) << got;
}

TEST(HalfReference, AFailureOfTheModelItselfIsReportedNotRetriedOnACopy) {
  TempDir dir;
  torch::jit::Module m = halfModule(kForward);
  auto model = saveAndLoad(dir, m, "half.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  // Inputs of 7 features: the model fails whatever the precision.
  auto first = model->runReference(halfInput({2, 8}));
  ASSERT_TRUE(first.ok()) << first.error().message();
  auto ref = model->runReference(halfInput({2, 7}));
  ASSERT_FALSE(ref.ok());
  const std::string msg = ref.error().message();
  EXPECT_NE(msg.find("each weight widened where it is read"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("error[forward-failed]: error["), std::string::npos) << msg;
  EXPECT_EQ(msg.find("Exception raised from"), std::string::npos) << msg;
}

TEST(HalfReference, AHalfTensorMadeInsideForwardFallsBackToTheFloat32Copy) {
  // forward makes a float16 tensor of its own and runs layer_norm on it: widening the weights does
  // not help, so the float32 copy of the module is tried too (as before), and its failure is told.
  TempDir dir;
  torch::jit::Module m = halfModule(R"(
def forward(self, x):
    z = torch.ones([2, 8], dtype=5)
    return torch.layer_norm(z, [8], None, None, 1e-5, False) + x
)");
  auto model = saveAndLoad(dir, m, "half_inner.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  auto ref = model->runReference(halfInput({2, 8}));
  ASSERT_FALSE(ref.ok());
  const std::string msg = ref.error().message();
  EXPECT_NE(msg.find("its float32 copy fails"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not implemented for 'Half'"), std::string::npos) << msg;
}
