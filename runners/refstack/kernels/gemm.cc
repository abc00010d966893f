#include "runners/refstack/kernels/gemm.h"

#include <algorithm>
#include <cmath>
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

// The width of a jc block: kNc rounded up to whole panels. A multiple of 128, since every
// nr divides 128 and 128 divides kNc.
int64_t NcMax(const detail::MicroKernel& uk) { return (kNc + uk.nr - 1) / uk.nr * uk.nr; }
static_assert(kNc % kFp8GroupSize == 0);

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
  const int64_t nc_max = NcMax(uk);
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

// Where block (col0, k0) of the blocked GEMM (col0 a multiple of NcMax, k0 of kKc, cols
// wide) starts in an Fp8GemmWeight's packed codes. The blocks lie in BlockedGemm's
// jc -> pc order; inside one, the code group of columns j0 .. j0 + 2 nr (j0 a multiple of
// 2 nr) starts at j0 * kc: kc rows of 2 nr codes, interleaved as gemm_microkernel.h says.
int64_t PackedBlock(int64_t k, int64_t col0, int64_t cols, int64_t k0) { return col0 * k + k0 * cols; }

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

// B blocks from an Fp8GemmWeight's packed codes (PackedBlock): each code group decoded
// and scaled into its two panels.
auto PackedFp8BPacker(const uint8_t* codes, const float* scales, bool plain, int64_t k, int64_t n) {
  const int64_t g = kFp8GroupSize, scale_cols = n / g;
  return [=](int64_t col0, int64_t cols, int64_t k0, int64_t kc, int64_t nr, float* dst) {
    const uint8_t* block = codes + PackedBlock(k, col0, cols, k0);
    const detail::MicroKernel& uk = detail::SelectedMicroKernel();
    for (int64_t j0 = 0; j0 < cols; j0 += 2 * nr)
      uk.unpack(kc, block + j0 * kc, scales + k0 / g * scale_cols + (col0 + j0) / g, scale_cols, plain, dst + j0 * kc);
  };
}

// y [1, n] (zeroed) = a [1, k] (decoded) times the packed weight, the blocks visited in
// BlockedGemm's jc -> pc order so each y element adds its kc-block sums in the same order.
void StreamGemv(const float* a, const uint8_t* codes, const float* scales, bool plain, int64_t k, int64_t n, float* y) {
  const detail::MicroKernel& uk = detail::SelectedMicroKernel();
  const int64_t g = kFp8GroupSize, nc_max = NcMax(uk), scale_cols = n / g;
  for (int64_t jc = 0; jc < n; jc += nc_max) {
    const int64_t nc = std::min(nc_max, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      const uint8_t* block = codes + PackedBlock(k, jc, nc, pc);
      for (int64_t c0 = 0; c0 < nc; c0 += uk.stream_cols)
        uk.stream(kc, a + pc, block + c0 * kc, scales + pc / g * scale_cols + (jc + c0) / g, scale_cols, plain,
                  y + jc + c0);
    }
  }
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

Status CheckFp8Weight(const ByteTensor& wq, const FloatTensor& w_scale) {
  const int64_t g = kFp8GroupSize;
  if (wq.dim() != 2)
    return UsageError(fmt::format("fp8_block_scaled_gemm: expected wq [K, N], got wq {}", wq.Describe()));
  if (wq.size(0) % g != 0 || wq.size(1) % g != 0)
    return UsageError(fmt::format("fp8_block_scaled_gemm: K and N must be multiples of {}, got wq {}", g,
                                  FormatShape(wq.shape())));
  return CheckScale("w_scale", w_scale, {wq.size(0) / g, wq.size(1) / g}, "one scale per 128 x 128 weight block");
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

Result<Fp8GemmWeight> Fp8GemmWeight::Make(ByteTensor wq, FloatTensor w_scale) {
  if (Status s = CheckFp8Weight(wq, w_scale); !s) return s.error();
  Fp8GemmWeight w(std::move(wq), std::move(w_scale));
  w.PackIfChanged();
  return w;
}

void Fp8GemmWeight::PackIfChanged() {
  if (packs_ > 0 && wq_.version() == packed_wq_version_ && w_scale_.version() == packed_scale_version_) return;
  const detail::MicroKernel& uk = detail::SelectedMicroKernel();
  const int64_t k = this->k(), n = this->n(), g = kFp8GroupSize, nc_max = NcMax(uk);
  const ByteTensor wc = wq_.Contiguous();
  codes_.resize(static_cast<size_t>(k * n));
  for (int64_t jc = 0; jc < n; jc += nc_max) {
    const int64_t nc = std::min(nc_max, n - jc);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      uint8_t* block = codes_.data() + PackedBlock(k, jc, nc, pc);
      const int64_t group = 2 * uk.nr, lanes = uk.nr / 2;
      for (int64_t j0 = 0; j0 < nc; j0 += group)
        for (int64_t p = 0; p < kc; ++p) {
          const uint8_t* row = wc.data_ptr() + (pc + p) * n + jc + j0;
          uint8_t* words = block + j0 * kc + p * group;
          for (int64_t i = 0; i < lanes; ++i)
            for (int64_t b = 0; b < 4; ++b) words[4 * i + b] = row[b * lanes + i];
        }
    }
  }
  scales_.resize(static_cast<size_t>(k / g * (n / g)));
  for (int64_t i = 0; i < k / g; ++i)
    for (int64_t j = 0; j < n / g; ++j) scales_[static_cast<size_t>(i * (n / g) + j)] = w_scale_.At(i, j);
  // gemm_microkernel.h's plain decode: no NaN code, every scale times 2^120 still finite.
  plain_ = std::none_of(codes_.begin(), codes_.end(), [](uint8_t c) { return (c & 0x7F) == 0x7F; }) &&
           std::all_of(scales_.begin(), scales_.end(), [](float s) { return std::fabs(s) < 0x1p8f; });
  packed_wq_version_ = wq_.version();
  packed_scale_version_ = w_scale_.version();
  ++packs_;
}

Result<FloatTensor> Fp8BlockScaledGemm(const ByteTensor& xq, const FloatTensor& x_scale, Fp8GemmWeight& w) {
  if (xq.dim() != 2 || xq.size(1) != w.k())
    return UsageError(fmt::format("fp8_block_scaled_gemm: expected xq [M, K] with K = {} (the packed wq is [{}, {}]), "
                                  "got xq {}",
                                  w.k(), w.k(), w.n(), xq.Describe()));
  const int64_t m = xq.size(0), n = w.n(), k = w.k(), g = kFp8GroupSize;
  if (Status s = CheckScale("x_scale", x_scale, {m, k / g}, "one scale per token and 128-column group"); !s)
    return s.error();
  w.PackIfChanged();
  const ByteTensor xc = xq.Contiguous();
  FloatTensor y({m, n});
  if (m == 1) {
    float* a = Scratch(0, k);
    for (int64_t g0 = 0; g0 < k; g0 += g)
      DecodeScaled(xc.data_ptr() + g0, g, x_scale.data_ptr()[g0 / g * x_scale.stride(1)], a + g0);
    StreamGemv(a, w.codes_.data(), w.scales_.data(), w.plain_, k, n, y.mutable_data_ptr());
  } else {
    BlockedGemm(m, n, k, Fp8APacker(xc.data_ptr(), k, x_scale), PackedFp8BPacker(w.codes_.data(), w.scales_.data(), w.plain_, k, n),
                y.mutable_data_ptr());
  }
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
