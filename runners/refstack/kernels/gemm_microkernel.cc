#include "runners/refstack/kernels/gemm_microkernel.h"

#include <cstring>

namespace harness::kernels::detail {
namespace {

// GCC vector extensions: the same source becomes zmm, ymm or xmm code depending on
// the target of the function it is inlined into.
using F32x16 = float __attribute__((vector_size(64)));
using F32x8 = float __attribute__((vector_size(32)));
using F32x4 = float __attribute__((vector_size(16)));

template <class V, int kMr, int kNv, int kRows>
inline __attribute__((always_inline)) void Tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                                int cols) {
  constexpr int kLanes = sizeof(V) / sizeof(float);
  constexpr int kNr = kLanes * kNv;
  V acc[kRows][kNv] = {};
  for (int64_t p = 0; p < kc; ++p) {
    V bv[kNv];
#pragma GCC unroll 4
    for (int v = 0; v < kNv; ++v) std::memcpy(&bv[v], b + p * kNr + v * kLanes, sizeof(V));
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
      const float ai = a[p * kMr + i];
#pragma GCC unroll 4
      for (int v = 0; v < kNv; ++v) acc[i][v] += ai * bv[v];
    }
  }
  if (cols == kNr) {
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
      for (int v = 0; v < kNv; ++v) {
        V cv;
        std::memcpy(&cv, c + i * ldc + v * kLanes, sizeof(V));
        cv += acc[i][v];
        std::memcpy(c + i * ldc + v * kLanes, &cv, sizeof(V));
      }
    }
    return;
  }
  float tile[kRows][kNr];
  std::memcpy(tile, acc, sizeof(tile));
  for (int i = 0; i < kRows; ++i)
    for (int j = 0; j < cols; ++j) c[i * ldc + j] += tile[i][j];
}

// Dispatches on the row count so every row count gets fully unrolled registers.
template <class V, int kMr, int kNv>
inline __attribute__((always_inline)) void Run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                                               int rows, int cols) {
  switch (rows) {
#define HARNESS_TILE_CASE(R) \
  case R:                    \
    if constexpr (R <= kMr) Tile<V, kMr, kNv, R>(kc, a, b, c, ldc, cols); \
    return;
    HARNESS_TILE_CASE(1)
    HARNESS_TILE_CASE(2)
    HARNESS_TILE_CASE(3)
    HARNESS_TILE_CASE(4)
    HARNESS_TILE_CASE(5)
    HARNESS_TILE_CASE(6)
    HARNESS_TILE_CASE(7)
    HARNESS_TILE_CASE(8)
    HARNESS_TILE_CASE(9)
    HARNESS_TILE_CASE(10)
    HARNESS_TILE_CASE(11)
    HARNESS_TILE_CASE(12)
#undef HARNESS_TILE_CASE
    default:
      return;
  }
}

// The integer vectors of a float vector's lanes, for the e4m3 decode.
using U32x16 = uint32_t __attribute__((vector_size(64)));
using U32x8 = uint32_t __attribute__((vector_size(32)));
using U32x4 = uint32_t __attribute__((vector_size(16)));
using I32x16 = int32_t __attribute__((vector_size(64)));
using I32x8 = int32_t __attribute__((vector_size(32)));
using I32x4 = int32_t __attribute__((vector_size(16)));
template <class V>
struct LaneTypes;
template <>
struct LaneTypes<F32x16> {
  using Bits = U32x16;
  using Signed = I32x16;
};
template <>
struct LaneTypes<F32x8> {
  using Bits = U32x8;
  using Signed = I32x8;
};
template <>
struct LaneTypes<F32x4> {
  using Bits = U32x4;
  using Signed = I32x4;
};

// Byte kByte of every 32-bit lane of `words` (one row of a code group, see
// gemm_microkernel.h) decoded from e4m3 and times its scale: bit for bit
// fl(DecodeFp8E4M3(code) * scale) (number_formats.h). The code is moved to the top byte
// and shifted arithmetically right by 4, which leaves the sign at bit 31 and the 7
// magnitude bits at the top of an fp32 exponent/mantissa; as a float that is the value
// times 2^-120, exactly (an e4m3 subnormal lands on an fp32 subnormal).
// kPlain (the weight has no NaN code and every scale is below 2^8): one multiply by
// scale_2p120 = scale * 2^120, itself exact, rounds the exact product once, as the two
// multiplies of the general form do. Otherwise: times 2^120, the NaN code (magnitude
// 0x7F) replaced by DecodeFp8E4M3's NaN, then times scale_2p120 / 2^120 = scale.
// (GCC vector casts between types of one size reinterpret the bits; no vector return
// values: they would change the ABI between the ISA versions, which -Wpsabi rejects.)
template <int kByte, bool kPlain, class V>
inline __attribute__((always_inline)) void DecodeScaledByte(const typename LaneTypes<V>::Bits& words,
                                                            float scale, V* out) {
  using Bits = typename LaneTypes<V>::Bits;
  using Signed = typename LaneTypes<V>::Signed;
  constexpr uint32_t kSign = 0x80000000u, kMagnitude = 0x7Fu << 20;
  const Bits top = kByte < 3 ? words << (24 - 8 * kByte) : words;
  const Bits bits = Bits(Signed(top) >> 4) & (kSign | kMagnitude);
  if constexpr (kPlain) {
    *out = V(bits) * scale;
  } else {
    const Bits value = Bits(V(bits) * 0x1p120f);
    const Bits nan = (bits & kSign) | 0x7FC00000u;
    *out = V((bits & kMagnitude) == kMagnitude ? nan : value) * scale;
  }
}

