// The names of the metrics the harness writes and reads. A name is stored (metrics.name),
// asked for by users (`history --metric`, `bisect --metric gsm8k/accuracy`, a suite's
// headline_metric) and printed in reports, so it is part of the database format: renaming
// one here orphans every stored result. Shipped migrations keep their own copies.
#pragma once

namespace harness::metric_names {

// GSM8K-style evals (suites/gsm8k.cc, ingested sglang and lm-eval results; docs/gsm8k.md).
// accuracy is the proportion correct of the questions answered, with n and its 95% Wilson
// interval as low/high; higher is better, so it is the metric unpaired checks compare.
inline constexpr char kAccuracy[] = "accuracy";
inline constexpr char kGate[] = "gate";                          // the accuracy the verdict was judged against
inline constexpr char kGateVerdict[] = "gate_verdict";           // GateVerdict: code as value, word as label
inline constexpr char kBaselineVerdict[] = "baseline_verdict";   // BaselineVerdict: code as value, word as label
inline constexpr char kErrorRate[] = "error_rate";
inline constexpr char kInvalidRate[] = "invalid_rate";
inline constexpr char kTruncatedRate[] = "truncated_rate";
inline constexpr char kLatencyP50Seconds[] = "latency_p50_s";
inline constexpr char kLatencyP90Seconds[] = "latency_p90_s";
inline constexpr char kLatencyP99Seconds[] = "latency_p99_s";
inline constexpr char kOutputTokensPerSecond[] = "output_tokens_per_s";
inline constexpr char kGateSampleFailProbability[] = "gate_sample_fail_probability";
inline constexpr char kGateRerunNoiseFailProbability[] = "gate_rerun_noise_fail_probability";
inline constexpr char kBaselinePaired[] = "baseline_paired";
inline constexpr char kMcNemarB[] = "mcnemar_b";
inline constexpr char kMcNemarC[] = "mcnemar_c";
inline constexpr char kMcNemarP[] = "mcnemar_p";
inline constexpr char kMcNemarMidP[] = "mcnemar_mid_p";

// sglang's GSM8K result line as ingested (docs/ingest.md): its invalid rate, latency and
// throughput under names of their own.
inline constexpr char kSglangInvalid[] = "invalid";
inline constexpr char kSglangLatencySeconds[] = "latency_s";
inline constexpr char kSglangOutputThroughput[] = "output_throughput";

// Compile suites and ingested TensorCast tables: the performance table's total time.
inline constexpr char kEstTotalSeconds[] = "est_total_s";

// fp8_scale_layout (docs/kernels.md): the block-scaled GEMM against fp32.
inline constexpr char kGemmMaxAbsError[] = "gemm_max_abs_error";
inline constexpr char kGemmMaxRelError[] = "gemm_max_rel_error";
inline constexpr char kGemmMaxBoundUse[] = "gemm_max_bound_use";
// A metric whose name ends so is a tolerance: the share of its error bound used, failing
// above 1 (reports chart it and rank how near it is; docs/report.md).
inline constexpr char kBoundUseSuffix[] = "_bound_use";

// The selftest suite (suites/selftest_suite.cc): the row's value, and the number of
// baseline samples it saw (-1: no baseline).
inline constexpr char kSelftestValue[] = "value";
inline constexpr char kSelftestBaselineSamples[] = "baseline_samples";

}  // namespace harness::metric_names
