#include "harness/bisect/flip_rates.h"

#include <random>

#include <gtest/gtest.h>

namespace harness::bisect {
namespace {

double BorderlineShare(const ClassWeights& w) {
  double share = 0;
  for (int c = kFirstBorderlineClass; c < kQuestionClasses; ++c) share += w[c];
  return share;
}

TEST(FlipRates, NoRunsIsTheFixedPrior) {
  EXPECT_TRUE(FlipRates().empty());
  EXPECT_TRUE(FlipRates::Estimate({}, 0.002, 0.06).empty());
}

TEST(FlipRates, OneRunKeepsTheFixedBorderlineShare) {
  // Nothing answered twice: borderline and settled cannot be told apart.
  const FlipRates r = FlipRates::Estimate({"1110"}, 0.002, 0.06);
  const ClassWeights fixed = FixedClassPrior(0.75, 0.06);
  for (int c = 0; c < kQuestionClasses; ++c) EXPECT_NEAR(r.mixture()[c], fixed[c], 1e-12);
  EXPECT_GT(r.Weights(0)[0], r.Weights(3)[0]) << "a right answer leans settled right";
}

// Known inputs: 1000 questions, 750 always right, 50 always wrong, 200 right in 2 of 4 runs.
TEST(FlipRates, RepeatedRunsLearnEachQuestionsClassAndTheShare) {
  std::vector<std::string> runs(4, std::string(1000, '1'));
  for (int q = 750; q < 800; ++q)
    for (auto& r : runs) r[q] = '0';
  for (int q = 800; q < 1000; ++q) runs[q % 4][q] = runs[(q + 1) % 4][q] = '0';
  const FlipRates r = FlipRates::Estimate(runs, 0.002, 0.06);
  ASSERT_EQ(r.questions(), 1000);
  EXPECT_EQ(r.runs(), 4);
  EXPECT_LT(r.Borderline(0), 0.05) << "right 4 of 4: settled";
  EXPECT_GT(r.Borderline(960), 0.95) << "right 2 of 4: borderline";
  EXPECT_NEAR(BorderlineShare(r.mixture()), 0.2, 0.03) << "the fitted share, not the fixed 6 %";
  EXPECT_GT(r.FlipRate(960), 0.3);
  EXPECT_LT(r.FlipRate(0), 0.05);
  EXPECT_EQ(r.Kind(0), r.Kind(1)) << "same history, same kind";
  EXPECT_NE(r.Kind(0), r.Kind(960));
  EXPECT_GT(r.HistoryLogRatioOfKind(r.Kind(0), 0.98), 0) << "right before the culprit: an affected question could be";
  EXPECT_LT(r.HistoryLogRatioOfKind(r.Kind(760), 0.98), -10) << "always wrong: it cannot have been broken by it";
  EXPECT_LT(r.HistoryLogRatioOfKind(r.Kind(960), 0.98), -1) << "flipped before: not a settled question broken";
  EXPECT_GT(r.HistoryLogRatioOfKind(r.Kind(960), 0.5), r.HistoryLogRatioOfKind(r.Kind(960), 0.98))
      << "flipped before: a borderline question the fault moved";
}

TEST(FlipRates, AQuestionWithoutHistoryGetsTheMixture) {
  std::vector<std::string> runs = {"11-", "10-", "11-"};
  const FlipRates r = FlipRates::Estimate(runs, 0.002, 0.06);
  for (int c = 0; c < kQuestionClasses; ++c) EXPECT_NEAR(r.Weights(2)[c], r.mixture()[c], 1e-12);
  EXPECT_NEAR(r.HistoryLogRatioOfKind(r.Kind(2), 0.98), 0, 1e-12);
}

}  // namespace
}  // namespace harness::bisect