// The four decoded vectors of row p of the code group at `group` (kLanes x 4 columns).
template <bool kPlain, class V>
inline __attribute__((always_inline)) void DecodeGroupRow(const uint8_t* group, int64_t p, float scale, V* out) {
  using Bits = typename LaneTypes<V>::Bits;
  Bits words;
  std::memcpy(&words, group + p * sizeof(Bits), sizeof(Bits));
  DecodeScaledByte<0, kPlain>(words, scale, &out[0]);
  DecodeScaledByte<1, kPlain>(words, scale, &out[1]);
  DecodeScaledByte<2, kPlain>(words, scale, &out[2]);
  DecodeScaledByte<3, kPlain>(words, scale, &out[3]);
}

// The scale DecodeScaledByte<., kPlain> multiplies by.
template <bool kPlain>
float DecodeScale(float scale) {
  return kPlain ? scale * 0x1p120f : scale;
}

// StreamFn: kGroups code groups (4 vectors each) at a time, kGroups x 4 accumulators,
// enough to cover the FMA latency. The decoded weight is rounded once (times its scale)
// before the FMA, as the panel unpack() writes holds it.
constexpr int64_t kPrefetchRows = 64;
template <class V, int kGroups, bool kPlain>
inline __attribute__((always_inline)) void Stream(int64_t kc, const float* a, const uint8_t* codes,
                                                  const float* scales, int64_t scale_stride, float* y) {
  constexpr int kLanes = sizeof(V) / sizeof(float), kGroupCols = 4 * kLanes;
  static_assert(128 % (kGroups * kGroupCols) == 0);
  V acc[kGroups][4] = {};
  for (int64_t g = 0; g < kc / 128; ++g) {
    const float s = DecodeScale<kPlain>(scales[g * scale_stride]);
    for (int64_t p = g * 128; p < (g + 1) * 128; ++p) {
      const float ap = a[p];
#pragma GCC unroll 8
      for (int q = 0; q < kGroups; ++q) {
        __builtin_prefetch(codes + q * kc * kGroupCols + (p + kPrefetchRows) * sizeof(V));
        V w[4];
        DecodeGroupRow<kPlain>(codes + q * kc * kGroupCols, p, s, w);
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) acc[q][v] += ap * w[v];
      }
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < kGroups; ++q)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      V out;
      std::memcpy(&out, y + q * kGroupCols + v * kLanes, sizeof(V));
      out += acc[q][v];
      std::memcpy(y + q * kGroupCols + v * kLanes, &out, sizeof(V));
    }
}

// UnpackFn: each row of the group decoded into the two panels it covers (vectors 0, 1
// into row p of the first, 2, 3 into row p of the second); nr = 2 lanes.
template <class V, bool kPlain>
inline __attribute__((always_inline)) void Unpack(int64_t kc, const uint8_t* group, const float* scales,
                                                  int64_t scale_stride, float* panels) {
  constexpr int kLanes = sizeof(V) / sizeof(float), kNr = 2 * kLanes;
  float* second = panels + kc * kNr;
  for (int64_t g = 0; g < kc / 128; ++g) {
    const float s = DecodeScale<kPlain>(scales[g * scale_stride]);
    for (int64_t p = g * 128; p < (g + 1) * 128; ++p) {
      V w[4];
      DecodeGroupRow<kPlain>(group, p, s, w);
      std::memcpy(panels + p * kNr, &w[0], 2 * sizeof(V));
      std::memcpy(second + p * kNr, &w[2], 2 * sizeof(V));
    }
  }
}

