#include "runners/refstack/kernels/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness::kernels {
namespace {

using ::testing::HasSubstr;

FloatTensor Iota(Shape shape) {
  std::vector<float> data(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  return FloatTensor::FromData(std::move(shape), std::move(data)).value();
}

TEST(Tensor, RowMajorMetadata) {
  FloatTensor t({2, 3, 4});
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.offset(), 0);
  EXPECT_TRUE(t.IsContiguous());
  EXPECT_EQ(t.Describe(), "shape [2, 3, 4] strides (12, 4, 1) offset 0");
  EXPECT_EQ(RowMajorStrides({0, 5}), (Shape{5, 1}));
}

TEST(Tensor, FromDataChecksSize) {
  auto bad = FloatTensor::FromData({2, 3}, std::vector<float>(5));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("shape [2, 3] needs 6 elements, got 5"));
  EXPECT_FALSE(FloatTensor::FromData({-1, 3}, {}).ok());
}

TEST(Tensor, VersionCountsWritesThroughEveryView) {
  FloatTensor t = Iota({2, 3});
  const FloatTensor view = t.AsStrided({3, 2}, {1, 3}).value();
  const uint64_t before = t.version();
  EXPECT_EQ(view.version(), before);
  (void)t.data_ptr();
  (void)t.Values();
  (void)t.Clone();
  EXPECT_EQ(t.version(), before) << "reads and copies are not writes";
  FloatTensor alias = view;
  alias.mutable_data_ptr()[1] = 7;
  EXPECT_EQ(t.version(), before + 1);
  EXPECT_EQ(view.version(), before + 1);
  EXPECT_EQ(t.At(0, 1), 7);
  EXPECT_EQ(t.Clone().version(), 1u) << "a clone has its own storage and counts the write that filled it";
}

TEST(Tensor, AsStridedIsAZeroCopyView) {
  FloatTensor t = Iota({2, 3});  // storage 0..5
  auto v = t.AsStrided({3, 2}, {1, 3});
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_TRUE(v->SharesStorageWith(t));
  EXPECT_EQ(v->storage_id(), t.storage_id());
  EXPECT_EQ(v->data_ptr(), t.data_ptr());
  EXPECT_FALSE(v->IsContiguous());
  // The transpose: v[i][j] == t[j][i].
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) EXPECT_EQ(v->At(i, j), t.At(j, i));
  // Writes through the base are visible through the view.
  t.mutable_data_ptr()[1] = 100;
  EXPECT_EQ(v->At(1, 0), 100);
}

TEST(Tensor, AsStridedWithOffsetMovesDataPtrNotStorage) {
  FloatTensor t = Iota({4, 4});
  auto row2 = t.AsStrided({4}, {1}, 8);
  ASSERT_TRUE(row2.ok());
  EXPECT_EQ(row2->storage_id(), t.storage_id());
  EXPECT_EQ(row2->data_ptr(), t.data_ptr() + 8);
  EXPECT_EQ(row2->Values(), (std::vector<float>{8, 9, 10, 11}));
}

TEST(Tensor, AsStridedRejectsOutOfBoundsViews) {
  FloatTensor t = Iota({2, 3});
  auto past = t.AsStrided({3, 2}, {2, 1}, 1);  // last element at 1 + 4 + 1 = 6
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.error().message,
              HasSubstr("shape [3, 2] strides (2, 1) offset 1 reaches element 6 of a storage of 6 elements"));
  EXPECT_FALSE(t.AsStrided({2}, {1, 1}).ok());         // rank mismatch
  EXPECT_FALSE(t.AsStrided({2}, {-1}).ok());           // negative stride
  EXPECT_TRUE(t.AsStrided({0, 100}, {100, 1}).ok());   // empty views touch nothing
}

TEST(Tensor, ContiguousCopiesOnlyWhenNeeded) {
  FloatTensor t = Iota({2, 3});
  EXPECT_TRUE(t.Contiguous().SharesStorageWith(t));
  FloatTensor tr = t.AsStrided({3, 2}, {1, 3}).value();
  FloatTensor c = tr.Contiguous();
  EXPECT_FALSE(c.SharesStorageWith(tr));
  EXPECT_TRUE(c.IsContiguous());
  EXPECT_EQ(c.Values(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_FALSE(FirstDifference(c, tr).has_value());
  EXPECT_FALSE(t.Clone().SharesStorageWith(t));
}

TEST(Tensor, LayoutRulesIgnoreSizeOneDimensions) {
  EXPECT_TRUE(SameLayout({1, 8}, {8, 1}, {1, 1}));
  EXPECT_FALSE(SameLayout({2, 8}, {8, 1}, {1, 2}));
  EXPECT_TRUE(FloatTensor({1, 8}).AsStrided({1, 8}, {1, 1}).value().IsContiguous());
  EXPECT_TRUE(IsNonOverlapping({64, 8}, {1, 64}));
  EXPECT_TRUE(IsNonOverlapping({64, 8}, {8, 1}));
  EXPECT_FALSE(IsNonOverlapping({64, 8}, {1, 1}));
  EXPECT_FALSE(IsNonOverlapping({64, 8}, {0, 1}));
  EXPECT_TRUE(IsNonOverlapping({1, 8}, {0, 1}));
  EXPECT_TRUE(IsNonOverlapping({0, 8}, {1, 0}));  // empty: nothing to overlap
}

TEST(Tensor, FirstDifferenceNamesTheElement) {
  FloatTensor a = Iota({2, 2});
  FloatTensor b = a.Clone();
  b.mutable_data_ptr()[3] = 7;
  EXPECT_EQ(FirstDifference(a, b).value_or(""), "element [1, 1]: 3 vs 7");
  EXPECT_EQ(FirstDifference(a, Iota({4})).value_or(""), "shapes differ: [2, 2] vs [4]");
  FloatTensor z({1}), nz({1});
  nz.mutable_data_ptr()[0] = -0.0f;
  EXPECT_TRUE(FirstDifference(z, nz).has_value());  // bitwise: -0 differs from +0
}

}  // namespace
}  // namespace harness::kernels
