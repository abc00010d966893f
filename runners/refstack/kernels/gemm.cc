#include "runners/refstack/kernels/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>

#include "runners/refstack/kernels/fp8_quant.h"
#include "runners/refstack/kernels/gemm_microkernel.h"
#include "runners/refstack/kernels/number_formats.h"
#include "runners/refstack/kernels/simd.h"

namespace harness::kernels {
namespace {

// Cache blocking (BLIS order jc -> pc -> ic -> jr -> ir): a kc x nr B micro-panel stays
// in L1 across the ir loop, the mc x kc A block in L2, the kc x nc B block in L2/L3.
// Every microkernel's nr divides 128, which the FP8 B packer relies on.
// kKc is a multiple of the FP8 group (128), so no packed block straddles a scale group.
constexpr int64_t kKc = 256;
constexpr int64_t kMcTarget = 96;
constexpr int64_t kNc = 1024;
static_assert(kKc % kFp8GroupSize == 0);

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};

// 64-byte aligned scratch, kept per thread so repeated GEMMs do not fault pages in again.
float* Scratch(int slot, int64_t count) {
  thread_local std::unique_ptr<float[], FreeDeleter> buffers[2];
  thread_local int64_t capacity[2] = {0, 0};
  if (count > capacity[slot]) {
    const size_t bytes = (static_cast<size_t>(count) * sizeof(float) + 63) / 64 * 64;
    buffers[slot].reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    capacity[slot] = count;
  }
  return buffers[slot].get();
}

// out[t] = e4m3(q[t]) * scale: the FP8 packers' inner loop.
HARNESS_SIMD_CLONES void DecodeScaled(const uint8_t* q, int64_t count, float scale, float* out) {
  for (int64_t t = 0; t < count; ++t) out[t] = DecodeFp8E4M3(q[t]) * scale;
}

// A block: `rows` rows of x from row0, columns k0 .. k0 + kc, into panels of mr rows:
// dst[panel * kc * mr + p * mr + i]. load(row, out) writes the kc values of one row;
// a panel's missing rows are zeros.
template <class LoadRow>
void PackA(int64_t rows, int64_t kc, int64_t mr, float* dst, const LoadRow& load) {
  float row[kKc];
  for (int64_t first = 0; first < rows; first += mr) {
    float* panel = dst + first * kc;
    for (int64_t i = 0; i < mr; ++i) {
      if (first + i < rows) {
        load(first + i, row);
      } else {
        std::fill(row, row + kc, 0.0f);
      }
      for (int64_t p = 0; p < kc; ++p) panel[p * mr + i] = row[p];
    }
  }
}

// B block: rows k0 .. k0 + kc of w [K, N], `cols` columns, into panels of nr columns:
// dst[panel * kc * nr + p * nr + j]. Rows of w are contiguous along N, so a panel row
// is a straight copy (or decode): load(p, col, count, out) writes count values of row
// k0 + p from column col; a panel's missing columns are zeros.
template <class LoadSegment>
void PackB(int64_t cols, int64_t kc, int64_t nr, float* dst, const LoadSegment& load) {
  for (int64_t j0 = 0; j0 < cols; j0 += nr) {
    float* panel = dst + j0 * kc;
    const int64_t live = std::min(nr, cols - j0);
    for (int64_t p = 0; p < kc; ++p) {
      float* out = panel + p * nr;
      load(p, j0, live, out);
      std::fill(out + live, out + nr, 0.0f);
    }
  }
}

// y (row-major [m, n], zeroed) += A · B, where pack_a(row0, rows, k0, kc, mr, dst) packs
// a block of A [m, k] and pack_b(col0, cols, k0, kc, nr, dst) a block of B [k, n].
template <class PackABlock, class PackBBlock>
void BlockedGemm(int64_t m, int64_t n, int64_t k, const PackABlock& pack_a, const PackBBlock& pack_b, float* y) {
  const detail::MicroKernel& uk = detail::SelectedMicroKernel();
  const int64_t mc_max = std::max<int64_t>(kMcTarget / uk.mr, 1) * uk.mr;
  const int64_t nc_max = (kNc + uk.nr - 1) / uk.nr * uk.nr;
  float* a_buf = Scratch(0, mc_max * kKc);
  float* b_buf = Scratch(1, nc_max * kKc);
  for (int64_t jc = 0; jc < n; jc += nc_max) {
    const int64_t nc = std::min(nc_max, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      pack_b(jc, nc, pc, kc, uk.nr, b_buf);
      for (int64_t ic = 0; ic < m; ic += mc_max) {
        const int64_t mc = std::min(mc_max, m - ic);
        pack_a(ic, mc, pc, kc, uk.mr, a_buf);
        for (int64_t jr = 0; jr < nc; jr += uk.nr)
          for (int64_t ir = 0; ir < mc; ir += uk.mr)
            uk.run(kc, a_buf + ir * kc, b_buf + jr * kc, y + (ic + ir) * n + jc + jr, n,
                   static_cast<int>(std::min<int64_t>(uk.mr, mc - ir)),
                   static_cast<int>(std::min<int64_t>(uk.nr, nc - jr)));
      }
    }
  }
}

// x [rows, k] in fp32, row-major.
auto F32APacker(const float* x, int64_t k) {
  return [x, k](int64_t row0, int64_t rows, int64_t k0, int64_t kc, int64_t mr, float* dst) {
    PackA(rows, kc, mr, dst,
          [&](int64_t i, float* out) { std::memcpy(out, x + (row0 + i) * k + k0, kc * sizeof(float)); });
  };
}

// w [k, n] in fp32, row-major.
auto F32BPacker(const float* w, int64_t n) {
  return [w, n](int64_t col0, int64_t cols, int64_t k0, int64_t kc, int64_t nr, float* dst) {
    PackB(cols, kc, nr, dst, [&](int64_t p, int64_t j, int64_t count, float* out) {
      std::memcpy(out, w + (k0 + p) * n + col0 + j, count * sizeof(float));
    });
  };
}

// xq [rows, k] e4m3 with x_scale [rows, k / 128]: decoded and scaled while packing,
// the scale read through its strides.
auto Fp8APacker(const uint8_t* xq, int64_t k, const FloatTensor& x_scale) {
  const float* s = x_scale.data_ptr();
  const int64_t s_row = x_scale.stride(0), s_col = x_scale.stride(1);
  return [=](int64_t row0, int64_t rows, int64_t k0, int64_t kc, int64_t mr, float* dst) {
    PackA(rows, kc, mr, dst, [&](int64_t i, float* out) {
      const int64_t r = row0 + i;
      const uint8_t* q = xq + r * k + k0;
      for (int64_t g0 = 0; g0 < kc; g0 += kFp8GroupSize) {
        DecodeScaled(q + g0, kFp8GroupSize, s[r * s_row + ((k0 + g0) / kFp8GroupSize) * s_col], out + g0);
      }
    });
  };
}

// wq [k, n] e4m3 with w_scale [k / 128, n / 128], read through its strides. A packed
// row segment never crosses a 128-column block: nr divides 128 and segments start at
// multiples of nr.
auto Fp8BPacker(const uint8_t* wq, int64_t n, const FloatTensor& w_scale) {
  const float* s = w_scale.data_ptr();
  const int64_t s_row = w_scale.stride(0), s_col = w_scale.stride(1);
  return [=](int64_t col0, int64_t cols, int64_t k0, int64_t kc, int64_t nr, float* dst) {
    PackB(cols, kc, nr, dst, [&](int64_t p, int64_t j, int64_t count, float* out) {
      DecodeScaled(wq + (k0 + p) * n + col0 + j, count,
                   s[((k0 + p) / kFp8GroupSize) * s_row + ((col0 + j) / kFp8GroupSize) * s_col], out);
    });
  };
}

void GemmF32Raw(const float* x, const float* w, int64_t m, int64_t n, int64_t k, float* y) {
  BlockedGemm(m, n, k, F32APacker(x, k), F32BPacker(w, n), y);
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
  if (x.dim() != 2 || w.dim() != 2 || x.size(1) != w.size(0))
    return UsageError(fmt::format("gemm_f32: expected x [M, K] and w [K, N], got x {} and w {}", x.Describe(),
                                  w.Describe()));
  const FloatTensor xc = x.Contiguous(), wc = w.Contiguous();
  FloatTensor y({x.size(0), w.size(1)});
  GemmF32Raw(xc.data_ptr(), wc.data_ptr(), x.size(0), w.size(1), x.size(1), y.mutable_data_ptr());
  return y;
}

Result<FloatTensor> Fp8BlockScaledGemm(const ByteTensor& xq, const FloatTensor& x_scale, const ByteTensor& wq,
                                       const FloatTensor& w_scale) {
  if (xq.dim() != 2 || wq.dim() != 2 || xq.size(1) != wq.size(0))
    return UsageError(fmt::format("fp8_block_scaled_gemm: expected xq [M, K] and wq [K, N], got xq {} and wq {}",
                                  xq.Describe(), wq.Describe()));
  const int64_t m = xq.size(0), n = wq.size(1), k = xq.size(1), g = kFp8GroupSize;
  if (k % g != 0 || n % g != 0)
    return UsageError(fmt::format("fp8_block_scaled_gemm: K and N must be multiples of {}, got xq {} and wq {}", g,
                                  FormatShape(xq.shape()), FormatShape(wq.shape())));
  if (Status s = CheckScale("x_scale", x_scale, {m, k / g}, "one scale per token and 128-column group"); !s)
    return s.error();
  if (Status s = CheckScale("w_scale", w_scale, {k / g, n / g}, "one scale per 128 x 128 weight block"); !s)
    return s.error();
  const ByteTensor xc = xq.Contiguous(), wc = wq.Contiguous();
  FloatTensor y({m, n});
  BlockedGemm(m, n, k, Fp8APacker(xc.data_ptr(), k, x_scale), Fp8BPacker(wc.data_ptr(), n, w_scale),
              y.mutable_data_ptr());
  return y;
}

Result<FloatTensor> GroupedMatmul(const FloatTensor& x, const std::vector<int64_t>& rows_per_expert,
                                  const FloatTensor& w) {
  if (x.dim() != 2 || w.dim() != 3 || x.size(1) != w.size(1))
    return UsageError(fmt::format("grouped_matmul: expected x [T, K] and w [E, K, N], got x {} and w {}", x.Describe(),
                                  w.Describe()));
  const bool counts_ok = static_cast<int64_t>(rows_per_expert.size()) == w.size(0) &&
                         std::all_of(rows_per_expert.begin(), rows_per_expert.end(), [](int64_t r) { return r >= 0; }) &&
                         std::accumulate(rows_per_expert.begin(), rows_per_expert.end(), int64_t{0}) == x.size(0);
  if (!counts_ok)
    return UsageError(fmt::format("grouped_matmul: rows_per_expert {} must give one non-negative count per expert "
                                  "(E = {}) summing to x's {} rows",
                                  FormatShape(rows_per_expert), w.size(0), x.size(0)));
  const FloatTensor xc = x.Contiguous(), wc = w.Contiguous();
  const int64_t k = w.size(1), n = w.size(2);
  FloatTensor y({x.size(0), n});
  int64_t row = 0;
  for (size_t e = 0; e < rows_per_expert.size(); ++e) {
    GemmF32Raw(xc.data_ptr() + row * k, wc.data_ptr() + static_cast<int64_t>(e) * k * n, rows_per_expert[e], n, k,
               y.mutable_data_ptr() + row * n);
    row += rows_per_expert[e];
  }
  return y;
}

}  // namespace harness::kernels
