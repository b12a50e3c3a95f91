// The example tensors an export makes from tensor specs (makeExampleTensor, the core's public API):
// the "smooth" fill's determinism, range, smoothness and resolution independence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "oxport/model.h"
#include "oxport/preset.h"

using namespace oxport;

namespace {

HostTensor make(const std::string& text) {
  auto spec = parseTensorSpec(text);
  EXPECT_TRUE(spec.ok()) << text;
  auto t = makeExampleTensor(*spec);
  EXPECT_TRUE(t.ok()) << text << ": " << (t.ok() ? "" : t.error().message());
  return *t;
}

// Mean |x[i, j+1] - x[i, j]| along the last axis.
double meanStep(const HostTensor& t) {
  const int64_t w = t.shape.back();
  double sum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i + 1 < t.numel(); ++i) {
    if ((i + 1) % w == 0) continue;
    sum += std::abs(t.at(i + 1) - t.at(i));
    ++n;
  }
  return sum / static_cast<double>(n);
}

}  // namespace

TEST(ExampleTensor, SmoothIsDeterministicPerSeedAndShape) {
  const HostTensor a = make("1x3x40x56:smooth:seed=4"), b = make("1x3x40x56:smooth:seed=4");
  EXPECT_TRUE(a.sameContent(b));
  EXPECT_FALSE(a.sameContent(make("1x3x40x56:smooth:seed=5")));
  EXPECT_EQ(a.dtype, DType::Float32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{1, 3, 40, 56}));
}

TEST(ExampleTensor, SmoothSpansZeroToOneInEverySlice) {
  const HostTensor t = make("2x3x64x48:smooth:seed=1");
  const int64_t plane = 64 * 48;
  for (int64_t s = 0; s < 6; ++s) {
    double lo = 2, hi = -1;
    for (int64_t i = 0; i < plane; ++i) {
      lo = std::min(lo, t.at(s * plane + i));
      hi = std::max(hi, t.at(s * plane + i));
    }
    EXPECT_EQ(lo, 0.0) << "slice " << s;
    EXPECT_EQ(hi, 1.0) << "slice " << s;
  }
  // Each slice is its own field, not a copy of the first.
  bool differs = false;
  for (int64_t i = 0; i < plane && !differs; ++i) differs = t.at(i) != t.at(plane + i);
  EXPECT_TRUE(differs);
}

TEST(ExampleTensor, SmoothIsSmoothWhereRandIsNoise) {
  // Neighbouring uniform values differ by 1/3 on average; the field's by a few thousandths at 320.
  EXPECT_GT(meanStep(make("1x1x64x320:rand")), 0.25);
  EXPECT_LT(meanStep(make("1x1x64x320:smooth")), 0.02);
}

TEST(ExampleTensor, SmoothShowsTheSamePictureAtEverySize) {
  // With the grids' corners aligned, pixel (i, j) of 33x33 and (2i, 2j) of 65x65 sample the same
  // point of the field; only the stretch to [0, 1] (over more samples) may differ a little.
  const HostTensor small = make("33x33:smooth:seed=3"), large = make("65x65:smooth:seed=3");
  double worst = 0;
  for (int64_t i = 0; i < 33; ++i)
    for (int64_t j = 0; j < 33; ++j) worst = std::max(worst, std::abs(small.at(i * 33 + j) - large.at(2 * i * 65 + 2 * j)));
  EXPECT_LT(worst, 0.05);
}

TEST(ExampleTensor, SmoothOfEveryRankAndDtype) {
  const HostTensor scalar = make("smooth"), line = make("7:smooth"), empty = make("2x0x3:smooth");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_GE(scalar.at(0), 0.0);
  EXPECT_LE(scalar.at(0), 1.0);
  EXPECT_EQ(line.shape, std::vector<int64_t>{7});
  EXPECT_EQ(*std::min_element(line.as<float>(), line.as<float>() + 7), 0.0f);
  EXPECT_EQ(*std::max_element(line.as<float>(), line.as<float>() + 7), 1.0f);
  EXPECT_EQ(empty.numel(), 0);
  const HostTensor mask = make("16x16:bool:smooth"), half = make("4x4:float16:smooth");
  EXPECT_EQ(mask.dtype, DType::Bool);
  EXPECT_EQ(half.dtype, DType::Float16);
  int64_t set = 0;
  for (int64_t i = 0; i < 256; ++i) set += mask.at(i) != 0;
  EXPECT_GT(set, 0);
  EXPECT_LT(set, 256);
}

TEST(ExampleTensor, BadSpecsAreDiagnosed) {
  TensorSpec negative;
  negative.shape = {2, -1};
  negative.fill = FillKind::Smooth;
  auto r = makeExampleTensor(negative);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().diagnostics().front().code, "bad-shape");
}
