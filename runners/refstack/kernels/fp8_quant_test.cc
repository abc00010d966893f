#include "runners/refstack/kernels/fp8_quant.h"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runners/refstack/kernels/layers.h"
#include "runners/refstack/kernels/number_formats.h"
#include "runners/refstack/kernels/random_tensor.h"

namespace harness::kernels {
namespace {

using ::testing::HasSubstr;

constexpr float kEps = 1e-6f;

struct Inputs {
  FloatTensor x, gain;
};
Inputs MakeInputs(int64_t m, int64_t k) {
  return {RandomBf16Normal({m, k}, 11), RandomBf16LogNormal({k}, 12, 0.5f)};
}

TEST(FusedRmsFp8GroupQuant, QuantizesEachGroupWithinHalfAnE4M3Step) {
  const auto [x, gain] = MakeInputs(6, 512);
  auto q = FusedRmsFp8GroupQuant(x, gain, kEps);
  ASSERT_TRUE(q.ok()) << q.error().message;
  const FloatTensor y = RmsNorm(x, gain, kEps).value();
  ASSERT_EQ(q->q.shape(), (Shape{6, 512}));
  ASSERT_EQ(q->scale.shape(), (Shape{6, 4}));
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t g = 0; g < 4; ++g) {
      const float s = q->scale.At(r, g);
      float amax = 0;
      for (int64_t c = g * 128; c < (g + 1) * 128; ++c) amax = std::max(amax, std::fabs(y.At(r, c)));
      EXPECT_EQ(s, amax / 448.0f) << "scale = amax / 448";
      bool hit_max = false;
      for (int64_t c = g * 128; c < (g + 1) * 128; ++c) {
        const uint8_t code = q->q.At(r, c);
        hit_max |= (code & 0x7F) == 0x7E;
        const double v = y.At(r, c), dq = DecodeFp8E4M3(code) * double(s);
        // Half a step of e4m3: 2^-4 relative in the normal range, 2^-10 s below it.
        EXPECT_LE(std::fabs(dq - v), std::max(0x1p-4 * std::fabs(v), 0x1p-10 * s) * (1 + 1e-6)) << r << "," << c;
      }
      EXPECT_TRUE(hit_max) << "the group's largest element maps to +-448";
    }
  }
}

TEST(FusedRmsFp8GroupQuant, TransposedScaleIsColumnMajorStorageWithRowMajorMetadata) {
  const auto [x, gain] = MakeInputs(5, 384);
  const Fp8Quantized row = FusedRmsFp8GroupQuant(x, gain, kEps, 128, false).value();
  const Fp8Quantized col = FusedRmsFp8GroupQuant(x, gain, kEps, 128, true).value();
  EXPECT_FALSE(FirstDifference(row.q, col.q).has_value()) << "q does not depend on the scale layout";
  // Both carry the kernel's row-major-looking metadata...
  EXPECT_EQ(row.scale.strides(), (Shape{3, 1}));
  EXPECT_EQ(col.scale.strides(), (Shape{3, 1}));
  // ...but the transposed one is physically [G][M].
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t g = 0; g < 3; ++g) {
      EXPECT_EQ(row.scale.data_ptr()[r * 3 + g], row.scale.At(r, g));
      EXPECT_EQ(col.scale.data_ptr()[g * 5 + r], row.scale.At(r, g));
    }
}

TEST(ViewTransposedFp8Scale, RepairsWithoutCopying) {
  const auto [x, gain] = MakeInputs(64, 1024);
  const Fp8Quantized row = FusedRmsFp8GroupQuant(x, gain, kEps, 128, false).value();
  const Fp8Quantized col = FusedRmsFp8GroupQuant(x, gain, kEps, 128, true).value();
  auto repaired = ViewTransposedFp8Scale(col.scale);
  ASSERT_TRUE(repaired.ok()) << repaired.error().message;
  EXPECT_EQ(repaired->strides(), (Shape{1, 64}));
  EXPECT_EQ(repaired->shape(), (Shape{64, 8}));
  EXPECT_TRUE(repaired->SharesStorageWith(col.scale));
  EXPECT_EQ(repaired->data_ptr(), col.scale.data_ptr());
  EXPECT_FALSE(FirstDifference(*repaired, row.scale).has_value());
  // Unrepaired metadata reads the wrong scales at M > 1.
  EXPECT_TRUE(FirstDifference(col.scale, row.scale).has_value());
  // Idempotent: repairing a repaired scale changes nothing.
  auto twice = ViewTransposedFp8Scale(*repaired);
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->strides(), repaired->strides());
  EXPECT_EQ(twice->data_ptr(), repaired->data_ptr());
}

TEST(ViewTransposedFp8Scale, LayoutsCoincideAtOneRow) {
  const auto [x, gain] = MakeInputs(1, 1024);
  const Fp8Quantized row = FusedRmsFp8GroupQuant(x, gain, kEps, 128, false).value();
  const Fp8Quantized col = FusedRmsFp8GroupQuant(x, gain, kEps, 128, true).value();
  EXPECT_FALSE(FirstDifference(col.scale, row.scale).has_value());
  EXPECT_TRUE(SameLayout(col.scale.shape(), col.scale.strides(), ViewTransposedFp8Scale(col.scale)->strides()));
}

TEST(ViewTransposedFp8Scale, NonTwoDimensionalScalesPassThrough) {
  const FloatTensor flat({8});
  auto same = ViewTransposedFp8Scale(flat);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->strides(), flat.strides());
  EXPECT_EQ(same->data_ptr(), flat.data_ptr());
  const FloatTensor cube({2, 2, 2});
  EXPECT_EQ(ViewTransposedFp8Scale(cube)->strides(), cube.strides());
}

