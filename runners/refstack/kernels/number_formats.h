// Low-precision number formats, bit-exact to their specifications (docs/kernels.md):
//
//   format       bits  bias  max finite   inf   NaN                  out-of-range encode
//   fp8 e4m3fn   8     7     448          no    S.1111.111 only      saturates to +-448
//   fp8 e5m2     8     15    57344        yes   S.11111.{01,10,11}   IEEE: to +-inf
//   fp4 e2m1     4     1     6            no    none                 saturates to +-6
//   e8m0         8     127   2^127        no    0xFF                 power-of-two floor
//   bf16         16    127   ~3.39e38     yes   IEEE                 IEEE: to +-inf
//
// Every encoder with a mantissa rounds to nearest, ties to even. e8m0 has no mantissa:
// it keeps the power of two at or below the value (the OCP MX scale rule).
#pragma once

#include <bit>
#include <cstdint>

namespace harness::kernels {

inline constexpr float kFp8E4M3Max = 448.0f;
inline constexpr float kFp8E5M2Max = 57344.0f;
inline constexpr float kFp4E2M1Max = 6.0f;

// A sign-magnitude minifloat; the generic (slow, obviously correct) codec below reads
// it. kFiniteAllOnes: the all-ones exponent holds finite values except the all-ones
// mantissa, which is NaN (e4m3fn). kIeee: the all-ones exponent is inf/NaN. kNone: no
// inf, no NaN (e2m1).
struct MinifloatFormat {
  enum class Specials { kIeee, kFiniteAllOnes, kNone };
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
  bool saturate;  // out-of-range finite values (and inf) encode as the max finite value
};

inline constexpr MinifloatFormat kFp8E4M3Format{4, 3, 7, MinifloatFormat::Specials::kFiniteAllOnes, true};
inline constexpr MinifloatFormat kFp8E5M2Format{5, 2, 15, MinifloatFormat::Specials::kIeee, false};
inline constexpr MinifloatFormat kFp4E2M1Format{2, 1, 1, MinifloatFormat::Specials::kNone, true};

// Generic codec: decode any code; encode with round-to-nearest-even and the format's
// overflow rule. NaN encodes as the format's quiet NaN with the input's sign; a format
// without NaN (e2m1) encodes NaN as +0 (MXFP4 carries NaN in the block's e8m0 scale).
float DecodeMinifloat(uint8_t code, const MinifloatFormat& f);
uint8_t EncodeMinifloat(float x, const MinifloatFormat& f);
// Largest finite value of the format.
double MinifloatMax(const MinifloatFormat& f);

// fp8 e4m3fn, the hot-path codec: branch-light bit manipulation that the tests check
// against the generic codec and a nearest-value search over every code.
inline float DecodeFp8E4M3(uint8_t code) {
  const uint32_t magnitude = code & 0x7Fu;
  // The 7 magnitude bits placed at the top of an fp32 exponent/mantissa, times 2^(127-7),
  // rebias the exponent; an e4m3 subnormal lands on an fp32 subnormal and scales exactly.
  const uint32_t bits = std::bit_cast<uint32_t>(std::bit_cast<float>(magnitude << 20) * 0x1p120f);
  const uint32_t sign = static_cast<uint32_t>(code & 0x80u) << 24;
  return std::bit_cast<float>((magnitude == 0x7Fu ? 0x7FC00000u : bits) | sign);  // a select: vectorizes
}

inline uint8_t EncodeFp8E4M3(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t a = bits & 0x7FFFFFFFu;
  // Normal range: round the 20 dropped mantissa bits to nearest even, then rebias
  // the exponent from 127 to 7.
  const uint32_t normal = ((a + 0x7FFFFu + ((a >> 20) & 1u)) >> 20) - (120u << 3);
  // Subnormal range (< 2^-6): adding 2^14, whose fp32 ulp is the e4m3 subnormal step
  // 2^-9, makes the FPU round to that step; the code is the count of steps.
  const uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + 16384.0f) - 0x46800000u;
  uint32_t magnitude = a < 0x3C800000u ? subnormal : normal;  // 0x3C800000 = 2^-6
  magnitude = a >= 0x43E00000u ? 0x7Eu : magnitude;           // >= 448 and inf saturate
  magnitude = a > 0x7F800000u ? 0x7Fu : magnitude;            // NaN
  return static_cast<uint8_t>(sign | magnitude);
}

inline float DecodeFp8E5M2(uint8_t code) { return DecodeMinifloat(code, kFp8E5M2Format); }
inline uint8_t EncodeFp8E5M2(float x) { return EncodeMinifloat(x, kFp8E5M2Format); }
// fp4 codes live in the low 4 bits.
inline float DecodeFp4E2M1(uint8_t code) { return DecodeMinifloat(code & 0x0Fu, kFp4E2M1Format); }
inline uint8_t EncodeFp4E2M1(float x) { return EncodeMinifloat(x, kFp4E2M1Format); }

// e8m0: 2^(code-127); 0xFF is NaN. Encoding keeps the power of two at or below x;
// below 2^-127 it stays at 2^-127 (code 0); NaN, inf, zero and negatives give NaN.
inline constexpr uint8_t kE8M0Nan = 0xFF;
float DecodeE8M0(uint8_t code);
uint8_t EncodeE8M0(float x);
// The code of 2^exponent, clamped into [2^-127, 2^127].
uint8_t E8M0FromExponent(int exponent);

// bf16: the top half of an fp32. NaN stays NaN (quieted).
inline uint16_t EncodeBf16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
inline float DecodeBf16(uint16_t code) { return std::bit_cast<float>(static_cast<uint32_t>(code) << 16); }
inline float RoundToBf16(float x) { return DecodeBf16(EncodeBf16(x)); }

}  // namespace harness::kernels
