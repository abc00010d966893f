// Row-wise layers of the reference stack: RMSNorm and SwiGLU, fp32 on CPU.
#pragma once

#include <cstdint>

#include "harness/util/error.h"
#include "runners/refstack/kernels/tensor.h"

namespace harness::kernels {

// y[m, k] = x[m, k] / sqrt(mean_k(x[m, :]^2) + eps) * weight[k]; x is [M, K], weight [K].
Result<FloatTensor> RmsNorm(const FloatTensor& x, const FloatTensor& weight, float eps);

// SwiGLU over the last dimension split in halves (gate first, then up, as torch's
// chunk(2, -1)): x [M, 2H] -> y[m, h] = silu(x[m, h]) * x[m, H + h].
Result<FloatTensor> Swiglu(const FloatTensor& x);

// The row kernel both RmsNorm and the fused RMSNorm + FP8 quant use, so the two give
// bit-identical normalized values. x, weight and out hold k floats.
void RmsNormRow(const float* x, const float* weight, int64_t k, float eps, float* out);

}  // namespace harness::kernels
