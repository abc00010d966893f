// The fp8_scale_layout suite's measurement and decision (regression 3 in
// golden/regressions.json; docs/kernels.md): the layout contract between the fused RMSNorm +
// FP8 group-quant producer and the block-scaled FP8 GEMM. RunScaleLayout drives one row
// through the reference kernels; CheckScaleLayout, a pure function of what they gave,
// decides whether the contract held. The suite body (suites/fp8_scale_layout.cc) reads the
// row, runs it and reports the outcome.
#pragma once

#include <cstdint>

#include "harness/results/results.h"
#include "runners/refstack/kernels/fp8_quant.h"
#include "runners/refstack/kernels/tensor.h"

namespace harness {

// One row of suites/fp8_scale_layout.json: x is [m, k] and w [k, n], both drawn from seed.
struct ScaleLayoutRow {
  int64_t m = 0, k = 0, n = 0;
  int64_t group_size = 0;
  float eps = 0;
  uint64_t seed = 0;
};

// What the kernels gave for one row.
struct ScaleLayoutRun {
  kernels::Fp8Quantized row_major;    // the producer kernel with transpose_scale=false
  kernels::Fp8Quantized transposed;   // with transpose_scale=true, metadata as the kernel returns it
  kernels::FloatTensor repaired;      // the scale the producer hands the GEMM
  kernels::FloatTensor materialized;  // its row-major copy
  kernels::FloatTensor y_row;         // the block-scaled GEMM with the row-major scale
  kernels::FloatTensor y_producer;    // with the producer's (repaired) scale
  kernels::FloatTensor ref;           // the fp32 GEMM of the normalized input
  kernels::FloatTensor bound;         // the documented FP8 error bound of each element of y
};

// Runs the row through the reference kernels: the RMSNorm gains are log-normal per channel,
// like trained norms, so scale groups differ and a scale read from the wrong slot changes
// values. scale_unrepaired is the fault switch fp8-scale-unrepaired (the producer passes
// the kernel's metadata on). A kernel's error throws FatalError with the kernel's message
// (the case fails with it, as a suite's Need does).
ScaleLayoutRun RunScaleLayout(const ScaleLayoutRow& row, bool scale_unrepaired);

// One failure line per broken part of the contract: q equal for both layouts, the repaired
// scale a zero-copy view with strides (1, m) equal to the row-major scale, its materialized
// copy row-major and equal, the GEMM equal for both layouts and within the FP8 error bound
// on both paths. Where two tensors differ, a note names the first element that does. The
// metrics are those of the path the stack runs (the producer's scale): the GEMM's largest
// absolute and row-relative error and its largest use of the bound.
CaseOutcome CheckScaleLayout(const ScaleLayoutRow& row, const ScaleLayoutRun& run);

}  // namespace harness
