// A CI re-run of a shard job stores another attempt of the same shard of the same nightly:
// through the real binary, `merge` in any order names each replaced attempt, and the report
// and compare count the latest finished attempt of each shard only (the others are listed
// as reruns); an attempt that never finished is not the nightly's while a finished one exists.
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/sqlite_test_util.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"

namespace harness {
// Named, not anonymous: the unity build puts this file beside other tests of scale_tests.
namespace shard_rerun_e2e {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_util::ExecSql;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

constexpr int kCases = 7;
const std::string kSha = "5eed0000000000000000000000000000000000aa";

// Seven selftest cases; every one's outcome comes from the state file, which each attempt
// writes before it runs (the stack under test behaving differently on the re-run).
struct Nightly {
  TempDir dir;
  fs::path state = dir / "state.json";
  Nightly() {
    std::string rows;
    for (int i = 0; i < kCases; ++i)
      rows += fmt::format("{}{{\"outcome\": \"pass\", \"note\": \"case {}\", \"state_file\": \"{}\"}}", i ? "," : "", i,
                          state.string());
    WriteFile(dir / "suites/selftest.json", SelftestTable(rows));
  }
  // The database of attempt `attempt` of shard I/3, its cases all `outcome`, started at
  // hour `hour` of the night (CI re-runs a job after the first attempt finished).
  fs::path Attempt(int shard, int attempt, const std::string& outcome, int hour, bool finished = true) {
    const fs::path db = dir / fmt::format("shard{}-attempt{}.db", shard, attempt);
    WriteFile(state, fmt::format(R"({{"outcome": "{}"}})", outcome));
    auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db.string(), "--commit", kSha,
                         "--repo", dir.path().string(), "--shard", fmt::format("{}/3", shard), "--nightly",
                         "gh-777"});
    EXPECT_LE(r.exit_code, 1) << r.err;
    ExecSql(db, fmt::format("UPDATE runs SET started_at = '2026-01-01T{0:02}:00:00Z', finished_at = "
                         "'2026-01-01T{0:02}:30:00Z'",
                         hour));
    if (!finished) ExecSql(db, "UPDATE runs SET status = 'running', finished_at = NULL");
    return db;
  }
};

// case id -> status word of what compare pairs at kSha.
std::map<std::string, std::string> NewestAt(const fs::path& db) {
  auto store = std::move(Store::OpenReadOnly(db)).value();
  std::map<std::string, std::string> out;
  const auto cases = store->reader().NewestCasesAt(kSha).value();
  for (const auto& c : cases) out[c.result.case_id] = std::string(Word(c.result.status));
  return out;
}

