#include "runners/refstack/kernels/mxfp4.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runners/refstack/kernels/number_formats.h"
#include "runners/refstack/kernels/random_tensor.h"

namespace harness::kernels {
namespace {

using ::testing::HasSubstr;

// Half the e2m1 grid spacing at scaled magnitude a (grid 0 .5 1 1.5 2 3 4 6), or the
// saturation error past 6.
double E2M1Error(double a) {
  if (a > 6) return a - 6;
  return a < 2 ? 0.25 : a < 4 ? 0.5 : 1.0;
}

TEST(Mxfp4, ScaleRuleAndElementErrorBound) {
  const FloatTensor x = RandomBf16Normal({4, 128}, 21, 3.0f);
  auto q = QuantizeMxfp4(x);
  ASSERT_TRUE(q.ok()) << q.error().message;
  ASSERT_EQ(q->payload.shape(), (Shape{4, 64}));
  ASSERT_EQ(q->scale.shape(), (Shape{4, 4}));
  auto back = DequantizeMxfp4(q->payload, q->scale);
  ASSERT_TRUE(back.ok()) << back.error().message;
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t b = 0; b < 4; ++b) {
      float amax = 0;
      for (int64_t c = b * 32; c < (b + 1) * 32; ++c) amax = std::max(amax, std::fabs(x.At(r, c)));
      const double scale = DecodeE8M0(q->scale.At(r, b));
      EXPECT_EQ(scale, std::ldexp(1.0, std::ilogb(amax) - 2)) << "X = 2^(floor(log2 amax) - 2)";
      EXPECT_GE(amax / scale, 4.0);
      EXPECT_LT(amax / scale, 8.0);
      for (int64_t c = b * 32; c < (b + 1) * 32; ++c) {
        const double v = x.At(r, c);
        EXPECT_LE(std::fabs(back->At(r, c) - v), E2M1Error(std::fabs(v) / scale) * scale) << r << "," << c;
      }
    }
}

TEST(Mxfp4, RepresentableValuesRoundTripExactlyAndPackLowNibbleFirst) {
  const float grid[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  std::vector<float> data(32);
  for (int i = 0; i < 32; ++i) data[i] = (i % 2 ? -1.0f : 1.0f) * grid[i % 8] * 0.25f;  // amax 1.5: X = 2^-2
  const FloatTensor x = FloatTensor::FromData({1, 32}, data).value();
  const Mxfp4Quantized q = QuantizeMxfp4(x).value();
  EXPECT_EQ(q.scale.At(0, 0), 125);  // 2^-2
  EXPECT_EQ(q.payload.At(0, 0), 0x0 | (0x9 << 4));  // +0 then -0.5
  const FloatTensor back = DequantizeMxfp4(q.payload, q.scale).value();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(back.At(0, i), data[i]) << i;
}

TEST(Mxfp4, ZeroAndNonFiniteBlocks) {
  std::vector<float> data(64, 0.0f);
  data[40] = std::numeric_limits<float>::quiet_NaN();
  const Mxfp4Quantized q = QuantizeMxfp4(FloatTensor::FromData({1, 64}, data).value()).value();
  EXPECT_EQ(q.scale.At(0, 0), 0);          // all zeros: the smallest scale
  EXPECT_EQ(q.scale.At(0, 1), kE8M0Nan);   // NaN in the block: the block is NaN
  const FloatTensor back = DequantizeMxfp4(q.payload, q.scale).value();
  EXPECT_EQ(back.At(0, 0), 0.0f);
  EXPECT_TRUE(std::isnan(back.At(0, 33)));
}

TEST(Mxfp4, BadShapesNameTheShapes) {
  auto ragged = QuantizeMxfp4(FloatTensor({2, 48}));
  ASSERT_FALSE(ragged.ok());
  EXPECT_THAT(ragged.error().message, HasSubstr("K a multiple of 32, got shape [2, 48] strides (48, 1)"));
  auto mismatch = DequantizeMxfp4(ByteTensor({2, 32}), ByteTensor({2, 3}));
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(mismatch.error().message, HasSubstr("payload shape [2, 32] strides (32, 1) offset 0 and scale shape [2, 3]"));
  EXPECT_FALSE(DequantizeMxfp4(ByteTensor({2, 32}), ByteTensor({3, 2})).ok());
  EXPECT_FALSE(DequantizeMxfp4(ByteTensor({64}), ByteTensor({2, 2})).ok());
}

}  // namespace
}  // namespace harness::kernels
