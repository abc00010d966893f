#include "runners/refstack/kernels/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>

#include "runners/refstack/kernels/fp8_quant.h"
#include "runners/refstack/kernels/gemm_microkernel.h"
#include "runners/refstack/kernels/number_formats.h"

namespace harness::kernels {
namespace {

// Cache blocking (BLIS order jc -> pc -> ic -> jr -> ir): a kc x nr B micro-panel stays
// in L1 across the ir loop, the mc x kc A block in L2, the kc x nc B block in L2/L3.
// kKc is a multiple of the FP8 group (128), so no packed block straddles a scale group.
constexpr int64_t kKc = 256;
constexpr int64_t kMcTarget = 96;
constexpr int64_t kNc = 1024;
static_assert(kKc % kFp8GroupSize == 0);

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], FreeDeleter>;

AlignedFloats AllocateAligned(int64_t count) {
  const size_t bytes = (static_cast<size_t>(count) * sizeof(float) + 63) / 64 * 64;
  return AlignedFloats(static_cast<float*>(std::aligned_alloc(64, std::max<size_t>(bytes, 64))));
}

// Packs `count` vectors along K (rows of x, or rows of w = columns of y) into panels of
// `width`: dst[panel * kc * width + p * width + i]. load(index, row) writes the kc
// values of vector `index` to row; the panel's missing vectors are zeros.
template <class Load>
void PackPanels(int64_t count, int64_t kc, int64_t width, float* dst, const Load& load) {
  float row[kKc];
  for (int64_t first = 0; first < count; first += width) {
    float* panel = dst + first * kc;
    for (int64_t i = 0; i < width; ++i) {
      if (first + i < count) {
        load(first + i, row);
      } else {
        std::fill(row, row + kc, 0.0f);
      }
      for (int64_t p = 0; p < kc; ++p) panel[p * width + i] = row[p];
    }
  }
}

// y (row-major [m, n], zeroed) += A · B^T, where pack_a(row0, rows, k0, kc, mr, dst) and
// pack_b(col0, cols, k0, kc, nr, dst) pack blocks of A [m, k] and B [n, k].
template <class PackA, class PackB>
void BlockedGemm(int64_t m, int64_t n, int64_t k, const PackA& pack_a, const PackB& pack_b, float* y) {
  const detail::MicroKernel& uk = detail::SelectedMicroKernel();
  const int64_t mc_max = std::max<int64_t>(kMcTarget / uk.mr, 1) * uk.mr;
  const int64_t nc_max = (kNc + uk.nr - 1) / uk.nr * uk.nr;
  AlignedFloats a_buf = AllocateAligned(mc_max * kKc);
  AlignedFloats b_buf = AllocateAligned(nc_max * kKc);
  for (int64_t jc = 0; jc < n; jc += nc_max) {
    const int64_t nc = std::min(nc_max, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      pack_b(jc, nc, pc, kc, uk.nr, b_buf.get());
      for (int64_t ic = 0; ic < m; ic += mc_max) {
        const int64_t mc = std::min(mc_max, m - ic);
        pack_a(ic, mc, pc, kc, uk.mr, a_buf.get());
        for (int64_t jr = 0; jr < nc; jr += uk.nr)
          for (int64_t ir = 0; ir < mc; ir += uk.mr)
            uk.run(kc, a_buf.get() + ir * kc, b_buf.get() + jr * kc, y + (ic + ir) * n + jc + jr, n,
                   static_cast<int>(std::min<int64_t>(uk.mr, mc - ir)),
                   static_cast<int>(std::min<int64_t>(uk.nr, nc - jr)));
      }
    }
  }
}

// Row-major [rows, k] fp32 source: the packer copies kc values of a row.
auto F32Packer(const float* src, int64_t k) {
  return [src, k](int64_t first, int64_t count, int64_t k0, int64_t kc, int64_t width, float* dst) {
    PackPanels(count, kc, width, dst,
               [&](int64_t i, float* row) { std::memcpy(row, src + (first + i) * k + k0, kc * sizeof(float)); });
  };
}

// Row-major [rows, k] e4m3 source with one scale per (rows / row_block, 128 columns):
// the packer decodes and applies the scale, read through the scale's strides.
auto Fp8Packer(const uint8_t* src, int64_t k, const FloatTensor& scale, int64_t row_block) {
  const float* s = scale.data_ptr();
  const int64_t s_row = scale.stride(0), s_col = scale.stride(1);
  return [=](int64_t first, int64_t count, int64_t k0, int64_t kc, int64_t width, float* dst) {
    PackPanels(count, kc, width, dst, [&](int64_t i, float* row) {
      const int64_t r = first + i;
      const uint8_t* q = src + r * k + k0;
      for (int64_t g0 = 0; g0 < kc; g0 += kFp8GroupSize) {
        const float group_scale = s[(r / row_block) * s_row + ((k0 + g0) / kFp8GroupSize) * s_col];
        for (int64_t t = g0; t < g0 + kFp8GroupSize; ++t) row[t] = DecodeFp8E4M3(q[t]) * group_scale;
      }
    });
  };
}

void GemmF32Raw(const float* x, const float* w, int64_t m, int64_t n, int64_t k, float* y) {
  BlockedGemm(m, n, k, F32Packer(x, k), F32Packer(w, k), y);
}

Error ScaleError(const char* name, const FloatTensor& scale, const Shape& expected, const std::string& why) {
  return UsageError(fmt::format("fp8_block_scaled_gemm: {} must be {} {}, got {}", name, FormatShape(expected), why,
                                scale.Describe()));
}

Status CheckScale(const char* name, const FloatTensor& scale, const Shape& expected, const std::string& what) {
  if (scale.dim() != 2) return ScaleError(name, scale, expected, "(2-D, " + what + ")");
  if (scale.shape() != expected) return ScaleError(name, scale, expected, "(" + what + ")");
  if (!IsNonOverlapping(scale.shape(), scale.strides()))
    return ScaleError(name, scale, expected, "with strides that give each scale its own storage slot");
  return OkStatus();
}

}  // namespace

