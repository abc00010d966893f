// Verdicts for proportion metrics (DESIGN.md "Gate verdicts").
//
// Gate: PASS when the Wilson 95% interval lies at or above the gate, FAIL when it lies
// wholly below, AT-RISK when it straddles the gate; with the probability that a rerun of
// a model whose true rate is the observed one lands below the gate.
//
// Baseline: exact McNemar on per-question outcomes paired by sample key: REGRESSED or
// IMPROVED when p < alpha (direction from b vs c), SAME otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/results/results.h"
#include "harness/stats/stats.h"

namespace harness {

struct GateJudgement {
  GateVerdict verdict = GateVerdict::kFail;
  double gate = 0;
  int64_t correct = 0, n = 0;
  double accuracy = 0;
  Interval ci;
  double rerun_fail_probability = 1;   // P(X / n < gate), X ~ Binomial(n, accuracy)
};

// n = 0 (nothing answered) is FAIL with rerun probability 1.
GateJudgement JudgeGate(int64_t correct, int64_t n, double gate);

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