TEST(ViewTransposedFp8Scale, RefusesAViewPastTheStorage) {
  // A [3, 4] window at offset 10 of a 16-element storage whose rows overlap (stride 0):
  // in bounds itself, but strides (1, 3) would reach 10 + 2 + 9 = 21.
  const FloatTensor base({16});
  const FloatTensor window = base.AsStrided({3, 4}, {0, 1}, 10).value();
  auto bad = ViewTransposedFp8Scale(window);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message,
              HasSubstr("view_transposed_fp8_scale: as_strided: shape [3, 4] strides (1, 3) offset 10 reaches element "
                        "21 of a storage of 16 elements"));
}

TEST(MaterializeScale, RowMajorCopy) {
  const auto [x, gain] = MakeInputs(64, 1024);
  const Fp8Quantized row = FusedRmsFp8GroupQuant(x, gain, kEps, 128, false).value();
  const Fp8Quantized col = FusedRmsFp8GroupQuant(x, gain, kEps, 128, true).value();
  auto m = MaterializeScale(ViewTransposedFp8Scale(col.scale).value());
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->IsContiguous());
  EXPECT_FALSE(m->SharesStorageWith(col.scale));
  EXPECT_FALSE(FirstDifference(*m, row.scale).has_value());
  auto bad = MaterializeScale(FloatTensor({2, 2, 2}));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("expected a 2-D scale [M, G], got shape [2, 2, 2] strides (4, 2, 1)"));
}

TEST(FusedRmsNormFp8ForGemm, ProducerRepairsUnlessTheFaultIsOn) {
  const auto [x, gain] = MakeInputs(64, 1024);
  const Fp8Quantized row = FusedRmsFp8GroupQuant(x, gain, kEps, 128, false).value();
  const Fp8Quantized good = FusedRmsNormFp8ForGemm(x, gain, kEps, false).value();
  EXPECT_EQ(good.scale.strides(), (Shape{1, 64}));
  EXPECT_FALSE(FirstDifference(good.scale, row.scale).has_value());
  EXPECT_FALSE(FirstDifference(good.q, row.q).has_value());
  const Fp8Quantized faulty = FusedRmsNormFp8ForGemm(x, gain, kEps, true).value();
  EXPECT_EQ(faulty.scale.strides(), (Shape{8, 1}));
  EXPECT_TRUE(FirstDifference(faulty.scale, row.scale).has_value());
  // RepairProducerScale with the fault is the identity on metadata and storage.
  const FloatTensor passed = RepairProducerScale(good.scale, true).value();
  EXPECT_EQ(passed.strides(), good.scale.strides());
  EXPECT_EQ(passed.data_ptr(), good.scale.data_ptr());
}

TEST(FusedRmsFp8GroupQuant, BadShapesNameTheShapes) {
  auto ragged = FusedRmsFp8GroupQuant(FloatTensor({4, 200}), FloatTensor({200}), kEps);
  ASSERT_FALSE(ragged.ok());
  EXPECT_THAT(ragged.error().message, HasSubstr("x shape [4, 200] does not split into groups of 128"));
  auto weight = FusedRmsFp8GroupQuant(FloatTensor({4, 256}), FloatTensor({128}), kEps);
  ASSERT_FALSE(weight.ok());
  EXPECT_THAT(weight.error().message, HasSubstr("weight shape [128] strides (1)"));
  EXPECT_FALSE(FusedRmsFp8GroupQuant(FloatTensor({4, 256}), FloatTensor({256}), kEps, 0).ok());
  EXPECT_FALSE(FusedRmsFp8GroupQuant(FloatTensor({256}), FloatTensor({256}), kEps).ok());
}

TEST(FusedRmsFp8GroupQuant, AllZeroGroupGetsZeroCodes) {
  FloatTensor gain({256});
  for (int i = 0; i < 256; ++i) gain.mutable_data_ptr()[i] = i < 128 ? 0.0f : 1.0f;
  const FloatTensor x = RandomBf16Normal({2, 256}, 3);
  const Fp8Quantized q = FusedRmsFp8GroupQuant(x, gain, kEps).value();
  EXPECT_EQ(q.scale.At(0, 0), kFp8MinAmax / 448.0f);
  for (int64_t c = 0; c < 128; ++c) EXPECT_EQ(q.q.At(0, c) & 0x7F, 0) << c;
}

TEST(QuantizeFp8Blocks, OneScalePerBlock) {
  const FloatTensor w = RandomBf16Normal({256, 384}, 5, 0.02f);
  auto q = QuantizeFp8Blocks(w);
  ASSERT_TRUE(q.ok()) << q.error().message;
  ASSERT_EQ(q->scale.shape(), (Shape{2, 3}));
  for (int64_t bn = 0; bn < 2; ++bn)
    for (int64_t bk = 0; bk < 3; ++bk) {
      float amax = 0;
      for (int64_t r = bn * 128; r < (bn + 1) * 128; ++r)
        for (int64_t c = bk * 128; c < (bk + 1) * 128; ++c) amax = std::max(amax, std::fabs(w.At(r, c)));
      EXPECT_EQ(q->scale.At(bn, bk), amax / 448.0f);
    }
  for (int64_t r = 0; r < 256; ++r)
    for (int64_t c = 0; c < 384; ++c) {
      const float s = q->scale.At(r / 128, c / 128);
      const double v = w.At(r, c), dq = DecodeFp8E4M3(q->q.At(r, c)) * double(s);
      ASSERT_LE(std::fabs(dq - v), std::max(0x1p-4 * std::fabs(v), 0x1p-10 * s) * (1 + 1e-6)) << r << "," << c;
    }
  auto bad = QuantizeFp8Blocks(FloatTensor({130, 256}));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("shape [130, 256]"));
}

}  // namespace
}  // namespace harness::kernels
