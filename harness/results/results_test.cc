#include "harness/results/results.h"

#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(Results, StatusWordsRoundTrip) {
  for (CaseStatus s : {CaseStatus::kRunning, CaseStatus::kPass, CaseStatus::kFail, CaseStatus::kError, CaseStatus::kSkip}) {
    auto back = ParseCaseStatus(Word(s));
    ASSERT_TRUE(back.has_value()) << Word(s);
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(Word(CaseStatus::kPass), "pass");
  EXPECT_EQ(Label(CaseStatus::kSkip), "SKIP");
  EXPECT_EQ(Word(RunStatus::kFail), "fail");
  EXPECT_FALSE(ParseCaseStatus("passed").has_value());
  EXPECT_FALSE(ParseRunStatus("skip").has_value());
}

TEST(Results, SampleOutcomeWordsRoundTrip) {
  for (auto o : {SampleOutcome::kCorrect, SampleOutcome::kWrong, SampleOutcome::kInvalid, SampleOutcome::kTruncated,
                 SampleOutcome::kError, SampleOutcome::kPass, SampleOutcome::kFail})
    EXPECT_EQ(ParseSampleOutcome(Word(o)), o);
  EXPECT_EQ(Word(SampleOutcome::kTruncated), "truncated");
  EXPECT_EQ(Word(SampleOutcome::kPass), "pass");
  EXPECT_EQ(SampleOutcomeWords(), "correct, wrong, invalid, truncated, error, pass, fail");
  for (const char* unknown : {"", "Correct", "passed", "skip", "correct "})
    EXPECT_EQ(ParseSampleOutcome(unknown), std::nullopt) << unknown;
}

TEST(Results, OnlyCorrectAndPassAreSuccesses) {
  EXPECT_TRUE(IsSuccess(SampleOutcome::kCorrect));
  EXPECT_TRUE(IsSuccess(SampleOutcome::kPass));
  for (auto o : {SampleOutcome::kWrong, SampleOutcome::kInvalid, SampleOutcome::kTruncated, SampleOutcome::kError,
                 SampleOutcome::kFail})
    EXPECT_FALSE(IsSuccess(o)) << Word(o);
}

TEST(Results, VerdictWords) {
  EXPECT_EQ(Word(GateVerdict::kAtRisk), "AT-RISK");
  EXPECT_EQ(Word(BaselineVerdict::kRegressed), "REGRESSED");
  Metric m = VerdictMetric("gate_verdict", GateVerdict::kFail);
  EXPECT_EQ(m.value, 2);
  EXPECT_EQ(m.label, "FAIL");
}

TEST(Results, VerdictWordsRoundTrip) {
  for (GateVerdict v : {GateVerdict::kPass, GateVerdict::kAtRisk, GateVerdict::kFail})
    EXPECT_EQ(ParseGateVerdict(Word(v)), v) << Word(v);
  for (BaselineVerdict v : {BaselineVerdict::kSame, BaselineVerdict::kImproved, BaselineVerdict::kRegressed})
    EXPECT_EQ(ParseBaselineVerdict(Word(v)), v) << Word(v);
  // Each table reads only its own words, exactly.
  for (const char* word : {"", "REGRESSED", "pass", "AT_RISK", "FAIL "}) EXPECT_EQ(ParseGateVerdict(word), std::nullopt);
  for (const char* word : {"", "FAIL", "same", "REGRESSED\n"}) EXPECT_EQ(ParseBaselineVerdict(word), std::nullopt);
}

TEST(Results, OverallStatusIsErrorBeforeFailBeforePass) {
  std::vector<CaseResult> cases(3);
  cases[0].status = CaseStatus::kPass;
  cases[1].status = CaseStatus::kSkip;
  cases[2].status = CaseStatus::kPass;
  EXPECT_EQ(CountStatuses(cases).Overall(), RunStatus::kPass);
  cases[1].status = CaseStatus::kFail;
  EXPECT_EQ(CountStatuses(cases).Overall(), RunStatus::kFail);
  cases[2].status = CaseStatus::kError;
  auto c = CountStatuses(cases);
  EXPECT_EQ(c.Overall(), RunStatus::kError);
  EXPECT_EQ(c.pass + c.fail + c.error, 3);
}

}  // namespace
}  // namespace harness
