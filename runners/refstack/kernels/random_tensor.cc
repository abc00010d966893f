#include "runners/refstack/kernels/random_tensor.h"

#include <algorithm>
#include <cmath>
#include <list>
#include <mutex>
#include <numbers>
#include <vector>

#include "harness/util/hash.h"
#include "runners/refstack/kernels/number_formats.h"

namespace harness::kernels {
namespace {

// A SplitMix64 stream of the seed.
class NormalStream {
 public:
  explicit NormalStream(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return SplitMix64Next(state_); }
  // Uniform in (0, 1]: never 0, so log() below is finite.
  double Uniform() { return (static_cast<double>(Next() >> 11) + 1.0) * 0x1p-53; }
  // One standard normal per call (Box-Muller, using the cosine branch only).
  double Normal() { return std::sqrt(-2.0 * std::log(Uniform())) * std::cos(2.0 * std::numbers::pi * Uniform()); }

 private:
  uint64_t state_;
};

// The standard normals of a seed, drawn once per process: a suite draws the same weights for
// several batch sizes, and the smaller tensors of a seed are prefixes of the larger ones, so
// a nightly drew each value up to four times, and the log and cos per value were a fifth of
// a sanitized nightly's CPU. Streams are kept up to kMaxCachedValues in all, the least
// recently used dropped first; a stream grows from where its generator stopped.
class NormalStreams {
 public:
  // Calls use(first) with the first n normals of seed's stream, grown as needed.
  template <class F>
  void Use(uint64_t seed, int64_t n, F&& use) {
    std::lock_guard<std::mutex> lock(mu_);
    Stream& s = Find(seed);
    while (static_cast<int64_t>(s.values.size()) < n) s.values.push_back(s.rng.Normal());
    use(s.values.data());
    EvictBeyondBound();
  }

 private:
  struct Stream {
    uint64_t seed;
    NormalStream rng;
    std::vector<double> values;
  };
  static constexpr std::size_t kMaxCachedValues = std::size_t{4} << 20;  // 32 MiB of doubles

  Stream& Find(uint64_t seed) {
    auto it = std::find_if(streams_.begin(), streams_.end(), [&](const Stream& s) { return s.seed == seed; });
    if (it == streams_.end()) return streams_.emplace_front(Stream{seed, NormalStream(seed), {}});
    streams_.splice(streams_.begin(), streams_, it);  // most recently used first
    return streams_.front();
  }
  void EvictBeyondBound() {
    std::size_t total = 0;
    for (auto it = streams_.begin(); it != streams_.end();) {
      total += it->values.size();
      // The stream just used (first) stays even alone over the bound: its caller copied it.
      if (it != streams_.begin() && total > kMaxCachedValues) {
        total -= it->values.size();
        it = streams_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::mutex mu_;
  std::list<Stream> streams_;
};

NormalStreams& Streams() {
  static NormalStreams streams;
  return streams;
}

template <class F>
FloatTensor Fill(const Shape& shape, uint64_t seed, F&& value) {
  FloatTensor t(shape);
  float* p = t.mutable_data_ptr();
  Streams().Use(seed, t.numel(), [&](const double* normals) {
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = RoundToBf16(static_cast<float>(value(normals[i])));
  });
  return t;
}

}  // namespace

FloatTensor RandomBf16Normal(const Shape& shape, uint64_t seed, float stddev) {
  return Fill(shape, seed, [&](double normal) { return stddev * normal; });
}

FloatTensor RandomBf16LogNormal(const Shape& shape, uint64_t seed, float sigma) {
  return Fill(shape, seed, [&](double normal) { return std::exp(sigma * normal); });
}

}  // namespace harness::kernels
