// The register-blocked inner kernel of the cache-blocked GEMMs (gemm.cc), compiled
// once per x86-64 ISA level and chosen at run time, so one binary is fast on an
// AVX-512 machine and still runs on any x86-64 (or other) CPU.
#pragma once

#include <cstdint>
#include <vector>

namespace harness::kernels::detail {

// c[i * ldc + j] += sum_p a[p * mr + i] * b[p * nr + j] for i < rows <= mr, j < cols <= nr:
// a is a packed kc x mr panel, b a packed kc x nr panel (64-byte aligned). Each c
// element is one accumulator summed in p order, so a result does not depend on where
// its row or column falls in a tile.
using MicroKernelFn = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int rows, int cols);

// FP8 weights for these kernels stay one byte each, in code groups of 2 nr columns (four
// vectors of lanes = nr / 2 floats): row p of a group is 2 nr bytes read as nr / 2 32-bit
// words, and byte b of word i holds the code of column b * lanes + i. Decoding byte b of
// every word is then a shift and a mask per vector (no byte-to-word widening, which GCC's
// vector extensions scalarize), giving columns b * lanes .. b * lanes + lanes - 1 in order.
// A group stores kc such rows one after the other. Rows 128 g .. 128 g + 127 share one
// scale, scales[g * scale_stride] (kc is a multiple of 128), and a group never straddles a
// 128-column scale block.
//
// plain: the weight holds no NaN code and every scale is below 2^8, so a decode may fold
// e4m3's 2^120 rebias into the scale (same bits, one multiply fewer); else the general
// decode runs.
//
// stream: the M = 1 FP8 path: y[j] += sum_p a[p] * fl(e4m3(w[p, j]) * scale) for the
// stream_cols columns j of stream_cols / (2 nr) consecutive code groups, decoding in
// registers as the codes stream in. Each y element gets one accumulator summed in p order
// and added once, as run() adds a decoded panel, so the two give the same bits.
using StreamFn = void (*)(int64_t kc, const float* a, const uint8_t* codes, const float* scales, int64_t scale_stride,
                          bool plain, float* y);
// unpack: one code group decoded and scaled into the two kc x nr panels it covers
// (panels, then panels + kc * nr), as run() reads them.
using UnpackFn = void (*)(int64_t kc, const uint8_t* group, const float* scales, int64_t scale_stride, bool plain,
                          float* panels);

struct MicroKernel {
  const char* isa;  // "avx512" (x86-64-v4), "avx2" (x86-64-v3), "generic"
  int mr;
  int nr;
  MicroKernelFn run;
  int stream_cols;  // divides 128, a multiple of the group width 2 nr
  StreamFn stream;
  UnpackFn unpack;
};

// The fastest kernel this CPU runs (decided once).
const MicroKernel& SelectedMicroKernel();
// Every kernel this CPU can run, fastest first (the tests check each).
std::vector<MicroKernel> RunnableMicroKernels();

}  // namespace harness::kernels::detail
