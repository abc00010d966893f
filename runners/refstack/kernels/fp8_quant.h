// FP8 (e4m3fn) quantization for the W8A8 block-scaled GEMM, and the scale-layout
// contract that regression 3 of golden/regressions.json broke (docs/kernels.md tells the story).
//
// The fused RMSNorm + FP8 group-quant kernel can write its per-(row, group) scales in
// transposed storage for a GEMM that wants them column-major. Like the AITER kernel it
// models, it then still returns row-major-looking metadata: shape [M, G] with strides
// (G, 1) over storage that is physically [G][M]. The producer that hands the scales to
// the GEMM must re-read that storage with strides (1, M) -- a zero-copy view -- because
// the GEMM trusts the metadata. At M = 1 the two layouts coincide, so only M > 1 shows
// the bug.
#pragma once

#include <cstdint>

#include "harness/util/error.h"
#include "runners/refstack/kernels/tensor.h"

namespace harness::kernels {

inline constexpr int64_t kFp8GroupSize = 128;
// Floor on a group's absolute maximum, so an all-zero group gets a finite scale
// (and codes 0) instead of 0/0.
inline constexpr float kFp8MinAmax = 1e-10f;

// FP8 payload and its dequantization scales: value ~= DecodeFp8E4M3(q) * scale.
struct Fp8Quantized {
  ByteTensor q;       // e4m3fn codes
  FloatTensor scale;  // activations: [M, K / group]; weights: [K / block, N / block]
};

// fused_rms_fp8_group_quant: y = RmsNorm(x, weight, eps), then per row and group of
// group_size columns scale = max(amax, kFp8MinAmax) / 448 and q = e4m3fn(y / scale).
// x is [M, K] with K a multiple of group_size; weight is [K].
// transpose_scale=false: scale storage row-major [M][G]; metadata [M, G] strides (G, 1).
// transpose_scale=true:  scale storage column-major (physical [G][M]) with the SAME
//   row-major-looking metadata: the raw kernel contract the producer must repair.
// q is identical either way.
Result<Fp8Quantized> FusedRmsFp8GroupQuant(const FloatTensor& x, const FloatTensor& weight, float eps,
                                          int64_t group_size = kFp8GroupSize, bool transpose_scale = false);

// The producer-side repair (view_transposed_fp8_scale): a 2-D [M, G] scale re-read
// with strides (1, M) over the same storage and offset, copying nothing. Idempotent.
// Anything not 2-D is returned unchanged. Fails only if the view would leave the
// storage (the message names shape, strides and storage size).
Result<FloatTensor> ViewTransposedFp8Scale(const FloatTensor& scale);

// materialize_scale: a row-major copy of a 2-D scale, for consumers that index storage
// directly. Not 2-D: an error naming the shape and strides.
Result<FloatTensor> MaterializeScale(const FloatTensor& scale);

// The producer step between the kernel (transpose_scale=true) and the GEMM, where the
// real fix lives (DeepSeek-V4's _fused_rmsnorm_fp8_quant). scale_unrepaired is the
// fault switch fp8-scale-unrepaired: the kernel's metadata is passed on as returned.
Result<FloatTensor> RepairProducerScale(const FloatTensor& kernel_scale, bool scale_unrepaired);

// Kernel with transpose_scale=true followed by RepairProducerScale: the activation
// (q, scale) pair the block-scaled GEMM consumes.
Result<Fp8Quantized> FusedRmsNormFp8ForGemm(const FloatTensor& x, const FloatTensor& weight, float eps,
                                           bool scale_unrepaired, int64_t group_size = kFp8GroupSize);

// Weight quantization per block x block tile of w [K, N] (both multiples of block):
// scale[kb, nb] = max(amax, kFp8MinAmax) / 448, row-major [K / block, N / block].
Result<Fp8Quantized> QuantizeFp8Blocks(const FloatTensor& w, int64_t block = kFp8GroupSize);

}  // namespace harness::kernels
