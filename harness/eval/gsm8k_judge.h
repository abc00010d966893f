// The verdicts of a GSM8K case as a pure function: from this run's eval report, the
// baseline's samples and the earlier reruns' accuracies, the metrics the store keeps (the
// verdicts among them as words: gate_verdict PASS / AT-RISK / FAIL, baseline_verdict
// REGRESSED / IMPROVED / SAME), the notes and failure lines a person reads, and the two
// verdicts as values (docs/gsm8k.md, "Statistics and verdicts"). The gsm8k suite runs the eval and hands its
// report here; nothing in it reads the store or GoogleTest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/eval/gsm8k_eval.h"
#include "harness/results/results.h"
#include "harness/stats/verdict.h"

namespace harness {

// The suite row's rule: the gate, whether AT-RISK fails the case, the paired test's alpha.
struct Gsm8kRule {
  double gate = 0;
  bool fail_at_risk = false;
  double alpha = kDefaultAlpha;
};

struct Gsm8kJudgeInputs {
  const Gsm8kEvalReport* report = nullptr;   // this run's eval: summary and samples
  // A partial run (--questions): the size of the test set its questions come from. Set,
  // the case gets no gate and no baseline (bisect evidence, docs/gsm8k.md "Partial runs").
  std::optional<int64_t> partial_of;
  const Baseline* baseline = nullptr;        // the stored result it pairs with; none: no pairing
  std::vector<double> rerun_accuracies;      // the case's earlier reruns at this commit, oldest first
  Gsm8kRule rule;
};

struct Gsm8kJudgement {
  CaseOutcome outcome;
  std::optional<GateVerdict> gate;           // none: a partial run or an infrastructure error
  std::optional<BaselineVerdict> paired;     // none: nothing to pair with
};

Gsm8kJudgement JudgeGsm8k(const Gsm8kJudgeInputs& in);

}  // namespace harness
