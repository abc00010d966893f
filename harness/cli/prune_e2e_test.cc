// harness prune through the real binary, on a store of eight nightlies built with the store
// API: samples of runs outside the window go, statuses, messages and metrics stay, and the
// runs a bisect step, a golden change or a baseline of a run in the window refers to keep
// theirs; --dry-run changes nothing; a run another process still writes stops it; a prune
// killed at any write, sync, rename or unlink leaves the old store or the pruned one.
#include <sqlite3.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/run/run_lock.h"
#include "harness/store/store.h"
#include "harness/testing/kill_at_syscall.h"
#include "harness/testing/sqlite_test_util.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing_util::ExecSql;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::TempDir;

constexpr int kSamples = 30;

// Rows of one query, each row's columns joined by '|'.
std::vector<std::string> Rows(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::vector<std::string> rows;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      const auto* text = sqlite3_column_text(st, i);
      row += (i ? "|" : "") + std::string(text ? reinterpret_cast<const char*>(text) : "NULL");
    }
    rows.push_back(row);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rows;
}

// Everything prune must keep: every run's status, every case's status and message, every metric.
std::vector<std::string> KeptRows(const fs::path& db) {
  auto rows = Rows(db, "SELECT id, status, started_at FROM runs ORDER BY id");
  for (auto& r : Rows(db, "SELECT id, run_id, case_id, status, message FROM case_results ORDER BY id")) rows.push_back(r);
  for (auto& r : Rows(db, "SELECT case_result_id, name, value, n FROM metrics ORDER BY case_result_id, name"))
    rows.push_back(r);
  return rows;
}

// Run id -> its sample count (runs without samples left out).
std::map<int64_t, int64_t> SamplesPerRun(const fs::path& db) {
  std::map<int64_t, int64_t> out;
  for (const auto& r : Rows(db, "SELECT cr.run_id, COUNT(*) FROM samples s JOIN case_results cr ON cr.id = "
                                "s.case_result_id GROUP BY cr.run_id")) {
    const auto bar = r.find('|');
    out[std::stoll(r.substr(0, bar))] = std::stoll(r.substr(bar + 1));
  }
  return out;
}

// Nightlies 1..7 of identity "fleet" at commits with first-parent ordinals 1..7, started a
// day apart, each with a GSM8K-like case (30 samples with completion text; it passes in
// nightlies 1-5 and fails in 6 and 7) and a case without samples; nightly 8 is the only one
// of identity "other" (run ids are the nightly numbers). A bisect step names run 2, a golden change was accepted from run 1.
// With --keep-nightlies 2 the window is runs 6, 7 (fleet) and 8 (other); run 5 is the
// baseline of 6 and 7 (the newest passing result before them); runs 3 and 4 lose their samples.
struct Fixture {
  TempDir dir;
  fs::path db = dir / "h.db";
  // Fills db (ASSERTs, so not in a constructor).
  void Build() {
    auto store = std::move(Store::Open(db)).value();
    int64_t ops_result_of_run1 = 0;
    for (int n = 1; n <= 8; ++n) {
      CommitInfo c;
      c.sha = fmt::format("{:040x}", 0xaaaa0000 + n);
      c.first_parent_ordinal = n;
      const int64_t commit = *store->writer().UpsertCommit(c);
      NewRun r;
      r.commit_id = commit;
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
                        .WriteSample(gsm, {std::to_string(i), i % 3 ? SampleOutcome::kCorrect : SampleOutcome::kWrong,
                                           "42", "42", 0.5, 100, std::string(200, 'a' + i % 26)})
                        .ok());
      const bool passes = n <= 5 || n == 8;
      ASSERT_TRUE(store->writer()
                      .FinishCase(gsm, {"gsm8k/test_0",
                                        passes ? CaseStatus::kPass : CaseStatus::kFail,
                                        1.0,
                                        passes ? "" : "accuracy fell",
                                        {{"accuracy", 0.6 + 0.01 * n, kSamples, {}, {}, ""}},
                                        {}})
                      .ok());
      const int64_t ops = *store->writer().BeginCase(run, "gmm", "gmm/test_1", "{}");
      ASSERT_TRUE(
          store->writer()
              .FinishCase(ops, {"gmm/test_1", CaseStatus::kPass, 0.1, "", {{"calls", 2.0 + n, 0, {}, {}, ""}}, {}})
              .ok());
      if (n == 1) ops_result_of_run1 = ops;
      ASSERT_TRUE(store->writer().FinishRun(run, passes ? RunStatus::kPass : RunStatus::kFail).ok());
    }
    const int64_t session =
        *store->bisect_record().BeginBisect({.good = "a", .bad = "b", .target = "gsm8k/test_0", .args_json = "{}"});
    ASSERT_TRUE(
        store->bisect_record()
            .AddBisectStep(
                session,
                {.step = 1, .sha = "a", .source = "store", .run_id = 2, .evidence_json = "{}", .decision_json = "{}"})
            .ok());
    GoldenChange g{0, "gmm/test_1", "golden/ops/gmm/test_1.json", "01", "02", "reviewed", "a", "me", "",
                   ops_result_of_run1};
    const int64_t intent = *store->golden_log().BeginGoldenChange(g);
    ASSERT_TRUE(store->golden_log().FinishGoldenChange(intent).ok());
    store.reset();
    // An hour off whole days, so a day window's edge never falls on a run.
    ExecSql(db, "UPDATE runs SET started_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', (id - 9) || ' days', '-1 hours')");
  }
  ProcessResult Prune(std::vector<std::string> extra) const {
    std::vector<std::string> args = {"prune", "--db", db.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunHarness(args);
  }
};