Result<FloatTensor> GemmF32(const FloatTensor& x, const FloatTensor& w) {
  if (x.dim() != 2 || w.dim() != 2 || x.size(1) != w.size(1))
    return UsageError(fmt::format("gemm_f32: expected x [M, K] and w [N, K], got x {} and w {}", x.Describe(),
                                  w.Describe()));
  const FloatTensor xc = x.Contiguous(), wc = w.Contiguous();
  FloatTensor y({x.size(0), w.size(0)});
  GemmF32Raw(xc.data_ptr(), wc.data_ptr(), x.size(0), w.size(0), x.size(1), y.mutable_data_ptr());
  return y;
}

Result<FloatTensor> Fp8BlockScaledGemm(const ByteTensor& xq, const FloatTensor& x_scale, const ByteTensor& wq,
                                       const FloatTensor& w_scale) {
  if (xq.dim() != 2 || wq.dim() != 2 || xq.size(1) != wq.size(1))
    return UsageError(fmt::format("fp8_block_scaled_gemm: expected xq [M, K] and wq [N, K], got xq {} and wq {}",
                                  xq.Describe(), wq.Describe()));
  const int64_t m = xq.size(0), n = wq.size(0), k = xq.size(1), g = kFp8GroupSize;
  if (k % g != 0 || n % g != 0)
    return UsageError(fmt::format("fp8_block_scaled_gemm: K and N must be multiples of {}, got xq {} and wq {}", g,
                                  FormatShape(xq.shape()), FormatShape(wq.shape())));
  if (Status s = CheckScale("x_scale", x_scale, {m, k / g}, "one scale per token and 128-column group"); !s)
    return s.error();
  if (Status s = CheckScale("w_scale", w_scale, {n / g, k / g}, "one scale per 128 x 128 weight block"); !s)
    return s.error();
  const ByteTensor xc = xq.Contiguous(), wc = wq.Contiguous();
  FloatTensor y({m, n});
  BlockedGemm(m, n, k, Fp8Packer(xc.data_ptr(), k, x_scale, 1), Fp8Packer(wc.data_ptr(), k, w_scale, g),
              y.mutable_data_ptr());
  return y;
}

Result<FloatTensor> GroupedMatmul(const FloatTensor& x, const std::vector<int64_t>& rows_per_expert,
                                  const FloatTensor& w) {
  if (x.dim() != 2 || w.dim() != 3 || x.size(1) != w.size(2))
    return UsageError(fmt::format("grouped_matmul: expected x [T, K] and w [E, N, K], got x {} and w {}", x.Describe(),
                                  w.Describe()));
  const bool counts_ok = static_cast<int64_t>(rows_per_expert.size()) == w.size(0) &&
                         std::all_of(rows_per_expert.begin(), rows_per_expert.end(), [](int64_t r) { return r >= 0; }) &&
                         std::accumulate(rows_per_expert.begin(), rows_per_expert.end(), int64_t{0}) == x.size(0);
  if (!counts_ok)
    return UsageError(fmt::format("grouped_matmul: rows_per_expert {} must give one non-negative count per expert "
                                  "(E = {}) summing to x's {} rows",
                                  FormatShape(rows_per_expert), w.size(0), x.size(0)));
  const FloatTensor xc = x.Contiguous(), wc = w.Contiguous();
  const int64_t n = w.size(1), k = w.size(2);
  FloatTensor y({x.size(0), n});
  int64_t row = 0;
  for (size_t e = 0; e < rows_per_expert.size(); ++e) {
    GemmF32Raw(xc.data_ptr() + row * k, wc.data_ptr() + static_cast<int64_t>(e) * n * k, rows_per_expert[e], n, k,
               y.mutable_data_ptr() + row * n);
    row += rows_per_expert[e];
  }
  return y;
}

}  // namespace harness::kernels
