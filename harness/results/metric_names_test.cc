#include "harness/results/metric_names.h"

#include <set>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace harness {
namespace {

namespace m = metric_names;

// The names are stored and typed by users: databases written before this file hold these
// exact words, so a constant's value is pinned here, not only used.
TEST(MetricNames, AreTheStoredWords) {
  EXPECT_STREQ(m::kAccuracy, "accuracy");
  EXPECT_STREQ(m::kGate, "gate");
  EXPECT_STREQ(m::kGateVerdict, "gate_verdict");
  EXPECT_STREQ(m::kBaselineVerdict, "baseline_verdict");
  EXPECT_STREQ(m::kErrorRate, "error_rate");
  EXPECT_STREQ(m::kInvalidRate, "invalid_rate");
  EXPECT_STREQ(m::kTruncatedRate, "truncated_rate");
  EXPECT_STREQ(m::kLatencyP50Seconds, "latency_p50_s");
  EXPECT_STREQ(m::kLatencyP90Seconds, "latency_p90_s");
  EXPECT_STREQ(m::kLatencyP99Seconds, "latency_p99_s");
  EXPECT_STREQ(m::kOutputTokensPerSecond, "output_tokens_per_s");
  EXPECT_STREQ(m::kGateSampleFailProbability, "gate_sample_fail_probability");
  EXPECT_STREQ(m::kGateRerunNoiseFailProbability, "gate_rerun_noise_fail_probability");
  EXPECT_STREQ(m::kBaselinePaired, "baseline_paired");
  EXPECT_STREQ(m::kMcNemarB, "mcnemar_b");
  EXPECT_STREQ(m::kMcNemarC, "mcnemar_c");
  EXPECT_STREQ(m::kMcNemarP, "mcnemar_p");
  EXPECT_STREQ(m::kMcNemarMidP, "mcnemar_mid_p");
  EXPECT_STREQ(m::kSglangInvalid, "invalid");
  EXPECT_STREQ(m::kSglangLatencySeconds, "latency_s");
  EXPECT_STREQ(m::kSglangOutputThroughput, "output_throughput");
  EXPECT_STREQ(m::kEstTotalSeconds, "est_total_s");
  EXPECT_STREQ(m::kGemmMaxAbsError, "gemm_max_abs_error");
  EXPECT_STREQ(m::kGemmMaxRelError, "gemm_max_rel_error");
  EXPECT_STREQ(m::kGemmMaxBoundUse, "gemm_max_bound_use");
  EXPECT_STREQ(m::kBoundUseSuffix, "_bound_use");
  EXPECT_STREQ(m::kSelftestValue, "value");
  EXPECT_STREQ(m::kSelftestBaselineSamples, "baseline_samples");
}

TEST(MetricNames, TheKernelBoundIsATolerance) {
  EXPECT_TRUE(std::string_view(m::kGemmMaxBoundUse).ends_with(m::kBoundUseSuffix));
}

TEST(MetricNames, NoTwoMetricsShareAName) {
  const std::set<std::string> names = {
      m::kAccuracy, m::kGate, m::kGateVerdict, m::kBaselineVerdict, m::kErrorRate, m::kInvalidRate,
      m::kTruncatedRate, m::kLatencyP50Seconds, m::kLatencyP90Seconds, m::kLatencyP99Seconds,
      m::kOutputTokensPerSecond, m::kGateSampleFailProbability, m::kGateRerunNoiseFailProbability,
      m::kBaselinePaired, m::kMcNemarB, m::kMcNemarC, m::kMcNemarP, m::kMcNemarMidP, m::kSglangInvalid,
      m::kSglangLatencySeconds, m::kSglangOutputThroughput, m::kEstTotalSeconds, m::kGemmMaxAbsError,
      m::kGemmMaxRelError, m::kGemmMaxBoundUse, m::kSelftestValue, m::kSelftestBaselineSamples};
  EXPECT_EQ(names.size(), 27u);
}

}  // namespace
}  // namespace harness
