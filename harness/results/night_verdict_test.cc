#include "harness/results/night_verdict.h"

#include <gtest/gtest.h>

#include "harness/results/metric_names.h"

namespace harness {
namespace {

CaseResult Case(CaseStatus status, std::vector<Metric> metrics = {}) {
  CaseResult c;
  c.case_id = "s/test_x_0";
  c.status = status;
  c.metrics = std::move(metrics);
  return c;
}

Metric Gate(GateVerdict v) { return VerdictMetric(metric_names::kGateVerdict, v); }
Metric Paired(BaselineVerdict v) { return VerdictMetric(metric_names::kBaselineVerdict, v); }

TEST(NightVerdict, AtRiskPassesAreAnAnnotationOfAPassingNight) {
  const auto night = JudgeNight({Case(CaseStatus::kPass), Case(CaseStatus::kPass, {Gate(GateVerdict::kAtRisk)}),
                                 Case(CaseStatus::kSkip)});
  EXPECT_EQ(night.verdict, NightVerdict::kPass);
  EXPECT_EQ(night.ExitCode(), 0);
  EXPECT_EQ(night.counts.pass, 2);
  EXPECT_EQ(night.counts.at_risk, 1);
  EXPECT_EQ(night.Line(), "harness nightly: PASS - 2 passed (1 AT-RISK), 0 failed, 0 regressed, 0 errors, 1 skipped");
}

TEST(NightVerdict, APairedDropAboveTheGateIsRegressedNotFail) {
  const auto regressed = JudgeNight({Case(CaseStatus::kPass),
                                     Case(CaseStatus::kFail, {Gate(GateVerdict::kPass), Paired(BaselineVerdict::kRegressed)})});
  EXPECT_EQ(regressed.verdict, NightVerdict::kRegressed);
  EXPECT_EQ(regressed.ExitCode(), 1);
  EXPECT_EQ(regressed.counts.regressed, 1);
  EXPECT_EQ(regressed.counts.fail, 0);
  // Below the gate too: the case fails its own check, whatever the pairing says.
  const auto both = JudgeNight({Case(CaseStatus::kFail, {Gate(GateVerdict::kFail), Paired(BaselineVerdict::kRegressed)})});
  EXPECT_EQ(both.verdict, NightVerdict::kFail);
  // A failing test beside a paired regression: FAIL.
  EXPECT_EQ(JudgeNight({Case(CaseStatus::kFail), Case(CaseStatus::kFail, {Paired(BaselineVerdict::kRegressed)})}).verdict,
            NightVerdict::kFail);
}

TEST(NightVerdict, WhatCouldNotRunMakesTheNightIncomplete) {
  const auto errored = JudgeNight({Case(CaseStatus::kFail), Case(CaseStatus::kError)});
  EXPECT_EQ(errored.verdict, NightVerdict::kIncomplete);
  EXPECT_EQ(errored.ExitCode(), 3);
  EXPECT_EQ(errored.Line(), "harness nightly: INCOMPLETE - 0 passed, 1 failed, 0 regressed, 1 error, 0 skipped");
  EXPECT_EQ(JudgeNight({Case(CaseStatus::kRunning)}).verdict, NightVerdict::kIncomplete);
  const auto missing = JudgeNight({Case(CaseStatus::kPass)}, 2);
  EXPECT_EQ(missing.verdict, NightVerdict::kIncomplete);
  EXPECT_EQ(missing.Line(), "harness nightly: INCOMPLETE - 1 passed, 0 failed, 0 regressed, 0 errors, 0 skipped, 2 shards missing");
}

TEST(NightVerdict, CountsAddUp) {
  NightCounts a, b;
  a.Add(Case(CaseStatus::kPass, {Gate(GateVerdict::kAtRisk)}));
  b.Add(Case(CaseStatus::kFail));
  b.missing_shards = 1;
  a += b;
  EXPECT_EQ(a.pass, 1);
  EXPECT_EQ(a.at_risk, 1);
  EXPECT_EQ(a.fail, 1);
  EXPECT_EQ(a.missing_shards, 1);
  EXPECT_EQ(Word(JudgeNight(a).verdict), "INCOMPLETE");
}

}  // namespace
}  // namespace harness
