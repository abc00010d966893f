// The fleet generator (harness/store/fleet_db.h): its JUnit file is what its database
// holds, as `harness ingest` reads it, and its nightlies have the mix the benchmark claims.
#include "harness/store/fleet_db.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "harness/ingest/junit_xml.h"

namespace harness::bench {
namespace {

TEST(FleetDb, TheJunitFileParsesToTheCasesTheDatabaseHolds) {
  const int n = 7;
  const auto cases = FleetCases(n);
  auto parsed = ParseJunitXml(FleetJunitXml(n), "fleet.xml", "");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), cases.size());
  ASSERT_EQ(cases.size(), static_cast<std::size_t>(kFleetCases));
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const auto& want = cases[k];
    const auto& got = (*parsed)[k];
    SCOPED_TRACE(want.result.case_id);
    EXPECT_EQ(got.suite, want.suite);
    EXPECT_EQ(got.result.case_id, want.result.case_id);
    EXPECT_EQ(got.result.status, want.result.status);
    EXPECT_EQ(got.result.message, want.result.message);
    EXPECT_NEAR(got.result.duration_s, want.result.duration_s, 5e-4);  // time="%.3f"
    ASSERT_EQ(got.result.metrics.size(), want.result.metrics.size());
    for (std::size_t m = 0; m < want.result.metrics.size(); ++m) {
      EXPECT_EQ(got.result.metrics[m].name, want.result.metrics[m].name);
      EXPECT_EQ(got.result.metrics[m].value, want.result.metrics[m].value);
    }
  }
}

TEST(FleetDb, NightliesHaveFailuresFlakyCasesSkipsAndAFewMetricsEach) {
  std::map<CaseStatus, int> count;
  const auto a = FleetCases(10), b = FleetCases(11);
  int flipped = 0;
  std::set<std::string> ids;
  for (std::size_t k = 0; k < a.size(); ++k) {
    ++count[a[k].result.status];
    flipped += a[k].result.status != b[k].result.status;
    ids.insert(a[k].result.case_id);
    EXPECT_GE(a[k].result.metrics.size(), 2u);
    EXPECT_LE(a[k].result.metrics.size(), 3u);
    if (a[k].result.status == CaseStatus::kFail) {
      EXPECT_NE(a[k].result.message.find("AssertionError"), std::string::npos);
    }
  }
  EXPECT_EQ(ids.size(), a.size()) << "case ids are unique";
  const double n = static_cast<double>(a.size());
  EXPECT_GT(count[CaseStatus::kFail] / n, 0.01);
  EXPECT_LT(count[CaseStatus::kFail] / n, 0.04);
  EXPECT_GT(count[CaseStatus::kSkip] / n, 0.02);
  EXPECT_GT(count[CaseStatus::kError], 0);
  EXPECT_GT(flipped / n, 0.008) << "about 1 % flaky, alternating between nightlies";
  EXPECT_LT(flipped / n, 0.02);
  EXPECT_NE(FleetSha(0), FleetSha(1));
}

}  // namespace
}  // namespace harness::bench
