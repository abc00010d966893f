#include "harness/eval/gsm8k_score.h"

#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(ScoreGsm8kResponse, ComparesNumerically) {
  auto s = ScoreGsm8kResponse("She makes $18.00 every day.", "stop", "18");
  EXPECT_EQ(s.outcome, SampleOutcome::kCorrect);
  EXPECT_EQ(s.extracted, "18");
  EXPECT_EQ(ScoreGsm8kResponse("#### 1450000", "stop", "1,450,000").outcome, SampleOutcome::kCorrect);
  EXPECT_EQ(ScoreGsm8kResponse("#### 19", "stop", "18").outcome, SampleOutcome::kWrong);
}

TEST(ScoreGsm8kResponse, SignMatters) {
  EXPECT_EQ(ScoreGsm8kResponse("#### 3", "stop", "-3").outcome, SampleOutcome::kWrong);
  EXPECT_EQ(ScoreGsm8kResponse("#### -3", "stop", "-3").outcome, SampleOutcome::kCorrect);
}

TEST(ScoreGsm8kResponse, NoNumberIsInvalid) {
  auto s = ScoreGsm8kResponse("I do not know.", "stop", "5");
  EXPECT_EQ(s.outcome, SampleOutcome::kInvalid);
  EXPECT_EQ(s.extracted, "");
}

TEST(ScoreGsm8kResponse, LengthFinishIsTruncatedEvenWithANumber) {
  auto s = ScoreGsm8kResponse("First 3 + 4 = 7, then 7 *", "length", "7");
  EXPECT_EQ(s.outcome, SampleOutcome::kTruncated);
  EXPECT_EQ(s.extracted, "7");   // still recorded for triage
}

}  // namespace
}  // namespace harness
