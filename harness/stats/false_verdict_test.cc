#include "harness/stats/false_verdict.h"

#include <gtest/gtest.h>

namespace harness {
namespace {

// Hand computation (python3: math.erfc): 1206/1319 = 0.914329, standard error
// sqrt(p(1-p)/1319) = 0.0077063, z = 0.004329 / 0.0077063 = 0.5618, Phi(-z) = 0.28714;
// questions for the 95% interval to clear 0.91: 1.96^2 p(1-p) / 0.004329^2 = 16056.5 -> 16057.
TEST(FalseVerdict, TrueRateIsTheBinomialQuestionWithQuestionsNeeded) {
  const auto e = TrueRateEstimate(1206, 1319, 0.91);
  EXPECT_EQ(e.question, FlakeQuestion::kTrueRate);
  EXPECT_NEAR(e.center, 0.9143290, 1e-6);
  EXPECT_NEAR(e.sigma, 0.0077063, 1e-6);
  EXPECT_NEAR(e.probability, 0.287142, 1e-5);
  EXPECT_EQ(e.needed, 16057);
  EXPECT_EQ(e.observations, 1319);
}

// Reruns 0.9128, 0.9105, 0.9143, 0.9113: mean 0.912225, sample sd 0.00168003,
// z = 0.002225 / 0.00168003 = 1.3244, Phi(-z) = 0.092688; reruns for the mean's 95%
// interval to clear 0.91: (1.96 * 0.00168 / 0.002225)^2 = 2.19 -> 3.
TEST(FalseVerdict, RerunNoiseUsesTheSpreadOfStoredReruns) {
  const auto e = RerunNoiseEstimate({0.9128, 0.9105, 0.9143, 0.9113}, 0.91);
  EXPECT_EQ(e.question, FlakeQuestion::kRerunNoise);
  EXPECT_NEAR(e.center, 0.912225, 1e-9);
  EXPECT_NEAR(e.sigma, 0.00168003, 1e-7);
  EXPECT_NEAR(e.probability, 0.0926882, 1e-6);
  EXPECT_EQ(e.needed, 3);
  EXPECT_EQ(e.observations, 4);
}

// 0.925, 0.922, 0.928: sd 0.003, z = 5, Phi(-5) = 2.8665e-7; settled by one run.
TEST(FalseVerdict, AComfortableMarginIsNearlyNeverFalse) {
  const auto e = RerunNoiseEstimate({0.925, 0.922, 0.928}, 0.91);
  EXPECT_NEAR(e.probability, 2.866516e-7, 1e-11);
  EXPECT_EQ(e.needed, 1);
}

TEST(FalseVerdict, IdenticalRerunsCannotFlipAndAMeanOnTheGateNeverSettles) {
  const auto same = RerunNoiseEstimate({0.912, 0.912, 0.912}, 0.91);
  EXPECT_EQ(same.probability, 0);
  EXPECT_EQ(same.sigma, 0);
  EXPECT_EQ(same.needed, 0);
  const auto on = RerunNoiseEstimate({0.92, 0.91, 0.90}, 0.91);
  EXPECT_NEAR(on.probability, 0.5, 1e-12);
  EXPECT_EQ(on.needed, -1);
  EXPECT_EQ(Word(CommitSpreadEstimate({0.5, 0.7}, 1.0).question), "commit-spread");
  // A hair off the threshold: "never" in practice, not an int64 overflow.
  EXPECT_EQ(RerunNoiseEstimate({0.91 + 1e-12, 0.92 + 1e-12, 0.90 + 1e-12}, 0.91 + 1e-12 + 1e-17).needed, -1);
  EXPECT_EQ(TrueRateEstimate(1, 3, 1.0 / 3 + 1e-16).needed, -1);
}

// One run of three failed: q = 1/3; reruns to see a failure with 95%: ln 0.05 / ln(2/3) = 7.39 -> 8.
TEST(FalseVerdict, StatusFlipsAreTheMinorityShare) {
  const auto e = StatusFlipEstimate(1, 3);
  EXPECT_EQ(e.question, FlakeQuestion::kStatusFlips);
  EXPECT_NEAR(e.probability, 1.0 / 3, 1e-12);
  EXPECT_EQ(e.needed, 8);
}

TEST(FalseVerdict, NormalCdf) {
  EXPECT_NEAR(NormalCdf(0), 0.5, 1e-15);
  EXPECT_NEAR(NormalCdf(-1.959963984540054), 0.025, 1e-12);
}

}  // namespace
}  // namespace harness
