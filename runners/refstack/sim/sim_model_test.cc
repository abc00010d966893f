#include "runners/refstack/sim/sim_model.h"

#include <gtest/gtest.h>

#include "harness/eval/gsm8k_prompt.h"
#include "harness/eval/gsm8k_score.h"
#include "harness/util/paths.h"
#include "harness/stats/stats.h"
#include "runners/refstack/kernels/row_error.h"

namespace harness::sim {
namespace {

class SimModelTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    test_ = new std::vector<Gsm8kItem>(ValueOrThrow(LoadGsm8k(Gsm8kTestFile())));
    train_ = new std::vector<Gsm8kItem>(ValueOrThrow(LoadGsm8k(Gsm8kTrainFile())));
  }
  static void TearDownTestSuite() {
    delete test_;
    delete train_;
  }
  static SimProfile Profile(int batch_rows) {
    auto p = ValueOrThrow(LoadSimProfile(GoldenDir() / "sim" / "default.json"));
    p.batch_rows = batch_rows;
    return p;
  }
  static int CountRight(const SimModel& m) {
    int right = 0;
    for (int q = 0; q < m.size(); ++q) right += m.Kind(q) == AnswerKind::kRight;
    return right;
  }
  static std::vector<Gsm8kItem>* test_;
  static std::vector<Gsm8kItem>* train_;
};
std::vector<Gsm8kItem>* SimModelTest::test_ = nullptr;
std::vector<Gsm8kItem>* SimModelTest::train_ = nullptr;

TEST_F(SimModelTest, FindsTheLastQuestionOfAFewShotPrompt) {
  SimModel m(Profile(1), false, *test_);
  const std::string prefix = ValueOrThrow(Gsm8kFewShotPrefix(*train_, 5));
  for (int q : {0, 17, 1318}) EXPECT_EQ(m.FindQuestion(Gsm8kPrompt(prefix, (*test_)[q].question)), q);
  // Shots that are themselves test questions do not confuse it: the last block counts.
  const std::string test_shots = "Question: " + (*test_)[3].question + "\nAnswer: " + (*test_)[3].answer + "\n\n";
  EXPECT_EQ(m.FindQuestion(Gsm8kPrompt(test_shots, (*test_)[9].question)), 9);
  EXPECT_EQ(m.FindQuestion(Gsm8kPrompt(prefix, "What is the airspeed of an unladen swallow?")), -1);
  EXPECT_EQ(m.FindQuestion("no question here"), -1);
}

TEST_F(SimModelTest, AnswersScoreAsTheirKind) {
  SimModel m(Profile(64), false, *test_);
  int kinds[3] = {0, 0, 0};
  for (int q = 0; q < m.size(); ++q) {
    const std::string answer = m.Answer(q);
    const auto& item = (*test_)[q];
    const auto scored = ScoreGsm8kResponse(answer, "stop", item.label);
    EXPECT_EQ(answer.find("<<"), std::string::npos) << q;
    switch (m.Kind(q)) {
      case AnswerKind::kRight:
        EXPECT_EQ(scored.outcome, Outcome::kCorrect) << answer;
        EXPECT_EQ(answer, " " + RemoveCalculatorAnnotations(item.answer));
        break;
      case AnswerKind::kWrongNumber:
        EXPECT_EQ(scored.outcome, Outcome::kWrong) << answer;
        EXPECT_NE(answer.rfind("#### "), std::string::npos);
        break;
      case AnswerKind::kNoNumber:
        EXPECT_EQ(scored.outcome, Outcome::kInvalid) << answer;
        break;
    }
    ++kinds[static_cast<int>(m.Kind(q))];
  }
  EXPECT_GT(kinds[1], 0);
  EXPECT_GT(kinds[2], 0);
  EXPECT_LT(kinds[2], kinds[1]);   // no number is the small share of the wrong answers
}

TEST_F(SimModelTest, DeterministicPerSeed) {
  SimModel a(Profile(64), false, *test_), b(Profile(64), false, *test_);
  auto other = Profile(64);
  other.seed += 1;
  SimModel c(other, false, *test_);
  int differ = 0;
  for (int q = 0; q < a.size(); ++q) {
    EXPECT_EQ(a.Answer(q), b.Answer(q));
    differ += a.Kind(q) != c.Kind(q);
  }
  EXPECT_GT(differ, 0);
}

TEST_F(SimModelTest, HealthyKernelsStayInsideTheSamplingInterval) {
  const double p = 0.925, n = static_cast<double>(test_->size());
  const double half = kZ95 * std::sqrt(p * (1 - p) / n);
  for (int rows : {1, 64}) {
    SimModel m(Profile(rows), false, *test_);
    const double bound = HealthyRowErrorBound(512);
    for (double e : m.row_errors()) EXPECT_LE(e, bound) << "M = " << rows;
    // With every e <= B, only questions with u in (p - delta, p) can flip: the healthy
    // count lies between the margin-only count and that minus delta * n.
    int margin_only = 0;
    for (int q = 0; q < m.size(); ++q) margin_only += m.Margin(q) > 0;
    const int right = CountRight(m);
    EXPECT_LE(right, margin_only);
    EXPECT_GE(right, margin_only - static_cast<int>(std::ceil(kHealthyAccuracyShift * n)));
    EXPECT_EQ(margin_only, static_cast<int>(std::round(p * n)));   // the shuffle: no sampling luck
    EXPECT_NEAR(right / n, p, half) << "M = " << rows;
  }
}

TEST_F(SimModelTest, ScaleFaultActsOnlyThroughTheKernelRowErrors) {
  SimModel healthy1(Profile(1), false, *test_), fault1(Profile(1), true, *test_);
  EXPECT_EQ(healthy1.row_errors(), fault1.row_errors());   // M = 1: the layout bug is harmless
  for (int q = 0; q < healthy1.size(); ++q) ASSERT_EQ(healthy1.Kind(q), fault1.Kind(q));

  SimModel healthy64(Profile(64), false, *test_), fault64(Profile(64), true, *test_);
  double mean = 0;
  for (double e : fault64.row_errors()) mean += e / 64;
  EXPECT_GT(mean, HealthyRowErrorBound(512));   // the fault's real error, past the healthy bound
  EXPECT_LT(CountRight(fault64), CountRight(healthy64));
  // Same arguments as the model's own call: the errors are the kernels', not the sim's.
  EXPECT_EQ(fault64.row_errors(), kernels::Fp8GemmRowErrors(64, 512, 256, true, Mix(1319, 4, 0)));
}

}  // namespace
}  // namespace harness::sim
