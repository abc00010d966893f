#include "runners/refstack/kernels/fp8_error.h"

#include <algorithm>
#include <cmath>

#include "runners/refstack/kernels/fp8_quant.h"
#include "runners/refstack/kernels/gemm.h"

namespace harness::kernels {
namespace {

constexpr double kF32UnitRoundoff = 0x1p-24;

double Gamma(int64_t k) { return k * kF32UnitRoundoff / (1 - k * kF32UnitRoundoff); }

// max(|v|, 2^-6 * scale of v's block), row-major [rows, cols]; element (r, c) belongs
// to scale (r / row_block, c / 128).
FloatTensor FlooredMagnitudes(const FloatTensor& v, const FloatTensor& scale, int64_t row_block) {
  const int64_t rows = v.size(0), cols = v.size(1);
  FloatTensor out({rows, cols});
  const FloatTensor vc = v.Contiguous();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out.mutable_data_ptr()[r * cols + c] =
          std::max(std::fabs(vc.data_ptr()[r * cols + c]), 0x1p-6f * scale.At(r / row_block, c / kFp8GroupSize));
  return out;
}

}  // namespace

double Fp8GemmBoundCoefficient(int64_t k) {
  const double u = kFp8ElementRelativeError;
  return 2 * u + u * u + Gamma(k) * (1 + (1 + u) * (1 + u));
}

Result<FloatTensor> Fp8GemmErrorBound(const FloatTensor& x, const FloatTensor& x_scale, const FloatTensor& w,
                                      const FloatTensor& w_scale) {
  const int64_t g = kFp8GroupSize;
  const bool shapes_ok = x.dim() == 2 && w.dim() == 2 && x.size(1) == w.size(0) && x.size(1) % g == 0 &&
                         w.size(1) % g == 0 && x_scale.shape() == Shape{x.size(0), x.size(1) / g} &&
                         w_scale.shape() == Shape{w.size(0) / g, w.size(1) / g};
  if (!shapes_ok)
    return UsageError(fmt::format("fp8_gemm_error_bound: expected x [M, K], x_scale [M, K/128], w [K, N], w_scale "
                                  "[K/128, N/128], got x {}, x_scale {}, w {}, w_scale {}",
                                  x.Describe(), x_scale.Describe(), w.Describe(), w_scale.Describe()));
  auto sums = GemmF32(FlooredMagnitudes(x, x_scale, 1), FlooredMagnitudes(w, w_scale, g));
  if (!sums) return sums.error();
  // The sums of non-negative terms are themselves computed in fp32: within gamma_K.
  const int64_t k = x.size(1);
  const float c = static_cast<float>(Fp8GemmBoundCoefficient(k) * (1 + Gamma(k)) * (1 + kF32UnitRoundoff));
  float* p = sums->mutable_data_ptr();
  for (int64_t i = 0; i < sums->numel(); ++i) p[i] *= c;
  return sums;
}

}  // namespace harness::kernels
