// Per-row error of the reference FP8 GEMM path, for the GSM8K stand-in endpoint
// (runners/refstack/sim), which turns the error of a batch into answer accuracy: this is
// how the fp8-scale-unrepaired fault reaches GSM8K, and why it does so only at M > 1.
#pragma once

#include <cstdint>
#include <vector>

#include "runners/refstack/kernels/tensor.h"

namespace harness::kernels {

// Relative error, per row, of a batch of M rows pushed through the reference FP8 path
// (fused RMSNorm + FP8 group quant (group 128) + W8A8 block-scaled FP8 GEMM) against
// an fp32 reference GEMM, for a fixed deterministic K x N weight and inputs from `seed`.
// scale_unrepaired=true applies the fp8-scale-unrepaired fault.
//
// Row r's error is ||y_r - ref_r||_2 / ||ref_r||_2 with ref = GemmF32(RmsNorm(x), w).
// x is [M, K] bf16-representable Normal(0, 1) drawn in row order from `seed` (so row r
// is the same for every M >= r + 1); the RMSNorm gain and the weight come from fixed
// seeds. Deterministic: same arguments, same result on one machine.
// K and N must be positive multiples of 128 and M >= 0; otherwise throws
// harness::FatalError naming the shape. Costs about 2 M N K flops plus quantizing the
// N x K weight (M = 64, K = N = 256: well under a millisecond).
std::vector<double> Fp8GemmRowErrors(int M, int K, int N, bool scale_unrepaired, uint64_t seed);

// ||y_r - ref_r||_2 / ||ref_r||_2 for every row r of two [M, N] tensors (in double;
// an all-zero reference row gives the absolute norm of y_r). Different shapes throw
// harness::FatalError naming both.
std::vector<double> RowRelativeErrors(const FloatTensor& y, const FloatTensor& ref);

}  // namespace harness::kernels
