// Sharded nightlies through the real binary: `harness run --shard I/N` (and GoogleTest's
// GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX), then `harness merge`, give the cases and results
// of one unsharded run; merging twice adds nothing; bad inputs are refused by name.
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/util/json_file.h"
#include "harness/util/test_util.h"

namespace harness {
namespace {

using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::TempDir;

std::vector<std::string> Listed(const std::vector<std::string>& extra, const ProcessOptions& o = {}) {
  std::vector<std::string> args = {"run", "--list", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = RunHarness(args, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? Json::parse(r.out).get<std::vector<std::string>>() : std::vector<std::string>{};
}

// case id -> "status metric=value ... samples=N correct=K" for the newest finished result
// of each case at sha (timing metrics left out).
std::map<std::string, std::string> Results(const std::filesystem::path& db, const std::string& sha) {
  auto store = std::move(Store::OpenReadOnly(db)).value();
  std::map<std::string, std::string> out;
  const auto cases = store->NewestCasesAt(sha).value();
  for (const auto& c : cases) {
    std::string line(Word(c.result.status));
    const auto metrics = store->Metrics(c.id).value();
    for (const auto& m : metrics)
      // Timings differ from run to run; everything else must not.
      if (m.name.rfind("latency_", 0) != 0 && m.name.find("_per_s") == std::string::npos)
        line += " " + m.name + "=" + std::to_string(m.value);
    const auto samples = store->Samples(c.id).value();
    line += " samples=" + std::to_string(samples.size()) + " correct=" +
            std::to_string(std::count_if(samples.begin(), samples.end(),
                                         [](const Sample& x) { return x.outcome == "correct"; }));
    out[c.result.case_id] = line;
  }
  return out;
}

int64_t Rows(const std::filesystem::path& db) {
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h,
                     "SELECT (SELECT COUNT(*) FROM runs) + (SELECT COUNT(*) FROM case_results) + "
                     "(SELECT COUNT(*) FROM metrics) + (SELECT COUNT(*) FROM samples) + (SELECT COUNT(*) FROM op_rows)",
                     -1, &st, nullptr);
  int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

TEST(ShardE2E, ShardsListEveryNightlyCaseExactlyOnce) {
  const auto all = Listed({});
  ASSERT_GT(all.size(), 5u);
  for (int n : {2, 3, 5}) {
    std::multiset<std::string> joined;
    for (int i = 0; i < n; ++i)
      for (const auto& c : Listed({"--shard", std::to_string(i) + "/" + std::to_string(n)})) joined.insert(c);
    EXPECT_EQ(joined, std::multiset<std::string>(all.begin(), all.end())) << n << " shards";
  }
  // The GSM8K cases are the expensive ones: two shards get one each.
  for (int i = 0; i < 2; ++i) {
    auto mine = Listed({"--shard", std::to_string(i) + "/2"});
    EXPECT_EQ(std::count_if(mine.begin(), mine.end(), [](const std::string& c) { return c.rfind("gsm8k/", 0) == 0; }),
              1)
        << "shard " << i;
  }
  // GoogleTest's variables pick the same shard; --shard wins over them.
  ProcessOptions env{.env = {{"GTEST_TOTAL_SHARDS", "3"}, {"GTEST_SHARD_INDEX", "2"}}};
  EXPECT_EQ(Listed({}, env), Listed({"--shard", "2/3"}));
  EXPECT_EQ(Listed({"--shard", "0/3"}, env), Listed({"--shard", "0/3"}));
}

TEST(ShardE2E, BadShardsAreUsageErrors) {
  for (const char* bad : {"3/3", "x", "1/0"}) {
    auto r = RunHarness({"run", "--list", "--shard", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--shard"), std::string::npos) << r.err;
  }
  auto half = RunHarness({"run", "--list"}, {.env = {{"GTEST_TOTAL_SHARDS", "3"}}});
  EXPECT_EQ(half.exit_code, 2);
  EXPECT_NE(half.err.find("GTEST_SHARD_INDEX"), std::string::npos) << half.err;
  TempDir dir;
  auto no_nightly = RunHarness({"run", "--db", (dir / "h.db").string(), "--commit", "abc1234", "--shard", "0/2"});
  EXPECT_EQ(no_nightly.exit_code, 2);
  EXPECT_NE(no_nightly.err.find("--nightly"), std::string::npos) << no_nightly.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "h.db")) << "refused before the database was created";
}

TEST(ShardE2E, ThreeShardsMergedAreTheUnshardedRun) {
  TempDir dir;
  const std::string sha = "5eed000000000000000000000000000000000001";
  const std::vector<std::string> common = {"--commit", sha, "--seed", "7"};
  auto full_args = std::vector<std::string>{"run", "--db", (dir / "full.db").string()};
  full_args.insert(full_args.end(), common.begin(), common.end());
  auto full = RunHarness(full_args);
  ASSERT_EQ(full.exit_code, 0) << full.err;

  std::vector<std::string> merge = {"merge", (dir / "merged.db").string()};
  for (int i = 0; i < 3; ++i) {
    const std::string db = (dir / ("shard" + std::to_string(i) + ".db")).string();
    std::vector<std::string> args = {"run", "--db", db, "--nightly", "pipeline-42"};
    args.insert(args.end(), common.begin(), common.end());
    ProcessOptions o;
    if (i == 1) o.env = {{"GTEST_TOTAL_SHARDS", "3"}, {"GTEST_SHARD_INDEX", "1"}};  // as a CI engine sets them
    else args.insert(args.end(), {"--shard", std::to_string(i) + "/3"});
    auto r = RunHarness(args, o);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto store = std::move(Store::OpenReadOnly(db)).value();
    EXPECT_EQ(store->Run(0)->shard, std::to_string(i) + "/3") << "the run records its shard";
    EXPECT_EQ(Results(db, sha).size(), Listed({"--shard", std::to_string(i) + "/3"}).size())
        << "GoogleTest did not shard the shard a second time";
    merge.push_back(db);
  }
  auto m = RunHarness(merge);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("merged 3 databases"), std::string::npos) << m.out;

  const auto want = Results(dir / "full.db", sha);
  EXPECT_NE(m.out.find(": 3 runs, " + std::to_string(want.size()) + " cases added"), std::string::npos)
      << "the total line sums every input: " << m.out;
  EXPECT_EQ(want.size(), Listed({}).size());
  EXPECT_EQ(Results(dir / "merged.db", sha), want) << "same cases, statuses, metrics and sample counts";

  const int64_t rows = Rows(dir / "merged.db");
  auto again = RunHarness(merge);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(Rows(dir / "merged.db"), rows) << "merging the same shards again adds nothing";
  EXPECT_NE(again.out.find("0 runs added (1 already held)"), std::string::npos) << again.out;

  // One logical run in the report: its summary counts every shard's cases.
  auto report = RunHarness({"report", "--db", (dir / "merged.db").string(), "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto model = ParseJson(report.out, "report");
  ASSERT_TRUE(model.ok()) << model.error().message;
  int64_t counted = 0;
  for (const auto& s : (*model)["summary"])
    for (const char* k : {"pass", "at_risk", "fail", "error", "skip"}) counted += s[k].get<int64_t>();
  EXPECT_EQ(counted, static_cast<int64_t>(want.size())) << report.out;
  // ... and names the shards that hold each suite's cases, so a reader finds the CI job.
  std::set<std::string> shards_named;
  for (const auto& s : (*model)["summary"]) {
    EXPECT_EQ(s["nightly"], "pipeline-42") << s.dump();
    EXPECT_FALSE(s["shards"].empty()) << s.dump();
    for (const auto& sh : s["shards"]) shards_named.insert(sh["shard"].get<std::string>());
  }
  EXPECT_EQ(shards_named, (std::set<std::string>{"0/3", "1/3", "2/3"})) << report.out;
  auto text = RunHarness({"report", "--db", (dir / "merged.db").string(), "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("nightly pipeline-42, "), std::string::npos) << text.out;
  // History at the commit shows each case once (it ran in exactly one shard).
  auto history = RunHarness({"history", "--db", (dir / "merged.db").string(), "--suite", "gmm", "--format", "json"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
}

TEST(MergeE2E, RefusesNewerCorruptAndMissingInputsByName) {
  TempDir dir;
  const std::string good = (dir / "good.db").string();
  auto r = RunHarness({"run", "--db", good, "--commit", "abc1234", "--suite", "sequence_parallel"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::filesystem::copy_file(good, dir / "newer.db");
  {
    sqlite3* h = nullptr;
    sqlite3_open((dir / "newer.db").c_str(), &h);
    sqlite3_exec(h, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(h);
  }
  const std::string out = (dir / "out.db").string();
  auto newer = RunHarness({"merge", out, good, (dir / "newer.db").string()});
  EXPECT_EQ(newer.exit_code, 3);
  EXPECT_NE(newer.err.find("newer.db"), std::string::npos) << newer.err;
  EXPECT_FALSE(std::filesystem::exists(out)) << "a bad input among many: nothing merged, no output created";

  testing_util::WriteFile(dir / "junk.db", std::string(8192, 'j'));
  auto junk = RunHarness({"merge", out, (dir / "junk.db").string()});
  EXPECT_EQ(junk.exit_code, 3);
  EXPECT_NE(junk.err.find("junk.db"), std::string::npos) << junk.err;

  auto missing = RunHarness({"merge", out, (dir / "nope.db").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.db"), std::string::npos) << missing.err;
  auto self = RunHarness({"merge", good, good});
  EXPECT_EQ(self.exit_code, 2);
  auto none = RunHarness({"merge", out});
  EXPECT_EQ(none.exit_code, 2);
  auto ok = RunHarness({"merge", out, good});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("1 runs added"), std::string::npos) << ok.out;
}

}  // namespace
}  // namespace harness
