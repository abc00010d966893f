#include "runners/refstack/kernels/mxfp4.h"

#include <algorithm>
#include <cmath>

#include "runners/refstack/kernels/number_formats.h"

namespace harness::kernels {
namespace {

constexpr int kE2M1MaxExponent = 2;  // 6 = 1.5 * 2^2

}  // namespace

Result<Mxfp4Quantized> QuantizeMxfp4(const FloatTensor& x) {
  if (x.dim() != 2 || x.size(1) % kMxfp4Block != 0)
    return UsageError(fmt::format("quantize_mxfp4: expected x [M, K] with K a multiple of {}, got {}", kMxfp4Block,
                                  x.Describe()));
  const FloatTensor xc = x.Contiguous();
  const int64_t m = x.size(0), k = x.size(1), blocks = k / kMxfp4Block;
  Mxfp4Quantized out{ByteTensor({m, k / 2}), ByteTensor({m, blocks})};
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      const float* v = xc.data_ptr() + r * k + b * kMxfp4Block;
      float amax = 0;
      bool special = false;  // NaN or inf: the whole block is NaN, carried by the scale
      for (int64_t i = 0; i < kMxfp4Block; ++i) {
        special |= !std::isfinite(v[i]);
        amax = std::max(amax, std::fabs(v[i]));
      }
      uint8_t code = 0;  // an all-zero block: any scale works, take the smallest
      if (special) code = kE8M0Nan;
      else if (amax > 0) code = E8M0FromExponent(std::ilogb(amax) - kE2M1MaxExponent);
      out.scale.mutable_data_ptr()[r * blocks + b] = code;
      const float inv_scale = code == kE8M0Nan ? 1.0f : 1.0f / DecodeE8M0(code);  // exact: a power of two
      uint8_t* packed = out.payload.mutable_data_ptr() + r * (k / 2) + b * (kMxfp4Block / 2);
      for (int64_t i = 0; i < kMxfp4Block; i += 2)
        packed[i / 2] = static_cast<uint8_t>(EncodeFp4E2M1(v[i] * inv_scale) | (EncodeFp4E2M1(v[i + 1] * inv_scale) << 4));
    }
  }
  return out;
}

Result<FloatTensor> DequantizeMxfp4(const ByteTensor& payload, const ByteTensor& scale) {
  const bool shapes_agree = payload.dim() == 2 && scale.dim() == 2 && payload.size(0) == scale.size(0) &&
                            payload.size(1) * 2 == scale.size(1) * kMxfp4Block;
  if (!shapes_agree)
    return UsageError(fmt::format("dequantize_mxfp4: expected payload [M, K/2] and scale [M, K/{}], got payload {} and "
                                  "scale {}",
                                  kMxfp4Block, payload.Describe(), scale.Describe()));
  const ByteTensor pc = payload.Contiguous(), sc = scale.Contiguous();
  const int64_t m = payload.size(0), k = payload.size(1) * 2, blocks = scale.size(1);
  FloatTensor out({m, k});
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t i = 0; i < k; ++i) {
      const uint8_t byte = pc.data_ptr()[r * (k / 2) + i / 2];
      const float s = DecodeE8M0(sc.data_ptr()[r * blocks + i / kMxfp4Block]);
      out.mutable_data_ptr()[r * k + i] = DecodeFp4E2M1(i % 2 ? byte >> 4 : byte & 0x0F) * s;
    }
  }
  return out;
}

}  // namespace harness::kernels
