#include "runners/refstack/kernels/layers.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runners/refstack/kernels/random_tensor.h"

namespace harness::kernels {
namespace {

using ::testing::HasSubstr;

TEST(RmsNorm, MatchesDoublePrecisionDefinition) {
  const FloatTensor x = RandomBf16Normal({5, 300}, 1);  // 300: a tail past the 16 lanes
  const FloatTensor w = RandomBf16LogNormal({300}, 2, 0.5f);
  const float eps = 1e-6f;
  auto y = RmsNorm(x, w, eps);
  ASSERT_TRUE(y.ok()) << y.error().message;
  for (int64_t r = 0; r < 5; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < 300; ++c) ss += double(x.At(r, c)) * x.At(r, c);
    const double inv = 1 / std::sqrt(ss / 300 + eps);
    for (int64_t c = 0; c < 300; ++c) {
      const double expected = x.At(r, c) * inv * w.At({c});
      EXPECT_NEAR(y->At(r, c), expected, 4e-6 * std::fabs(expected) + 1e-30) << r << "," << c;
    }
  }
}

TEST(RmsNorm, NormalizesRowsToUnitRms) {
  FloatTensor w({64});
  for (int i = 0; i < 64; ++i) w.mutable_data_ptr()[i] = 1;
  const FloatTensor x = RandomBf16Normal({3, 64}, 7, 50.0f);
  auto y = RmsNorm(x, w, 0);
  ASSERT_TRUE(y.ok());
  for (int64_t r = 0; r < 3; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < 64; ++c) ss += double(y->At(r, c)) * y->At(r, c);
    EXPECT_NEAR(ss / 64, 1.0, 1e-5);
  }
}

TEST(RmsNorm, RejectsMismatchedShapes) {
  auto bad = RmsNorm(FloatTensor({2, 8}), FloatTensor({7}), 1e-6f);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("x shape [2, 8] strides (8, 1) offset 0 and weight shape [7]"));
  EXPECT_FALSE(RmsNorm(FloatTensor({8}), FloatTensor({8}), 1e-6f).ok());
}

TEST(Swiglu, GateFirstThenUp) {
  auto x = FloatTensor::FromData({2, 4}, {0, 1, 2, 3, -1, 2, 5, -4}).value();
  auto y = Swiglu(x);
  ASSERT_TRUE(y.ok());
  ASSERT_EQ(y->shape(), (Shape{2, 2}));
  auto silu = [](double g) { return g / (1 + std::exp(-g)); };
  EXPECT_FLOAT_EQ(y->At(0, 0), silu(0) * 2);
  EXPECT_FLOAT_EQ(y->At(0, 1), silu(1) * 3);
  EXPECT_FLOAT_EQ(y->At(1, 0), silu(-1) * 5);
  EXPECT_FLOAT_EQ(y->At(1, 1), silu(2) * -4);
}

TEST(Swiglu, ReadsStridedInput) {
  auto x = FloatTensor::FromData({2, 2}, {1, 3, 2, 4}).value();  // transposed view: [[1, 2], [3, 4]]
  auto y = Swiglu(x.AsStrided({2, 2}, {1, 2}).value());
  ASSERT_TRUE(y.ok());
  EXPECT_FLOAT_EQ(y->At(0, 0), 1 / (1 + std::exp(-1.0)) * 2);
  EXPECT_FLOAT_EQ(y->At(1, 0), 3 / (1 + std::exp(-3.0)) * 4);
}

TEST(Swiglu, RejectsOddWidth) {
  auto bad = Swiglu(FloatTensor({2, 5}));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("shape [2, 5]"));
}

}  // namespace
}  // namespace harness::kernels
