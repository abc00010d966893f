#include "runners/refstack/kernels/gemm.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runners/refstack/kernels/fp8_error.h"
#include "runners/refstack/kernels/fp8_quant.h"
#include "runners/refstack/kernels/gemm_microkernel.h"
#include "runners/refstack/kernels/layers.h"
#include "runners/refstack/kernels/number_formats.h"
#include "runners/refstack/kernels/random_tensor.h"

namespace harness::kernels {
namespace {

using ::testing::HasSubstr;

double Gamma(int64_t k) { return k * 0x1p-24 / (1 - k * 0x1p-24); }

// A [rows, k] matrix of doubles from f(row, p): the exact operands of a reference.
struct Dense {
  int64_t rows, k;
  std::vector<double> v;
  template <class F>
  Dense(int64_t r, int64_t kk, const F& f) : rows(r), k(kk), v(static_cast<size_t>(r * kk)) {
    for (int64_t i = 0; i < r; ++i)
      for (int64_t p = 0; p < kk; ++p) v[static_cast<size_t>(i * kk + p)] = f(i, p);
  }
  const double* row(int64_t i) const { return v.data() + i * k; }
};

// Checks y against sum_k a[m, k] b[n, k] computed in double (b holds w transposed), within gamma_(K + extra)
// times sum_k |a| |b|: the fp32 rounding-error bound of a K-term dot product.
void ExpectNearExactProducts(const FloatTensor& y, const Dense& a, const Dense& b, int extra_roundings = 0) {
  const FloatTensor yc = y.Contiguous();
  for (int64_t m = 0; m < a.rows; ++m)
    for (int64_t n = 0; n < b.rows; ++n) {
      double exact = 0, magnitude = 0;
      const double *ar = a.row(m), *br = b.row(n);
      for (int64_t p = 0; p < a.k; ++p) {
        exact += ar[p] * br[p];
        magnitude += std::fabs(ar[p] * br[p]);
      }
      const float got = yc.data_ptr()[m * b.rows + n];
      ASSERT_LE(std::fabs(got - exact), Gamma(a.k + extra_roundings) * magnitude + 1e-30)
          << "y[" << m << ", " << n << "] = " << got << " vs " << exact;
    }
}

TEST(MicroKernel, EveryRunnableKernelEveryTileShape) {
  for (const detail::MicroKernel& uk : detail::RunnableMicroKernels()) {
    SCOPED_TRACE(uk.isa);
    const int64_t kc = 37;
    const FloatTensor a = RandomBf16Normal({kc, uk.mr}, 1), b = RandomBf16Normal({kc, uk.nr}, 2);
    std::unique_ptr<float[], decltype(&std::free)> b_aligned(
        static_cast<float*>(std::aligned_alloc(64, (kc * uk.nr * 4 + 63) / 64 * 64)), &std::free);
    std::copy(b.data_ptr(), b.data_ptr() + kc * uk.nr, b_aligned.get());
    for (int rows = 1; rows <= uk.mr; ++rows)
      for (int cols : {1, uk.nr / 2 + 1, uk.nr}) {
        const int64_t ldc = uk.nr + 3;
        std::vector<float> c(static_cast<size_t>(uk.mr * ldc), 0.5f);
        uk.run(kc, a.data_ptr(), b_aligned.get(), c.data(), ldc, rows, cols);
        for (int i = 0; i < uk.mr; ++i)
          for (int j = 0; j < ldc; ++j) {
            double expected = 0.5, magnitude = 0.5;
            if (i < rows && j < cols)
              for (int64_t p = 0; p < kc; ++p) {
                expected += double(a.At(p, i)) * b.At(p, j);
                magnitude += std::fabs(double(a.At(p, i)) * b.At(p, j));
              }
            ASSERT_LE(std::fabs(c[i * ldc + j] - expected), Gamma(kc + 1) * magnitude)
                << rows << "x" << cols << " at " << i << "," << j;
          }
      }
  }
}

TEST(GemmF32, MatchesExactProductsAcrossBlockEdges) {
  // Shapes straddle the tile (mr, nr) and the cache blocks (kc 256, mc 96, nc 1024).
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, {7, 33, 255}, {97, 130, 513}, {3, 1030, 64}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k);
    const FloatTensor x = RandomBf16Normal({m, k}, 3), w = RandomBf16Normal({k, n}, 4);
    auto y = GemmF32(x, w);
    ASSERT_TRUE(y.ok()) << y.error().message;
    ASSERT_EQ(y->shape(), (Shape{m, n}));
    ExpectNearExactProducts(*y, Dense(m, k, [&](int64_t i, int64_t p) { return double(x.At(i, p)); }),
                            Dense(n, k, [&](int64_t j, int64_t p) { return double(w.At(p, j)); }));
  }
}

