// The flaky section's ranking and count (the loader's part is tested through BuildReport,
// reports/report_model_test.cc).
#include "reports/sections/flaky.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "reports/report_model.h"

namespace harness::reports {
namespace {

// The ranking is one order whatever order the rows come in: every order of six rows, four
// tied on probability (ties go by case id, then by metric).
TEST(ReportModel, RankFlakyOrdersByProbabilityThenCase) {
  std::vector<std::tuple<std::string, double, std::string>> rows = {{"a", 0.1, "status"}, {"a", 0.1, "accuracy"},
                                                                    {"b", 0.1, "status"}, {"c", 0.3, "status"},
                                                                    {"d", 0.1, "status"}, {"e", 0.2, "status"}};
  std::sort(rows.begin(), rows.end());
  do {
    std::vector<FlakyEntry> e;
    for (const auto& [id, p, metric] : rows) {
      e.emplace_back();
      e.back().case_id = id;
      e.back().metric = metric;
      e.back().estimate.probability = p;
    }
    RankFlaky(e);
    std::vector<std::string> ranked;
    for (const auto& f : e) ranked.push_back(f.case_id + "/" + f.metric);
    EXPECT_EQ(ranked,
              (std::vector<std::string>{"c/status", "e/status", "a/accuracy", "a/status", "b/status", "d/status"}))
        << ::testing::PrintToString(rows);
  } while (std::next_permutation(rows.begin(), rows.end()));
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
