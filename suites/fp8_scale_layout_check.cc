#include "suites/fp8_scale_layout_check.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "harness/results/metric_names.h"
#include "harness/util/error.h"
#include "runners/refstack/kernels/fp8_error.h"
#include "runners/refstack/kernels/gemm.h"
#include "runners/refstack/kernels/layers.h"
#include "runners/refstack/kernels/random_tensor.h"
#include "runners/refstack/kernels/row_error.h"

namespace harness {
namespace {

using kernels::FloatTensor;

constexpr float kGainSigma = 0.5f;

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

// Where two tensors should be bit-identical: the failure line when they are not, and a note
// naming the first element that differs (what GoogleTest printed beside it before).
template <class T>
void ExpectIdentical(const kernels::Tensor<T>& a, const kernels::Tensor<T>& b, const std::string& failure,
                     const std::string& what, CaseOutcome& outcome) {
  const auto difference = kernels::FirstDifference(a, b);
  if (!difference) return;
  outcome.failures.push_back(failure);
  outcome.notes.push_back(fmt::format("first difference, {}: {}", what, *difference));
}

// The producer's scale against the row-major one: the contract's layout half.
void CheckScales(const ScaleLayoutRow& row, const ScaleLayoutRun& run, CaseOutcome& outcome) {
  ExpectIdentical(run.transposed.q, run.row_major.q, "q differs between transpose_scale=true and false",
                  "q (transpose_scale=true vs false)", outcome);
  const kernels::Shape expected_strides{1, row.m};
  const FloatTensor& repaired = run.repaired;
  if (!kernels::SameLayout(repaired.shape(), repaired.strides(), expected_strides))
    outcome.failures.push_back(
        fmt::format("fp8 scale layout: expected strides {} for shape {}, got {}: transpose_scale=true stores the "
                    "scales column-major ([G][M]), so the producer must hand the GEMM strides (1, M)",
                    kernels::FormatStrides(expected_strides), kernels::FormatShape(repaired.shape()),
                    kernels::FormatStrides(repaired.strides())));
  ExpectIdentical(repaired, run.row_major.scale, "the repaired scale differs from the row-major scale",
                  "repaired vs row-major scale", outcome);
  if (!(repaired.SharesStorageWith(run.transposed.scale) && repaired.data_ptr() == run.transposed.scale.data_ptr()))
    outcome.failures.push_back("the repaired scale is not a view of the producer's output (a copy, or another offset)");
  if (!run.materialized.IsContiguous())
    outcome.failures.push_back("materialized scale: " + run.materialized.Describe());
  ExpectIdentical(run.materialized, run.row_major.scale, "the materialized scale differs from the row-major scale",
                  "materialized vs row-major scale", outcome);
}

}  // namespace

ScaleLayoutRun RunScaleLayout(const ScaleLayoutRow& row, bool scale_unrepaired) {
  const FloatTensor x = kernels::RandomBf16Normal({row.m, row.k}, row.seed);
  const FloatTensor gain = kernels::RandomBf16LogNormal({row.k}, row.seed + 1, kGainSigma);
  const FloatTensor w =
      kernels::RandomBf16Normal({row.k, row.n}, row.seed + 2, 1.0f / std::sqrt(static_cast<float>(row.k)));
  ScaleLayoutRun run;
  run.row_major = ValueOrThrow(kernels::FusedRmsFp8GroupQuant(x, gain, row.eps, row.group_size, /*transpose_scale=*/false));
  run.transposed = ValueOrThrow(kernels::FusedRmsFp8GroupQuant(x, gain, row.eps, row.group_size, /*transpose_scale=*/true));
  // The producer step the GEMM path runs; the fault passes the kernel's metadata on.
  run.repaired = ValueOrThrow(kernels::RepairProducerScale(run.transposed.scale, scale_unrepaired));
  run.materialized = ValueOrThrow(kernels::MaterializeScale(run.repaired));
  const auto wq = ValueOrThrow(kernels::QuantizeFp8Blocks(w, row.group_size));
  run.y_row = ValueOrThrow(kernels::Fp8BlockScaledGemm(run.row_major.q, run.row_major.scale, wq.q, wq.scale));
  run.y_producer = ValueOrThrow(kernels::Fp8BlockScaledGemm(run.transposed.q, run.repaired, wq.q, wq.scale));
  const FloatTensor normalized = ValueOrThrow(kernels::RmsNorm(x, gain, row.eps));
  run.ref = ValueOrThrow(kernels::GemmF32(normalized, w));
  run.bound = ValueOrThrow(kernels::Fp8GemmErrorBound(normalized, run.row_major.scale, w, wq.scale));
  return run;
}

CaseOutcome CheckScaleLayout(const ScaleLayoutRow& row, const ScaleLayoutRun& run) {
  CaseOutcome outcome;
  CheckScales(row, run, outcome);
  ExpectIdentical(run.y_producer, run.y_row, "the block-scaled GEMM differs between the two scale layouts",
                  "GEMM with the producer's vs the row-major scale", outcome);
  for (const auto& [path, y] : {std::pair{"row-major", &run.y_row}, std::pair{"producer", &run.y_producer}}) {
    const GemmCheck c = CheckAgainstBound(*y, run.ref, run.bound);
    if (c.violations != 0)
      outcome.failures.push_back(fmt::format(
          "FP8 GEMM ({} scales) outside the documented FP8 error bound at {} of {} elements; first: {}", path,
          c.violations, y->numel(), c.first_violation));
  }
  // Metrics of the path the stack actually runs (the producer's scales).
  const GemmCheck producer = CheckAgainstBound(run.y_producer, run.ref, run.bound);
  double max_rel = 0;
  for (double e : kernels::RowRelativeErrors(run.y_producer, run.ref)) max_rel = std::max(max_rel, e);
  outcome.metrics.push_back({metric_names::kGemmMaxAbsError, producer.max_abs_error, 0, std::nullopt, std::nullopt});
  outcome.metrics.push_back({metric_names::kGemmMaxRelError, max_rel, 0, std::nullopt, std::nullopt});
  outcome.metrics.push_back({metric_names::kGemmMaxBoundUse, producer.max_bound_use, 0, std::nullopt, std::nullopt});
  return outcome;
}

}  // namespace harness
