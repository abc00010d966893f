// Sharded nightlies through the real binary: `harness run --shard I/N` (and GoogleTest's
// GTEST_TOTAL_SHARDS/GTEST_SHARD_INDEX), then `harness merge`, give the cases and results
// of one unsharded run; merging twice adds nothing; bad inputs are refused by name; a lost
// shard is named by merge (exit 1) and by every report format; --nightly defaults to the CI
// engine's pipeline id.
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"

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
  const auto cases = store->reader().NewestCasesAt(sha).value();
  for (const auto& c : cases) {
    std::string line(Word(c.result.status));
    const auto metrics = store->reader().Metrics(c.id).value();
    for (const auto& m : metrics)
      // Timings differ from run to run; everything else must not.
      if (m.name.rfind("latency_", 0) != 0 && m.name.find("_per_s") == std::string::npos)
        line += " " + m.name + "=" + std::to_string(m.value);
    const auto samples = store->reader().Samples(c.id).value();
    line += " samples=" + std::to_string(samples.size()) + " correct=" +
            std::to_string(std::count_if(samples.begin(), samples.end(),
                                         [](const Sample& x) { return x.outcome == SampleOutcome::kCorrect; }));
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

// One logical run in the report of the merged database: its summary counts every shard's
// cases.
void ExpectMergedReportIsOneRun(const std::filesystem::path& merged, std::size_t cases) {
  auto report = RunHarness({"report", "--db", merged.string(), "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  auto model = ParseJson(report.out, "report");
  ASSERT_TRUE(model.ok()) << model.error().message;
  int64_t counted = 0;
  for (const auto& s : (*model)["summary"])
    // at_risk annotates passes (docs/report.md, "The night verdict"): counted within pass.
    for (const char* k : {"pass", "fail", "error", "skip"}) counted += s[k].get<int64_t>();
  EXPECT_EQ(counted, static_cast<int64_t>(cases)) << report.out;
  // ... and names the shards that hold each suite's cases, so a reader finds the CI job.
  std::set<std::string> shards_named;
  for (const auto& s : (*model)["summary"]) {
    EXPECT_EQ(s["nightly"], "pipeline-42") << s.dump();
    EXPECT_FALSE(s["shards"].empty()) << s.dump();
    for (const auto& sh : s["shards"]) shards_named.insert(sh["shard"].get<std::string>());
  }
  EXPECT_EQ(shards_named, (std::set<std::string>{"0/3", "1/3", "2/3"})) << report.out;
  auto text = RunHarness({"report", "--db", merged.string(), "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("nightly pipeline-42, "), std::string::npos) << text.out;
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
    EXPECT_EQ(store->reader().Run(0)->shard, std::to_string(i) + "/3") << "the run records its shard";
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

  ASSERT_NO_FATAL_FAILURE(ExpectMergedReportIsOneRun(dir / "merged.db", want.size()));
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

// Shard I/N of the gmm suite (five cheap cases, so each of four shards holds one) at sha,
// into its own database; its path.
std::string GmmShard(const TempDir& dir, const std::string& sha, const std::string& nightly, int i, int n) {
  const std::string db = (dir / fmt::format("{}-{}-{}.db", nightly, i, n)).string();
  auto r = RunHarness({"run", "--suite", "gmm", "--db", db, "--commit", sha, "--nightly", nightly, "--shard",
                       fmt::format("{}/{}", i, n)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return db;
}

Json ReportOf(const std::string& db) {
  auto r = RunHarness({"report", "--db", db, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = ParseJson(r.out, "report");
  EXPECT_TRUE(j.ok()) << r.out;
  return j.ok() ? *j : Json::object();
}

TEST(MergeE2E, ALostShardIsNamedExitsOneAndTheDatabaseIsStillWritten) {
  TempDir dir;
  const std::string sha = "5eed000000000000000000000000000000000007";
  std::vector<std::string> shards;
  for (int i : {0, 1, 3}) shards.push_back(GmmShard(dir, sha, "pipeline-7", i, 4));
  const std::string merged = (dir / "merged.db").string();
  std::vector<std::string> merge = {"merge", merged};
  merge.insert(merge.end(), shards.begin(), shards.end());
  auto m = RunHarness(merge);
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_NE(m.err.find("incomplete nightly pipeline-7 at 5eed00000000: shard 2/4 missing"), std::string::npos) << m.err;
  EXPECT_NE(m.out.find("merged 3 databases"), std::string::npos) << "the data is merged all the same: " << m.out;
  EXPECT_EQ(std::move(Store::OpenReadOnly(merged)).value()->reader().NightlyRuns("pipeline-7")->size(), 3u);

  // Every report format says so in its summary.
  const Json model = ReportOf(merged);
  ASSERT_EQ(model["incomplete_nightlies"].size(), 1u) << model.dump();
  EXPECT_EQ(model["incomplete_nightlies"][0]["nightly"], "pipeline-7");
  EXPECT_EQ(model["incomplete_nightlies"][0]["commit"], sha);
  EXPECT_EQ(model["incomplete_nightlies"][0]["missing"], Json::array({"2/4"}));
  auto text = RunHarness({"report", "--db", merged, "--format", "text"});
  EXPECT_NE(text.out.find("SUMMARY (latest nightly per suite; at-risk counts passes, regressed counts failures)\n  WARNING: incomplete nightly pipeline-7 at 5eed00000000: "
                          "shard 2/4 missing"),
            std::string::npos)
      << text.out;
  auto html = RunHarness({"report", "--db", merged, "--out", (dir / "r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = ReadFile(dir / "r.html");
  const auto summary = page.find("<section id=\"summary\">");
  const auto warning = page.find("<strong>Incomplete nightly:</strong> nightly pipeline-7 at 5eed00000000: shard 2/4 missing");
  EXPECT_NE(warning, std::string::npos) << page.substr(summary, 800);
  EXPECT_LT(summary, warning) << "in the summary";
  EXPECT_LT(warning, page.find("<div class=\"cards\">")) << "above the counts";
  auto md = RunHarness({"report", "--db", merged, "--format", "markdown"});
  EXPECT_NE(md.out.find("> **Warning: incomplete nightly.** nightly pipeline\\-7 at 5eed00000000\\: shard 2\\/4 missing"),
            std::string::npos)
      << md.out;
  // A filter that leaves out the lost shard's suite still judges the whole nightly.
  auto filtered = RunHarness({"report", "--db", merged, "--format", "json", "--case", "gmm/*_0"});
  EXPECT_NE(filtered.out.find("\"2/4\""), std::string::npos) << filtered.out;

  // The lost job rerun and merged in: whole, exit 0, and the warning is gone.
  auto last = RunHarness({"merge", merged, GmmShard(dir, sha, "pipeline-7", 2, 4)});
  EXPECT_EQ(last.exit_code, 0) << last.err;
  EXPECT_EQ(last.err.find("incomplete"), std::string::npos) << last.err;
  EXPECT_TRUE(ReportOf(merged)["incomplete_nightlies"].empty());
  auto whole = RunHarness({"report", "--db", merged, "--format", "text"});
  EXPECT_EQ(whole.out.find("WARNING"), std::string::npos) << whole.out;

  // All four in one merge: exit 0.
  shards.push_back((dir / "pipeline-7-2-4.db").string());
  std::vector<std::string> all = {"merge", (dir / "all.db").string()};
  all.insert(all.end(), shards.begin(), shards.end());
  auto four = RunHarness(all);
  EXPECT_EQ(four.exit_code, 0) << four.err;
}

TEST(MergeE2E, OnlyTheIncompleteNightlyOfTwoIsNamedAndOlderOnesAreNotJudged) {
  TempDir dir;
  const std::string sha_a = "5eed0000000000000000000000000000000000a1", sha_b = "5eed0000000000000000000000000000000000b2";
  const std::string a0 = GmmShard(dir, sha_a, "night-a", 0, 2), a1 = GmmShard(dir, sha_a, "night-a", 1, 2);
  const std::string b1 = GmmShard(dir, sha_b, "night-b", 1, 2);
  const std::string merged = (dir / "merged.db").string();
  auto m = RunHarness({"merge", merged, a0, b1, a1});
  EXPECT_EQ(m.exit_code, 1) << m.err;
  EXPECT_NE(m.err.find("incomplete nightly night-b at 5eed00000000: shard 0/2 missing"), std::string::npos) << m.err;
  EXPECT_EQ(m.err.find("incomplete nightly night-a"), std::string::npos) << "night-a is whole: " << m.err;
  // The report shows night-b (the newest commit): it names it, and not night-a.
  const Json shown = ReportOf(merged)["incomplete_nightlies"];
  ASSERT_EQ(shown.size(), 1u) << shown.dump();
  EXPECT_EQ(shown[0]["nightly"], "night-b");
  EXPECT_EQ(shown[0]["missing"], Json::array({"0/2"}));

  // The next night merges into the database that holds night-b: only what it wrote is judged.
  const std::string sha_c = "5eed0000000000000000000000000000000000c3";
  auto next = RunHarness({"merge", merged, GmmShard(dir, sha_c, "night-c", 0, 2), GmmShard(dir, sha_c, "night-c", 1, 2)});
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_EQ(next.err.find("night-b"), std::string::npos) << next.err;
  // The report judges the nightlies it shows: night-c is now the latest run of gmm, and whole.
  EXPECT_TRUE(ReportOf(merged)["incomplete_nightlies"].empty()) << ReportOf(merged).dump();
}

TEST(RunE2E, NightlyDefaultsToTheCiEnginesPipelineIdAndTheFlagWins) {
  TempDir dir;
  const auto nightly_of = [&](const std::string& name, std::vector<std::pair<std::string, std::string>> env,
                              std::vector<std::string> extra) {
    const std::string db = (dir / (name + ".db")).string();
    std::vector<std::string> args = {"run", "--suite", "gmm", "--filter", "gmm/*_0", "--db", db, "--commit", "abc1234"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = RunHarness(args, {.env = std::move(env)});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    return r.exit_code == 0 ? std::move(Store::OpenReadOnly(db)).value()->reader().Run(0)->nightly
                            : std::string("(failed)");
  };
  EXPECT_EQ(nightly_of("none", {}, {}), "");
  EXPECT_EQ(nightly_of("gitlab", {{"CI_PIPELINE_ID", "1234"}}, {}), "gitlab-1234");
  EXPECT_EQ(nightly_of("github", {{"GITHUB_RUN_ID", "5678"}, {"GITHUB_RUN_ATTEMPT", "3"}}, {}), "github-5678");
  EXPECT_EQ(nightly_of("flag", {{"CI_PIPELINE_ID", "1234"}, {"GITHUB_RUN_ID", "5678"}}, {"--nightly", "mine"}), "mine");
  // A shard needs a nightly id: the pipeline's will do.
  EXPECT_EQ(nightly_of("shard", {{"GITHUB_RUN_ID", "5678"}}, {"--shard", "1/2"}), "github-5678");
  auto none = RunHarness({"run", "--suite", "gmm", "--db", (dir / "x.db").string(), "--commit", "abc1234", "--shard", "1/2"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("CI_PIPELINE_ID"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace harness
