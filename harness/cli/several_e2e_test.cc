// Test data with several of everything (issue 33), through the real binary: where the code
// tells things apart, the data holds more than one of them. Two prune windows given
// together; full 64-digit SHA-256 commit ids from a real SHA-256 git repository, named whole
// and by prefix; a commit subject with hostile text in every Markdown construct; a TensorCast
// table with two `<model> total` columns.
#include <sqlite3.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/sqlite_test_util.h"
#include "harness/testing/test_util.h"
#include "harness/util/subprocess.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_util::ExecSql;
using ::testing::Not;
using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

constexpr int kSamples = 12;

// Run id -> its sample count (runs without samples left out).
std::map<int64_t, int64_t> SamplesPerRun(const fs::path& db_path) {
  sqlite3* db = nullptr;
  std::map<int64_t, int64_t> out;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT cr.run_id, COUNT(*) FROM samples s JOIN case_results cr ON cr.id = "
                               "s.case_result_id GROUP BY cr.run_id",
                               -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) out[sqlite3_column_int64(st, 0)] = sqlite3_column_int64(st, 1);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

// Runs 1..7 are nightlies of identity "fleet" at first-parent ordinals 1..7 (1-5 pass, 6 and 7
// fail), run 8 the one nightly of identity "other"; run n started 9 - n days and an hour ago.
// Each has a case with samples.
void BuildEightNightlies(const fs::path& db) {
  auto store = std::move(Store::Open(db)).value();
  for (int n = 1; n <= 8; ++n) {
    CommitInfo c;
    c.sha = fmt::format("{:040x}", 0xbbbb0000 + n);
    c.first_parent_ordinal = n;
    NewRun r;
    r.commit_id = *store->writer().UpsertCommit(c);
    r.stack = "refstack";
    r.config_hash = n == 8 ? "other" : "fleet";
    r.config_json = "{}";
    r.host = "ci";
    r.harness_version = "test";
    r.nightly = fmt::format("nightly-{}", n);
    const int64_t run = *store->writer().BeginRun(r);
    const int64_t gsm = *store->writer().BeginCase(run, "gsm8k", "gsm8k/test_0", "{}");
    for (int i = 0; i < kSamples; ++i)
      ASSERT_TRUE(store->writer()
                      .WriteSample(gsm, {std::to_string(i), SampleOutcome::kCorrect, "1", "1", 0.5, 10, "text"})
                      .ok());
    const bool passes = n <= 5 || n == 8;
    ASSERT_TRUE(store->writer()
                    .FinishCase(gsm, {"gsm8k/test_0",
                                      passes ? CaseStatus::kPass : CaseStatus::kFail,
                                      1.0,
                                      passes ? "" : "accuracy fell",
                                      {{"accuracy", 0.5, kSamples, {}, {}, ""}},
                                      {}})
                    .ok());
    ASSERT_TRUE(store->writer().FinishRun(run, passes ? RunStatus::kPass : RunStatus::kFail).ok());
  }
  store.reset();
  ExecSql(db, "UPDATE runs SET started_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', (id - 9) || ' days', '-1 hours')");
}

