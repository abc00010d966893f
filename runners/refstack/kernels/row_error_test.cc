#include "runners/refstack/kernels/row_error.h"

#include <algorithm>
#include <numeric>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness::kernels {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(Fp8GemmRowErrors, HealthyErrorIsSmallAndIndependentOfBatch) {
  const std::vector<double> one = Fp8GemmRowErrors(1, 256, 256, false, 42);
  const std::vector<double> batch = Fp8GemmRowErrors(64, 256, 256, false, 42);
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(batch.size(), 64u);
  // Row 0 is the same input either way and every row is computed alike: equal bits.
  EXPECT_EQ(one[0], batch[0]);
  for (double e : batch) {
    EXPECT_GT(e, 0.0) << "FP8 rounding must show";
    EXPECT_LT(e, 0.05) << "e4m3 rounding of both operands stays at a few percent";
  }
  EXPECT_EQ(batch, Fp8GemmRowErrors(64, 256, 256, false, 42)) << "deterministic";
  EXPECT_NE(batch, Fp8GemmRowErrors(64, 256, 256, false, 43)) << "the seed matters";
}

TEST(Fp8GemmRowErrors, FaultRaisesBatchedErrorOnly) {
  const std::vector<double> healthy = Fp8GemmRowErrors(64, 256, 256, false, 42);
  const std::vector<double> faulty = Fp8GemmRowErrors(64, 256, 256, true, 42);
  EXPECT_GT(Median(faulty), 5 * Median(healthy));
  int raised = 0;
  for (size_t r = 0; r < faulty.size(); ++r) raised += faulty[r] > 2 * healthy[r];
  EXPECT_GE(raised, 60) << "nearly every row reads some other row's or group's scales";
  // At M = 1 the two layouts coincide: the fault changes nothing.
  EXPECT_EQ(Fp8GemmRowErrors(1, 256, 256, true, 42), Fp8GemmRowErrors(1, 256, 256, false, 42));
}

TEST(Fp8GemmRowErrors, BadShapesThrowNamingThem) {
  EXPECT_THAT([] { Fp8GemmRowErrors(4, 200, 256, false, 1); },
              ::testing::ThrowsMessage<FatalError>(::testing::HasSubstr("M=4 K=200 N=256")));
  EXPECT_THROW(Fp8GemmRowErrors(-1, 256, 256, false, 1), FatalError);
  EXPECT_TRUE(Fp8GemmRowErrors(0, 256, 256, false, 1).empty());
}

TEST(RowRelativeErrors, NormwisePerRow) {
  const FloatTensor ref = FloatTensor::FromData({2, 2}, {3, 4, 0, 0}).value();
  const FloatTensor y = FloatTensor::FromData({2, 2}, {3, 4 + 5, 1, 0}).value();
  EXPECT_EQ(RowRelativeErrors(y, ref), (std::vector<double>{1.0, 1.0}));
  EXPECT_THROW(RowRelativeErrors(FloatTensor({2, 3}), ref), FatalError);
}

}  // namespace
}  // namespace harness::kernels
