// Speed of the reference kernels (docs/kernels.md, "Speed"): the fused RMSNorm + FP8
// group quant in GB/s, the W8A8 block-scaled FP8 GEMM against the fp32 GEMM of the same
// shape, timed side by side in one benchmark so their ratio comes from one run, and the
// FP8 GEMM on a packed weight against the memory roofline and the FMA peak, both measured
// in the same run. Fractions of peak are against this core's FMA throughput measured by
// BM_PeakFmaF32's routine (single-threaded, like the kernels). All times are the
// benchmark thread's CPU time: the machine's cores are shared, and a time slice another
// process takes would otherwise count against whichever kernel it landed in.
#include <benchmark/benchmark.h>

#include <time.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "runners/refstack/kernels/fp8_quant.h"
#include "runners/refstack/kernels/gemm.h"
#include "runners/refstack/kernels/gemm_microkernel.h"
#include "runners/refstack/kernels/random_tensor.h"

namespace harness::kernels {
namespace {

constexpr int64_t kK = 4096, kN = 4096;

double ThreadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Independent FMA chains, enough to cover latency x pipes, kept in registers.
constexpr int kChains = 12;
template <class V>
inline __attribute__((always_inline)) double FmaChains(int64_t iters) {
  constexpr int kLanes = sizeof(V) / sizeof(float);
  V acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = V{} + static_cast<float>(c);
  const V mul = V{} + 0.999999f, add = V{} + 1e-6f;
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * mul + add;
  }
  V sum = V{};
  for (int c = 0; c < kChains; ++c) sum += acc[c];
  benchmark::DoNotOptimize(sum);
  return 2.0 * kChains * kLanes * static_cast<double>(iters);
}

using F32x16 = float __attribute__((vector_size(64)));
using F32x8 = float __attribute__((vector_size(32)));
using F32x4 = float __attribute__((vector_size(16)));
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("arch=x86-64-v4"))) double FmaAvx512(int64_t iters) { return FmaChains<F32x16>(iters); }
__attribute__((target("arch=x86-64-v3"))) double FmaAvx2(int64_t iters) { return FmaChains<F32x8>(iters); }
#endif
double FmaGeneric(int64_t iters) { return FmaChains<F32x4>(iters); }

// FLOPs of `iters` rounds with the widest ISA the GEMM microkernel also uses.
double FmaFlops(int64_t iters) {
  const std::string isa = detail::SelectedMicroKernel().isa;
#if defined(__x86_64__) && defined(__GNUC__)
  if (isa == "avx512") return FmaAvx512(iters);
  if (isa == "avx2") return FmaAvx2(iters);
#endif
  return FmaGeneric(iters);
}

// This core's fp32 FMA peak in FLOP/s, measured once (best of a few tries).
double MeasuredPeakFlops() {
  static const double peak = [] {
    double best = 0;
    for (int t = 0; t < 5; ++t) {
      const double start = ThreadSeconds();
      const double flops = FmaFlops(20'000'000);
      const double s = ThreadSeconds() - start;
      best = std::max(best, flops / s);
    }
    return best;
  }();
  return peak;
}

void BM_PeakFmaF32(benchmark::State& state) {
  double flops = 0;
  for (auto _ : state) flops += FmaFlops(1'000'000);
  state.counters["FLOPS"] = benchmark::Counter(flops, benchmark::Counter::kIsRate);
  state.SetLabel(detail::SelectedMicroKernel().isa);
}
BENCHMARK(BM_PeakFmaF32)->Unit(benchmark::kMillisecond);

void BM_FusedRmsFp8GroupQuant(benchmark::State& state) {
  const int64_t m = state.range(0);
  const FloatTensor x = RandomBf16Normal({m, kK}, 1), gain = RandomBf16LogNormal({kK}, 2, 0.5f);
  for (auto _ : state) {
    auto q = FusedRmsFp8GroupQuant(x, gain, 1e-6f, kFp8GroupSize, /*transpose_scale=*/true);
    benchmark::DoNotOptimize(q);
  }
  // Bytes moved: x and the gain read (fp32), q (1 byte) and the scales written.
  const int64_t bytes = m * kK * 4 + kK * 4 + m * kK + m * (kK / kFp8GroupSize) * 4;
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_FusedRmsFp8GroupQuant)->Arg(1)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

// Both GEMMs every iteration, each timed on its own; manual time = their sum.
void BM_Fp8VsF32Gemm(benchmark::State& state) {
  const int64_t m = state.range(0);
  const FloatTensor x = RandomBf16Normal({m, kK}, 3), gain = RandomBf16LogNormal({kK}, 4, 0.5f);
  const FloatTensor w = RandomBf16Normal({kK, kN}, 5, 0.02f);
  const Fp8Quantized xq = FusedRmsNormFp8ForGemm(x, gain, 1e-6f, false).value();
  const Fp8Quantized wq = QuantizeFp8Blocks(w).value();
  double fp8_s = 0, f32_s = 0;
  for (auto _ : state) {
    const double t0 = ThreadSeconds();
    auto y8 = Fp8BlockScaledGemm(xq.q, xq.scale, wq.q, wq.scale);
    const double t1 = ThreadSeconds();
    auto y32 = GemmF32(x, w);
    const double t2 = ThreadSeconds();
    benchmark::DoNotOptimize(y8);
    benchmark::DoNotOptimize(y32);
    const double a = t1 - t0, b = t2 - t1;
    fp8_s += a;
    f32_s += b;
    state.SetIterationTime(a + b);
  }
  const double flops = 2.0 * m * kN * kK * static_cast<double>(state.iterations());
  const double peak = MeasuredPeakFlops();
  state.counters["fp8_GFLOPs"] = flops / fp8_s / 1e9;
  state.counters["f32_GFLOPs"] = flops / f32_s / 1e9;
  state.counters["fp8_speedup"] = f32_s / fp8_s;
  state.counters["fp8_of_peak"] = flops / fp8_s / peak;
  state.counters["f32_of_peak"] = flops / f32_s / peak;
  state.counters["peak_GFLOPs"] = peak / 1e9;
  state.SetLabel(detail::SelectedMicroKernel().isa);
}
BENCHMARK(BM_Fp8VsF32Gemm)->Arg(1)->Arg(64)->Arg(512)->UseManualTime()->Unit(benchmark::kMillisecond);

