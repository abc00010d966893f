#include "reports/history_report.h"

#include <gtest/gtest.h>

namespace harness::reports {
namespace {

HistoryRow Row(const std::string& sha, const std::string& id, CaseStatus s, std::optional<double> v,
               std::string label = "") {
  HistoryRow r;
  r.sha = sha;
  r.ordinal = sha == "c1" ? 1 : 2;
  r.case_id = id;
  r.status = s;
  r.value = v;
  r.label = std::move(label);
  return r;
}

TEST(HistoryReport, RepeatedRunsOfACommitAreOneLineWithCountMeanAndEachStatus) {
  const std::vector<HistoryRow> rows = {Row("c1", "s/t_0", CaseStatus::kPass, 0.5),
                                        Row("c2", "s/t_0", CaseStatus::kPass, 0.6),
                                        Row("c2", "s/t_0", CaseStatus::kFail, 0.4),
                                        Row("c2", "s/t_1", CaseStatus::kPass, 0.9)};
  const auto groups = GroupHistory(rows);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[1].runs.size(), 2u);
  EXPECT_DOUBLE_EQ(*groups[1].mean, 0.5);
  const std::string text = HistoryText({.suite = "s", .metric = "m"}, rows);
  EXPECT_NE(text.find("PASS,FAIL"), std::string::npos) << text;
  EXPECT_NE(text.find("mean 0.5"), std::string::npos) << text;
  const Json j = HistoryJson({.suite = "s", .metric = "m"}, rows);
  EXPECT_EQ(j["format_version"], 2);
  ASSERT_EQ(j["commits"].size(), 2u);
  EXPECT_EQ(j["commits"][1]["cases"].size(), 2u);
  EXPECT_EQ(j["commits"][1]["cases"][0]["count"], 2);
  EXPECT_EQ(j["commits"][1]["cases"][0]["runs"][1]["status"], "fail");
}

TEST(HistoryReport, VerdictMetricsShowTheirWordsNotAMean) {
  const std::vector<HistoryRow> rows = {Row("c1", "g/t_0", CaseStatus::kPass, 1, "AT-RISK"),
                                        Row("c1", "g/t_0", CaseStatus::kPass, 0, "PASS")};
  const auto groups = GroupHistory(rows);
  EXPECT_FALSE(groups[0].mean.has_value());
  const std::string text = HistoryText({.case_id = "g/t_0", .metric = "gate_verdict"}, rows);
  EXPECT_NE(text.find("AT-RISK PASS"), std::string::npos) << text;
  const Json j = HistoryJson({.case_id = "g/t_0", .metric = "gate_verdict"}, rows);
  EXPECT_EQ(j["commits"][0]["cases"][0]["runs"][0]["verdict"], "AT-RISK");
}

// The text `history --format json` prints is the tree's dump, byte for byte, for every
// shape: no rows, one commit, several, repeated runs, intervals, counts, verdicts, values
// missing, no metric, a case or a suite, invalid UTF-8 and quotes in names.
TEST(HistoryReport, TheJsonTextIsTheDumpOfTheJsonTree) {
  auto interval = Row("c2", "s/t_0", CaseStatus::kFail, 0.4);
  interval.n = 1319;
  interval.low = 0.38;
  interval.high = 0.42;
  interval.subject = "fix \"quotes\" and \xff bytes";
  interval.started_at = "2024-01-01T00:00:00Z";
  interval.run_id = 7;
  const std::vector<std::vector<HistoryRow>> cases = {
      {},
      {Row("c1", "s/t_0", CaseStatus::kPass, 0.5)},
      {Row("c1", "s/t_0", CaseStatus::kPass, 0.5), Row("c2", "s/t_0", CaseStatus::kPass, std::nullopt), interval,
       Row("c2", "s/t_1", CaseStatus::kSkip, 0.9), Row("c2", "s/\xfe", CaseStatus::kError, 1e-300)},
      {Row("c1", "g/t_0", CaseStatus::kPass, 1, "AT-RISK"), Row("c1", "g/t_0", CaseStatus::kPass, 0, "PASS"),
       Row("c2", "g/t_0", CaseStatus::kPass, 2, "FAIL")}};
  for (const auto& rows : cases)
    for (const HistoryQuery& q : {HistoryQuery{.suite = "s", .metric = "m"}, HistoryQuery{.suite = "s"},
                                  HistoryQuery{.case_id = "g/t_0", .metric = "gate_verdict"}})
      EXPECT_EQ(HistoryJsonText(q, rows), DumpJson(HistoryJson(q, rows))) << rows.size() << " rows";
}

}  // namespace
}  // namespace harness::reports
