// Model::load guesses a starting shape for each tensor argument from the saved graph
// (ModelInfo::input_guesses). One test per kind of evidence; each model was traced at a size the
// graph does not keep (make_guess_models.py), and the guessed shape must run through the model.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oxport/model.h"

namespace oxport {
namespace {

using Shape = std::vector<int64_t>;

Model load(const std::string& name) {
  auto m = Model::load(std::string(OXPORT_GUESS_DIR) + "/" + name + ".pt");
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message());
  return std::move(*m);
}

const ModelInfo::InputGuess& guessOf(const Model& m, const std::string& arg) {
  static const ModelInfo::InputGuess none;
  auto it = m.info().input_guesses.find(arg);
  EXPECT_NE(it, m.info().input_guesses.end()) << "no guess for " << arg;
  return it == m.info().input_guesses.end() ? none : it->second;
}

// The guess is only useful if the model runs on it: libtorch's forward at that shape and dtype.
void expectRuns(const Model& m, const ModelInfo::InputGuess& g, const Shape& expected_output) {
  ExportOptions o;
  TensorSpec t;
  t.shape = g.shape;
  t.dtype = g.dtype;
  t.fill = g.dtype == DType::Int64 ? FillKind::Zeros : FillKind::Randn;
  o.args = {ArgValue::tensor(t)};
  auto out = m.runReference(o);
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].tensor.shape, expected_output);
}

TEST(InputGuess, Resnet18ChannelsFromFirstConvAndDefault224) {
  Model m = load("resnet18");  // traced at 2x3x64x80
  const auto& g = guessOf(m, "x");
  EXPECT_EQ(g.shape, (Shape{1, 3, 224, 224}));
  EXPECT_EQ(g.dtype, DType::Float32);
  EXPECT_NE(g.reason.find("channels 3 from conv1.weight [64, 3, 7, 7]"), std::string::npos) << g.reason;
  EXPECT_NE(g.reason.find("224x224 are defaults"), std::string::npos) << g.reason;
  expectRuns(m, g, {1, 1000});
}

TEST(InputGuess, GroupedConvAfterNormalization) {
  Model m = load("grouped_conv");  // bn -> relu -> conv(6 -> 12, groups 3): weight [12, 2, 3, 3]
  const auto& g = guessOf(m, "x");
  EXPECT_EQ(g.shape, (Shape{1, 6, 224, 224}));
  EXPECT_NE(g.reason.find("conv.weight [12, 2, 3, 3]"), std::string::npos) << g.reason;
  expectRuns(m, g, {1, 12, 222, 222});
}

TEST(InputGuess, LstmBatchFirstFeaturesFromWeightIh) {
  Model m = load("lstm");  // LSTM(10, 20, batch_first=True), traced at 2x7x10
  const auto& g = guessOf(m, "x");
  EXPECT_EQ(g.shape, (Shape{1, 16, 10}));
  EXPECT_NE(g.reason.find("lstm.weight_ih_l0 [80, 10]"), std::string::npos) << g.reason;
  EXPECT_NE(g.reason.find("batch_first=True"), std::string::npos) << g.reason;
  expectRuns(m, g, {1, 16, 5});
}

TEST(InputGuess, GruSequenceFirst) {
  Model m = load("gru");  // GRU(6, 8), sequence first
  const auto& g = guessOf(m, "x");
  EXPECT_EQ(g.shape, (Shape{16, 1, 6}));
  EXPECT_NE(g.reason.find("batch_first=False"), std::string::npos) << g.reason;
  expectRuns(m, g, {16, 1, 8});
}

TEST(InputGuess, LinearFeaturesFromWeight) {
  Model m = load("linear");  // Linear(16, 4), traced at 3x16
  const auto& g = guessOf(m, "x");
  EXPECT_EQ(g.shape, (Shape{1, 16}));
  EXPECT_NE(g.reason.find("features 16 from fc.weight [4, 16]"), std::string::npos) << g.reason;
  expectRuns(m, g, {1, 4});
}

TEST(InputGuess, EmbeddingIndicesAreInt64) {
  Model m = load("embedding");  // Embedding(100, 8) on tokens
  const auto& g = guessOf(m, "tokens");
  EXPECT_EQ(g.shape, (Shape{1, 16}));
  EXPECT_EQ(g.dtype, DType::Int64);
  expectRuns(m, g, {1, 8});
}

TEST(InputGuess, ConstantViewSizesWithLeadingMinusOne) {
  Model m = load("mlp_view");  // x.view(-1, 784): the first consumer shows the sizes
  const auto& g = guessOf(m, "x");
  EXPECT_EQ(g.shape, (Shape{1, 784}));
  EXPECT_NE(g.reason.find("view [-1, 784]"), std::string::npos) << g.reason;
  expectRuns(m, g, {1, 10});
}

TEST(InputGuess, NoEvidenceGivesNoGuess) {
  // Only elementwise ops and a view with a dynamic size: the graph shows no size, so there is no
  // guess and the form keeps its plain default rather than an invented shape.
  Model m = load("elementwise");
  EXPECT_TRUE(m.info().input_guesses.empty());
}

}  // namespace
}  // namespace oxport