TEST(GemmF32, ReadsStridedOperandsAndRejectsMismatchedK) {
  const FloatTensor x = RandomBf16Normal({5, 8}, 5), w_t = RandomBf16Normal({3, 8}, 6);
  const FloatTensor w = w_t.AsStrided({8, 3}, {1, 8}).value();  // [K, N] as a view of its transpose
  auto y = GemmF32(x, w);
  ASSERT_TRUE(y.ok());
  ExpectNearExactProducts(*y, Dense(5, 8, [&](int64_t i, int64_t p) { return double(x.At(i, p)); }),
                          Dense(3, 8, [&](int64_t j, int64_t p) { return double(w_t.At(j, p)); }));
  auto bad = GemmF32(x, w_t);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("got x shape [5, 8] strides (8, 1) offset 0 and w shape [3, 8]"));
}

struct Fp8Case {
  FloatTensor y;  // normalized activations
  Fp8Quantized x_row, x_col, w;
};
Fp8Case MakeFp8Case(int64_t m, int64_t k, int64_t n) {
  const FloatTensor x = RandomBf16Normal({m, k}, 7), gain = RandomBf16LogNormal({k}, 8, 0.5f);
  const FloatTensor w = RandomBf16Normal({k, n}, 9, 0.05f);
  return {RmsNorm(x, gain, 1e-6f).value(), FusedRmsFp8GroupQuant(x, gain, 1e-6f, 128, false).value(),
          FusedRmsFp8GroupQuant(x, gain, 1e-6f, 128, true).value(), QuantizeFp8Blocks(w).value()};
}

// Against the exact sum of the dequantized products: only fp32 rounding may differ,
// so any misplaced scale or index shows.
TEST(Fp8BlockScaledGemm, MatchesExactDequantizedProducts) {
  for (auto [m, k, n] : {std::tuple{1, 128, 128}, {9, 384, 256}, {97, 384, 1152}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << k << "x" << n);
    const Fp8Case c = MakeFp8Case(m, k, n);
    auto y = Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, c.w.q, c.w.scale);
    ASSERT_TRUE(y.ok()) << y.error().message;
    ExpectNearExactProducts(
        *y,
        Dense(m, k, [&](int64_t i, int64_t p) { return double(DecodeFp8E4M3(c.x_row.q.At(i, p))) * c.x_row.scale.At(i, p / 128); }),
        Dense(n, k, [&](int64_t j, int64_t p) { return double(DecodeFp8E4M3(c.w.q.At(p, j))) * c.w.scale.At(p / 128, j / 128); }),
        /*scale multiplications:*/ 2);
  }
}

TEST(Fp8BlockScaledGemm, WithinTheDocumentedBoundOfTheF32Reference) {
  const Fp8Case c = MakeFp8Case(64, 1024, 256);
  const FloatTensor w = RandomBf16Normal({1024, 256}, 9, 0.05f);
  const FloatTensor y = Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, c.w.q, c.w.scale).value();
  const FloatTensor ref = GemmF32(c.y, w).value();
  const FloatTensor bound = Fp8GemmErrorBound(c.y, c.x_row.scale, w, c.w.scale).value();
  double worst = 0;
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 256; ++j) {
      const double err = std::fabs(y.At(i, j) - ref.At(i, j));
      ASSERT_LE(err, bound.At(i, j)) << i << "," << j;
      worst = std::max(worst, err / bound.At(i, j));
    }
  EXPECT_GT(worst, 0.0) << "quantization changed nothing: the test would not see a broken GEMM";
}

