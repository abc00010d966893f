#include "reports/run_summary.h"

#include <gtest/gtest.h>

namespace harness::reports {
namespace {

// A different number of cases per status, so each count lands in its own column: 4 pass,
// 3 fail, 2 error, 1 skip; with an error the run is an error (exit 3) however many failed.
std::vector<CaseResult> Mixed() {
  std::vector<CaseResult> cases;
  int i = 0;
  for (auto [status, count] : {std::pair{CaseStatus::kPass, 4}, {CaseStatus::kFail, 3}, {CaseStatus::kError, 2},
                               {CaseStatus::kSkip, 1}})
    for (int k = 0; k < count; ++k) cases.push_back({"s/t_" + std::to_string(i++), status, 0, "", {}, {}});
  return cases;
}

TEST(RunSummary, EachStatusCountsInItsOwnColumn) {
  const Json context = {{"endpoint", {{"base_url", "http://127.0.0.1:30000"}}}};
  const Json j = RunSummaryJson(7, "abc1234", "0123456789abcdef", context, Mixed());
  EXPECT_EQ(j["identity"], "0123456789abcdef");
  EXPECT_EQ(j["context"], context);
  EXPECT_EQ(j["summary"], (Json{{"pass", 4}, {"fail", 3}, {"error", 2}, {"skip", 1}}));
  EXPECT_EQ(j["status"], "error");
  ASSERT_EQ(j["cases"].size(), 10u);
  EXPECT_EQ(j["cases"][4]["status"], "fail");
  EXPECT_EQ(j["night_verdict"], "INCOMPLETE");
  const std::string text = RunSummaryText(Mixed(), JudgeNight(Mixed()));
  EXPECT_TRUE(text.ends_with("\nharness nightly: INCOMPLETE - 4 passed, 3 failed, 0 regressed, 2 errors, 1 skipped\n"))
      << text;
}

TEST(RunSummary, KeyDetailIsTheMessagesWholeFirstLineElseTheFirstMetric) {
  EXPECT_EQ(KeyDetail({"s/t_0", CaseStatus::kFail, 0, "calls differ: 3 expected, 2 seen\nsuite.cc:12: Failed", {}, {}}),
            "calls differ: 3 expected, 2 seen");
  // The numbers at the end of a long finding stay in view.
  const std::string gate = "AT-RISK at gate 0.91 (sampling question: the 95% interval [0.9089, 0.9365] of 1218/1319 "
                           "straddles the gate; a fresh sample fails it with p = 0.046)";
  EXPECT_EQ(KeyDetail({"s/t_0", CaseStatus::kPass, 0, gate + "\nmore", {}, {}}), gate);
  EXPECT_EQ(KeyDetail({"s/t_0", CaseStatus::kFail, 0, std::string(1000, 'x'), {}, {}}),
            std::string(kMaxKeyDetailBytes, 'x') + "...");
  EXPECT_EQ(KeyDetail({"s/t_0", CaseStatus::kPass, 0, "", {{"accuracy", 0.925, 1319, 0.91, 0.94}}, {}}),
            "accuracy=0.925 [0.91, 0.94]");
}

}  // namespace
}  // namespace harness::reports
