// Which shards of a nightly are missing (nightly_shards.h), from run rows and through a real
// store's NightlyRuns.
#include "harness/store/nightly_shards.h"
#include "harness/store/store.h"

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

RunRow Row(const std::string& nightly, const std::string& shard, RunStatus status = RunStatus::kPass,
           const std::string& sha = "abc1234000000000000000000000000000000000", const std::string& hash = "id1") {
  RunRow r;
  r.sha = sha;
  r.config_hash = hash;
  r.status = status;
  r.shard = shard;
  r.nightly = nightly;
  return r;
}

TEST(NightlyShards, AWholeNightlyHasNoGap) {
  EXPECT_TRUE(NightlyGaps({Row("n1", "0/3"), Row("n1", "2/3"), Row("n1", "1/3", RunStatus::kFail)}).empty());
  EXPECT_TRUE(NightlyGaps({Row("", "0/1"), Row("", "0/1")}).empty()) << "runs of their own are never a gap";
  EXPECT_TRUE(NightlyGaps({}).empty());
}

TEST(NightlyShards, NamesMissingAndUnfinishedShardsPerLogicalRun) {
  const auto gaps = NightlyGaps({Row("1234", "0/4"), Row("1234", "2/4", RunStatus::kRunning), Row("5678", "0/2"),
                                 Row("5678", "1/2"), Row("1234", "0/4", RunStatus::kPass, "def5678000", "id1")});
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].nightly, "1234");
  EXPECT_EQ(gaps[0].sha, "abc1234000000000000000000000000000000000");
  EXPECT_EQ(gaps[0].missing, (std::vector<std::string>{"1/4", "3/4"}));
  EXPECT_EQ(gaps[0].missing_count, 2u);
  EXPECT_EQ(gaps[0].unfinished, (std::vector<std::string>{"2/4"}));
  EXPECT_EQ(NightlyGapText(gaps[0]), "nightly 1234 at abc123400000: shards 1/4, 3/4 missing; shard 2/4 did not finish");
  // The same nightly id at another commit is another logical run: shard 0/4 alone there.
  EXPECT_EQ(gaps[1].sha, "def5678000");
  EXPECT_EQ(NightlyGapText(gaps[1]), "nightly 1234 at def5678000: shards 1/4, 2/4, 3/4 missing");
  // Two shards unfinished and none missing: the plural, and no ';' before it.
  const auto unfinished =
      NightlyGaps({Row("n", "0/3", RunStatus::kRunning), Row("n", "1/3", RunStatus::kRunning), Row("n", "2/3")});
  ASSERT_EQ(unfinished.size(), 1u);
  EXPECT_EQ(NightlyGapText(unfinished[0]), "nightly n at abc123400000: shards 0/3, 1/3 did not finish");
}

// A replaced attempt is called unfinished only while it still runs: one that ended in an
// error (a CI job killed mid-shard, marked so) or failed is kept as a rerun without the word.
TEST(NightlyShards, OnlyAReplacedAttemptStillRunningIsCalledUnfinished) {
  std::vector<RunRow> runs;
  for (RunStatus status : {RunStatus::kRunning, RunStatus::kError, RunStatus::kFail, RunStatus::kPass}) {
    runs.push_back(Row("n", "0/2", status));
    runs.back().id = runs.back().attempt = static_cast<int>(runs.size());
    if (status != RunStatus::kPass) runs.back().superseded_by = 4;
  }
  const std::string by = "nightly n at abc123400000: shard 0/2: attempt 4 (run 4) replaces ";
  EXPECT_EQ(ReplacedAttemptTexts(runs), (std::vector<std::string>{by + "attempt 1 (run 1, unfinished, kept as a rerun)",
                                                                  by + "attempt 2 (run 2, kept as a rerun)",
                                                                  by + "attempt 3 (run 3, kept as a rerun)"}));
}

TEST(NightlyShards, AFinishedRerunOfAShardCountsAndIdentitiesAreApart) {
  // A shard that ran twice, once killed and once to the end, is present.
  EXPECT_TRUE(NightlyGaps({Row("n", "0/2", RunStatus::kRunning), Row("n", "0/2"), Row("n", "1/2")}).empty());
  // Another measured identity is another logical run.
  const auto gaps = NightlyGaps({Row("n", "0/2"), Row("n", "1/2", RunStatus::kPass, "abc1234000000000000000000000000000000000", "id2")});
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].missing, (std::vector<std::string>{"1/2"}));
  EXPECT_EQ(gaps[1].missing, (std::vector<std::string>{"0/2"}));
}

TEST(NightlyShards, ShardsThatDisagreeOnTheCountAreJudgedPerCount) {
  // A 0/1 run (e.g. a bisect's confirming rerun under the same pipeline id) beside a 4-way nightly.
  const auto gaps = NightlyGaps({Row("n", "0/1"), Row("n", "0/4"), Row("n", "1/4"), Row("n", "2/4")});
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].missing, (std::vector<std::string>{"3/4"}));
}

TEST(NightlyShards, AHugeStoredCountIsNamedWithinABound) {
  const auto gaps = NightlyGaps({Row("n", "0/999999"), Row("n", "junk"), Row("n", "5/3"), Row("n", "0/9999999")});
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].missing.size(), kMaxNamedShards);
  EXPECT_EQ(gaps[0].missing_count, 999998u);
  EXPECT_NE(NightlyGapText(gaps[0]).find("and 999934 more missing"), std::string::npos) << NightlyGapText(gaps[0]);
}

TEST(NightlyShards, NightlyRunsReadsEveryRunOfTheIdFromAStore) {
  testing_util::TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  const int64_t commit = *store->writer().UpsertCommit({"abc1234000000000000000000000000000000000", {}, 1, 0, "s"});
  NewRun run{commit, "refstack", "id1", "{}", "host", "0.2.0"};
  run.nightly = "n";
  run.shard = "0/3";
  const int64_t first = *store->writer().BeginRun(run);
  ASSERT_TRUE(store->writer().FinishRun(first, RunStatus::kPass).ok());
  run.shard = "2/3";
  store->writer().BeginRun(run).value();  // left running
  run.nightly = "other";
  run.shard = "1/3";
  store->writer().BeginRun(run).value();
  const auto rows = store->reader().NightlyRuns("n").value();
  ASSERT_EQ(rows.size(), 2u);
  const auto gaps = NightlyGaps(rows);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(NightlyGapText(gaps[0]), "nightly n at abc123400000: shard 1/3 missing; shard 2/3 did not finish");
  EXPECT_TRUE(store->reader().NightlyRuns("").value().empty()) << "runs without a nightly id are no nightly";
}

}  // namespace
}  // namespace harness
