#include "harness/eval/gsm8k_judge.h"

#include <fmt/format.h>

#include "harness/results/metric_names.h"
#include "harness/util/git.h"

namespace harness {
namespace {

void AddRate(CaseOutcome& out, const std::string& name, double value, int64_t n) {
  out.metrics.push_back({name, value, n, {}, {}});
}
void AddValue(CaseOutcome& out, const std::string& name, double value) { out.metrics.push_back({name, value, 0, {}, {}}); }

// What every run stores of a case: accuracy with its Wilson interval, the error, invalid and
// truncated rates, latency and throughput.
void AddSummaryMetrics(CaseOutcome& out, const Gsm8kEvalReport& report) {
  const EvalSummary& s = report.summary;
  out.metrics.push_back({metric_names::kAccuracy, s.accuracy, s.counts.answered(), s.accuracy_ci.low, s.accuracy_ci.high});
  AddRate(out, metric_names::kErrorRate, s.error_rate, report.questions);
  AddRate(out, metric_names::kInvalidRate, s.invalid_rate, report.questions);
  AddRate(out, metric_names::kTruncatedRate, s.truncated_rate, report.questions);
  AddValue(out, metric_names::kLatencyP50Seconds, s.latency_p50_s);
  AddValue(out, metric_names::kLatencyP90Seconds, s.latency_p90_s);
  AddValue(out, metric_names::kLatencyP99Seconds, s.latency_p99_s);
  AddValue(out, metric_names::kOutputTokensPerSecond, report.output_tokens_per_s);
}

std::string AccuracyText(const EvalSummary& s) {
  return fmt::format(
      "gsm8k accuracy {:.4f} ({}/{}, 95% CI [{:.4f}, {:.4f}]; invalid {:.1f}%, truncated {:.1f}%, errors {})",
      s.accuracy, s.counts.correct, s.counts.answered(), s.accuracy_ci.low, s.accuracy_ci.high, 100 * s.invalid_rate,
      100 * s.truncated_rate, s.counts.error);
}

// The gate: its verdict with how sure it is (from the reruns' spread when there are any),
// a failure when it fails the row's rule, else a note.
GateVerdict JudgeTheGate(const Gsm8kJudgeInputs& in, CaseOutcome& out) {
  const EvalSummary& s = in.report->summary;
  const GateJudgement gate = JudgeGate(s.counts.correct, s.counts.answered(), in.rule.gate);
  std::vector<double> run_accuracies = in.rerun_accuracies;
  run_accuracies.push_back(s.accuracy);
  // The verdict answers the question its reason states: the reruns' when there are any.
  const GateConfidence confidence = DescribeGateConfidence(gate, run_accuracies);
  const GateVerdict verdict = confidence.verdict;
  AddValue(out, metric_names::kGate, gate.gate);
  out.metrics.push_back(VerdictMetric(metric_names::kGateVerdict, verdict));
  AddValue(out, metric_names::kGateSampleFailProbability, gate.sample_fail_probability);
  if (confidence.question == FlakeQuestion::kRerunNoise)
    AddRate(out, metric_names::kGateRerunNoiseFailProbability, confidence.fail_probability, confidence.runs);
  const std::string gate_text = fmt::format("{} at gate {:.2f} ({})", Word(verdict), gate.gate, confidence.text);
  const bool gate_fails = verdict == GateVerdict::kFail || (verdict == GateVerdict::kAtRisk && in.rule.fail_at_risk);
  if (gate_fails) out.failures.push_back("gsm8k " + gate_text + ": " + AccuracyText(s));
  else out.notes.push_back(gate_text + ": " + AccuracyText(s));
  return verdict;
}

// The paired comparison with the baseline, question by question (exact McNemar).
BaselineVerdict JudgeThePairing(const Gsm8kJudgeInputs& in, CaseOutcome& out) {
  const Baseline& baseline = *in.baseline;
  const BaselineJudgement paired = CompareToBaseline(baseline.samples, in.report->samples, in.rule.alpha);
  out.metrics.push_back(VerdictMetric(metric_names::kBaselineVerdict, paired.verdict));
  AddRate(out, metric_names::kBaselinePaired, static_cast<double>(paired.paired), paired.paired);
  AddValue(out, metric_names::kMcNemarB, static_cast<double>(paired.test.b));
  AddValue(out, metric_names::kMcNemarC, static_cast<double>(paired.test.c));
  AddValue(out, metric_names::kMcNemarP, paired.test.p_value);
  AddValue(out, metric_names::kMcNemarMidP, paired.test.mid_p);
  const std::string paired_text = fmt::format(
      "{} vs baseline {} (run {}): losses b = {}, gains c = {} of {} paired questions, exact McNemar p = {:.3g}",
      Word(paired.verdict), ShortSha(baseline.sha), baseline.run_id, paired.test.b, paired.test.c, paired.paired,
      paired.test.p_value);
  if (paired.verdict == BaselineVerdict::kRegressed)
    out.failures.push_back("gsm8k " + paired_text + ": " + AccuracyText(in.report->summary));
  else out.notes.push_back(paired_text);
  return paired.verdict;
}

}  // namespace

Gsm8kJudgement JudgeGsm8k(const Gsm8kJudgeInputs& in) {
  Gsm8kJudgement j;
  const Gsm8kEvalReport& report = *in.report;
  const EvalSummary& s = report.summary;
  if (report.infra_error) {
    // Never a silent accuracy number: the case is an infrastructure error (exit 3).
    AddRate(j.outcome, metric_names::kErrorRate, s.error_rate, report.questions);
    j.outcome.infra_error = report.infra_error->message;
    j.outcome.failures.push_back("gsm8k: " + report.infra_error->message);
    return j;
  }
  AddSummaryMetrics(j.outcome, report);
  if (in.partial_of) {
    // A partial run is bisect evidence: its few questions, chosen for telling commits apart,
    // are no sample of the test set, so it is neither gated nor paired with a baseline.
    j.outcome.notes.push_back(
        fmt::format("partial run: {} of {} questions, {}/{} right; no gate, no baseline (bisect evidence)",
                    report.questions, *in.partial_of, s.counts.correct, s.counts.answered()));
    return j;
  }
  j.gate = JudgeTheGate(in, j.outcome);
  if (in.baseline) j.paired = JudgeThePairing(in, j.outcome);
  return j;
}

}  // namespace harness
