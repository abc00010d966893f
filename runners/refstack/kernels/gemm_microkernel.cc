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
#undef HARNESS_TILE_CASE
    default:
      return;
  }
}

constexpr int kGenericMr = 4, kGenericNv = 2;  // 8 accumulators of 4 floats
void RunGeneric(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols) {
  Run<F32x4, kGenericMr, kGenericNv>(kc, a, b, c, ldc, rows, cols);
}

#if defined(__x86_64__) && defined(__GNUC__)
// 6 x 16 with 16 ymm registers: 12 accumulators, 2 B vectors, 1 broadcast.
constexpr int kAvx2Mr = 6, kAvx2Nv = 2;
__attribute__((target("arch=x86-64-v3"))) void RunAvx2(int64_t kc, const float* a, const float* b, float* c,
                                                         int64_t ldc, int rows, int cols) {
  Run<F32x8, kAvx2Mr, kAvx2Nv>(kc, a, b, c, ldc, rows, cols);
}
// 8 x 32 with 32 zmm registers: 16 accumulators hide the FMA latency on two pipes.
constexpr int kAvx512Mr = 8, kAvx512Nv = 2;
__attribute__((target("arch=x86-64-v4"))) void RunAvx512(int64_t kc, const float* a, const float* b, float* c,
                                                           int64_t ldc, int rows, int cols) {
  Run<F32x16, kAvx512Mr, kAvx512Nv>(kc, a, b, c, ldc, rows, cols);
}
#endif

}  // namespace

std::vector<MicroKernel> RunnableMicroKernels() {
  std::vector<MicroKernel> out;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("x86-64-v4")) out.push_back({"avx512", kAvx512Mr, 16 * kAvx512Nv, RunAvx512});
  if (__builtin_cpu_supports("x86-64-v3")) out.push_back({"avx2", kAvx2Mr, 8 * kAvx2Nv, RunAvx2});
#endif
  out.push_back({"generic", kGenericMr, 4 * kGenericNv, RunGeneric});
  return out;
}

const MicroKernel& SelectedMicroKernel() {
  static const MicroKernel selected = RunnableMicroKernels().front();
  return selected;
}

}  // namespace harness::kernels::detail