const std::map<int64_t, int64_t> kAllSamples = {{1, kSamples}, {2, kSamples}, {3, kSamples}, {4, kSamples},
                                                {5, kSamples}, {6, kSamples}, {7, kSamples}, {8, kSamples}};
const std::map<int64_t, int64_t> kPruned = {{1, kSamples}, {2, kSamples}, {5, kSamples},
                                            {6, kSamples}, {7, kSamples}, {8, kSamples}};

TEST(PruneE2E, DropsOldSamplesKeepsReferencedRunsAndEveryStatusAndMetric) {
  Fixture f;
  f.Build();
  if (HasFatalFailure()) return;
  const auto kept_before = KeptRows(f.db);
  ASSERT_EQ(SamplesPerRun(f.db), kAllSamples);
  const std::string bytes_before = ReadFile(f.db);

  const auto dry = f.Prune({"--keep-nightlies", "2", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_THAT(dry.out, HasSubstr("8 runs, 3 in the window (the 2 newest nightlies of each identity)"));
  EXPECT_THAT(dry.out, HasSubstr("would drop run 3 ("));
  EXPECT_THAT(dry.out, HasSubstr("would drop run 4 ("));
  EXPECT_THAT(dry.out, HasSubstr("30 samples, 6000 bytes of completion text"));
  EXPECT_THAT(dry.out, HasSubstr("30 samples, for golden change 1"));
  EXPECT_THAT(dry.out, HasSubstr("30 samples, for bisect session 1"));
  EXPECT_THAT(dry.out, HasSubstr("30 samples, for baseline of run 6, baseline of run 7"));
  EXPECT_THAT(dry.out, HasSubstr("would drop the samples of 2 runs (60 samples, 12000 bytes of completion text)"));
  EXPECT_THAT(dry.out, HasSubstr("(--dry-run: nothing changed)"));
  EXPECT_EQ(SamplesPerRun(f.db), kAllSamples);
  EXPECT_TRUE(ReadFile(f.db) == bytes_before) << "--dry-run changed the database file";

  const auto pruned = f.Prune({"--keep-nightlies", "2"});
  ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
  EXPECT_THAT(pruned.out, HasSubstr("dropped run 3 ("));
  EXPECT_THAT(pruned.out, HasSubstr("dropped the samples of 2 runs (60 samples, 12000 bytes of completion text)"));
  EXPECT_EQ(SamplesPerRun(f.db), kPruned);
  EXPECT_EQ(KeptRows(f.db), kept_before);
  EXPECT_EQ(Rows(f.db, "PRAGMA integrity_check"), std::vector<std::string>{"ok"});
  int64_t before = 0, after = 0;
  const auto at = pruned.out.find("bytes: ");
  ASSERT_NE(at, std::string::npos) << pruned.out;
  ASSERT_EQ(std::sscanf(pruned.out.c_str() + at, "bytes: %ld before, %ld after", &before, &after), 2) << pruned.out;
  EXPECT_LT(after, before) << pruned.out;
  EXPECT_EQ(after, static_cast<int64_t>(fs::file_size(f.db))) << "the WAL is checkpointed away";

  // Nothing left to drop: a second prune keeps everything. A window in days alone: runs of
  // the last 3 days (7 and 8, started 2 and 1 days and an hour ago) keep their samples,
  // run 6 loses its own; run 5 is still run 7's baseline.
  const auto again = f.Prune({"--keep-nightlies", "2"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("dropped the samples of 0 runs"));
  const auto days = f.Prune({"--keep-samples-days", "3"});
  ASSERT_EQ(days.exit_code, 0) << days.err;
  EXPECT_THAT(days.out, HasSubstr("2 in the window (runs started in the last 3 days)"));
  EXPECT_EQ(SamplesPerRun(f.db), (std::map<int64_t, int64_t>{{1, kSamples}, {2, kSamples}, {5, kSamples},
                                                              {7, kSamples}, {8, kSamples}}));
  EXPECT_EQ(KeptRows(f.db), kept_before);
}

TEST(PruneE2E, RefusesBadWindowsAndARunAnotherProcessWrites) {
  Fixture f;
  f.Build();
  if (HasFatalFailure()) return;
  const auto none = f.Prune({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("name the window to keep: --keep-nightlies N and/or --keep-samples-days D"));
  const auto negative = f.Prune({"--keep-nightlies", "-1"});
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_THAT(negative.err, HasSubstr("--keep-nightlies: '-1' is not a whole number in [0, 1000000000]"));
  const auto missing = RunHarness({"prune", "--db", (f.dir / "none.db").string(), "--keep-nightlies", "1"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("none.db: no results database there"));
  EXPECT_FALSE(fs::exists(f.dir / "none.db")) << "prune created a database";

  // Run 3 marked running again, its lock held here as a live `harness run` holds it.
  ExecSql(f.db, "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = 3");
  {
    auto live = RunLock::Acquire(f.db, 3);
    ASSERT_TRUE(live.ok()) << live.error().message;
    const auto refused = f.Prune({"--keep-nightlies", "2"});
    EXPECT_EQ(refused.exit_code, 2) << refused.out;
    EXPECT_THAT(refused.err, HasSubstr("run 3 is still running in another process (it holds " +
                                       RunLock::PathFor(f.db, 3).string() + ")"));
    EXPECT_EQ(SamplesPerRun(f.db), kAllSamples);
  }
  // Its process gone (the lock free), the run is an interrupted one: in the window, kept.
  const auto after = f.Prune({"--keep-nightlies", "2"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_THAT(after.out, HasSubstr("8 runs, 4 in the window"));
  EXPECT_EQ(SamplesPerRun(f.db), (std::map<int64_t, int64_t>{{1, kSamples}, {2, kSamples}, {3, kSamples},
                                                              {5, kSamples}, {6, kSamples}, {7, kSamples},
                                                              {8, kSamples}}));
  EXPECT_FALSE(fs::exists(RunLock::PathFor(f.db, 3))) << "the claimed lock was left behind";
}

// How many runs a prune of a fresh copy of `saved` with `window` keeps in the window and
// with samples; -1 when it did not exit 0.
std::pair<int64_t, int64_t> KeptBy(const Fixture& f, const fs::path& saved, std::vector<std::string> window) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(f.db.string() + suffix);
  fs::copy_file(saved, f.db);
  const auto r = f.Prune(window);
  EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(window) << r.err;
  if (r.exit_code != 0) return {-1, -1};
  long long runs = 0, in_window = 0;
  EXPECT_EQ(std::sscanf(r.out.substr(r.out.find(": ") + 2).c_str(), "%lld runs, %lld in the window", &runs, &in_window), 2)
      << r.out;
  return {in_window, static_cast<int64_t>(SamplesPerRun(f.db).size())};
}

// "Keep more" never keeps less: from 0 to the largest accepted bound, each window keeps at
// least the runs (and the samples) a smaller one keeps; past the oldest run every run stays,
// however far the window reaches (SQLite's date arithmetic used to answer NULL from about
// 2.9 million days on, and then no run was "inside": every sample went), years before 1000
// included. Both windows
// together keep what the larger keeps.
TEST(PruneE2E, ALongerWindowNeverKeepsLess) {
  Fixture f;
  f.Build();
  if (HasFatalFailure()) return;
  const fs::path saved = f.dir / "saved.db";
  fs::copy_file(f.db, saved);
  std::pair<int64_t, int64_t> last{0, 0};
  // 500000 to 739000 days reach back to years of three, two and one digits (657, 110, 14,
  // 3): their dates must still sort before every run's (a cutoff "657-..." would sort after
  // "2026-...", and every run would be outside).
  for (const char* days : {"0", "1", "2", "3", "5", "9", "10", "36500", "500000", "700000", "735000", "739000",
                           "2900000", "3000000", "3650000"}) {
    const auto kept = KeptBy(f, saved, {"--keep-samples-days", days});
    EXPECT_GE(kept.first, last.first) << days << " days keep fewer runs in the window than a shorter window";
    EXPECT_GE(kept.second, last.second) << days << " days keep fewer runs' samples than a shorter window";
    if (std::string(days).size() >= 2) {
      EXPECT_EQ(kept, (std::pair<int64_t, int64_t>{8, 8})) << days << " days";
    }
    last = kept;
  }
  EXPECT_EQ(KeptBy(f, saved, {"--keep-samples-days", "0"}), (std::pair<int64_t, int64_t>{0, 2}));
  EXPECT_EQ(KeptBy(f, saved, {"--keep-samples-days", "3"}), (std::pair<int64_t, int64_t>{2, 5}));
  last = {0, 0};
  for (const char* n : {"0", "1", "2", "3", "7", "8", "1000000000"}) {
    const auto kept = KeptBy(f, saved, {"--keep-nightlies", n});
    EXPECT_GE(kept.first, last.first) << n << " nightlies";
    EXPECT_GE(kept.second, last.second) << n << " nightlies";
    last = kept;
  }
  EXPECT_EQ(last, (std::pair<int64_t, int64_t>{8, 8}));
  // Together: a run in either window stays.
  EXPECT_EQ(KeptBy(f, saved, {"--keep-nightlies", "4", "--keep-samples-days", "2"}),
            KeptBy(f, saved, {"--keep-nightlies", "4"}));
  EXPECT_EQ(KeptBy(f, saved, {"--keep-nightlies", "1", "--keep-samples-days", "5"}),
            KeptBy(f, saved, {"--keep-samples-days", "5"}));
  EXPECT_EQ(KeptBy(f, saved, {"--keep-nightlies", "0", "--keep-samples-days", "3000000"}),
            (std::pair<int64_t, int64_t>{8, 8}));
}

// Every bound outside its documented range, or not plain decimal, is refused before the
// database is touched: the file stays byte-identical.
TEST(PruneE2E, RefusesEveryBoundOutsideItsRange) {
  Fixture f;
  f.Build();
  if (HasFatalFailure()) return;
  const std::string bytes = ReadFile(f.db);
  const std::vector<std::pair<std::string, std::string>> flags = {{"--keep-nightlies", "1000000001"},
                                                                  {"--keep-samples-days", "3650001"}};
  for (const auto& [flag, past_max] : flags)
    for (const std::string& bad : {std::string("-1"), past_max, std::string("99999999999999999999"), std::string("nan"),
                                   std::string("inf"), std::string("0x10"), std::string("1.5"), std::string("1e3"),
                                   std::string("+5"), std::string(" 5"), std::string(""), std::string("5d"),
                                   std::string("-9223372036854775808")}) {
      const auto r = f.Prune({flag, bad});
      EXPECT_EQ(r.exit_code, 2) << flag << " '" << bad << "': " << r.out << r.err;
      // The flag and its range are named (harness/cli/numeric_option.h words them for every flag).
      EXPECT_THAT(r.err, HasSubstr(flag)) << bad;
      EXPECT_THAT(r.err, HasSubstr(flag == "--keep-nightlies" ? "[0, 1000000000]" : "[0, 3650000]")) << bad;
      // The other bound valid beside it changes nothing either.
      const auto beside = f.Prune({"--keep-nightlies", "1", flag, bad});
      EXPECT_EQ(beside.exit_code, 2) << flag << " '" << bad << "' beside a valid bound";
      EXPECT_TRUE(ReadFile(f.db) == bytes) << flag << " '" << bad << "' changed the database";
    }
  EXPECT_EQ(SamplesPerRun(f.db), kAllSamples);
}

// kill -9 as prune enters each of its writes, syncs, renames, unlinks and truncations
// (every one when there are few, else every one that is not a plain write and a spread of
// the writes): the store is always intact and either unpruned or pruned, never between;
// statuses and metrics never change; the next prune finishes the job.
TEST(PruneE2E, KilledAtAnyStepLeavesTheOldOrThePrunedStore) {
  Fixture f;
  f.Build();
  if (HasFatalFailure()) return;
  const auto kept_before = KeptRows(f.db);
  const fs::path saved = f.dir / "saved.db";
  fs::copy_file(f.db, saved);
  auto reset = [&] {
    for (const char* suffix : {"", "-wal", "-shm", ".prune.lock"}) fs::remove(f.db.string() + suffix);
    fs::copy_file(saved, f.db);
  };
  auto prune = [&](int kill_at) {
    return testing_util::RunKilledAtSyscall({testing_util::kHarnessBinary, "prune", "--db", f.db.string(), "--keep-nightlies", "2"},
                                            {{"HARNESS_ROOT", testing_util::kSourceRoot}}, kill_at, f.dir / "out",
                                            f.dir / "err");
  };
  const auto whole = prune(0);
  ASSERT_EQ(whole.error, "");
  ASSERT_EQ(whole.exit_code, 0) << ReadFile(f.dir / "err");
  ASSERT_EQ(SamplesPerRun(f.db), kPruned);
  const std::string steps = ::testing::PrintToString(whole.calls);
  ASSERT_THAT(whole.calls, ::testing::AnyOf(::testing::Contains("fsync"), ::testing::Contains("fdatasync"))) << steps;

  std::vector<int> kill_points;
  const int n = static_cast<int>(whole.calls.size());
  const int stride = std::max(1, n / 40);
  for (int k = 1; k <= n; ++k) {
    const bool plain_write = whole.calls[k - 1] == "pwrite64" || whole.calls[k - 1] == "write";
    if (!plain_write || k % stride == 0 || k <= 3 || k == n) kill_points.push_back(k);
  }
  int unpruned = 0, pruned = 0;
  for (int k : kill_points) {
    SCOPED_TRACE(::testing::Message() << "killed at step " << k << " (" << whole.calls[k - 1] << ") of " << n);
    reset();
    const auto run = prune(k);
    ASSERT_EQ(run.error, "");
    ASSERT_TRUE(run.killed) << "it ran only " << run.calls.size() << " steps this time";
    EXPECT_EQ(Rows(f.db, "PRAGMA integrity_check"), std::vector<std::string>{"ok"});
    const auto samples = SamplesPerRun(f.db);
    ASSERT_TRUE(samples == kAllSamples || samples == kPruned) << "half pruned: " << ::testing::PrintToString(samples);
    (samples == kAllSamples ? unpruned : pruned) += 1;
    EXPECT_EQ(KeptRows(f.db), kept_before);
    const auto next = prune(0);
    ASSERT_EQ(next.exit_code, 0) << ReadFile(f.dir / "err");
    EXPECT_EQ(SamplesPerRun(f.db), kPruned);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(unpruned, 0);
  EXPECT_GT(pruned, 0) << "no kill fell after the delete committed";
}

}  // namespace
}  // namespace harness
