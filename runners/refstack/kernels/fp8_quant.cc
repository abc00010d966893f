#include "runners/refstack/kernels/fp8_quant.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "runners/refstack/kernels/layers.h"
#include "runners/refstack/kernels/number_formats.h"
#include "runners/refstack/kernels/simd.h"

namespace harness::kernels {
namespace {

constexpr int kMaxLanes = 16;  // independent maxima, so the loop vectorizes

HARNESS_SIMD_CLONES float AbsMax(const float* v, int64_t n) {
  float lanes[kMaxLanes] = {};
  int64_t i = 0;
  for (; i + kMaxLanes <= n; i += kMaxLanes)
    for (int l = 0; l < kMaxLanes; ++l) lanes[l] = std::max(lanes[l], std::fabs(v[i + l]));
  for (; i < n; ++i) lanes[0] = std::max(lanes[0], std::fabs(v[i]));
  return *std::max_element(lanes, lanes + kMaxLanes);
}

float ScaleFor(float amax) { return std::max(amax, kFp8MinAmax) / kFp8E4M3Max; }

HARNESS_SIMD_CLONES void EncodeScaled(const float* v, int64_t n, float scale, uint8_t* q) {
  for (int64_t i = 0; i < n; ++i) q[i] = EncodeFp8E4M3(v[i] / scale);
}

}  // namespace

Result<Fp8Quantized> FusedRmsFp8GroupQuant(const FloatTensor& x, const FloatTensor& weight, float eps,
                                          int64_t group_size, bool transpose_scale) {
  if (x.dim() != 2 || weight.dim() != 1 || weight.size(0) != x.size(1))
    return UsageError(fmt::format("fused_rms_fp8_group_quant: expected x [M, K] and weight [K], got x {} and weight {}",
                                  x.Describe(), weight.Describe()));
  const int64_t m = x.size(0), k = x.size(1);
  if (group_size <= 0 || k % group_size != 0)
    return UsageError(fmt::format("fused_rms_fp8_group_quant: x shape {} does not split into groups of {} along K",
                                  FormatShape(x.shape()), group_size));
  const int64_t groups = k / group_size;
  const FloatTensor xc = x.Contiguous(), wc = weight.Contiguous();
  Fp8Quantized out{ByteTensor({m, k}), FloatTensor({m, groups})};
  float* scale = out.scale.mutable_data_ptr();
  // Where scale (row, g) lives: row-major [M][G], or physically [G][M] when transposed.
  const int64_t row_step = transpose_scale ? 1 : groups, group_step = transpose_scale ? m : 1;
  std::vector<float> normalized(static_cast<size_t>(k));
  for (int64_t r = 0; r < m; ++r) {
    RmsNormRow(xc.data_ptr() + r * k, wc.data_ptr(), k, eps, normalized.data());
    uint8_t* q_row = out.q.mutable_data_ptr() + r * k;
    for (int64_t g = 0; g < groups; ++g) {
      const float* v = normalized.data() + g * group_size;
      const float s = ScaleFor(AbsMax(v, group_size));
      EncodeScaled(v, group_size, s, q_row + g * group_size);
      scale[r * row_step + g * group_step] = s;
    }
  }
  return out;  // metadata [M, G] strides (G, 1) in both cases: the kernel's contract
}

Result<FloatTensor> ViewTransposedFp8Scale(const FloatTensor& scale) {
  if (scale.dim() != 2) return scale;
  auto view = scale.AsStrided(scale.shape(), {1, scale.size(0)});
  if (!view) return UsageError("view_transposed_fp8_scale: " + view.error().message);
  return view;
}

Result<FloatTensor> MaterializeScale(const FloatTensor& scale) {
  if (scale.dim() != 2)
    return UsageError(fmt::format("materialize_scale: expected a 2-D scale [M, G], got {}", scale.Describe()));
  return scale.Clone();
}

Result<FloatTensor> RepairProducerScale(const FloatTensor& kernel_scale, bool scale_unrepaired) {
  if (scale_unrepaired) return kernel_scale;
  return ViewTransposedFp8Scale(kernel_scale);
}

Result<Fp8Quantized> FusedRmsNormFp8ForGemm(const FloatTensor& x, const FloatTensor& weight, float eps,
                                           bool scale_unrepaired, int64_t group_size) {
  auto kernel = FusedRmsFp8GroupQuant(x, weight, eps, group_size, /*transpose_scale=*/true);
  if (!kernel) return kernel.error();
  auto scale = RepairProducerScale(kernel->scale, scale_unrepaired);
  if (!scale) return scale.error();
  return Fp8Quantized{std::move(kernel->q), std::move(scale).value()};
}

Result<Fp8Quantized> QuantizeFp8Blocks(const FloatTensor& w, int64_t block) {
  if (w.dim() != 2 || block <= 0 || w.size(0) % block != 0 || w.size(1) % block != 0)
    return UsageError(fmt::format("quantize_fp8_blocks: expected w [K, N] with K and N multiples of {}, got {}", block,
                                  w.Describe()));
  const FloatTensor wc = w.Contiguous();
  const int64_t rows = w.size(0), cols = w.size(1), row_blocks = rows / block, col_blocks = cols / block;
  Fp8Quantized out{ByteTensor({rows, cols}), FloatTensor({row_blocks, col_blocks})};
  for (int64_t bi = 0; bi < row_blocks; ++bi) {
    for (int64_t bj = 0; bj < col_blocks; ++bj) {
      const float* tile = wc.data_ptr() + bi * block * cols + bj * block;
      float amax = 0;
      for (int64_t r = 0; r < block; ++r) amax = std::max(amax, AbsMax(tile + r * cols, block));
      const float s = ScaleFor(amax);
      for (int64_t r = 0; r < block; ++r)
        EncodeScaled(tile + r * cols, block, s, out.q.mutable_data_ptr() + (bi * block + r) * cols + bj * block);
      out.scale.mutable_data_ptr()[bi * col_blocks + bj] = s;
    }
  }
  return out;
}

}  // namespace harness::kernels