// Reads `bytes` bytes once with the widest loads, summing them so the reads stay; the
// same ISA ladder as the FMA loop.
using U64x8 = uint64_t __attribute__((vector_size(64)));
template <class V>
inline __attribute__((always_inline)) void SumWords(const uint8_t* data, int64_t bytes, uint64_t* out) {
  constexpr int kAcc = 4;
  V acc[kAcc] = {};
  for (int64_t i = 0; i + kAcc * static_cast<int64_t>(sizeof(V)) <= bytes; i += kAcc * sizeof(V))
    for (int a = 0; a < kAcc; ++a) {
      V v;
      std::memcpy(&v, data + i + a * sizeof(V), sizeof(V));
      acc[a] += v;
    }
  V sum = acc[0] + acc[1] + acc[2] + acc[3];
  std::memcpy(out, &sum, sizeof(uint64_t));
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("arch=x86-64-v4"))) void SumAvx512(const uint8_t* d, int64_t n, uint64_t* o) {
  SumWords<U64x8>(d, n, o);
}
#endif
void SumGeneric(const uint8_t* d, int64_t n, uint64_t* o) { SumWords<uint64_t __attribute__((vector_size(16)))>(d, n, o); }

// Seconds to stream-read `buffer` once.
double StreamReadSeconds(const std::vector<uint8_t>& buffer) {
  uint64_t sum = 0;
  const double start = ThreadSeconds();
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("x86-64-v4")) {
    SumAvx512(buffer.data(), static_cast<int64_t>(buffer.size()), &sum);
  } else {
    SumGeneric(buffer.data(), static_cast<int64_t>(buffer.size()), &sum);
  }
#else
  SumGeneric(buffer.data(), static_cast<int64_t>(buffer.size()), &sum);
#endif
  const double s = ThreadSeconds() - start;
  benchmark::DoNotOptimize(sum);
  return s;
}

// The FP8 GEMM on an Fp8GemmWeight (packed once, outside the timing), M = 1 against the
// memory roofline and every M against the FMA peak, side by side: each iteration also
// stream-reads a buffer of the packed weight's size (as many bytes, not the same ones,
// so neither read warms the other's cache lines), and the roofline time is the packed
// weight's bytes at that measured bandwidth. of_roofline = t_roofline / t_gemm (1 = at
// the roofline, 0.5 = within 2x of it); of_peak = GEMM FLOP/s over the measured peak.
void BM_Fp8PackedGemm(benchmark::State& state) {
  const int64_t m = state.range(0);
  const FloatTensor x = RandomBf16Normal({m, kK}, 3), gain = RandomBf16LogNormal({kK}, 4, 0.5f);
  const Fp8Quantized xq = FusedRmsNormFp8ForGemm(x, gain, 1e-6f, false).value();
  const Fp8Quantized wq = QuantizeFp8Blocks(RandomBf16Normal({kK, kN}, 5, 0.02f)).value();
  Fp8GemmWeight weight = Fp8GemmWeight::Make(wq.q, wq.scale).value();
  std::vector<uint8_t> same_size(static_cast<size_t>(weight.packed_bytes()), 1);
  double gemm_s = 0, read_s = 0;
  for (auto _ : state) {
    read_s += StreamReadSeconds(same_size);
    const double t0 = ThreadSeconds();
    auto y = Fp8BlockScaledGemm(xq.q, xq.scale, weight);
    const double t = ThreadSeconds() - t0;
    benchmark::DoNotOptimize(y);
    gemm_s += t;
    state.SetIterationTime(t);
  }
  const double iters = static_cast<double>(state.iterations());
  const double bytes = static_cast<double>(weight.packed_bytes());
  const double read_bandwidth = bytes * iters / read_s;
  const double flops = 2.0 * m * kN * kK * iters, peak = MeasuredPeakFlops();
  state.counters["GFLOPs"] = flops / gemm_s / 1e9;
  state.counters["of_peak"] = flops / gemm_s / peak;
  state.counters["peak_GFLOPs"] = peak / 1e9;
  state.counters["read_GBps"] = read_bandwidth / 1e9;
  state.counters["weight_GBps"] = bytes * iters / gemm_s / 1e9;
  state.counters["of_roofline"] = (bytes / read_bandwidth) / (gemm_s / iters);
  state.counters["packs"] = static_cast<double>(weight.packs());
  state.SetLabel(detail::SelectedMicroKernel().isa);
}
BENCHMARK(BM_Fp8PackedGemm)->Arg(1)->Arg(64)->Arg(512)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace harness::kernels

BENCHMARK_MAIN();
