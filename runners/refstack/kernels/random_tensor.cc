#include "runners/refstack/kernels/random_tensor.h"

#include <cmath>
#include <numbers>

#include "runners/refstack/kernels/number_formats.h"

namespace harness::kernels {
namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1]: never 0, so log() below is finite.
  double Uniform() { return (static_cast<double>(Next() >> 11) + 1.0) * 0x1p-53; }
  // One standard normal per call (Box-Muller, using the cosine branch only).
  double Normal() { return std::sqrt(-2.0 * std::log(Uniform())) * std::cos(2.0 * std::numbers::pi * Uniform()); }

 private:
  uint64_t state_;
};

template <class F>
FloatTensor Fill(const Shape& shape, uint64_t seed, F&& value) {
  FloatTensor t(shape);
  SplitMix64 rng(seed);
  float* p = t.mutable_data_ptr();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = RoundToBf16(static_cast<float>(value(rng)));
  return t;
}

}  // namespace

FloatTensor RandomBf16Normal(const Shape& shape, uint64_t seed, float stddev) {
  return Fill(shape, seed, [&](SplitMix64& rng) { return stddev * rng.Normal(); });
}

FloatTensor RandomBf16LogNormal(const Shape& shape, uint64_t seed, float sigma) {
  return Fill(shape, seed, [&](SplitMix64& rng) { return std::exp(sigma * rng.Normal()); });
}

}  // namespace harness::kernels
