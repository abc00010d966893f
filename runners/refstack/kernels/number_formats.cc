#include "runners/refstack/kernels/number_formats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace harness::kernels {
namespace {

int MaxExponentField(const MinifloatFormat& f) {
  const int all_ones = (1 << f.exponent_bits) - 1;
  return f.specials == MinifloatFormat::Specials::kIeee ? all_ones - 1 : all_ones;
}

int MaxMantissaField(const MinifloatFormat& f) {
  const int all_ones = (1 << f.mantissa_bits) - 1;
  return f.specials == MinifloatFormat::Specials::kFiniteAllOnes ? all_ones - 1 : all_ones;
}

uint8_t SignBit(const MinifloatFormat& f) { return static_cast<uint8_t>(1u << (f.exponent_bits + f.mantissa_bits)); }

uint8_t Pack(const MinifloatFormat& f, int exponent_field, int mantissa_field) {
  return static_cast<uint8_t>((exponent_field << f.mantissa_bits) | mantissa_field);
}

uint8_t MaxFiniteCode(const MinifloatFormat& f) { return Pack(f, MaxExponentField(f), MaxMantissaField(f)); }

}  // namespace

double MinifloatMax(const MinifloatFormat& f) {
  return std::ldexp(1.0 + MaxMantissaField(f) / double(1 << f.mantissa_bits), MaxExponentField(f) - f.bias);
}

float DecodeMinifloat(uint8_t code, const MinifloatFormat& f) {
  const int e = (code >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int m = code & ((1 << f.mantissa_bits) - 1);
  const double sign = (code & SignBit(f)) ? -1.0 : 1.0;
  const int all_ones_e = (1 << f.exponent_bits) - 1;
  const int all_ones_m = (1 << f.mantissa_bits) - 1;
  if (f.specials == MinifloatFormat::Specials::kIeee && e == all_ones_e)
    return static_cast<float>(m == 0 ? sign * std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::quiet_NaN());
  if (f.specials == MinifloatFormat::Specials::kFiniteAllOnes && e == all_ones_e && m == all_ones_m)
    return std::numeric_limits<float>::quiet_NaN();
  const double scale = double(1 << f.mantissa_bits);
  const double v = e == 0 ? std::ldexp(m / scale, 1 - f.bias) : std::ldexp(1.0 + m / scale, e - f.bias);
  return static_cast<float>(sign * v);
}

uint8_t EncodeMinifloat(float x, const MinifloatFormat& f) {
  const uint8_t sign = std::signbit(x) ? SignBit(f) : 0;
  const int all_ones_e = (1 << f.exponent_bits) - 1;
  if (std::isnan(x)) {
    switch (f.specials) {
      case MinifloatFormat::Specials::kIeee:  // quiet NaN: top mantissa bit set
        return static_cast<uint8_t>(sign | Pack(f, all_ones_e, 1 << (f.mantissa_bits - 1)));
      case MinifloatFormat::Specials::kFiniteAllOnes:
        return static_cast<uint8_t>(sign | Pack(f, all_ones_e, (1 << f.mantissa_bits) - 1));
      case MinifloatFormat::Specials::kNone:
        return 0;
    }
  }
  const uint8_t overflow = f.saturate ? MaxFiniteCode(f)
                           : f.specials == MinifloatFormat::Specials::kIeee
                               ? Pack(f, all_ones_e, 0)                                // inf
                               : Pack(f, all_ones_e, (1 << f.mantissa_bits) - 1);       // NaN
  const double a = std::fabs(static_cast<double>(x));
  if (std::isinf(a)) return static_cast<uint8_t>(sign | overflow);
  // Round on the grid of the value's binade (or the subnormal grid) in double, where
  // every step is exact; nearbyint rounds to nearest even in the default FP mode.
  const int emin = 1 - f.bias;
  const int e = a == 0 ? emin : std::max(std::ilogb(a), emin);
  const double quantum = std::ldexp(1.0, e - f.mantissa_bits);
  const double steps = std::nearbyint(a / quantum);
  const double v = steps * quantum;
  if (v > MinifloatMax(f)) return static_cast<uint8_t>(sign | overflow);
  if (v < std::ldexp(1.0, emin)) return static_cast<uint8_t>(sign | Pack(f, 0, static_cast<int>(steps)));
  const int ve = std::ilogb(v);
  const int mantissa = static_cast<int>(v / std::ldexp(1.0, ve - f.mantissa_bits)) - (1 << f.mantissa_bits);
  return static_cast<uint8_t>(sign | Pack(f, ve + f.bias, mantissa));
}

float DecodeE8M0(uint8_t code) {
  if (code == kE8M0Nan) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, int(code) - 127);
}

uint8_t E8M0FromExponent(int exponent) { return static_cast<uint8_t>(std::clamp(exponent, -127, 127) + 127); }

uint8_t EncodeE8M0(float x) {
  if (!(x > 0) || std::isinf(x)) return kE8M0Nan;
  return E8M0FromExponent(std::ilogb(x));
}

}  // namespace harness::kernels
