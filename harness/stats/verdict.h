// Verdicts for proportion metrics (docs/gsm8k.md, "Statistics and verdicts").
//
// Gate: PASS when the Wilson 95% interval lies at or above the gate, FAIL when it lies
// wholly below, AT-RISK when it straddles the gate; with how sure that is, naming the
// question the number answers (rerun noise from stored reruns, else the sampling question:
// a fresh sample of n questions at the observed rate scoring below the gate).
//
// Baseline: exact McNemar on per-question outcomes paired by sample key: REGRESSED or
// IMPROVED when p < alpha (direction from b vs c), SAME otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/results/results.h"
#include "harness/stats/false_verdict.h"
#include "harness/stats/stats.h"

namespace harness {

struct GateJudgement {
  GateVerdict verdict = GateVerdict::kFail;
  double gate = 0;
  int64_t correct = 0, n = 0;
  double accuracy = 0;
  Interval ci;
  // The sampling (true-rate) question: were the model's true accuracy the observed one, a
  // fresh sample of n questions would score below the gate with this probability:
  // P(X / n < gate), X ~ Binomial(n, accuracy). It says nothing of rerunning the same
  // questions (a deterministic server never flips); that is RerunNoiseEstimate's question.
  double sample_fail_probability = 1;
};

// n = 0 (nothing answered) is FAIL with sample_fail_probability 1.
GateJudgement JudgeGate(int64_t correct, int64_t n, double gate);

// How sure a gate verdict is, and which question the number answers (false_verdict.h):
// with k >= 2 runs of the commit (this one and its stored reruns of the same identity) the
// chance that another rerun fails the gate, from their spread (rerun noise); with fewer,
// the chance that a fresh sample of n questions at the observed rate fails it (the
// sampling question, which a deterministic server's reruns never show).
struct GateConfidence {
  // The case's gate verdict, decided by the question the text answers (so the word and its
  // reason cannot disagree): with reruns, the side of the gate the runs' mean lies on,
  // AT-RISK when the stated probability of another rerun landing on the other side is at
  // least kAtRiskProbability; without, the Wilson interval of this run (JudgeGate).
  GateVerdict verdict = GateVerdict::kFail;
  FlakeQuestion question = FlakeQuestion::kTrueRate;
  double fail_probability = 0;   // of the next rerun, or of a fresh sample, scoring below the gate
  int64_t runs = 1;              // runs of this commit behind it
  std::string text;              // for the run's summary and JUnit
};

// A rerun lands on the other side of the gate with at least this probability (as stated, to
// three decimals): the verdict is AT-RISK. One-sided 2.5 %, the tail a 95 % interval leaves.
constexpr double kAtRiskProbability = 0.025;

// run_accuracies: the accuracy of every run of this commit and identity, this one last.
GateConfidence DescribeGateConfidence(const GateJudgement& gate, const std::vector<double>& run_accuracies);

constexpr double kDefaultAlpha = 0.05;

struct BaselineJudgement {
  BaselineVerdict verdict = BaselineVerdict::kSame;
  int64_t paired = 0;          // questions with an answer in both runs
  McNemarTest test;            // b = losses, c = gains
  double accuracy_delta = 0;   // (c - b) / paired
};

BaselineJudgement JudgeMcNemar(int64_t b, int64_t c, int64_t paired, double alpha = kDefaultAlpha);

// Pairs two runs' samples by key. A sample counts as a success when its outcome is
// "correct" or "pass"; a key that is missing or has outcome "error" on either side is
// left out (it says nothing about the model). Duplicated keys keep the last sample.
BaselineJudgement CompareToBaseline(const std::vector<Sample>& baseline, const std::vector<Sample>& current,
                                    double alpha = kDefaultAlpha);

}  // namespace harness
