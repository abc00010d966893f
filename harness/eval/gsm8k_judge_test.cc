// JudgeGsm8k without a suite, a store or an endpoint: eval reports made of samples, and the
// metrics, notes, failure lines and verdict words each one gets.
#include "harness/eval/gsm8k_judge.h"

#include <gtest/gtest.h>

#include "harness/eval/eval_summary.h"
#include "harness/results/metric_names.h"
#include "harness/results/metric_set.h"

namespace harness {
namespace {

// A report of n questions, the first `correct` right and the rest wrong.
Gsm8kEvalReport ReportOf(int64_t n, int64_t correct) {
  Gsm8kEvalReport r;
  for (int64_t i = 0; i < n; ++i)
    r.samples.push_back({std::to_string(i), i < correct ? SampleOutcome::kCorrect : SampleOutcome::kWrong, "1", "1"});
  r.questions = n;
  r.summary = SummarizeSamples(r.samples);
  return r;
}

const Metric* Find(const CaseOutcome& o, const std::string& name) {
  for (const auto& m : o.metrics)
    if (m.name == name) return &m;
  return nullptr;
}

Gsm8kJudgeInputs InputsOf(const Gsm8kEvalReport& report, bool fail_at_risk = false) {
  Gsm8kJudgeInputs in;
  in.report = &report;
  in.rule = {0.91, fail_at_risk, kDefaultAlpha};
  return in;
}

TEST(JudgeGsm8k, AClearPassIsANoteWithItsGateAndNoPairingWithoutABaseline) {
  const auto report = ReportOf(1319, 1300);
  const Gsm8kJudgement j = JudgeGsm8k(InputsOf(report));
  EXPECT_EQ(j.gate, GateVerdict::kPass);
  EXPECT_FALSE(j.paired.has_value());
  EXPECT_TRUE(j.outcome.failures.empty());
  EXPECT_FALSE(j.outcome.infra_error.has_value());
  ASSERT_EQ(j.outcome.notes.size(), 1u);
  EXPECT_EQ(j.outcome.notes[0].rfind("PASS at gate 0.91 (", 0), 0u) << j.outcome.notes[0];
  EXPECT_NE(j.outcome.notes[0].find("gsm8k accuracy 0.9856 (1300/1319, 95% CI ["), std::string::npos);
  const Metric* accuracy = Find(j.outcome, metric_names::kAccuracy);
  ASSERT_NE(accuracy, nullptr);
  EXPECT_EQ(accuracy->n, 1319);
  EXPECT_TRUE(accuracy->low && accuracy->high);
  ASSERT_NE(Find(j.outcome, metric_names::kGateVerdict), nullptr);
  EXPECT_EQ(Find(j.outcome, metric_names::kGateVerdict)->label, "PASS");
  EXPECT_EQ(Find(j.outcome, metric_names::kBaselineVerdict), nullptr);
  EXPECT_EQ(Find(j.outcome, metric_names::kGateRerunNoiseFailProbability), nullptr) << "no reruns: the sampling question";
}

TEST(JudgeGsm8k, AtRiskIsANoteUnlessTheRowFailsAtRisk) {
  const auto report = ReportOf(1319, 1200);  // 0.9098: the interval straddles 0.91
  const Gsm8kJudgement note = JudgeGsm8k(InputsOf(report));
  EXPECT_EQ(note.gate, GateVerdict::kAtRisk);
  EXPECT_TRUE(note.outcome.failures.empty());
  ASSERT_EQ(note.outcome.notes.size(), 1u);
  EXPECT_EQ(note.outcome.notes[0].rfind("AT-RISK at gate 0.91", 0), 0u);

  const Gsm8kJudgement fails = JudgeGsm8k(InputsOf(report, /*fail_at_risk=*/true));
  EXPECT_EQ(fails.gate, GateVerdict::kAtRisk);
  EXPECT_TRUE(fails.outcome.notes.empty());
  ASSERT_EQ(fails.outcome.failures.size(), 1u);
  EXPECT_EQ(fails.outcome.failures[0].rfind("gsm8k AT-RISK at gate 0.91", 0), 0u) << fails.outcome.failures[0];
}

TEST(JudgeGsm8k, AFailedGateIsAFailureLine) {
  const auto report = ReportOf(1319, 1100);
  const Gsm8kJudgement j = JudgeGsm8k(InputsOf(report));
  EXPECT_EQ(j.gate, GateVerdict::kFail);
  ASSERT_EQ(j.outcome.failures.size(), 1u);
  EXPECT_EQ(j.outcome.failures[0].rfind("gsm8k FAIL at gate 0.91", 0), 0u);
  EXPECT_EQ(Find(j.outcome, metric_names::kGateVerdict)->label, "FAIL");
}

// 20 questions the baseline got right and this run got wrong, none the other way.
TEST(JudgeGsm8k, PairedWithItsBaselineQuestionByQuestion) {
  const auto report = ReportOf(1319, 1299);
  Baseline baseline{"0123456789abcdef0123", 7, CaseStatus::kPass, ReportOf(1319, 1319).samples};
  Gsm8kJudgeInputs in = InputsOf(report);
  in.baseline = &baseline;
  const Gsm8kJudgement j = JudgeGsm8k(in);
  EXPECT_EQ(j.paired, BaselineVerdict::kRegressed);
  EXPECT_EQ(j.gate, GateVerdict::kPass);
  EXPECT_EQ(Find(j.outcome, metric_names::kBaselineVerdict)->label, "REGRESSED");
  ASSERT_EQ(j.outcome.failures.size(), 1u);
  EXPECT_EQ(j.outcome.failures[0].rfind("gsm8k REGRESSED vs baseline 0123456789ab (run 7): losses b = 20, gains c = 0 "
                                        "of 1319 paired questions, exact McNemar p = ",
                                        0),
            0u)
      << j.outcome.failures[0];
  EXPECT_EQ(Find(j.outcome, metric_names::kMcNemarB)->value, 20);
  EXPECT_EQ(Find(j.outcome, metric_names::kMcNemarC)->value, 0);
  EXPECT_EQ(Find(j.outcome, metric_names::kBaselinePaired)->n, 1319);

  baseline.samples = report.samples;  // the same answers: SAME, a note
  const Gsm8kJudgement same = JudgeGsm8k(in);
  EXPECT_EQ(same.paired, BaselineVerdict::kSame);
  EXPECT_TRUE(same.outcome.failures.empty());
  ASSERT_EQ(same.outcome.notes.size(), 2u);
  EXPECT_EQ(same.outcome.notes[1].rfind("SAME vs baseline 0123456789ab (run 7)", 0), 0u);
}

// With stored reruns the gate's confidence answers the rerun-noise question over every run.
TEST(JudgeGsm8k, RerunsMakeTheGateConfidenceARerunNoiseEstimate) {
  const auto report = ReportOf(1319, 1215);
  Gsm8kJudgeInputs in = InputsOf(report);
  in.rerun_accuracies = {0.9200, 0.9225};
  const Gsm8kJudgement j = JudgeGsm8k(in);
  const Metric* noise = Find(j.outcome, metric_names::kGateRerunNoiseFailProbability);
  ASSERT_NE(noise, nullptr);
  EXPECT_EQ(noise->n, 3) << "the two reruns and this run";
}

TEST(JudgeGsm8k, APartialRunGetsNoGateAndNoPairing) {
  const auto report = ReportOf(10, 7);
  const Baseline baseline{"abc", 1, CaseStatus::kPass, ReportOf(10, 10).samples};
  Gsm8kJudgeInputs in = InputsOf(report);
  in.partial_of = 1319;
  in.baseline = &baseline;
  const Gsm8kJudgement j = JudgeGsm8k(in);
  EXPECT_FALSE(j.gate.has_value());
  EXPECT_FALSE(j.paired.has_value());
  EXPECT_TRUE(j.outcome.failures.empty());
  ASSERT_EQ(j.outcome.notes.size(), 1u);
  EXPECT_EQ(j.outcome.notes[0], "partial run: 10 of 1319 questions, 7/10 right; no gate, no baseline (bisect evidence)");
  EXPECT_EQ(Find(j.outcome, metric_names::kGate), nullptr);
  EXPECT_NE(Find(j.outcome, metric_names::kAccuracy), nullptr);
}

// The verdicts a judgement returns are the ones its metrics store and every reader reads
// back (MetricSet): pass, at-risk and fail gates, each paired verdict, and none at all.
TEST(JudgeGsm8k, TheStoredVerdictsAreTheJudgedOnes) {
  const auto baseline_report = ReportOf(1319, 1250);
  const Baseline baseline{"abc", 1, CaseStatus::kPass, baseline_report.samples};
  for (int64_t correct : {1319, 1300, 1250, 1200, 1100, 1000}) {
    const auto report = ReportOf(1319, correct);
    for (bool paired : {false, true}) {
      Gsm8kJudgeInputs in = InputsOf(report);
      if (paired) in.baseline = &baseline;
      const Gsm8kJudgement j = JudgeGsm8k(in);
      const MetricSet stored(j.outcome.metrics);
      EXPECT_EQ(stored.Gate(), j.gate) << correct;
      EXPECT_EQ(stored.Paired(), j.paired) << correct;
      EXPECT_EQ(j.paired.has_value(), paired);
    }
  }
  const auto partial = ReportOf(10, 7);
  Gsm8kJudgeInputs in = InputsOf(partial);
  in.partial_of = 1319;
  EXPECT_EQ(MetricSet(JudgeGsm8k(in).outcome.metrics).Gate(), std::nullopt);
}

TEST(JudgeGsm8k, AnInfrastructureErrorIsNeverASilentAccuracy) {
  auto report = ReportOf(1319, 1300);
  report.infra_error = Error{ExitCode::kInfra, "error rate 0.40 above max_error_rate 0.05"};
  const Gsm8kJudgement j = JudgeGsm8k(InputsOf(report));
  EXPECT_EQ(j.outcome.infra_error, "error rate 0.40 above max_error_rate 0.05");
  ASSERT_EQ(j.outcome.failures.size(), 1u);
  EXPECT_EQ(j.outcome.failures[0], "gsm8k: error rate 0.40 above max_error_rate 0.05");
  ASSERT_EQ(j.outcome.metrics.size(), 1u);
  EXPECT_EQ(j.outcome.metrics[0].name, metric_names::kErrorRate);
  EXPECT_FALSE(j.gate.has_value());
}

}  // namespace
}  // namespace harness