constexpr int kGenericMr = 4, kGenericNv = 2;  // 8 accumulators of 4 floats
void RunGeneric(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols) {
  Run<F32x4, kGenericMr, kGenericNv>(kc, a, b, c, ldc, rows, cols);
}
void StreamGeneric(int64_t kc, const float* a, const uint8_t* codes, const float* scales, int64_t scale_stride,
                   bool plain, float* y) {
  if (plain) {
    Stream<F32x4, 2, true>(kc, a, codes, scales, scale_stride, y);
  } else {
    Stream<F32x4, 2, false>(kc, a, codes, scales, scale_stride, y);
  }
}
void UnpackGeneric(int64_t kc, const uint8_t* group, const float* scales, int64_t scale_stride, bool plain, float* panels) {
  if (plain) {
    Unpack<F32x4, true>(kc, group, scales, scale_stride, panels);
  } else {
    Unpack<F32x4, false>(kc, group, scales, scale_stride, panels);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// 6 x 16 with 16 ymm registers: 12 accumulators, 2 B vectors, 1 broadcast.
constexpr int kAvx2Mr = 6, kAvx2Nv = 2;
__attribute__((target("arch=x86-64-v3"))) void RunAvx2(int64_t kc, const float* a, const float* b, float* c,
                                                         int64_t ldc, int rows, int cols) {
  Run<F32x8, kAvx2Mr, kAvx2Nv>(kc, a, b, c, ldc, rows, cols);
}
__attribute__((target("arch=x86-64-v3"))) void StreamAvx2(int64_t kc, const float* a, const uint8_t* codes,
                                                            const float* scales, int64_t scale_stride, bool plain, float* y) {
  if (plain) {
    Stream<F32x8, 2, true>(kc, a, codes, scales, scale_stride, y);
  } else {
    Stream<F32x8, 2, false>(kc, a, codes, scales, scale_stride, y);
  }
}
__attribute__((target("arch=x86-64-v3"))) void UnpackAvx2(int64_t kc, const uint8_t* group, const float* scales,
                                                            int64_t scale_stride, bool plain, float* panels) {
  if (plain) {
    Unpack<F32x8, true>(kc, group, scales, scale_stride, panels);
  } else {
    Unpack<F32x8, false>(kc, group, scales, scale_stride, panels);
  }
}
// 12 x 32 with 32 zmm registers: 24 accumulators (more than the FMA latency times two
// pipes needs), 2 B vectors, 1 broadcast; 12 broadcast loads per 24 FMAs.
constexpr int kAvx512Mr = 12, kAvx512Nv = 2;
__attribute__((target("arch=x86-64-v4"))) void RunAvx512(int64_t kc, const float* a, const float* b, float* c,
                                                           int64_t ldc, int rows, int cols) {
  Run<F32x16, kAvx512Mr, kAvx512Nv>(kc, a, b, c, ldc, rows, cols);
}
__attribute__((target("arch=x86-64-v4"))) void StreamAvx512(int64_t kc, const float* a, const uint8_t* codes,
                                                              const float* scales, int64_t scale_stride, bool plain, float* y) {
  if (plain) {
    Stream<F32x16, 2, true>(kc, a, codes, scales, scale_stride, y);
  } else {
    Stream<F32x16, 2, false>(kc, a, codes, scales, scale_stride, y);
  }
}
__attribute__((target("arch=x86-64-v4"))) void UnpackAvx512(int64_t kc, const uint8_t* group, const float* scales,
                                                              int64_t scale_stride, bool plain, float* panels) {
  if (plain) {
    Unpack<F32x16, true>(kc, group, scales, scale_stride, panels);
  } else {
    Unpack<F32x16, false>(kc, group, scales, scale_stride, panels);
  }
}
#endif

}  // namespace

// The FP8 code groups (gemm_microkernel.h) are two panels wide: nr = 2 vectors.
static_assert(kGenericNv == 2);
#if defined(__x86_64__) && defined(__GNUC__)
static_assert(kAvx2Nv == 2 && kAvx512Nv == 2);
#endif

#if defined(__x86_64__) && defined(__GNUC__)
// The microarchitecture levels the kernels are compiled for. Clang 14 knows the levels as
// targets but not as __builtin_cpu_supports names (the sanitized build uses clang): there,
// a level is its features.
bool SupportsX86_64V3() {
#if defined(__clang__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2");
#else
  return __builtin_cpu_supports("x86-64-v3");
#endif
}
bool SupportsX86_64V4() {
#if defined(__clang__)
  return SupportsX86_64V3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return __builtin_cpu_supports("x86-64-v4");
#endif
}
#endif

std::vector<MicroKernel> RunnableMicroKernels() {
  std::vector<MicroKernel> out;
#if defined(__x86_64__) && defined(__GNUC__)
  if (SupportsX86_64V4()) out.push_back({"avx512", kAvx512Mr, 16 * kAvx512Nv, RunAvx512, 2 * 64, StreamAvx512, UnpackAvx512});
  if (SupportsX86_64V3()) out.push_back({"avx2", kAvx2Mr, 8 * kAvx2Nv, RunAvx2, 2 * 32, StreamAvx2, UnpackAvx2});
#endif
  out.push_back({"generic", kGenericMr, 4 * kGenericNv, RunGeneric, 2 * 16, StreamGeneric, UnpackGeneric});
  return out;
}

const MicroKernel& SelectedMicroKernel() {
  static const MicroKernel selected = RunnableMicroKernels().front();
  return selected;
}

}  // namespace harness::kernels::detail