TEST(Fp8GemmErrorBound, RejectsMismatchedShapes) {
  const Fp8Case c = MakeFp8Case(4, 256, 128);
  const FloatTensor w = RandomBf16Normal({256, 128}, 9, 0.05f);
  EXPECT_TRUE(Fp8GemmErrorBound(c.y, c.x_row.scale, w, c.w.scale).ok());
  auto bad = Fp8GemmErrorBound(c.y, c.x_row.scale, w, FloatTensor({1, 2}));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("w_scale shape [1, 2] strides (2, 1)"));
}

TEST(Fp8BlockScaledGemm, ReadsScalesThroughTheirStrides) {
  const Fp8Case c = MakeFp8Case(64, 512, 256);
  const FloatTensor y_row = Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, c.w.q, c.w.scale).value();
  const FloatTensor repaired = ViewTransposedFp8Scale(c.x_col.scale).value();
  const FloatTensor y_col = Fp8BlockScaledGemm(c.x_col.q, repaired, c.w.q, c.w.scale).value();
  EXPECT_FALSE(FirstDifference(y_row, y_col).has_value());
  // A transposed copy of the weight scales ([K/128, N/128] = [4, 2]), viewed back: same result.
  const FloatTensor ws_t = c.w.scale.AsStrided({2, 4}, {1, 2}).value().Clone();
  const FloatTensor ws_view = ws_t.AsStrided({4, 2}, {1, 4}).value();
  EXPECT_FALSE(FirstDifference(Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, c.w.q, ws_view).value(), y_row).has_value());
  // The unrepaired metadata is accepted (it is a valid layout) and gives wrong rows.
  const FloatTensor y_bad = Fp8BlockScaledGemm(c.x_col.q, c.x_col.scale, c.w.q, c.w.scale).value();
  EXPECT_TRUE(FirstDifference(y_row, y_bad).has_value());
}

TEST(Fp8BlockScaledGemm, BadShapesAndStridesNameThem) {
  const Fp8Case c = MakeFp8Case(4, 256, 128);
  auto k_mismatch = Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, ByteTensor({384, 128}), c.w.scale);
  ASSERT_FALSE(k_mismatch.ok());
  EXPECT_THAT(k_mismatch.error().message, HasSubstr("xq shape [4, 256] strides (256, 1) offset 0 and wq shape [384, 128]"));
  auto ragged = Fp8BlockScaledGemm(ByteTensor({4, 200}), FloatTensor({4, 2}), ByteTensor({200, 128}), c.w.scale);
  ASSERT_FALSE(ragged.ok());
  EXPECT_THAT(ragged.error().message, HasSubstr("multiples of 128, got xq [4, 200] and wq [200, 128]"));
  auto scale_shape = Fp8BlockScaledGemm(c.x_row.q, FloatTensor({2, 4}), c.w.q, c.w.scale);
  ASSERT_FALSE(scale_shape.ok());
  EXPECT_THAT(scale_shape.error().message,
              HasSubstr("x_scale must be [4, 2] (one scale per token and 128-column group), got shape [2, 4] strides (4, 1)"));
  auto not_2d = Fp8BlockScaledGemm(c.x_row.q, FloatTensor({8}), c.w.q, c.w.scale);
  ASSERT_FALSE(not_2d.ok());
  EXPECT_THAT(not_2d.error().message, HasSubstr("x_scale must be [4, 2] (2-D,"));
  const FloatTensor overlapping = c.x_row.scale.AsStrided({4, 2}, {1, 1}).value();
  auto overlap = Fp8BlockScaledGemm(c.x_row.q, overlapping, c.w.q, c.w.scale);
  ASSERT_FALSE(overlap.ok());
  EXPECT_THAT(overlap.error().message, HasSubstr("own storage slot, got shape [4, 2] strides (1, 1)"));
  auto w_scale = Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, c.w.q, FloatTensor({1, 2}));
  ASSERT_FALSE(w_scale.ok());
  EXPECT_THAT(w_scale.error().message, HasSubstr("w_scale must be [2, 1] (one scale per 128 x 128 weight block)"));
}

