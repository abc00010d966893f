#include "harness/eval/eval_summary.h"

namespace harness {

EvalSummary SummarizeSamples(const std::vector<Sample>& samples) {
  EvalSummary s;
  std::vector<double> latencies;
  latencies.reserve(samples.size());
  for (const auto& sample : samples) {
    // A test's pass or fail is not a GSM8K answer: counted as error, as the header says.
    bool answered = true;
    switch (sample.outcome) {
      case SampleOutcome::kCorrect: ++s.counts.correct; break;
      case SampleOutcome::kWrong: ++s.counts.wrong; break;
      case SampleOutcome::kInvalid: ++s.counts.invalid; break;
      case SampleOutcome::kTruncated: ++s.counts.truncated; break;
      case SampleOutcome::kError:
      case SampleOutcome::kPass:
      case SampleOutcome::kFail:
        ++s.counts.error;
        answered = false;
        break;
    }
    if (answered) {
      latencies.push_back(sample.latency_s);
      s.output_tokens += sample.tokens;
    }
  }
  const int64_t answered = s.counts.answered();
  const auto total = static_cast<double>(s.counts.total());
  if (answered > 0) s.accuracy = static_cast<double>(s.counts.correct) / static_cast<double>(answered);
  s.accuracy_ci = WilsonInterval(s.counts.correct, answered);
  if (total > 0) {
    s.invalid_rate = static_cast<double>(s.counts.invalid) / total;
    s.truncated_rate = static_cast<double>(s.counts.truncated) / total;
    s.error_rate = static_cast<double>(s.counts.error) / total;
  }
  s.latency_p50_s = Quantile(latencies, 0.50);
  s.latency_p90_s = Quantile(latencies, 0.90);
  s.latency_p99_s = Quantile(latencies, 0.99);
  return s;
}

double TokensPerSecond(int64_t tokens, double wall_seconds) {
  return wall_seconds > 0 ? static_cast<double>(tokens) / wall_seconds : 0;
}

}  // namespace harness
