#include "harness/stats/false_verdict.h"

#include <gtest/gtest.h>

#include <cmath>

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

// Reruns 0.9128, 0.9105, 0.9143, 0.9113: mean 0.912225, sample sd 0.00168003; the next
// rerun's predictive scale s * sqrt(1 + 1/4) = 0.00187833, z = 0.002225 / 0.00187833 =
// 1.18456, P(T_3 <= -z) = 0.160743 (python3: Simpson integration of the t density).
// Results for the mean's 95% t interval to clear 0.91: t(.975, n-1) * s / sqrt(n) < 0.002225
// first at n = 5 (2.7764 * s / 2 = 0.002332 at 4; 2.5706 * s / sqrt 5 = 0.002086 at 5).
TEST(FalseVerdict, RerunNoiseUsesTheSpreadOfStoredReruns) {
  const auto e = RerunNoiseEstimate({0.9128, 0.9105, 0.9143, 0.9113}, 0.91);
  EXPECT_EQ(e.question, FlakeQuestion::kRerunNoise);
  EXPECT_NEAR(e.center, 0.912225, 1e-9);
  EXPECT_NEAR(e.sigma, 0.00168003, 1e-7);
  EXPECT_NEAR(e.probability, 0.160743, 1e-5);
  EXPECT_EQ(e.needed, 5);
  EXPECT_EQ(e.observations, 4);
}

// 0.925, 0.922, 0.928: sd 0.003, scale 0.003 * sqrt(4/3), z = 4.33013; with 2 degrees of
// freedom P(T <= -z) = (1 - z / sqrt(z^2 + 2)) / 2 = 0.0247068 (a normal would say 7e-6:
// three reruns say little about sigma). Settled at 3: 4.3027 * 0.003 / sqrt 3 = 0.00745 < 0.015.
TEST(FalseVerdict, FewRerunsKeepHeavyTails) {
  const auto e = RerunNoiseEstimate({0.925, 0.922, 0.928}, 0.91);
  EXPECT_NEAR(e.probability, 0.0247068, 1e-6);
  EXPECT_EQ(e.needed, 3);
}

TEST(FalseVerdict, StudentTMatchesClosedFormsAndTheNormalInTheLimit) {
  EXPECT_NEAR(StudentTCdf(-21, 1), 0.5 - std::atan(21.0) / std::acos(-1.0), 1e-15) << "one degree: Cauchy";
  EXPECT_NEAR(StudentTCdf(1.5, 2), 0.5 * (1 + 1.5 / std::sqrt(1.5 * 1.5 + 2)), 1e-15);
  EXPECT_NEAR(StudentTCdf(0, 7), 0.5, 1e-15);
  EXPECT_NEAR(StudentTCdf(2.570582, 5), 0.975, 1e-6) << "t(.975, 5) from the tables";
  EXPECT_NEAR(StudentTCdf(-1.96, 5000), NormalCdf(-1.96), 1e-12);
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
