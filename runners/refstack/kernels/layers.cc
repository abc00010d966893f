#include "runners/refstack/kernels/layers.h"

#include <cmath>

#include "runners/refstack/kernels/simd.h"

namespace harness::kernels {
namespace {

// Independent partial sums, one per lane, so the loop vectorizes without reassociating
// floating-point adds (the order is fixed by this code, not by the compiler).
constexpr int kSumLanes = 16;

HARNESS_SIMD_CLONES float SumOfSquares(const float* x, int64_t k) {
  float lanes[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= k; i += kSumLanes)
    for (int l = 0; l < kSumLanes; ++l) lanes[l] += x[i + l] * x[i + l];
  for (int l = 0; i < k; ++i, ++l) lanes[l] += x[i] * x[i];
  for (int width = kSumLanes / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  return lanes[0];
}

HARNESS_SIMD_CLONES void ScaleRow(const float* x, float factor, const float* weight, int64_t k, float* out) {
  for (int64_t i = 0; i < k; ++i) out[i] = x[i] * factor * weight[i];
}

}  // namespace

void RmsNormRow(const float* x, const float* weight, int64_t k, float eps, float* out) {
  ScaleRow(x, 1.0f / std::sqrt(SumOfSquares(x, k) / static_cast<float>(k) + eps), weight, k, out);
}

Result<FloatTensor> RmsNorm(const FloatTensor& x, const FloatTensor& weight, float eps) {
  if (x.dim() != 2 || weight.dim() != 1 || weight.size(0) != x.size(1))
    return UsageError(fmt::format("rms_norm: expected x [M, K] and weight [K], got x {} and weight {}", x.Describe(),
                                  weight.Describe()));
  const FloatTensor xc = x.Contiguous(), wc = weight.Contiguous();
  const int64_t m = x.size(0), k = x.size(1);
  FloatTensor y({m, k});
  for (int64_t r = 0; r < m; ++r) RmsNormRow(xc.data_ptr() + r * k, wc.data_ptr(), k, eps, y.mutable_data_ptr() + r * k);
  return y;
}

Result<FloatTensor> Swiglu(const FloatTensor& x) {
  if (x.dim() != 2 || x.size(1) % 2 != 0)
    return UsageError(fmt::format("swiglu: expected x [M, 2H] (an even last dimension), got {}", x.Describe()));
  const FloatTensor xc = x.Contiguous();
  const int64_t m = x.size(0), h = x.size(1) / 2;
  FloatTensor y({m, h});
  for (int64_t r = 0; r < m; ++r) {
    const float* gate = xc.data_ptr() + r * 2 * h;
    const float* up = gate + h;
    float* out = y.mutable_data_ptr() + r * h;
    for (int64_t i = 0; i < h; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
  }
  return y;
}

}  // namespace harness::kernels
