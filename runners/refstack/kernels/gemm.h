// GEMMs of the reference stack, all y = x · w with x [M, K] and w [K, N] (the layout
// grouped-matmul weights have, and the one whose B panels pack without a transpose),
// cache-blocked over packed panels (BLIS loop order) around the register-blocked
// microkernel in gemm_microkernel.h. Single-threaded.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/util/error.h"
#include "runners/refstack/kernels/tensor.h"

namespace harness::kernels {

// fp32 GEMM: y[m, n] = sum_k x[m, k] w[k, n]; the reference the FP8 GEMM is measured
// against.
Result<FloatTensor> GemmF32(const FloatTensor& x, const FloatTensor& w);

// W8A8 block-scaled FP8 GEMM:
//   y[m, n] = sum_k e4m3(xq[m, k]) x_scale[m, k / 128] * e4m3(wq[k, n]) w_scale[k / 128, n / 128]
// xq [M, K], wq [K, N] with K and N multiples of 128; x_scale [M, K / 128] (per token
// and 128-column group) and w_scale [K / 128, N / 128] (per 128 x 128 block) are read
// THROUGH their strides, whatever the storage order, and must not overlap themselves
// (two scales in one storage slot is a broken layout, not a layout). Every shape or
// stride problem is an error naming the shapes and strides.
Result<FloatTensor> Fp8BlockScaledGemm(const ByteTensor& xq, const FloatTensor& x_scale, const ByteTensor& wq,
                                       const FloatTensor& w_scale);

// Grouped matmul over experts (MoE): the rows of x [T, K] are grouped by expert in
// order, rows_per_expert[e] of them for expert e; y rows of expert e = x_e · w[e] with
// w [E, K, N]. The counts must sum to T.
Result<FloatTensor> GroupedMatmul(const FloatTensor& x, const std::vector<int64_t>& rows_per_expert,
                                  const FloatTensor& w);

}  // namespace harness::kernels
