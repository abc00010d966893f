// CheckScaleLayout called directly: the reference kernels' path passes with its metrics,
// the catalogued fault (the producer passes the kernel's metadata on) fails naming the
// strides, and each other part of the contract a run breaks is its own failure line, with a
// note naming the first element where two tensors differ.
#include "suites/fp8_scale_layout_check.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/results/metric_names.h"

namespace harness {
namespace {

using kernels::FloatTensor;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Small enough to run in milliseconds; two scale groups per row.
ScaleLayoutRow Row(int64_t m) { return {.m = m, .k = 256, .n = 128, .group_size = 128, .eps = 1e-6f, .seed = 7}; }

FloatTensor Matrix(std::vector<float> values) { return FloatTensor::FromData({2, 2}, std::move(values)).value(); }

std::vector<std::string> MetricNames(const CaseOutcome& outcome) {
  std::vector<std::string> names;
  for (const auto& m : outcome.metrics) names.push_back(m.name);
  return names;
}

TEST(CheckScaleLayout, TheRepairedPathPassesWithTheProducersMetrics) {
  for (int64_t m : {1, 4}) {
    SCOPED_TRACE(m);
    const CaseOutcome outcome = CheckScaleLayout(Row(m), RunScaleLayout(Row(m), /*scale_unrepaired=*/false));
    EXPECT_THAT(outcome.failures, IsEmpty());
    EXPECT_THAT(outcome.notes, IsEmpty());
    ASSERT_THAT(MetricNames(outcome), ElementsAre(metric_names::kGemmMaxAbsError, metric_names::kGemmMaxRelError,
                                                  metric_names::kGemmMaxBoundUse));
    EXPECT_GT(outcome.metrics[0].value, 0) << "FP8 is not exact";
    EXPECT_LE(outcome.metrics[2].value, 1) << "within the bound";
  }
}

// fp8-scale-unrepaired: at M > 1 the GEMM reads the scales through the wrong strides; at
// M = 1 the layouts coincide and the case passes.
TEST(CheckScaleLayout, TheUnrepairedScaleFailsNamingTheStridesOnlyAboveOneRow) {
  EXPECT_THAT(CheckScaleLayout(Row(1), RunScaleLayout(Row(1), /*scale_unrepaired=*/true)).failures, IsEmpty());
  const CaseOutcome outcome = CheckScaleLayout(Row(4), RunScaleLayout(Row(4), /*scale_unrepaired=*/true));
  EXPECT_THAT(outcome.failures,
              ElementsAre("fp8 scale layout: expected strides (1, 4) for shape [4, 2], got (2, 1): transpose_scale=true "
                          "stores the scales column-major ([G][M]), so the producer must hand the GEMM strides (1, M)",
                          "the repaired scale differs from the row-major scale",
                          "the materialized scale differs from the row-major scale",
                          "the block-scaled GEMM differs between the two scale layouts"));
  EXPECT_THAT(outcome.notes, ElementsAre(StartsWith("first difference, repaired vs row-major scale: element ["),
                                         StartsWith("first difference, materialized vs row-major scale: element ["),
                                         StartsWith("first difference, GEMM with the producer's vs the row-major "
                                                    "scale: element [")));
}

TEST(CheckScaleLayout, ACopyInsteadOfAViewAndANonContiguousMaterializedScaleAreNamed) {
  ScaleLayoutRun copied = RunScaleLayout(Row(1), false);
  copied.repaired = copied.repaired.Clone();
  EXPECT_THAT(CheckScaleLayout(Row(1), copied).failures,
              ElementsAre("the repaired scale is not a view of the producer's output (a copy, or another offset)"));

  ScaleLayoutRun strided = RunScaleLayout(Row(4), false);
  strided.materialized = strided.repaired;  // the (1, M) view itself, not a row-major copy
  EXPECT_THAT(CheckScaleLayout(Row(4), strided).failures,
              ElementsAre("materialized scale: shape [4, 2] strides (1, 4) offset 0"));
}

TEST(CheckScaleLayout, DifferentCodesForTheTwoLayoutsAreNamedWithTheFirstDifference) {
  ScaleLayoutRun run = RunScaleLayout(Row(4), false);
  kernels::ByteTensor q = run.transposed.q.Clone();
  const int original = q.At(0, 0);
  q.mutable_data_ptr()[0] = static_cast<uint8_t>(original ^ 1);
  run.transposed.q = q;
  const CaseOutcome outcome = CheckScaleLayout(Row(4), run);
  EXPECT_THAT(outcome.failures, ElementsAre("q differs between transpose_scale=true and false"));
  EXPECT_THAT(outcome.notes, ElementsAre(fmt::format("first difference, q (transpose_scale=true vs false): element "
                                                     "[0, 0]: {} vs {}",
                                                     original ^ 1, original)));
}

// The GEMM half on hand-made 2 x 2 values: the producer's result one off at [1, 1], the
// row-major one exact, every bound 0.5.
TEST(CheckScaleLayout, AGemmOutsideItsBoundIsNamedWithItsFirstElementAndMeasured) {
  ScaleLayoutRun run = RunScaleLayout(Row(4), false);
  run.ref = Matrix({1, 2, 3, 4});
  run.bound = Matrix({0.5f, 0.5f, 0.5f, 0.5f});
  run.y_row = Matrix({1, 2, 3, 4});
  run.y_producer = Matrix({1, 2, 3, 5});
  const CaseOutcome outcome = CheckScaleLayout(Row(4), run);
  EXPECT_THAT(outcome.failures,
              ElementsAre("the block-scaled GEMM differs between the two scale layouts",
                          "FP8 GEMM (producer scales) outside the documented FP8 error bound at 1 of 4 elements; "
                          "first: y[1, 1] = 5 vs fp32 4 (|error| 1 > bound 0.5)"));
  EXPECT_THAT(outcome.notes,
              ElementsAre("first difference, GEMM with the producer's vs the row-major scale: element [1, 1]: 5 vs 4"));
  ASSERT_EQ(outcome.metrics.size(), 3u);
  EXPECT_DOUBLE_EQ(outcome.metrics[0].value, 1.0);  // the largest |error|
  EXPECT_DOUBLE_EQ(outcome.metrics[1].value, 0.2);  // row 1: |(0, 1)| / |(3, 4)|
  EXPECT_DOUBLE_EQ(outcome.metrics[2].value, 2.0);  // 1 of a bound of 0.5
}

}  // namespace
}  // namespace harness
