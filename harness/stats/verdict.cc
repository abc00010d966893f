#include "harness/stats/verdict.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

namespace harness {

GateJudgement JudgeGate(int64_t correct, int64_t n, double gate) {
  GateJudgement j;
  j.gate = gate;
  j.correct = correct;
  j.n = n;
  if (n <= 0) return j;
  j.accuracy = static_cast<double>(correct) / static_cast<double>(n);
  j.ci = WilsonInterval(correct, n);
  if (j.ci.low >= gate) {
    j.verdict = GateVerdict::kPass;
  } else if (j.ci.high < gate) {
    j.verdict = GateVerdict::kFail;
  } else {
    j.verdict = GateVerdict::kAtRisk;
  }
  // A rerun fails when X / n < gate, i.e. X <= ceil(gate * n) - 1. The epsilon keeps an
  // exact product (0.5 * 100) from rounding up past itself.
  const auto first_passing = static_cast<int64_t>(std::ceil(gate * static_cast<double>(n) - 1e-9));
  j.sample_fail_probability = BinomialCdf(first_passing - 1, n, j.accuracy);
  return j;
}

namespace {

// Where the interval lies against the gate, in the words the verdict stands for.
const char* IntervalRelation(GateVerdict v) {
  switch (v) {
    case GateVerdict::kPass: return "lies at or above";
    case GateVerdict::kAtRisk: return "straddles";
    case GateVerdict::kFail: break;
  }
  return "lies below";
}

// The probability as the text states it: the verdict is decided on this number, so a
// p printed as 0.025 is never a PASS.
double Stated(double p) { return std::round(p * 1000) / 1000; }

}  // namespace

GateConfidence DescribeGateConfidence(const GateJudgement& gate, const std::vector<double>& run_accuracies) {
  GateConfidence c;
  c.runs = std::max<int64_t>(1, static_cast<int64_t>(run_accuracies.size()));
  if (run_accuracies.size() >= 2) {
    const FalseVerdictEstimate e = RerunNoiseEstimate(run_accuracies, gate.gate);
    c.question = FlakeQuestion::kRerunNoise;
    // e.probability is of the other side of the gate than the runs' mean.
    const bool above = e.center >= gate.gate;
    c.fail_probability = above ? e.probability : 1 - e.probability;
    const double other_side = Stated(e.probability);
    c.verdict = other_side >= kAtRiskProbability ? GateVerdict::kAtRisk : above ? GateVerdict::kPass : GateVerdict::kFail;
    c.text = fmt::format("rerun noise over {} runs of this commit (mean {:.4f}, sd {:.4f}): another rerun {} the gate "
                         "with p = {:.3f}",
                         c.runs, e.center, e.sigma, above ? "fails" : "passes", other_side);
    return c;
  }
  c.verdict = gate.verdict;
  c.question = FlakeQuestion::kTrueRate;
  c.fail_probability = gate.sample_fail_probability;
  c.text = fmt::format("sampling question: the 95% interval [{:.4f}, {:.4f}] of {}/{} {} the gate; a fresh sample of "
                       "{} questions at a true rate of {:.4f} fails it with p = {:.3f}; no reruns stored, so run-to-run "
                       "noise is not measured",
                       gate.ci.low, gate.ci.high, gate.correct, gate.n, IntervalRelation(gate.verdict), gate.n,
                       gate.accuracy, c.fail_probability);
  return c;
}

BaselineJudgement JudgeMcNemar(int64_t b, int64_t c, int64_t paired, double alpha) {
  BaselineJudgement j;
  j.paired = paired;
  j.test = ExactMcNemar(b, c);
  if (paired > 0) j.accuracy_delta = static_cast<double>(c - b) / static_cast<double>(paired);
  if (j.test.p_value < alpha && b != c)
    j.verdict = b > c ? BaselineVerdict::kRegressed : BaselineVerdict::kImproved;
  return j;
}

BaselineJudgement CompareToBaseline(const std::vector<Sample>& baseline, const std::vector<Sample>& current,
                                    double alpha) {
  std::unordered_map<std::string, const Sample*> before;
  for (const auto& s : baseline) before[s.key] = &s;
  std::unordered_map<std::string, const Sample*> now;
  for (const auto& s : current) now[s.key] = &s;
  int64_t paired = 0, b = 0, c = 0;
  for (const auto& [key, s] : now) {
    const auto it = before.find(key);
    if (it == before.end()) continue;
    const SampleOutcome base = it->second->outcome, cur = s->outcome;
    if (base == SampleOutcome::kError || cur == SampleOutcome::kError) continue;
    ++paired;
    const bool was = IsSuccess(base), is = IsSuccess(cur);
    if (was && !is) ++b;
    if (!was && is) ++c;
  }
  return JudgeMcNemar(b, c, paired, alpha);
}

}  // namespace harness
