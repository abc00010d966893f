// MXFP4 (OCP Microscaling): blocks of 32 consecutive values along the last dimension
// share one e8m0 scale; each value is fp4 e2m1. Scale rule (OCP MX v1.0):
// X = 2^(floor(log2(amax)) - 2), 2 being e2m1's largest exponent, so amax / X lies in
// [4, 8) and the top of that range saturates to 6.
#pragma once

#include <cstdint>

#include "harness/util/error.h"
#include "runners/refstack/kernels/tensor.h"

namespace harness::kernels {

inline constexpr int64_t kMxfp4Block = 32;

struct Mxfp4Quantized {
  ByteTensor payload;  // [M, K / 2]: element 2i in the low nibble, 2i + 1 in the high one
  ByteTensor scale;    // [M, K / 32] e8m0 codes; NaN (0xFF) for a block holding NaN or inf
};

// x is [M, K] with K a multiple of 32.
Result<Mxfp4Quantized> QuantizeMxfp4(const FloatTensor& x);
// Back to fp32 [M, K]; payload [M, K / 2] and scale [M, K / 32] must agree.
Result<FloatTensor> DequantizeMxfp4(const ByteTensor& payload, const ByteTensor& scale);

}  // namespace harness::kernels
