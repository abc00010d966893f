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

}  // namespace
}  // namespace harness