// The weight of a packed-weight case: quantized Normal weights, with every e4m3 code
// (NaN, both zeros, subnormals, +-448) planted on the diagonal so the decode-in-registers
// path meets each of them.
Fp8Quantized EveryCodeWeight(int64_t k, int64_t n) {
  Fp8Quantized w = QuantizeFp8Blocks(RandomBf16Normal({k, n}, 9, 0.05f)).value();
  uint8_t* q = w.q.mutable_data_ptr();
  for (int64_t c = 0; c < 256 && c < k && c < n; ++c) q[c * n + c] = static_cast<uint8_t>(c);
  return w;
}

// The packed weight (streamed at M = 1, decoded panel by panel above) gives the same bits
// as the per-call packing, at M around the tile and block edges and for K, N that are odd
// multiples of 128 (a 128-row tail kc block, a jc block past nc = 1024), with the plain
// decode (ordinary weights) and the general one (NaN codes; scales of 2^8 and more).
TEST(Fp8GemmWeight, BitIdenticalToThePerCallPacking) {
  struct Weight {
    const char* name;
    Fp8Quantized w;
    bool plain;
  };
  for (auto [k, n] : {std::pair<int64_t, int64_t>{128, 128}, {384, 384}, {640, 1152}, {1152, 640}}) {
    const std::vector<Weight> weights = {
        {"plain", QuantizeFp8Blocks(RandomBf16Normal({k, n}, 9, 0.05f)).value(), true},
        {"every code", EveryCodeWeight(k, n), false},
        {"large scales", QuantizeFp8Blocks(RandomBf16Normal({k, n}, 9, 3e5f)).value(), false}};
    for (const Weight& weight : weights) {
      Fp8GemmWeight packed = Fp8GemmWeight::Make(weight.w.q, weight.w.scale).value();
      EXPECT_EQ(packed.packed_bytes(), k * n);
      EXPECT_EQ(packed.plain_decode(), weight.plain) << weight.name;
      for (int64_t m : {1, 2, 63, 64, 65}) {
        SCOPED_TRACE(testing::Message() << weight.name << " " << m << "x" << k << "x" << n);
        const Fp8Case c = MakeFp8Case(m, k, 128);
        const FloatTensor x_scale = ViewTransposedFp8Scale(c.x_col.scale).value();  // strided, as the producer hands it
        const FloatTensor per_call = Fp8BlockScaledGemm(c.x_col.q, x_scale, weight.w.q, weight.w.scale).value();
        auto y = Fp8BlockScaledGemm(c.x_col.q, x_scale, packed);
        ASSERT_TRUE(y.ok()) << y.error().message;
        const auto diff = FirstDifference(*y, per_call);
        EXPECT_FALSE(diff.has_value()) << *diff;
      }
      EXPECT_EQ(packed.packs(), 1) << "an unchanged weight was packed again";
    }
  }
}

// A write to the weight's codes or scales -- through any tensor sharing their storage --
// reaches the next GEMM: it packs again instead of serving the stale pack.
TEST(Fp8GemmWeight, AChangedWeightIsPackedAgain) {
  const int64_t k = 256, n = 256;
  const Fp8Quantized w = EveryCodeWeight(k, n);
  Fp8GemmWeight packed = Fp8GemmWeight::Make(w.q, w.scale).value();
  for (int64_t m : {1, 64}) {
    SCOPED_TRACE(m);
    const Fp8Case c = MakeFp8Case(m, k, 128);
    const FloatTensor before = Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, packed).value();
    ByteTensor codes_alias = w.q;  // another handle on the weight's storage
    codes_alias.mutable_data_ptr()[3 * n + 200] ^= 0x08;  // row 3, column 200: one code changed
    const FloatTensor after_codes = Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, packed).value();
    EXPECT_TRUE(FirstDifference(after_codes, before).has_value()) << "served the stale pack";
    EXPECT_FALSE(FirstDifference(after_codes, Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, w.q, w.scale).value()));
    FloatTensor scale_view = w.scale.AsStrided({1}, {1}, 3).value();  // a view of scale [1, 1]
    scale_view.mutable_data_ptr()[0] *= 2;
    const FloatTensor after_scale = Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, packed).value();
    EXPECT_TRUE(FirstDifference(after_scale, after_codes).has_value()) << "served the stale scales";
    EXPECT_FALSE(FirstDifference(after_scale, Fp8BlockScaledGemm(c.x_row.q, c.x_row.scale, w.q, w.scale).value()));
  }
  EXPECT_EQ(packed.packs(), 5);  // made, then two changes for each M
}

