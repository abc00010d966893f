#include "harness/eval/answer_extract.h"

#include <gtest/gtest.h>

namespace harness {
namespace {

std::string Extract(std::string_view text) {
  auto a = ExtractAnswer(text);
  return a ? a->number : "<none>";
}

TEST(CanonicalNumber, NormalisesCommasDollarsTrailingPeriodAndZeros) {
  EXPECT_EQ(CanonicalNumber("1,450,000"), "1450000");
  EXPECT_EQ(CanonicalNumber("$18.00"), "18");
  EXPECT_EQ(CanonicalNumber("18."), "18");
  EXPECT_EQ(CanonicalNumber("-3"), "-3");
  EXPECT_EQ(CanonicalNumber("-$5"), "-5");
  EXPECT_EQ(CanonicalNumber("$-5"), "-5");
  EXPECT_EQ(CanonicalNumber("007"), "7");
  EXPECT_EQ(CanonicalNumber("0.50"), "0.5");
  EXPECT_EQ(CanonicalNumber("-0.0"), "0");
  EXPECT_EQ(CanonicalNumber("18.05"), "18.05");   // sglang's \d+ made this INVALID
  EXPECT_EQ(CanonicalNumber("abc"), std::nullopt);
  EXPECT_EQ(CanonicalNumber("$"), std::nullopt);
  EXPECT_EQ(CanonicalNumber("1.2.3"), std::nullopt);
}

TEST(ExtractAnswer, StrictMarkerWinsOverALaterNumber) {
  auto a = ExtractAnswer("She has 3 apples.\n#### 42\nThen 7 more questions follow.");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->number, "42");
  EXPECT_EQ(a->rule, ExtractionRule::kStrict);
}

TEST(ExtractAnswer, LastMarkerCountsWhenThereAreSeveral) {
  EXPECT_EQ(Extract("#### 5\nWait, recount.\n#### 6"), "6");
}

TEST(ExtractAnswer, FallsBackToTheLastNumber) {
  auto a = ExtractAnswer("3 + 4 = 7, so the answer is $18.00.");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->number, "18");
  EXPECT_EQ(a->rule, ExtractionRule::kFlexible);
}

TEST(ExtractAnswer, MarkerWithoutNumberFallsBackToFlexible) {
  auto a = ExtractAnswer("It is 12 dollars.\n####");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->number, "12");
  EXPECT_EQ(a->rule, ExtractionRule::kFlexible);
}

TEST(ExtractAnswer, KeepsTheSign) {
  EXPECT_EQ(Extract("The temperature fell to -3 degrees."), "-3");
  EXPECT_EQ(Extract("#### -3"), "-3");
  EXPECT_EQ(Extract("He owes -$5."), "-5");
}

// "$-5" after the marker must be read whole: without the "$-5" step in NumberAt the strict
// rule sees no number at "$", falls back to the last number and answers 7.
TEST(ExtractAnswer, StrictMarkerReadsDollarThenSign) {
  auto a = ExtractAnswer("#### $-5\nThen 7 more.");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->number, "-5");
  EXPECT_EQ(a->rule, ExtractionRule::kStrict);
}

TEST(ExtractAnswer, MinusBetweenOperandsIsNotASign) {
  EXPECT_EQ(Extract("16-3-4=9"), "9");
  EXPECT_EQ(Extract("the range 10-4"), "4");
}

TEST(ExtractAnswer, CommasAndPeriods) {
  EXPECT_EQ(Extract("#### 1,450,000"), "1450000");
  EXPECT_EQ(Extract("They paid $1,200."), "1200");
  EXPECT_EQ(Extract("Numbers 5, 6 and 7,"), "7");   // a comma that no digit follows ends the number
  EXPECT_EQ(Extract("It costs 2.5 dollars."), "2.5");
}

TEST(ExtractAnswer, NoNumberAtAll) {
  EXPECT_FALSE(ExtractAnswer("I cannot solve this problem."));
  EXPECT_FALSE(ExtractAnswer(""));
  EXPECT_FALSE(ExtractAnswer("#### none"));
}

}  // namespace
}  // namespace harness