// Both windows at once keep a run that either keeps: --keep-nightlies 1 keeps runs 7 and 8
// (the newest of each identity), --keep-samples-days 4 keeps runs 6, 7 and 8; together 6, 7
// and 8, and run 5, the baseline of 6 and 7. Runs 1-4 lose their samples. A prune that kept
// only what both windows keep would drop run 6's samples.
TEST(SeveralE2E, TwoPruneWindowsTogetherKeepWhatEitherKeeps) {
  TempDir dir;
  const fs::path db = dir / "h.db";
  BuildEightNightlies(db);
  if (HasFatalFailure()) return;
  auto r = RunHarness({"prune", "--db", db.string(), "--keep-nightlies", "1", "--keep-samples-days", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("8 runs, 3 in the window (the 1 newest nightlies of each identity and runs started "
                               "in the last 4 days)"));
  EXPECT_THAT(r.out, HasSubstr("keep run 5 ("));
  EXPECT_THAT(r.out, HasSubstr(fmt::format("{} samples, for baseline of run 6, baseline of run 7", kSamples)));
  for (int dropped : {1, 2, 3, 4}) EXPECT_THAT(r.out, HasSubstr(fmt::format("dropped run {} (", dropped)));
  EXPECT_THAT(r.out, HasSubstr(fmt::format("dropped the samples of 4 runs ({} samples", 4 * kSamples)));
  EXPECT_EQ(SamplesPerRun(db),
            (std::map<int64_t, int64_t>{{5, kSamples}, {6, kSamples}, {7, kSamples}, {8, kSamples}}));
}

// A SHA-256 repository (git init --object-format=sha256) of two commits; the second one's
// subject holds every Markdown construct. Returns the 64-digit ids, oldest first.
std::vector<std::string> MakeSha256Repo(const fs::path& dir, const std::string& subject2) {
  ProcessOptions o{.cwd = dir,
                   .env = {{"GIT_AUTHOR_NAME", "t"}, {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
                           {"GIT_COMMITTER_NAME", "t"}, {"GIT_COMMITTER_EMAIL", "t@example.invalid"}}};
  fs::create_directories(dir);
  auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "git");
    auto r = RunProcess(args, o);
    EXPECT_TRUE(r.ok() && r->exit_code == 0) << args[1] << ": " << (r.ok() ? r->err : r.error().message);
    std::string out = r.ok() ? r->out : "";
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  };
  git({"init", "-q", "-b", "main", "--object-format=sha256"});
  std::vector<std::string> shas;
  for (const std::string& subject : {std::string("commit 1"), subject2}) {
    WriteFile(dir / "file.txt", subject);
    git({"add", "file.txt"});
    git({"commit", "-q", "-m", subject});
    shas.push_back(git({"rev-parse", "HEAD"}));
  }
  return shas;
}

