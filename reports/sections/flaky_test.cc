// The flaky section's ranking and count (the loader's part is tested through BuildReport,
// reports/report_model_test.cc).
#include "reports/sections/flaky.h"

#include <gtest/gtest.h>

#include <vector>

#include "reports/report_model.h"

namespace harness::reports {
namespace {

TEST(ReportModel, RankFlakyOrdersByProbabilityThenCase) {
  std::vector<FlakyEntry> e(3);
  e[0].case_id = "b";
  e[0].estimate.probability = 0.1;
  e[1].case_id = "a";
  e[1].estimate.probability = 0.1;
  e[2].case_id = "c";
  e[2].estimate.probability = 0.3;
  RankFlaky(e);
  EXPECT_EQ(e[0].case_id, "c");
  EXPECT_EQ(e[1].case_id, "a");
  EXPECT_EQ(e[2].case_id, "b");
}

// The count line names each kind with its own number, one or many: every kind held several
// times beside kinds held once, in each order.
TEST(ReportFlaky, TheCountNamesEachKindOneOrMany) {
  constexpr FlakyKind kGate = FlakyKind::kGate, kTolerance = FlakyKind::kTolerance, kStatus = FlakyKind::kStatus;
  auto entries = [](std::vector<FlakyKind> kinds) {
    std::vector<FlakyEntry> out;
    for (FlakyKind k : kinds) out.push_back(FlakyEntry{.kind = k});
    return out;
  };
  EXPECT_EQ(FlakyCount(entries({kGate})), "1 row: 1 gate, 0 tolerances, 0 status flips");
  EXPECT_EQ(FlakyCount(entries({kTolerance})), "1 row: 0 gates, 1 tolerance, 0 status flips");
  EXPECT_EQ(FlakyCount(entries({kStatus})), "1 row: 0 gates, 0 tolerances, 1 status flip");
  EXPECT_EQ(FlakyCount(entries({kStatus, kGate, kGate, kTolerance, kStatus, kStatus})),
            "6 rows: 2 gates, 1 tolerance, 3 status flips");
  EXPECT_EQ(FlakyCount(entries({kTolerance, kGate, kTolerance, kStatus})),
            "4 rows: 1 gate, 2 tolerances, 1 status flip");
}

}  // namespace
}  // namespace harness::reports