TEST(Fp8GemmWeight, BadShapesNameThem) {
  auto not_2d = Fp8GemmWeight::Make(ByteTensor({128}), FloatTensor({1, 1}));
  ASSERT_FALSE(not_2d.ok());
  EXPECT_THAT(not_2d.error().message, HasSubstr("expected wq [K, N], got wq shape [128] strides (1) offset 0"));
  auto ragged = Fp8GemmWeight::Make(ByteTensor({200, 128}), FloatTensor({1, 1}));
  ASSERT_FALSE(ragged.ok());
  EXPECT_THAT(ragged.error().message, HasSubstr("multiples of 128, got wq [200, 128]"));
  auto scale = Fp8GemmWeight::Make(ByteTensor({256, 128}), FloatTensor({1, 2}));
  ASSERT_FALSE(scale.ok());
  EXPECT_THAT(scale.error().message, HasSubstr("w_scale must be [2, 1] (one scale per 128 x 128 weight block)"));
  Fp8GemmWeight w = Fp8GemmWeight::Make(ByteTensor({256, 128}), FloatTensor({2, 1})).value();
  auto k_mismatch = Fp8BlockScaledGemm(ByteTensor({4, 128}), FloatTensor({4, 1}), w);
  ASSERT_FALSE(k_mismatch.ok());
  EXPECT_THAT(k_mismatch.error().message,
              HasSubstr("expected xq [M, K] with K = 256 (the packed wq is [256, 128]), got xq shape [4, 128]"));
  auto x_scale = Fp8BlockScaledGemm(ByteTensor({4, 256}), FloatTensor({4, 1}), w);
  ASSERT_FALSE(x_scale.ok());
  EXPECT_THAT(x_scale.error().message, HasSubstr("x_scale must be [4, 2]"));
}

TEST(GroupedMatmul, EachExpertsRowsUseItsWeights) {
  const std::vector<int64_t> rows = {3, 0, 9};
  const FloatTensor x = RandomBf16Normal({12, 40}, 10), w = RandomBf16Normal({3, 40, 17}, 11);
  auto y = GroupedMatmul(x, rows, w);
  ASSERT_TRUE(y.ok()) << y.error().message;
  ASSERT_EQ(y->shape(), (Shape{12, 17}));
  auto expert_of = [&](int64_t r) { return r < 3 ? 0 : 2; };
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t j = 0; j < 17; ++j) {
      double exact = 0, magnitude = 0;
      for (int64_t p = 0; p < 40; ++p) {
        const double t = double(x.At(r, p)) * w.At({expert_of(r), p, j});
        exact += t;
        magnitude += std::fabs(t);
      }
      EXPECT_LE(std::fabs(y->At(r, j) - exact), Gamma(40) * magnitude) << r << "," << j;
    }
  auto bad = GroupedMatmul(x, {3, 9}, w);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("rows_per_expert [3, 9] must give one non-negative count per expert (E = 3)"));
  EXPECT_FALSE(GroupedMatmul(x, {3, 0, 8}, w).ok());
  EXPECT_FALSE(GroupedMatmul(x, {13, -1, 0}, w).ok());
}

}  // namespace
}  // namespace harness::kernels
