// The fp8_scale_layout suite: the layout contract between the fused RMSNorm + FP8
// group-quant producer and the block-scaled FP8 GEMM (regression 3 in golden/regressions.json;
// docs/kernels.md). With transpose_scale=true the kernel writes its scales column-major
// but returns row-major-looking metadata; the producer repairs that with a zero-copy
// strided view. The fault switch fp8-scale-unrepaired skips the repair: the M=64 cases
// fail naming the strides, the M=1 cases pass because at one row the layouts coincide.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "harness/results/metric_names.h"
#include "harness/run/case_record.h"
#include "harness/run/suite.h"
#include "runners/refstack/kernels/fp8_error.h"
#include "runners/refstack/kernels/fp8_quant.h"
#include "runners/refstack/kernels/gemm.h"
#include "runners/refstack/kernels/layers.h"
#include "runners/refstack/kernels/random_tensor.h"
#include "runners/refstack/kernels/row_error.h"

namespace harness {
namespace {

using kernels::FloatTensor;
using kernels::FormatShape;
using kernels::FormatStrides;

// The RMSNorm gains are log-normal per channel, like trained norms, so scale groups
// differ and a scale read from the wrong slot changes values.
constexpr float kGainSigma = 0.5f;

template <class T>
std::string Difference(const kernels::Tensor<T>& a, const kernels::Tensor<T>& b) {
  return kernels::FirstDifference(a, b).value_or("");
}

struct GemmCheck {
  double max_abs_error = 0;
  double max_bound_use = 0;  // max |error| / bound
  int64_t violations = 0;
  std::string first_violation;
};

GemmCheck CheckAgainstBound(const FloatTensor& y, const FloatTensor& ref, const FloatTensor& bound) {
  GemmCheck c;
  for (int64_t i = 0; i < y.size(0); ++i)
    for (int64_t j = 0; j < y.size(1); ++j) {
      const double err = std::fabs(double(y.At(i, j)) - ref.At(i, j));
      c.max_abs_error = std::max(c.max_abs_error, err);
      c.max_bound_use = std::max(c.max_bound_use, err / bound.At(i, j));
      if (err <= bound.At(i, j)) continue;
      if (c.violations++ == 0)
        c.first_violation = fmt::format("y[{}, {}] = {} vs fp32 {} (|error| {:.3g} > bound {:.3g})", i, j, y.At(i, j),
                                        ref.At(i, j), err, bound.At(i, j));
    }
  return c;
}

class Fp8ScaleLayout : public SuiteTest {};

TEST_P(Fp8ScaleLayout, test_transposed_scale_matches_bpreshuffle_layout_contract) {
  const RunContext& run = Context();
  if (run.stack == nullptr || !run.stack->RunsReferenceKernels())
    GTEST_SKIP() << "fp8_scale_layout drives the reference stack's kernels directly; stack '" << run.stack_config.stack
                 << "' brings its kernel results in with `harness ingest`";
  const JsonObject p = Param();
  const int64_t m = Need(p.Int("m")), k = Need(p.Int("k")), n = Need(p.Int("n"));
  const int64_t group = Need(p.Int("group_size"));
  const float eps = static_cast<float>(Need(p.Number("eps")));
  const auto seed = static_cast<uint64_t>(Need(p.Int("seed")));
  const bool unrepaired = run.stack_config.HasFault("fp8-scale-unrepaired");

  const FloatTensor x = kernels::RandomBf16Normal({m, k}, seed);
  const FloatTensor gain = kernels::RandomBf16LogNormal({k}, seed + 1, kGainSigma);
  const FloatTensor w = kernels::RandomBf16Normal({k, n}, seed + 2, 1.0f / std::sqrt(static_cast<float>(k)));

  const auto row_major = Need(kernels::FusedRmsFp8GroupQuant(x, gain, eps, group, /*transpose_scale=*/false));
  const auto transposed = Need(kernels::FusedRmsFp8GroupQuant(x, gain, eps, group, /*transpose_scale=*/true));
  // The producer step the GEMM path runs; the fault passes the kernel's metadata on.
  const FloatTensor repaired = Need(kernels::RepairProducerScale(transposed.scale, unrepaired));
  const FloatTensor materialized = Need(kernels::MaterializeScale(repaired));

  EXPECT_EQ(Difference(transposed.q, row_major.q), "") << "q differs between transpose_scale=true and false";
  const kernels::Shape expected_strides{1, m};
  EXPECT_TRUE(kernels::SameLayout(repaired.shape(), repaired.strides(), expected_strides))
      << fmt::format("fp8 scale layout: expected strides {} for shape {}, got {}: transpose_scale=true stores the "
                     "scales column-major ([G][M]), so the producer must hand the GEMM strides (1, M)",
                     FormatStrides(expected_strides), FormatShape(repaired.shape()), FormatStrides(repaired.strides()));
  EXPECT_EQ(Difference(repaired, row_major.scale), "") << "the repaired scale differs from the row-major scale";
  EXPECT_TRUE(repaired.SharesStorageWith(transposed.scale) && repaired.data_ptr() == transposed.scale.data_ptr())
      << "the repaired scale is not a view of the producer's output (a copy, or another offset)";
  EXPECT_TRUE(materialized.IsContiguous()) << "materialized scale: " << materialized.Describe();
  EXPECT_EQ(Difference(materialized, row_major.scale), "") << "the materialized scale differs from the row-major scale";

  const auto wq = Need(kernels::QuantizeFp8Blocks(w, group));
  const FloatTensor y_row = Need(kernels::Fp8BlockScaledGemm(row_major.q, row_major.scale, wq.q, wq.scale));
  const FloatTensor y_producer = Need(kernels::Fp8BlockScaledGemm(transposed.q, repaired, wq.q, wq.scale));
  EXPECT_EQ(Difference(y_producer, y_row), "") << "the block-scaled GEMM differs between the two scale layouts";

  const FloatTensor normalized = Need(kernels::RmsNorm(x, gain, eps));
  const FloatTensor ref = Need(kernels::GemmF32(normalized, w));
  const FloatTensor bound = Need(kernels::Fp8GemmErrorBound(normalized, row_major.scale, w, wq.scale));
  for (const auto& [path, y] : {std::pair{"row-major", &y_row}, std::pair{"producer", &y_producer}}) {
    const GemmCheck c = CheckAgainstBound(*y, ref, bound);
    EXPECT_EQ(c.violations, 0) << "FP8 GEMM (" << path << " scales) outside the documented FP8 error bound at "
                               << c.violations << " of " << y->numel() << " elements; first: " << c.first_violation;
  }

  // Metrics of the path the stack actually runs (the producer's scales).
  const GemmCheck producer = CheckAgainstBound(y_producer, ref, bound);
  double max_rel = 0;
  for (double e : kernels::RowRelativeErrors(y_producer, ref)) max_rel = std::max(max_rel, e);
  CaseRecord& rec = Record();
  rec.AddMetric({metric_names::kGemmMaxAbsError, producer.max_abs_error, 0, std::nullopt, std::nullopt});
  rec.AddMetric({metric_names::kGemmMaxRelError, max_rel, 0, std::nullopt, std::nullopt});
  rec.AddMetric({metric_names::kGemmMaxBoundUse, producer.max_bound_use, 0, std::nullopt, std::nullopt});
}

HARNESS_INSTANTIATE(fp8_scale_layout, Fp8ScaleLayout, test_transposed_scale_matches_bpreshuffle_layout_contract);

}  // namespace
}  // namespace harness
