#include "runners/refstack/kernels/row_error.h"

#include <cmath>

#include "runners/refstack/kernels/fp8_quant.h"
#include "runners/refstack/kernels/gemm.h"
#include "runners/refstack/kernels/layers.h"
#include "runners/refstack/kernels/random_tensor.h"

namespace harness::kernels {
namespace {

constexpr uint64_t kGainSeed = 0x6761696E;    // "gain"
constexpr uint64_t kWeightSeed = 0x77656967;  // "weig"
constexpr float kEps = 1e-6f;
// Per-channel RMSNorm gains spread over about 2^+-1 (log-normal), like trained norms:
// groups get different scales, so misplaced scales change values.
constexpr float kGainSigma = 0.5f;

template <class T>
T Unwrap(Result<T> r) {
  if (!r) throw FatalError(r.error());
  return std::move(r).value();
}

}  // namespace

std::vector<double> RowRelativeErrors(const FloatTensor& y, const FloatTensor& ref) {
  if (y.dim() != 2 || y.shape() != ref.shape())
    throw FatalError(ExitCode::kUsage, fmt::format("row_relative_errors: expected two [M, N] tensors, got {} and {}",
                                                   y.Describe(), ref.Describe()));
  const FloatTensor yc = y.Contiguous(), rc = ref.Contiguous();
  const int64_t m = ref.size(0), n = ref.size(1);
  std::vector<double> out(static_cast<size_t>(m));
  for (int64_t r = 0; r < m; ++r) {
    double diff = 0, norm = 0;
    for (int64_t c = 0; c < n; ++c) {
      const double a = yc.data_ptr()[r * n + c], b = rc.data_ptr()[r * n + c];
      diff += (a - b) * (a - b);
      norm += b * b;
    }
    out[static_cast<size_t>(r)] = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  }
  return out;
}

std::vector<double> Fp8GemmRowErrors(int M, int K, int N, bool scale_unrepaired, uint64_t seed) {
  if (M < 0 || K <= 0 || N <= 0 || K % kFp8GroupSize != 0 || N % kFp8GroupSize != 0)
    throw FatalError(ExitCode::kUsage,
                     fmt::format("fp8_gemm_row_errors: M={} K={} N={}: need M >= 0 and K, N positive multiples of {}",
                                 M, K, N, kFp8GroupSize));
  const FloatTensor x = RandomBf16Normal({M, K}, seed);
  const FloatTensor gain = RandomBf16LogNormal({K}, kGainSeed, kGainSigma);
  const FloatTensor w = RandomBf16Normal({K, N}, kWeightSeed, 1.0f / std::sqrt(static_cast<float>(K)));
  const FloatTensor ref = Unwrap(GemmF32(Unwrap(RmsNorm(x, gain, kEps)), w));
  const Fp8Quantized wq = Unwrap(QuantizeFp8Blocks(w));
  const Fp8Quantized xq = Unwrap(FusedRmsNormFp8ForGemm(x, gain, kEps, scale_unrepaired));
  return RowRelativeErrors(Unwrap(Fp8BlockScaledGemm(xq.q, xq.scale, wq.q, wq.scale)), ref);
}

}  // namespace harness::kernels
