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

struct MicroKernel {
  const char* isa;  // "avx512" (x86-64-v4), "avx2" (x86-64-v3), "generic"
  int mr;
  int nr;
  MicroKernelFn run;
};

// The fastest kernel this CPU runs (decided once).
const MicroKernel& SelectedMicroKernel();
// Every kernel this CPU can run, fastest first (the tests check each).
std::vector<MicroKernel> RunnableMicroKernels();

}  // namespace harness::kernels::detail
