// Stable hashes, not security digests: a content digest for identities ("the same
// config"), and the SplitMix64 mixer that seeded draws (random tensors, the stand-in's
// answers, a bisect's control questions) are made of. Their outputs are fixed: goldens,
// known-answer tests and stored identities depend on every bit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace harness {

// FNV-1a 64 as 16 hex digits.
inline std::string Fnv1a64Hex(std::string_view bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

// SplitMix64's step: advances state by the golden gamma and returns the new state mixed to
// 64 bits that look independent of its neighbours'. A stream calls it on its state.
inline uint64_t SplitMix64Next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The same step as a hash of x: chained with ^, it mixes several keys into one draw.
inline uint64_t SplitMix64(uint64_t x) { return SplitMix64Next(x); }

}  // namespace harness
