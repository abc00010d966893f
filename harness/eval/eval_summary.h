// The summary of one eval case's per-question samples: outcome counts, accuracy with its
// Wilson interval, error/invalid/truncated rates, latency percentiles and throughput.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/results/results.h"
#include "harness/stats/stats.h"

namespace harness {

// Counts of GSM8K's five outcomes (docs/gsm8k.md). Accuracy is over the
// answered questions (all but error); the three rates are over all questions.
struct OutcomeCounts {
  int64_t correct = 0, wrong = 0, invalid = 0, truncated = 0, error = 0;
  int64_t total() const { return correct + wrong + invalid + truncated + error; }
  int64_t answered() const { return total() - error; }
};

struct EvalSummary {
  OutcomeCounts counts;
  double accuracy = 0;        // correct / answered (0 when nothing was answered)
  Interval accuracy_ci;       // Wilson 95%
  double invalid_rate = 0, truncated_rate = 0, error_rate = 0;
  double latency_p50_s = 0, latency_p90_s = 0, latency_p99_s = 0;   // over answered samples
  int64_t output_tokens = 0;  // completion tokens over answered samples
};

// Summarises per-question samples whose outcome is one of GSM8K's five; a sample with a
// test's pass or fail is an error in the caller and is counted as error.
EvalSummary SummarizeSamples(const std::vector<Sample>& samples);

// Output tokens per second of wall time (0 when no time passed).
double TokensPerSecond(int64_t tokens, double wall_seconds);

}  // namespace harness
