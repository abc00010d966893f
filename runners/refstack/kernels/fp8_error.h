// The FP8 error bound the tests and the fp8_scale_layout suite check the block-scaled
// GEMM against (derivation in docs/kernels.md, "FP8 error bound"):
//
//   |Fp8BlockScaledGemm(q(x), q(w))[m, n] - GemmF32(x, w)[m, n]|
//       <= c_K * sum_k xt[m, k] * wt[k, n],
//   xt = max(|x|, 2^-6 s_x)  (s_x the element's group scale; below 2^-6 s_x e4m3 is subnormal)
//   wt = max(|w|, 2^-6 s_w),
//   c_K = 2u' + u'^2 + gamma_K (1 + (1 + u')^2),  u' = 2^-4 + 2^-22,  gamma_K = K 2^-24 / (1 - K 2^-24).
//
// A worst case: it grows linearly in K, where typical errors grow like sqrt(K).
#pragma once

#include <cstdint>

#include "harness/util/error.h"
#include "runners/refstack/kernels/tensor.h"

namespace harness::kernels {

// u': e4m3's unit roundoff 2^-4 (3 mantissa bits) compounded with the fp32 roundings of
// x / s and decode(q) * s: (1 + 2^-4)(1 + 2^-24)^2 - 1 < 2^-4 + 2^-22.
inline constexpr double kFp8ElementRelativeError = 0x1p-4 + 0x1p-22;

double Fp8GemmBoundCoefficient(int64_t k);

// The bound above for every (m, n), as an [M, N] tensor. x [M, K] and w [K, N] are the
// unquantized operands; x_scale [M, K / 128] and w_scale [K / 128, N / 128] the scales
// the quantizers chose (read through their strides).
Result<FloatTensor> Fp8GemmErrorBound(const FloatTensor& x, const FloatTensor& x_scale, const FloatTensor& w,
                                      const FloatTensor& w_scale);

}  // namespace harness::kernels
