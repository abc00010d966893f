// Deterministic test data: the same seed gives the same values on every platform
// (splitmix64 + Box-Muller, not <random>'s distributions, whose output the standard
// leaves to the library). Values are drawn in row-major order, so the first rows of a
// larger tensor equal a smaller tensor drawn with the same seed.
#pragma once

#include <cstdint>

#include "runners/refstack/kernels/tensor.h"

namespace harness::kernels {

// Normal(0, stddev) values rounded to bf16 (so they are exactly representable in bf16).
FloatTensor RandomBf16Normal(const Shape& shape, uint64_t seed, float stddev = 1.0f);
// exp(Normal(0, sigma)) rounded to bf16: positive per-channel gains like RMSNorm weights.
FloatTensor RandomBf16LogNormal(const Shape& shape, uint64_t seed, float sigma);

}  // namespace harness::kernels