// Full 64-digit commit ids are stored, named whole and by prefix in compare, and printed in
// the Markdown summary cut as every sha is; the hostile subject is escaped there, construct
// by construct, and a 65th digit is refused.
TEST(SeveralE2E, Sha256CommitIdsAndAHostileSubjectInMarkdown) {
  TempDir dir;
  const std::string hostile = "fix | `tick` <b>x</b> [l](javascript:alert(1)) *s* _u_ #h ~t~ !i > q";
  const auto shas = MakeSha256Repo(dir / "repo", hostile);
  ASSERT_EQ(shas.size(), 2u);
  for (const auto& sha : shas) ASSERT_EQ(sha.size(), 64u) << sha;
  const std::string state = (dir / "state.json").string();
  WriteFile(dir / "suites/selftest.json",
            SelftestTable(R"({"outcome": "pass", "metric": 0.75, "state_file": ")" + state + R"("})"));
  const std::string db = (dir / "h.db").string();
  auto run_at = [&](const std::string& sha, const std::string& outcome) {
    WriteFile(state, R"({"outcome": ")" + outcome + R"("})");
    return RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo",
                       (dir / "repo").string(), "--commit", sha});
  };
  auto first = run_at(shas[0], "pass");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto second = run_at(shas[1], "fail");
  ASSERT_EQ(second.exit_code, 1) << second.err;

  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
           {shas[0], shas[1]}, {shas[0].substr(0, 8), shas[1].substr(0, 40)}, {shas[0].substr(0, 63), shas[1]}}) {
    SCOPED_TRACE(a + " " + b);
    auto cmp = RunHarness({"compare", a, b, "--db", db});
    EXPECT_EQ(cmp.exit_code, 1) << cmp.err;
    EXPECT_THAT(cmp.out, HasSubstr("selftest/test_outcome_0  PASS → FAIL  REGRESSED"));
  }
  auto too_long = RunHarness({"compare", shas[0] + "0", shas[1], "--db", db});
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_THAT(too_long.err, HasSubstr("expected a commit sha or a prefix of one (4 to 64 hex digits)"));

  auto md = RunHarness({"report", "--db", db, "--format", "markdown"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  const std::string escaped =
      "fix \\| \\`tick\\` \\<b\\>x\\<\\/b\\> \\[l\\]\\(javascript\\:alert\\(1\\)\\) \\*s\\* \\_u\\_ \\#h \\~t\\~ \\!i \\> q";
  EXPECT_THAT(md.out, HasSubstr("`" + shas[1].substr(0, 12) + "` " + escaped)) << md.out;
  EXPECT_THAT(md.out, Not(HasSubstr(hostile)));
  EXPECT_THAT(md.out, Not(HasSubstr(shas[1].substr(0, 13))));
}

// A TensorCast table may carry a total per model: the first `<model> total` column is the
// one stored (docs/exec-protocol.md), whatever the later ones say, row by row.
TEST(SeveralE2E, ATensorCastTableWithTwoTotalColumnsStoresTheFirst) {
  TempDir dir;
  const std::string rule = "----------------------------------  --------------  --------------  ----------\n";
  WriteFile(dir / "t.txt", rule +
                               "               Name                 analytic total  measured total  # of Calls\n" +
                               rule +
                               "tensor_cast.all_gather.default            10.000ms        70.000ms           2\n"
                               "tensor_cast.reduce_scatter.default         3.000ms         1.000ms           4\n" +
                               rule);
  const std::string db = (dir / "h.db").string();
  auto r = RunHarness({"ingest", "--format", "tensorcast-table", (dir / "t.txt").string(), "--case", "sp/step",
                       "--commit", "abcd0001", "--repo", dir.path().string(), "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto store = Store::OpenReadOnly(db);
  ASSERT_TRUE(store.ok());
  auto cases = (*store)->reader().FinishedCases(1);
  ASSERT_TRUE(cases.ok());
  ASSERT_EQ(cases->size(), 1u);
  auto ops = (*store)->reader().Ops((*cases)[0].id);
  ASSERT_TRUE(ops.ok());
  ASSERT_EQ(ops->size(), 2u);
  std::map<std::string, std::pair<double, int64_t>> got;
  for (const auto& op : *ops) got[op.op] = {op.est_seconds, op.calls};
  EXPECT_DOUBLE_EQ(got["tensor_cast.all_gather.default"].first, 0.010);
  EXPECT_EQ(got["tensor_cast.all_gather.default"].second, 2);
  EXPECT_DOUBLE_EQ(got["tensor_cast.reduce_scatter.default"].first, 0.003);
  EXPECT_EQ(got["tensor_cast.reduce_scatter.default"].second, 4);
}

// merge opens each input read-only through a file: URI; names holding what a URI means
// something by ('#' a fragment, '%41' an escape, '&', a space) open those files, not others.
TEST(SeveralE2E, MergeInputsWhoseNamesHoldUriSyntax) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "metric": 0.5})"));
  const std::vector<std::pair<std::string, std::string>> inputs = {{"shard #1.db", "abcd0001"},
                                                                   {"shard %41 & b.db", "abcd0002"}};
  for (const auto& [name, sha] : inputs) {
    auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", (dir / name).string(), "--repo",
                         dir.path().string(), "--commit", sha});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
  }
  WriteFile(dir / "shard A & b.db", "not a database: opening this one for 'shard %41 & b.db' is the bug");
  const std::string merged = (dir / "merged.db").string();
  auto m = RunHarness({"merge", merged, (dir / inputs[0].first).string(), (dir / inputs[1].first).string()});
  ASSERT_EQ(m.exit_code, 0) << m.out << m.err;
  auto store = Store::OpenReadOnly(merged);
  ASSERT_TRUE(store.ok());
  auto runs = (*store)->reader().FinishedRuns();
  ASSERT_TRUE(runs.ok());
  std::vector<std::string> shas;
  for (const auto& run : *runs) shas.push_back(run.sha);
  std::sort(shas.begin(), shas.end());
  EXPECT_EQ(shas, (std::vector<std::string>{"abcd0001", "abcd0002"}));
}

}  // namespace
}  // namespace harness
