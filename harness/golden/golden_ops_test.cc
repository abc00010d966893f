#include "harness/golden/golden_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(GoldenOpsTest, DiffNamesMissingUnexpectedAndChangedRows) {
  const std::vector<harness::OpRow> expected = {
      {"a.x.default", "[2]", 1, 0}, {"a.y.default", "", 2, 0}, {"a.z.default", "[4], [4]", 3, 0}};
  const std::vector<harness::OpRow> actual = {{"a.y.default", "", 1, 9.0},
                                              {"a.y.default", "", 1, 9.0},
                                              {"a.z.default", "[4], [4]", 1, 0},
                                              {"a.w.default", "[1]", 5, 0}};
  EXPECT_THAT(
      DiffOpTables(expected, actual),
      ::testing::ElementsAre("missing: a.x.default [2] x1", "calls differ: a.z.default [4], [4]: expected 3, got 1",
                             "unexpected: a.w.default [1] x5"));
  EXPECT_THAT(DiffOpTables(expected, expected), ::testing::IsEmpty());
  const harness::Json j = GoldenOpTableJson("s/t_0", actual);
  EXPECT_EQ(j["format_version"], 1);
  ASSERT_EQ(j["ops"].size(), 3u);  // a.y merged into one row of 2 calls
  EXPECT_EQ(j["ops"][1]["op"], "a.y.default");
  EXPECT_EQ(j["ops"][1]["calls"], 2);
}

TEST(GoldenOpsTest, StructuredDiffListsAddedRemovedChangedRows) {
  const std::vector<harness::OpRow> before = {
      {"a.x.default", "[2]", 1, 0}, {"a.y.default", "", 2, 0}, {"a.z.default", "[4]", 3, 0}};
  const std::vector<harness::OpRow> after = {{"a.y.default", "", 2, 5.0}, {"a.z.default", "[4]", 1, 0}};
  const OpTableDiff d = DiffOpTableRows(before, after);
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.removed[0].op, "a.x.default");
  EXPECT_EQ(d.removed[0].calls_before, 1);
  EXPECT_TRUE(d.added.empty());
  ASSERT_EQ(d.changed.size(), 1u);
  EXPECT_EQ(d.changed[0].calls_before, 3);
  EXPECT_EQ(d.changed[0].calls_after, 1);
  EXPECT_TRUE(d.stale.empty()) << "a.x vanished but nothing replaced it";
  EXPECT_TRUE(DiffOpTableRows(before, before).empty());
}

TEST(GoldenOpsTest, StaleHintWhenAnOpIsReplacedByOneExtendingItsNameWithTheSameCalls) {
  const std::vector<harness::OpRow> before = {{"tensor_cast.grouped_matmul_mxfp4_swiglu.default", "[8, 64]", 2, 0},
                                              {"aten.mm.default", "[2]", 1, 0}};
  const std::vector<harness::OpRow> after = {{"tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default", "[8, 64]", 2, 0},
                                             {"aten.mm.default", "[2]", 1, 0}};
  const OpTableDiff d = DiffOpTableRows(before, after);
  ASSERT_EQ(d.stale.size(), 1u);
  EXPECT_EQ(StaleHintText(d.stale[0]),
            "expectation may be stale: tensor_cast.grouped_matmul_mxfp4_swiglu.default → "
            "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default");
  EXPECT_TRUE(DiffOpTableRows(after, before).stale.empty()) << "a shorter name does not start with the old stem";
  auto other_calls = after;
  other_calls[0].calls = 3;
  EXPECT_TRUE(DiffOpTableRows(before, other_calls).stale.empty()) << "different calls: not the same work";
  auto unrelated = after;
  unrelated[0].op = "tensor_cast.rms_norm.default";
  EXPECT_TRUE(DiffOpTableRows(before, unrelated).stale.empty()) << "another name: not a rename";
  auto still_there = after;
  still_there.push_back({"tensor_cast.grouped_matmul_mxfp4_swiglu.default", "[1, 64]", 1, 0});
  EXPECT_TRUE(DiffOpTableRows(before, still_there).stale.empty()) << "the old op did not vanish";
}

}  // namespace
}  // namespace harness
