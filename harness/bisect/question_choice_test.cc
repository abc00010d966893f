#include "harness/bisect/question_choice.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace harness::bisect {
namespace {

// 200 questions; the good run gets all right, the bad one loses 3 and 7; question 11 is
// borderline in the history.
struct Fixture {
  std::string good = std::string(200, '1');
  std::string bad = std::string(200, '1');
  FlipRates rates;
  Fixture() {
    bad[3] = bad[7] = '0';
    std::vector<std::string> history(6, std::string(200, '1'));
    history[0][11] = history[2][11] = history[4][11] = '0';
    rates = FlipRates::Estimate(history, 0.002, 0.06, 0.02);
  }
};

TEST(QuestionChoice, TheDifferingAndTheFlippingQuestionsAndNothingElseWithoutControls) {
  Fixture f;
  QuestionChoice c;
  c.control_share = 0;
  EXPECT_EQ(ChooseQuestions(200, {&f.good, &f.bad}, f.rates, 1, c), (std::vector<int>{3, 7, 11}));
  EXPECT_EQ(ChooseQuestions(200, {&f.good, &f.bad}, FlipRates(), 1, c), (std::vector<int>{3, 7}))
      << "no flip rates: only the differing ones";
}

TEST(QuestionChoice, TheControlSetIsDeterministicAndPerSalt) {
  Fixture f;
  QuestionChoice c;
  c.control_share = 0.1;
  const auto a = ChooseQuestions(200, {&f.good, &f.bad}, f.rates, 5, c);
  EXPECT_EQ(a, ChooseQuestions(200, {&f.good, &f.bad}, f.rates, 5, c));
  EXPECT_NE(a, ChooseQuestions(200, {&f.good, &f.bad}, f.rates, 6, c));
  int controls = 0;
  for (int q = 0; q < 200; ++q) {
    const bool expected = q == 3 || q == 7 || q == 11 || InControlSet(5, q, 0.1);
    EXPECT_EQ(std::binary_search(a.begin(), a.end(), q), expected) << q;
    controls += InControlSet(5, q, 0.1);
  }
  EXPECT_GT(controls, 8);
  EXPECT_LT(controls, 35);
}

TEST(QuestionChoice, FullOrNothingKnownIsEveryQuestion) {
  Fixture f;
  QuestionChoice c;
  c.full = true;
  EXPECT_EQ(ChooseQuestions(200, {&f.good, &f.bad}, f.rates, 1, c).size(), 200u);
  c.full = false;
  EXPECT_EQ(ChooseQuestions(200, {}, f.rates, 1, c).size(), 200u);
  const std::string unanswered(200, '-');
  EXPECT_EQ(ChooseQuestions(200, {&unanswered}, f.rates, 1, c).size(), 200u);
}

}  // namespace
}  // namespace harness::bisect