// The report of a merged database counts seven cases, each its nightly's status (`fails`
// failing), with the replaced attempts listed as reruns and each shard's attempt named.
void ExpectTheNightlyInTheReport(const fs::path& merged, int64_t fails) {
  const auto report = RunHarness({"report", "--db", merged.string(), "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const Json model = ParseJson(report.out, "report").value();
  ASSERT_EQ(model["summary"].size(), 1u) << report.out;
  const Json& s = model["summary"][0];
  EXPECT_EQ(s["pass"].get<int>() + s["at_risk"].get<int>() + s["fail"].get<int>() + s["error"].get<int>() +
                s["skip"].get<int>(),
            kCases)
      << s.dump();
  EXPECT_EQ(s["fail"].get<int64_t>(), fails) << s.dump();
  std::multiset<std::string> reruns, shards;
  for (const auto& r : s["reruns"]) reruns.insert(r["shard"].get<std::string>() + "#" + std::to_string(r["attempt"].get<int>()));
  for (const auto& r : s["shards"]) shards.insert(r["shard"].get<std::string>() + "#" + std::to_string(r["attempt"].get<int>()));
  EXPECT_EQ(reruns, (std::multiset<std::string>{"1/3#1", "2/3#1", "2/3#2"})) << s.dump();
  EXPECT_EQ(shards, (std::multiset<std::string>{"0/3#1", "1/3#2", "2/3#3"})) << s.dump();
  EXPECT_TRUE(model["incomplete_nightlies"].empty()) << report.out;
  // The text report names the replaced attempts too.
  const auto text = RunHarness({"report", "--db", merged.string(), "--format", "text"});
  EXPECT_THAT(text.out, HasSubstr("shard 2/3 attempt 2 (run ")) << text.out;
  EXPECT_THAT(text.out, HasSubstr("replaced by a re-run (run ")) << text.out;
}

TEST(ShardRerunE2E, TheLatestFinishedAttemptOfEachShardIsTheNightlysInAnyMergeOrder) {
  Nightly n;
  // Shard 0 once (fail), then an attempt that never finished (pass: not the nightly's);
  // shard 1 failed and was re-run green; shard 2 failed twice, green at the third attempt.
  const fs::path s0a1 = n.Attempt(0, 1, "fail", 1);
  const fs::path s0a2 = n.Attempt(0, 2, "pass", 5, /*finished=*/false);
  const fs::path s1a1 = n.Attempt(1, 1, "fail", 1);
  const fs::path s1a2 = n.Attempt(1, 2, "pass", 3);
  const fs::path s2a1 = n.Attempt(2, 1, "fail", 1);
  const fs::path s2a2 = n.Attempt(2, 2, "fail", 2);
  const fs::path s2a3 = n.Attempt(2, 3, "pass", 4);
  if (HasFailure()) return;
  // What the nightly is: the cases of shard 0's first attempt (fail) and of the last
  // attempts of shards 1 and 2 (pass).
  std::map<std::string, std::string> expected;
  for (const fs::path& db : {s0a1, s1a2, s2a3}) {
    auto store = std::move(Store::OpenReadOnly(db)).value();
    const auto cases = store->reader().Cases(1).value();
    for (const auto& c : cases) expected[c.result.case_id] = std::string(Word(c.result.status));
  }
  ASSERT_EQ(expected.size(), static_cast<std::size_t>(kCases));
  const auto fails = std::count_if(expected.begin(), expected.end(), [](const auto& e) { return e.second == "fail"; });
  ASSERT_GT(fails, 0);
  ASSERT_LT(fails, kCases) << "shard 0 must not hold every case";

  const std::vector<std::vector<fs::path>> orders = {{s0a1, s0a2, s1a1, s1a2, s2a1, s2a2, s2a3},
                                                     {s2a3, s2a2, s2a1, s1a2, s1a1, s0a2, s0a1},
                                                     {s1a2, s2a1, s0a2, s2a3, s1a1, s0a1, s2a2}};
  for (std::size_t o = 0; o < orders.size(); ++o) {
    const fs::path merged = n.dir / fmt::format("merged-{}.db", o);
    std::vector<std::string> args = {"merge", merged.string()};
    for (const auto& p : orders[o]) args.push_back(p.string());
    const auto m = RunHarness(args);
    ASSERT_EQ(m.exit_code, 0) << "order " << o << ": " << m.err;
    // merge names every replaced attempt, with the attempt that replaced it.
    EXPECT_THAT(m.out, HasSubstr("nightly gh-777 at 5eed00000000: shard 1/3: attempt 2 (run ")) << m.out;
    EXPECT_THAT(m.out, ::testing::ContainsRegex("shard 1/3: attempt 2 \\(run [0-9]+\\) replaces attempt 1 \\(run "
                                                "[0-9]+, kept as a rerun\\)"))
        << m.out;
    EXPECT_THAT(m.out, ::testing::ContainsRegex("shard 2/3: attempt 3 \\(run [0-9]+\\) replaces attempt 1 \\(run "
                                                "[0-9]+, kept as a rerun\\)"))
        << m.out;
    EXPECT_THAT(m.out, ::testing::ContainsRegex("shard 2/3: attempt 3 \\(run [0-9]+\\) replaces attempt 2 \\(run "
                                                "[0-9]+, kept as a rerun\\)"))
        << m.out;
    EXPECT_THAT(m.out, ::testing::ContainsRegex("shard 0/3: attempt 1 \\(run [0-9]+\\) replaces attempt 2 \\(run "
                                                "[0-9]+, unfinished, kept as a rerun\\)"))
        << m.out;

    ExpectTheNightlyInTheReport(merged, fails);
    // compare pairs the nightly's results, not whichever attempt was merged last.
    EXPECT_EQ(NewestAt(merged), expected) << "order " << o;
  }
}

}  // namespace shard_rerun_e2e
}  // namespace harness
