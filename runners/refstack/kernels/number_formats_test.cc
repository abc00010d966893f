#include "runners/refstack/kernels/number_formats.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace harness::kernels {
namespace {

struct Codec {
  std::string name;
  int bits;                                  // code width
  std::function<float(uint8_t)> decode;
  std::function<uint8_t(float)> encode;
  bool saturate;                             // else overflow goes to inf
};

std::vector<Codec> Codecs() {
  return {
      {"e4m3fn", 8, DecodeFp8E4M3, EncodeFp8E4M3, true},
      {"e4m3fn_generic", 8, [](uint8_t c) { return DecodeMinifloat(c, kFp8E4M3Format); },
       [](float x) { return EncodeMinifloat(x, kFp8E4M3Format); }, true},
      {"e5m2", 8, DecodeFp8E5M2, EncodeFp8E5M2, false},
      {"e2m1", 4, DecodeFp4E2M1, EncodeFp4E2M1, true},
  };
}

// Positive finite codes in increasing order of value (sign-magnitude formats order
// their positive codes by value; MonotonicPositiveCodes checks it).
std::vector<uint8_t> PositiveFiniteCodes(const Codec& c) {
  std::vector<uint8_t> out;
  for (int code = 0; code < (1 << (c.bits - 1)); ++code)
    if (std::isfinite(c.decode(static_cast<uint8_t>(code)))) out.push_back(static_cast<uint8_t>(code));
  return out;
}

uint8_t SignBit(const Codec& c) { return static_cast<uint8_t>(1u << (c.bits - 1)); }

TEST(NumberFormats, SpecValues) {
  EXPECT_EQ(DecodeFp8E4M3(0x7E), 448.0f);
  EXPECT_EQ(DecodeFp8E4M3(0xFE), -448.0f);
  EXPECT_EQ(DecodeFp8E4M3(0x08), std::ldexp(1.0f, -6));   // smallest normal
  EXPECT_EQ(DecodeFp8E4M3(0x01), std::ldexp(1.0f, -9));   // smallest subnormal
  EXPECT_EQ(DecodeFp8E4M3(0x38), 1.0f);
  EXPECT_TRUE(std::isnan(DecodeFp8E4M3(0x7F)));
  EXPECT_TRUE(std::isnan(DecodeFp8E4M3(0xFF)));
  EXPECT_EQ(DecodeFp8E4M3(0x78), 256.0f);                   // S.1111.000 is finite in e4m3fn
  EXPECT_EQ(DecodeFp8E5M2(0x7B), 57344.0f);
  EXPECT_EQ(DecodeFp8E5M2(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(DecodeFp8E5M2(0x3C), 1.0f);
  EXPECT_EQ(DecodeFp8E5M2(0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(DecodeFp8E5M2(0xFC), -std::numeric_limits<float>::infinity());
  for (uint8_t nan : {0x7D, 0x7E, 0x7F, 0xFD, 0xFE, 0xFF}) EXPECT_TRUE(std::isnan(DecodeFp8E5M2(nan))) << +nan;
  const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(DecodeFp4E2M1(static_cast<uint8_t>(c)), e2m1[c]) << c;
    EXPECT_EQ(DecodeFp4E2M1(static_cast<uint8_t>(c | 8)), -e2m1[c]) << c;
  }
  EXPECT_EQ(DecodeE8M0(127), 1.0f);
  EXPECT_EQ(DecodeE8M0(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(DecodeE8M0(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(DecodeE8M0(0xFF)));
  EXPECT_EQ(MinifloatMax(kFp8E4M3Format), 448.0);
  EXPECT_EQ(MinifloatMax(kFp8E5M2Format), 57344.0);
  EXPECT_EQ(MinifloatMax(kFp4E2M1Format), 6.0);
}

TEST(NumberFormats, FastE4M3DecodeMatchesGenericOnEveryCode) {
  for (int c = 0; c < 256; ++c) {
    const float fast = DecodeFp8E4M3(static_cast<uint8_t>(c));
    const float generic = DecodeMinifloat(static_cast<uint8_t>(c), kFp8E4M3Format);
    if (std::isnan(generic)) {
      EXPECT_TRUE(std::isnan(fast)) << c;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(fast), std::bit_cast<uint32_t>(generic)) << c;
    }
  }
}

TEST(NumberFormats, EveryFiniteCodeRoundTrips) {
  for (const Codec& c : Codecs()) {
    int finite = 0;
    for (int code = 0; code < (1 << c.bits); ++code) {
      const float v = c.decode(static_cast<uint8_t>(code));
      if (std::isnan(v)) continue;
      ++finite;
      EXPECT_EQ(c.encode(v), code) << c.name << " code " << code << " value " << v;
    }
    // e4m3fn: 256 - 2 NaNs; e5m2: 256 - 6 NaNs (infinities round-trip); e2m1: all 16.
    const int expected = c.bits == 4 ? 16 : (c.saturate ? 254 : 250);
    EXPECT_EQ(finite, expected) << c.name;
  }
}

TEST(NumberFormats, PositiveCodesAreMonotonic) {
  for (const Codec& c : Codecs()) {
    const auto codes = PositiveFiniteCodes(c);
    for (size_t i = 0; i + 1 < codes.size(); ++i) {
      EXPECT_EQ(codes[i + 1], codes[i] + 1) << c.name;  // finite codes are one run from 0
      EXPECT_LT(c.decode(codes[i]), c.decode(codes[i + 1])) << c.name << " code " << +codes[i];
    }
  }
}

// Every midpoint between neighbouring values rounds to the even code; one ulp either
// side rounds to the nearer neighbour. Checked for both signs.
TEST(NumberFormats, TiesRoundToEvenBetweenEveryNeighbourPair) {
  for (const Codec& c : Codecs()) {
    const auto codes = PositiveFiniteCodes(c);
    for (size_t i = 0; i + 1 < codes.size(); ++i) {
      const uint8_t lo = codes[i], hi = codes[i + 1];
      const float a = c.decode(lo), b = c.decode(hi);
      const float mid = (a + b) / 2;  // exact: a few significant bits in a float
      ASSERT_EQ(static_cast<double>(mid), (double(a) + double(b)) / 2) << c.name;
      const uint8_t even = (lo % 2 == 0) ? lo : hi;
      for (int s = 0; s < 2; ++s) {
        const float sg = s ? -1.0f : 1.0f;
        const uint8_t sb = s ? SignBit(c) : 0;
        EXPECT_EQ(c.encode(sg * mid), sb | even) << c.name << " tie " << sg * mid;
        EXPECT_EQ(c.encode(sg * std::nextafter(mid, 0.0f)), sb | lo) << c.name << " below " << sg * mid;
        EXPECT_EQ(c.encode(sg * std::nextafter(mid, 1e30f)), sb | hi) << c.name << " above " << sg * mid;
      }
    }
  }
}

TEST(NumberFormats, OverflowSaturatesOrGoesToInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Codec& c : Codecs()) {
    if (c.bits != 8 || !c.saturate) continue;
    EXPECT_EQ(c.encode(448.0f), 0x7E) << c.name;
    EXPECT_EQ(c.encode(464.0f), 0x7E) << c.name;   // tie between 448 and 480: even, in range
    EXPECT_EQ(c.encode(465.0f), 0x7E) << c.name;   // would round to 480: saturates
    EXPECT_EQ(c.encode(1e30f), 0x7E) << c.name;
    EXPECT_EQ(c.encode(inf), 0x7E) << c.name;
    EXPECT_EQ(c.encode(-inf), 0xFE) << c.name;
    EXPECT_EQ(c.encode(nan), 0x7F) << c.name;
    EXPECT_EQ(c.encode(-nan), 0xFF) << c.name;
    EXPECT_EQ(c.encode(-0.0f), 0x80) << c.name;
  }
  EXPECT_EQ(EncodeFp8E5M2(57344.0f), 0x7B);
  EXPECT_EQ(EncodeFp8E5M2(std::nextafter(61440.0f, 0.0f)), 0x7B);
  EXPECT_EQ(EncodeFp8E5M2(61440.0f), 0x7C);  // tie between max (odd) and 2^16: inf
  EXPECT_EQ(EncodeFp8E5M2(inf), 0x7C);
  EXPECT_EQ(EncodeFp8E5M2(-inf), 0xFC);
  EXPECT_TRUE(std::isnan(DecodeFp8E5M2(EncodeFp8E5M2(nan))));
  EXPECT_EQ(EncodeFp4E2M1(6.0f), 0x7);
  EXPECT_EQ(EncodeFp4E2M1(7.0f), 0x7);       // tie with 8, out of range: saturates
  EXPECT_EQ(EncodeFp4E2M1(1e9f), 0x7);
  EXPECT_EQ(EncodeFp4E2M1(-inf), 0xF);
  EXPECT_EQ(EncodeFp4E2M1(nan), 0x0);
}

// Oracle: the nearest value by scanning every code, ties to the even code; beyond the
// max, saturating formats clamp and IEEE formats round against one more step (inf).
class NearestByScan {
 public:
  explicit NearestByScan(const Codec& c) : sign_bit_(SignBit(c)) {
    const auto codes = PositiveFiniteCodes(c);
    for (uint8_t code : codes) grid_.emplace_back(c.decode(code), code);
    if (!c.saturate) {  // IEEE: the step past the max is the infinity code
      const double max = grid_.back().first, below = grid_[grid_.size() - 2].first;
      grid_.emplace_back(max + (max - below), codes.back() + 1);
      EXPECT_TRUE(std::isinf(c.decode(static_cast<uint8_t>(codes.back() + 1)))) << c.name;
    }
  }
  uint8_t operator()(float x) const {
    const double a = std::fabs(double(x));
    int best = grid_[0].second;
    double best_d = std::fabs(a - grid_[0].first);
    for (const auto& [v, code] : grid_) {
      const double d = std::fabs(a - v);
      if (d < best_d || (d == best_d && code % 2 == 0)) best = code, best_d = d;
    }
    return static_cast<uint8_t>(best | (std::signbit(x) ? sign_bit_ : 0));
  }

 private:
  uint8_t sign_bit_;
  std::vector<std::pair<double, int>> grid_;  // (value, code) in increasing order
};

TEST(NumberFormats, EncodeMatchesNearestValueSearch) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> exponent(-20.0f, 18.0f), mantissa(1.0f, 2.0f);
  for (const Codec& c : Codecs()) {
    const NearestByScan nearest(c);
    for (int i = 0; i < 20000; ++i) {
      float x = std::ldexp(mantissa(rng), static_cast<int>(exponent(rng)));
      if (i % 2) x = -x;
      ASSERT_EQ(c.encode(x), nearest(x)) << c.name << " x=" << x;
    }
  }
}

// The hot-path e4m3 encoder against the generic one over a sweep of all fp32 bit
// patterns (every 4099th, so every exponent and many mantissas, both signs).
TEST(NumberFormats, FastE4M3EncodeMatchesGenericAcrossFloat32) {
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 4099) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    ASSERT_EQ(EncodeFp8E4M3(x), EncodeMinifloat(x, kFp8E4M3Format)) << std::hex << bits;
  }
}

TEST(NumberFormats, E8M0EveryCodeAndPowerOfTwoFloor) {
  for (int c = 0; c < 255; ++c) {
    const float v = DecodeE8M0(static_cast<uint8_t>(c));
    EXPECT_EQ(v, std::ldexp(1.0f, c - 127)) << c;
    EXPECT_EQ(EncodeE8M0(v), c) << c;
    if (c < 254) {
      EXPECT_EQ(EncodeE8M0(std::nextafter(2 * v, 0.0f)), c) << c;  // floor, never up
    }
  }
  EXPECT_EQ(EncodeE8M0(1.5f), 127);
  EXPECT_EQ(EncodeE8M0(std::ldexp(1.0f, -140)), 0);  // below 2^-127: the smallest scale
  EXPECT_EQ(EncodeE8M0(std::numeric_limits<float>::max()), 254);
  for (float bad : {0.0f, -1.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    EXPECT_EQ(EncodeE8M0(bad), kE8M0Nan) << bad;
  EXPECT_EQ(E8M0FromExponent(-200), 0);
  EXPECT_EQ(E8M0FromExponent(200), 254);
}

TEST(NumberFormats, Bf16EveryCodeRoundTripsAndTiesToEven) {
  int nans = 0;
  for (uint32_t c = 0; c < 0x10000u; ++c) {
    const float v = DecodeBf16(static_cast<uint16_t>(c));
    if (std::isnan(v)) {
      ++nans;
      EXPECT_TRUE(std::isnan(DecodeBf16(EncodeBf16(v)))) << c;
      continue;
    }
    ASSERT_EQ(EncodeBf16(v), c) << c;
  }
  EXPECT_EQ(nans, 2 * 127);
  // Every pair of neighbouring finite positive codes (0x0000 .. 0x7F7F): the midpoint
  // is the fp32 with the next bit set, and goes to the even code.
  for (uint32_t lo = 0; lo < 0x7F7Fu; ++lo) {
    const uint32_t mid_bits = (lo << 16) | 0x8000u;
    const float mid = std::bit_cast<float>(mid_bits);
    const uint16_t even = static_cast<uint16_t>(lo % 2 == 0 ? lo : lo + 1);
    ASSERT_EQ(EncodeBf16(mid), even) << std::hex << lo;
    ASSERT_EQ(EncodeBf16(-mid), even | 0x8000u) << std::hex << lo;
    ASSERT_EQ(EncodeBf16(std::bit_cast<float>(mid_bits - 1)), lo) << std::hex << lo;
    ASSERT_EQ(EncodeBf16(std::bit_cast<float>(mid_bits + 1)), lo + 1) << std::hex << lo;
  }
  EXPECT_EQ(EncodeBf16(std::numeric_limits<float>::max()), 0x7F80u);  // IEEE overflow: inf
  EXPECT_EQ(RoundToBf16(1.0f + 0x1p-8f), 1.0f);                       // tie to even (down)
  EXPECT_EQ(RoundToBf16(1.0f + 3 * 0x1p-8f), 1.0f + 0x1p-6f);         // tie to even (up)
}

}  // namespace
}  // namespace harness::kernels
