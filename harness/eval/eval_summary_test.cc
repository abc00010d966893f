#include "harness/eval/eval_summary.h"

#include <string>

#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(SummarizeSamples, AccuracyOverAnsweredRatesOverAll) {
  std::vector<Sample> samples;
  auto add = [&](const char* outcome, int count, double latency, int64_t tokens) {
    for (int i = 0; i < count; ++i)
      samples.push_back(
          {std::to_string(samples.size()), ParseSampleOutcome(outcome).value(), "1", "1", latency, tokens});
  };
  add("correct", 90, 1.0, 10);
  add("wrong", 4, 2.0, 10);
  add("invalid", 3, 3.0, 10);
  add("truncated", 2, 4.0, 100);
  add("error", 1, 99.0, 0);
  auto s = SummarizeSamples(samples);
  EXPECT_EQ(s.counts.total(), 100);
  EXPECT_EQ(s.counts.answered(), 99);
  EXPECT_DOUBLE_EQ(s.accuracy, 90.0 / 99.0);
  EXPECT_DOUBLE_EQ(s.invalid_rate, 0.03);
  EXPECT_DOUBLE_EQ(s.truncated_rate, 0.02);
  EXPECT_DOUBLE_EQ(s.error_rate, 0.01);
  EXPECT_DOUBLE_EQ(s.latency_p50_s, 1.0);   // the error's 99 s latency is not a served latency
  EXPECT_NEAR(s.latency_p99_s, 4.0, 1e-12);
  EXPECT_EQ(s.output_tokens, 97 * 10 + 2 * 100);
  auto ci = WilsonInterval(90, 99);
  EXPECT_DOUBLE_EQ(s.accuracy_ci.low, ci.low);
  EXPECT_DOUBLE_EQ(TokensPerSecond(500, 2.0), 250.0);
  EXPECT_EQ(TokensPerSecond(500, 0), 0);
}

}  // namespace
}  // namespace harness
