#include "harness/store/store.h"

#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/store/golden_log_test_util.h"
#include "harness/store/identity_rule.h"
#include "harness/testing/io_fault_vfs.h"
#include "harness/testing/sqlite_test_util.h"
#include "harness/testing/test_util.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

using testing_util::CountOf;
using testing_util::FreshFaultedCopy;
using testing_util::TempDir;

// Whether Store::Open (or OpenReadOnly) opened path, and its error when not.
Status OpenStatus(const std::filesystem::path& path, bool read_only) {
  if (read_only) {
    auto store = Store::OpenReadOnly(path);
    if (!store) return store.error();
  } else {
    auto store = Store::Open(path);
    if (!store) return store.error();
  }
  return OkStatus();
}

int64_t AddRun(Store& s, const std::string& sha, int64_t ordinal) {
  int64_t c = *s.writer().UpsertCommit({sha, {}, ordinal, 1700000000, "subject " + sha});
  return *s.writer().BeginRun({c, "refstack", "h", "{}", "host", "0.1.0"});
}

// What a store hands out: a read-only open has no door that writes, so a write through it
// does not compile; the writable store hands out every door and is none of them.
template <typename S>
concept HandsOutAWriter = requires(S& s) {
  s.writer();
};
template <typename S>
concept WritesBisectSessionsThroughItsReadingDoor = requires(S& s) {
  s.bisect_reader().BeginBisect(BisectSessionRow{});
};
template <typename S>
concept WritesGoldenChangesThroughItsReadingDoor = requires(S& s) {
  s.golden_reader().BeginGoldenChange(GoldenChange{});
};
template <typename S>
concept HandsOutBisectWrites = requires(S& s) {
  s.bisect_record().BeginBisect(BisectSessionRow{});
};
template <typename S>
concept HandsOutGoldenWrites = requires(S& s) {
  s.golden_log().BeginGoldenChange(GoldenChange{});
};
template <typename S>
concept Merges = requires(S& s) {
  s.MergeFrom(std::filesystem::path());
};
template <typename S>
concept PrunesSamples = requires(S& s) {
  s.PruneSamples(PruneWindow{});
};

static_assert(!HandsOutAWriter<ReadOnlyStore> && !HandsOutBisectWrites<ReadOnlyStore> &&
              !HandsOutGoldenWrites<ReadOnlyStore> && !Merges<ReadOnlyStore> && !PrunesSamples<ReadOnlyStore>);
static_assert(!WritesBisectSessionsThroughItsReadingDoor<ReadOnlyStore> &&
              !WritesGoldenChangesThroughItsReadingDoor<ReadOnlyStore>);
static_assert(HandsOutAWriter<Store> && HandsOutBisectWrites<Store> && HandsOutGoldenWrites<Store> && Merges<Store> &&
              PrunesSamples<Store>);
static_assert(!std::is_base_of_v<ResultReader, Store> && !std::is_base_of_v<RunWriter, Store> &&
              !std::is_base_of_v<BisectRecordReader, Store> && !std::is_base_of_v<GoldenLogReader, Store>);

TEST(Store, AReadOnlyOpenReadsThroughItsReadingDoors) {
  TempDir dir;
  {
    auto store = std::move(Store::Open(dir / "h.db")).value();
    const int64_t run = AddRun(*store, "aaa", 1);
    ASSERT_TRUE(store->writer().FinishRun(run, RunStatus::kPass).ok());
    ASSERT_TRUE(store->bisect_record().BeginBisect(BisectSessionRow{0, "", "", "g", "b", "t", "{}"}).ok());
  }
  auto store = Store::OpenReadOnly(dir / "h.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(*(*store)->SchemaVersion(), Store::kSchemaVersion);
  EXPECT_EQ((*store)->reader().Run(0)->sha, "aaa");
  EXPECT_EQ((*store)->bisect_reader().BisectSessionIds()->size(), 1u);
  EXPECT_TRUE((*store)->golden_reader().PendingGoldenChanges()->empty());
}

TEST(Store, WritesAndReadsBackACase) {
  TempDir dir;
  auto store = Store::Open(dir / "h.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  int64_t run = AddRun(**store, "aaa", 1);
  int64_t cr = *(*store)->writer().BeginCase(run, "gsm8k", "gsm8k/test_x_0", R"({"m":1})");
  ASSERT_TRUE(
      (*store)->writer().WriteSample(cr, {"7", SampleOutcome::kCorrect, "18", "18", 0.5, 12, "<b>18</b> \xff"}).ok());
  ASSERT_TRUE(
      (*store)->writer().WriteSample(cr, {"8", SampleOutcome::kWrong, "1", "2", 0.5, 12, std::string(5000, 'x')}).ok());
  CaseResult o{"gsm8k/test_x_0", CaseStatus::kPass, 1.5, "", {{"accuracy", 0.9, 1319, 0.88, 0.92}},
               {{"aten.mm.default", "[1, 2]", 3, 0.1}}};
  ASSERT_TRUE((*store)->writer().FinishCase(cr, o).ok());
  auto samples = *(*store)->reader().Samples(cr);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].extracted, "18");
  EXPECT_EQ(samples[0].completion, "<b>18</b> \xff") << "stored as sent, bytes and all";
  EXPECT_EQ(samples[1].completion.size(), kMaxStoredCompletionBytes) << "a runaway answer is cut";
  EXPECT_EQ(samples[0].tokens, 12);
  auto metrics = *(*store)->reader().Metrics(cr);
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_EQ(metrics[0].n, 1319);
  EXPECT_DOUBLE_EQ(*metrics[0].low, 0.88);
  auto ops = *(*store)->reader().Ops(cr);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0], (OpRow{"aten.mm.default", "[1, 2]", 3, 0.1}));
  auto cases = *(*store)->reader().Cases(run);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].result.status, CaseStatus::kPass);
}

// A sample's outcome is stored as its word and read back as the same outcome; a word the
// harness does not know is a damaged row, named, never read as some other outcome.
TEST(Store, SampleOutcomesAreStoredAsWordsAndAnUnknownWordIsRefused) {
  TempDir dir;
  const auto path = dir / "h.db";
  int64_t cr = 0;
  {
    auto store = std::move(Store::Open(path)).value();
    cr = *store->writer().BeginCase(AddRun(*store, "aaa", 1), "selftest", "selftest/t_0", "{}");
    ASSERT_TRUE(store->writer().WriteSample(cr, {"1", SampleOutcome::kTruncated, "", "", 0, 0, ""}).ok());
    ASSERT_TRUE(store->writer().WriteSample(cr, {"2", SampleOutcome::kPass, "", "", 0, 0, ""}).ok());
    auto samples = store->reader().Samples(cr);
    ASSERT_TRUE(samples.ok()) << samples.error().message;
    ASSERT_EQ(samples->size(), 2u);
    EXPECT_EQ((*samples)[0].outcome, SampleOutcome::kTruncated);
    EXPECT_EQ((*samples)[1].outcome, SampleOutcome::kPass);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto changed = [db](const char* sql) {
    EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    return sqlite3_changes(db);
  };
  EXPECT_EQ(changed("UPDATE samples SET outcome = outcome WHERE sample_key = '1' AND outcome = 'truncated'"), 1);
  EXPECT_EQ(changed("UPDATE samples SET outcome = 'maybe' || char(27) WHERE sample_key = '2' AND outcome = 'pass'"), 1);
  sqlite3_close(db);
  auto store = std::move(Store::Open(path)).value();
  auto samples = store->reader().Samples(cr);
  ASSERT_FALSE(samples.ok());
  EXPECT_EQ(samples.error().code, ExitCode::kInfra);
  const std::string& m = samples.error().message;
  EXPECT_NE(m.find(path.string()), std::string::npos) << m;
  EXPECT_NE(m.find("key '2'"), std::string::npos) << m;
  EXPECT_NE(m.find("outcome 'maybe\\x1b' is not one of correct, wrong, invalid, truncated, error, pass, fail"),
            std::string::npos)
      << m;
}

IngestedRun Imported(int64_t commit_id, const std::string& hash, CaseStatus status) {
  FinishedCase c{"pytest", {"pytest/t.a", status, 0.5, "msg", {{"max_err", 0.1}}, {{"aten.mm.default", "[1]", 2, 0.3}}},
                 {{"0", SampleOutcome::kCorrect}, {"1", SampleOutcome::kWrong}}};
  return IngestedRun{{commit_id, "ingest:junit", "h", "{}", "host", "0.2.0"}, {c}, {hash, "junit", "r.xml"}};
}

TEST(Store, WritesAnIngestedRunWholeAndOnlyOnce) {
  TempDir dir;
  auto store = Store::Open(dir / "h.db");
  ASSERT_TRUE(store.ok());
  int64_t commit = *(*store)->writer().UpsertCommit({"aaa", {}, 1, 1700000000, "s"});
  auto ids = (*store)->writer().WriteIngestedRuns({Imported(commit, "h1", CaseStatus::kFail)});
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  ASSERT_EQ(ids->size(), 1u);
  ASSERT_TRUE((*ids)[0].has_value());
  auto run = (*store)->reader().Run(*(*ids)[0]);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, RunStatus::kFail);  // from its cases
  EXPECT_FALSE(run->finished_at.empty());
  auto cases = *(*store)->reader().FinishedCases(run->id);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].result.message, "msg");
  EXPECT_EQ((*store)->reader().Samples(cases[0].id)->size(), 2u);
  EXPECT_EQ((*store)->reader().Metrics(cases[0].id)->size(), 1u);
  EXPECT_EQ((*store)->reader().Ops(cases[0].id)->size(), 1u);
  // The same hash, format and commit again: skipped, nothing written.
  auto again = (*store)->writer().WriteIngestedRuns({Imported(commit, "h1", CaseStatus::kPass)});
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE((*again)[0].has_value());
  EXPECT_FALSE((*store)->reader().Run(run->id + 1).ok());
}

// Samples given after their file: they go into the run the file became at that commit, to
// cases without samples, replacing the outcome they informed; never a second time.
TEST(Store, SamplesAttachToTheRunTheirFileBecame) {
  TempDir dir;
  auto store = Store::Open(dir / "h.db");
  ASSERT_TRUE(store.ok());
  int64_t commit = *(*store)->writer().UpsertCommit({"aaa", {}, 1, 1700000000, "s"});
  IngestedRun bare = Imported(commit, "h1", CaseStatus::kPass);
  bare.cases[0].samples.clear();
  auto none = (*store)->writer().AttachIngestedSamples(bare);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value()) << "the file was not ingested yet";
  auto ids = (*store)->writer().WriteIngestedRuns({bare});
  ASSERT_TRUE(ids.ok() && (*ids)[0]);
  IngestedRun with = Imported(commit, "h1", CaseStatus::kFail);
  with.cases[0].result.message = "with samples";
  auto attached = (*store)->writer().AttachIngestedSamples(with);
  ASSERT_TRUE(attached.ok()) << attached.error().message;
  ASSERT_TRUE(attached->has_value());
  EXPECT_EQ((*attached)->run_id, *(*ids)[0]);
  EXPECT_EQ((*attached)->cases, 1);
  EXPECT_EQ((*attached)->samples, 2);
  auto cases = *(*store)->reader().FinishedCases(*(*ids)[0]);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].result.message, "with samples");
  EXPECT_EQ(cases[0].result.status, CaseStatus::kFail);
  EXPECT_EQ((*store)->reader().Samples(cases[0].id)->size(), 2u);
  EXPECT_EQ((*store)->reader().Run(*(*ids)[0])->status, RunStatus::kFail) << "the run's status follows its cases";
  auto twice = (*store)->writer().AttachIngestedSamples(with);
  ASSERT_TRUE(twice.ok() && twice->has_value());
  EXPECT_EQ((*twice)->cases, 0) << "samples are attached once";
  IngestedRun other = with;
  other.run.commit_id = *(*store)->writer().UpsertCommit({"bbb", {}, 2, 1700000001, "t"});
  auto elsewhere = (*store)->writer().AttachIngestedSamples(other);
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_FALSE(elsewhere->has_value()) << "another commit's file is another run";
}

TEST(Store, AnIngestedFileThatFailsHalfwayLeavesNothing) {
  TempDir dir;
  auto store = Store::Open(dir / "h.db");
  ASSERT_TRUE(store.ok());
  int64_t commit = *(*store)->writer().UpsertCommit({"aaa", {}, 1, 1700000000, "s"});
  // The second run names a commit that does not exist: the foreign key refuses it, and the
  // first run of the same file must go with it.
  auto ids = (*store)->writer().WriteIngestedRuns(
      {Imported(commit, "h1", CaseStatus::kPass), Imported(commit + 99, "h2", CaseStatus::kPass)});
  ASSERT_FALSE(ids.ok());
  EXPECT_EQ(ids.error().code, ExitCode::kInfra);
  EXPECT_FALSE((*store)->reader().Run(1).ok());
  EXPECT_TRUE((*store)->reader().KnownCases()->empty());
  // Nor is the file marked as ingested: it goes in once fixed.
  auto retry = (*store)->writer().WriteIngestedRuns({Imported(commit, "h1", CaseStatus::kPass)});
  ASSERT_TRUE(retry.ok());
  EXPECT_TRUE((*retry)[0].has_value());
}

TEST(Store, HistoryIsInFirstParentOrderWithTheNewestRunPerCommit) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  // Stored out of order on purpose: ordinal decides, not insertion.
  for (auto [sha, ord, value] : {std::tuple{"c3", 3, 0.7}, {"c1", 1, 0.9}, {"c2", 2, 0.8}, {"c3", 3, 0.6}}) {
    int64_t run = AddRun(*store, sha, ord);
    int64_t cr = *store->writer().BeginCase(run, "s", "s/t_0", "{}");
    ASSERT_TRUE(
        store->writer().FinishCase(cr, {"s/t_0", CaseStatus::kPass, 0, "", {{"m", value, 0, {}, {}}}, {}}).ok());
  }
  auto rows = *store->reader().History({.case_id = "s/t_0", .metric = "m", .last_n = 10});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].sha, "c1");
  EXPECT_EQ(rows[2].sha, "c3");
  EXPECT_EQ(rows[3].sha, "c3") << "every run of a commit, together";
  EXPECT_DOUBLE_EQ(*rows[2].value, 0.7) << "runs of one commit oldest first";
  EXPECT_DOUBLE_EQ(*rows[3].value, 0.6);
  auto last2 = *store->reader().History({.case_id = "s/t_0", .metric = "m", .last_n = 2});
  ASSERT_EQ(last2.size(), 3u) << "the last two commits, c3 with both runs";
  EXPECT_EQ(last2[0].sha, "c2");
}

TEST(Store, FinishedRunsAreInFirstParentOrderWithTheirMetricsInOneQuery) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  std::vector<int64_t> runs;
  for (auto [sha, ord] : {std::pair{"c2", 2}, {"c1", 1}, {"c2", 2}, {"c3", 3}}) {
    const int64_t run = AddRun(*store, sha, ord);
    runs.push_back(run);
    const int64_t cr = *store->writer().BeginCase(run, "s", "s/t_0", "{}");
    ASSERT_TRUE(
        store->writer()
            .FinishCase(cr, {"s/t_0", CaseStatus::kPass, 0, "", {{"b", 2, 0, {}, {}}, {"a", 1, 5, 0.5, 0.9}}, {}})
            .ok());
    if (sha != std::string("c3")) {
      ASSERT_TRUE(store->writer().FinishRun(run, RunStatus::kPass).ok());
    }
  }
  auto finished = store->reader().FinishedRuns();
  ASSERT_TRUE(finished.ok());
  ASSERT_EQ(finished->size(), 3u) << "c3's run is still running";
  EXPECT_EQ((*finished)[0].sha, "c1");
  EXPECT_EQ((*finished)[1].id, runs[0]) << "runs of one commit oldest first";
  EXPECT_EQ((*finished)[2].id, runs[2]);
  ASSERT_TRUE((*finished)[2].ordinal);
  EXPECT_EQ(*(*finished)[2].ordinal, 2);
  auto metrics = store->reader().MetricsOfRun(runs[1]);
  ASSERT_TRUE(metrics.ok());
  ASSERT_EQ(metrics->size(), 1u);
  const auto& list = metrics->begin()->second;
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "a");
  EXPECT_EQ(list[0].n, 5);
  EXPECT_DOUBLE_EQ(*list[0].high, 0.9);
  EXPECT_TRUE(store->bisect_record().BisectSessionIds()->empty());
  const int64_t session =
      *store->bisect_record().BeginBisect({.good = "c1", .bad = "c2", .target = "t", .args_json = "{}"});
  EXPECT_EQ(*store->bisect_record().BisectSessionIds(), std::vector<int64_t>{session});
  EXPECT_EQ(*store->bisect_record().RunningBisectSessionIds(), std::vector<int64_t>{session});
  ASSERT_TRUE(store->bisect_record().FinishBisect(session, {.status = "error", .result_json = "{}"}).ok());
  EXPECT_TRUE(store->bisect_record().RunningBisectSessionIds()->empty()) << "a finished session is not running";
}

TEST(Store, HistoryOfASuiteHasEveryCaseAndSkipsRunningResults) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  int64_t run = AddRun(*store, "c1", 1);
  for (const char* id : {"s/t_1", "s/t_0", "other/t_0"}) {
    int64_t cr = *store->writer().BeginCase(run, std::string(id).substr(0, std::string(id).find('/')), id, "{}");
    ASSERT_TRUE(store->writer().FinishCase(cr, {id, CaseStatus::kPass, 0, "", {{"m", 1, 0, {}, {}}}, {}}).ok());
  }
  static_cast<void>(*store->writer().BeginCase(run, "s", "s/t_2", "{}"));  // still running: not history
  auto rows = *store->reader().History({.suite = "s", .metric = "m", .last_n = 5});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].case_id, "s/t_0");
  EXPECT_EQ(rows[1].case_id, "s/t_1");
}

TEST(Store, FindsCommitsByPrefixAndTheNewestFinishedCasesOfACommit) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  for (int i = 0; i < 2; ++i) {
    int64_t run = AddRun(*store, "abc1", 1);
    int64_t cr = *store->writer().BeginCase(run, "s", "s/t_0", "{}");
    ASSERT_TRUE(
        store->writer().FinishCase(cr, {"s/t_0", i ? CaseStatus::kFail : CaseStatus::kPass, 0, "", {}, {}}).ok());
    static_cast<void>(*store->writer().BeginCase(run, "s", "s/t_1", "{}"));  // never finished
  }
  AddRun(*store, "abc2", 2);
  auto shas = [&](const std::string& prefix) {
    const std::vector<CommitInfo> commits = store->reader().MatchCommits(prefix).value();
    std::vector<std::string> out;
    for (const auto& c : commits) out.push_back(c.sha);
    return out;
  };
  EXPECT_EQ(shas("abc"), (std::vector<std::string>{"abc1", "abc2"}));
  EXPECT_EQ(shas("abc2"), (std::vector<std::string>{"abc2"}));
  EXPECT_TRUE(shas("f").empty());
  auto cases = *store->reader().NewestCasesAt("abc1");
  ASSERT_EQ(cases.size(), 1u) << "a running case is not a result";
  EXPECT_EQ(cases[0].result.status, CaseStatus::kFail) << "the newest run wins";
  EXPECT_EQ(store->reader().FinishedCases(cases[0].run_id)->size(), 1u);
}

// Reads inside a ReadSnapshot see the file as it was when the first of them ran, whatever
// another connection commits meanwhile; after it, they see the commit.
TEST(Store, ReadsInASnapshotSeeOneStateOfTheFile) {
  TempDir dir;
  auto writer = std::move(Store::Open(dir / "h.db")).value();
  const int64_t run = AddRun(*writer, "abc1", 1);
  const int64_t cr = *writer->writer().BeginCase(run, "s", "s/t_0", "{}");
  auto finish = [&](double v) {
    ASSERT_TRUE(writer->writer().FinishCase(cr, {"s/t_0", CaseStatus::kPass, 0, "", {{"m", v, 0, {}, {}}}, {}}).ok());
  };
  finish(1);
  auto reader = std::move(Store::OpenReadOnly(dir / "h.db")).value();
  {
    const ResultReader::ReadSnapshot snapshot(reader->reader());
    EXPECT_EQ(reader->reader().Metrics(cr)->at(0).value, 1);
    finish(2);
    EXPECT_EQ(reader->reader().Metrics(cr)->at(0).value, 1) << "the snapshot's state";
    EXPECT_EQ(reader->reader().NewestCasesAt("abc1")->size(), 1u);
  }
  EXPECT_EQ(reader->reader().Metrics(cr)->at(0).value, 2) << "after the snapshot, the commit";
  finish(3);
  EXPECT_EQ(reader->reader().Metrics(cr)->at(0).value, 3) << "no snapshot: every read sees the latest commit";
}

TEST(Store, MigratesEveryOlderSchemaVersionKeepingData) {
  for (int v = 0; v < Store::kSchemaVersion; ++v) {
    SCOPED_TRACE("from version " + std::to_string(v));
    TempDir dir;
    auto path = dir / "old.db";
    ASSERT_TRUE(Store::CreateAtVersionForTest(path, v).ok());
    if (v >= 1) {  // data written by a version-1 binary must survive the migration
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
      // Runs said 'passed' until migration 3 renamed the word.
      const std::string sql = std::string("INSERT INTO commits(sha) VALUES('old');"
                              "INSERT INTO runs(commit_id, stack, config_hash, config_json, host, harness_version, started_at, status)"
                              " VALUES(1, 'refstack', 'h', '{}', 'x', '0.0.1', '2026-01-01T00:00:00Z', '") +
                              (v >= 3 ? "pass" : "passed") +
                              "');INSERT INTO case_results(run_id, suite, case_id, params_json, status) "
                              "VALUES(1, 's', 's/t_0', '{}', 'pass');";
      ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
      sqlite3_close(db);
    }
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.error().message;
    EXPECT_EQ(*(*store)->SchemaVersion(), Store::kSchemaVersion);
    if (v >= 1) {
      auto rows = *(*store)->reader().History({.case_id = "s/t_0", .last_n = 5});
      ASSERT_EQ(rows.size(), 1u);
      EXPECT_EQ(rows[0].sha, "old");
    }
    // The newest tables work after migrating.
    int64_t run = AddRun(**store, "new", 2);
    int64_t cr = *(*store)->writer().BeginCase(run, "s", "s/t_0", "{}");
    EXPECT_TRUE((*store)->writer().WriteSample(cr, {"1", SampleOutcome::kCorrect, "1", "1", 0, 0}).ok());
  }
}

TEST(Store, RefusesANewerSchemaWithAnInfraError) {
  TempDir dir;
  auto path = dir / "new.db";
  { ASSERT_TRUE(Store::Open(path).ok()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ExitCode::kInfra);
  EXPECT_NE(store.error().message.find("newer"), std::string::npos);
}

TEST(Store, UnwritablePathIsAnInfraError) {
  auto store = Store::Open("/nonexistent-dir/sub/h.db");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ExitCode::kInfra);
}

TEST(Store, ForeignFileIsRefused) {
  TempDir dir;
  auto path = dir / "other.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE x(a); PRAGMA user_version = 1;", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("not a harness database"), std::string::npos);
}

// A harness database must hold exactly what its migrations create: anything added (which a
// query or a migration would run) or taken away is refused by every open, before it runs.
TEST(Store, RefusesASchemaObjectItsMigrationsDidNotCreate) {
  const std::pair<const char*, const char*> changes[] = {
      {"CREATE TABLE notes(x)", "table notes"},
      {"CREATE INDEX by_host ON runs(host)", "index by_host on runs"},
      {"CREATE VIEW v AS SELECT 1", "view v"},
      {"CREATE TRIGGER t AFTER INSERT ON runs BEGIN SELECT 1; END", "trigger t on runs"},
      {"DROP INDEX op_rows_by_case", "missing: index op_rows_by_case on op_rows"},
  };
  for (int version : {5, Store::kSchemaVersion}) {
    for (const auto& [sql, named] : changes) {
      SCOPED_TRACE(std::string(sql) + " at version " + std::to_string(version));
      TempDir dir;
      const auto path = dir / "h.db";
      ASSERT_TRUE(Store::CreateAtVersionForTest(path, version).ok());
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
      ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
      sqlite3_close(db);
      for (bool read_only : {false, true}) {
        const Status store = OpenStatus(path, read_only);
        ASSERT_FALSE(store.ok());
        EXPECT_EQ(store.error().code, ExitCode::kInfra);
        EXPECT_NE(store.error().message.find(named), std::string::npos) << store.error().message;
      }
    }
  }
}

// Eight processes opening one new file at once: each must see it empty or a harness database,
// never a half-made one (found by ConcurrencyE2E under ASan: the ownership check read the
// application id before another opener's first migration committed and the table count after).
// A store opened to be written is checked first; a read that fails anywhere in that open
// (the pages' check, the schema, the pragmas) is an error naming the file and never a claim
// about what it holds: not damage, not a foreign file, not another schema.
TEST(Store, AReadFaultWhileOpeningToWriteIsAnErrorThatClaimsNothingAboutTheFile) {
  TempDir dir;
  {
    auto s = std::move(Store::Open(dir / "h.db")).value();
    int64_t c = *s->writer().UpsertCommit({"abc", {}, 1, 1, "x"});
    for (int i = 0; i < 30; ++i) {
      int64_t run = *s->writer().BeginRun({c, "refstack", "hash", std::string(2000, 'j'), "h", "0.2.0"});
      ASSERT_TRUE(s->writer().FinishRun(run, RunStatus::kPass).ok());
    }
  }
  testing_util::IoFaultVfs vfs((dir / "h.db").string());
  int64_t budget = 0;
  int said_cannot_read = 0;
  for (;; ++budget) {
    ASSERT_LT(budget, 5000) << "the open kept reading";
    vfs.FailAfter(budget);
    auto opened = Store::Open(dir / "h.db");
    const int64_t refused = vfs.refused();
    vfs.Off();
    if (opened.ok()) break;
    const std::string& said = opened.error().message;
    ASSERT_GT(refused, 0) << "an error with no fault behind it: " << said;
    EXPECT_EQ(opened.error().code, ExitCode::kInfra) << budget << ": " << said;
    EXPECT_NE(said.find("h.db"), std::string::npos) << budget << ": " << said;
    for (const char* claim : {"damaged", "corrupt", "not a harness database", "newer", "older", "foreign"})
      EXPECT_EQ(said.find(claim), std::string::npos) << budget << ": " << said;
    said_cannot_read += said.find("cannot read it, refusing to write into it (PRAGMA quick_check") != std::string::npos;
  }
  EXPECT_GT(budget, 10) << "opened in so few operations that the sweep proves little";
  EXPECT_GT(said_cannot_read, 0) << "no fault reached the pages' check";
  EXPECT_EQ(std::move(Store::Open(dir / "h.db")).value()->reader().Run(0)->status, RunStatus::kPass);
}

// Each insert that hands back its row's id, with one read or lock of the file refused at any
// point of it: an error that stored nothing, or an id that names a row the store holds. The id comes before the
// statement's own commit, which a refused lock can still fail: such an id once named no row,
// and the next insert took it again (found by AutoBisectStore's sweep: two regressions, one
// id).
TEST(Store, AnIdAnInsertGivesNamesAStoredRowWhateverFailsOnce) {
  TempDir dir;
  int64_t commit = 0, run = 0;
  {
    auto s = std::move(Store::Open(dir / "h.db")).value();
    commit = *s->writer().UpsertCommit({"abc", {}, 1, 1, "x"});
    run = *s->writer().BeginRun({commit, "refstack", "hash", "{}", "h", "0.2.0"});
  }
  const struct {
    const char* table;
    std::function<Result<int64_t>(Store&)> insert;
  } inserts[] = {
      {"commits", [](Store& s) { return s.writer().UpsertCommit({"def", {}, 2, 2, "y"}); }},
      {"runs", [&](Store& s) { return s.writer().BeginRun({commit, "refstack", "hash", "{}", "h", "0.2.0"}); }},
      {"case_results", [&](Store& s) { return s.writer().BeginCase(run, "s", "s/a_0", "{}"); }},
      {"bisect_sessions",
       [](Store& s) { return s.bisect_record().BeginBisect({.good = "abc", .bad = "def", .target = "s/a_0"}); }},
      {"regressions", [&](Store& s) {
         return s.bisect_record().AddRegression({0, run, run, "s", "status", {"s/a_0"}, "not-tried", "[]", std::nullopt, ""});
       }},
  };
  testing_util::IoFaultVfs vfs("faulted.db");
  for (const auto& row : inserts) {
    int errors = 0;
    for (int64_t budget = 0;; ++budget) {
      ASSERT_LT(budget, 5000) << row.table;
      const auto db = FreshFaultedCopy(dir.path());
      vfs.FailOnceAfter(budget);
      Result<int64_t> id = Error{ExitCode::kInfra, "not opened"};
      if (auto s = Store::Open(db)) id = row.insert(**s);
      const int64_t refused = vfs.refused();
      vfs.Off();
      if (!id) {  // an error stores nothing: the table holds what the copy held
        ++errors;
        const std::string rows = fmt::format("SELECT count(*) FROM {}", row.table);
        EXPECT_EQ(CountOf(db, rows), CountOf(dir / "h.db", rows)) << row.table << ": an error after " << budget;
        continue;
      }
      EXPECT_EQ(CountOf(db, fmt::format("SELECT count(*) FROM {} WHERE id = {}", row.table, *id)), 1)
          << row.table << ": id " << *id << " after " << budget;
      if (refused == 0) break;
    }
    EXPECT_GT(errors, 5) << row.table << ": the sweep reached few of the insert's operations";
  }
}

// A case's outcome written in a transaction whose one read, lock or commit is refused, at any
// point: the store it was written through takes the next write, and keeps it. A COMMIT that
// fails can leave its transaction open, and every later BEGIN on that connection would fail.
TEST(Store, AWriteThatFailedOnceLeavesTheStoreTakingTheNext) {
  TempDir dir;
  int64_t case_id = 0;
  {
    auto s = std::move(Store::Open(dir / "h.db")).value();
    const int64_t commit = *s->writer().UpsertCommit({"abc", {}, 1, 1, "x"});
    const int64_t run = *s->writer().BeginRun({commit, "refstack", "hash", "{}", "h", "0.2.0"});
    case_id = *s->writer().BeginCase(run, "s", "s/a_0", "{}");
  }
  testing_util::IoFaultVfs vfs("faulted.db");
  int errors = 0;
  for (int64_t budget = 0;; ++budget) {
    ASSERT_LT(budget, 5000);
    const auto db = FreshFaultedCopy(dir.path());
    auto s = std::move(Store::Open(db)).value();
    vfs.FailOnceAfter(budget);
    CaseResult result{"s/a_0", CaseStatus::kFail, 1.5, "broke", {{"m", 0.5, 10, 0.4, 0.6, ""}}, {}};
    errors += !s->writer().FinishCase(case_id, result).ok();
    const int64_t refused = vfs.refused();
    vfs.Off();
    auto next = s->writer().UpsertCommit({"next", {}, 2, 2, "y"});
    ASSERT_TRUE(next.ok()) << "after a fault at " << budget << ": " << next.error().message;
    s.reset();
    EXPECT_EQ(CountOf(db, "SELECT count(*) FROM commits WHERE sha = 'next'"), 1) << "after a fault at " << budget;
    if (refused == 0) break;
  }
  EXPECT_GT(errors, 3) << "the sweep reached few of the write's operations";
}

// A commit stored again (a run without git after one with it, or the other way round)
// keeps what either time knew of it: nothing known is erased by a later "not known".
TEST(Store, ACommitStoredAgainKeepsWhatEitherTimeKnew) {
  const CommitInfo bare{"abc", {}, std::nullopt, std::nullopt, ""};
  const CommitInfo known{"abc", {"p0", "p1"}, 7, 1700000000, "the subject"};
  for (bool known_first : {true, false}) {
    TempDir dir;
    {
      auto s = std::move(Store::Open(dir / "h.db")).value();
      const int64_t first = *s->writer().UpsertCommit(known_first ? known : bare);
      EXPECT_EQ(*s->writer().UpsertCommit(known_first ? bare : known), first) << "one commit, one row";
    }
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open_v2((dir / "h.db").c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(h, "SELECT parents, first_parent_ordinal, author_time, subject FROM commits", -1, &st,
                                 nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "p0 p1") << known_first;
    EXPECT_EQ(sqlite3_column_int64(st, 1), 7) << known_first;
    EXPECT_EQ(sqlite3_column_int64(st, 2), 1700000000) << known_first;
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 3)), "the subject") << known_first;
    EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(h);
  }
}

TEST(Store, ManyOpenersOfOneNewFileAllSucceed) {
  TempDir dir;
  for (int round = 0; round < 20; ++round) {
    const auto db = dir / ("h" + std::to_string(round) + ".db");
    std::vector<std::thread> openers;
    std::atomic<int> failures{0};
    std::string first_error;
    std::mutex m;
    for (int i = 0; i < 8; ++i)
      openers.emplace_back([&] {
        auto s = Store::Open(db);
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(m);
          if (failures++ == 0) first_error = s.error().message;
        }
      });
    for (auto& t : openers) t.join();
    ASSERT_EQ(failures, 0) << "round " << round << ": " << first_error;
  }
}

TEST(Store, ResumeFindsTheInterruptedRunOfTheSameConfig) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  int64_t c = *store->writer().UpsertCommit({"abc", {}, 1, {}, ""});
  int64_t done = *store->writer().BeginRun({c, "refstack", "h1", "{}", "x", "v"});
  ASSERT_TRUE(store->writer().FinishRun(done, RunStatus::kPass).ok());
  int64_t killed = *store->writer().BeginRun({c, "refstack", "h1", "{}", "x", "v"});
  auto runs = *store->writer().InterruptedRuns(c);
  ASSERT_EQ(runs.size(), 1u) << "the finished run is not resumable";
  EXPECT_EQ(runs[0].id, killed);
  EXPECT_EQ(runs[0].config_hash, "h1");
  ASSERT_TRUE(store->writer().FinishRun(killed, RunStatus::kFail).ok());
  EXPECT_TRUE(store->writer().InterruptedRuns(c)->empty());
}

TEST(Store, LatestCaseResultSkipsRunningAndGoldenChangesGoThroughAnIntent) {
  TempDir dir;
  auto store = Store::Open(dir / "h.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  Store& s = **store;
  EXPECT_FALSE(s.reader().LatestCaseResult("gmm/t_0")->has_value());
  int64_t run1 = AddRun(s, "aaa", 1);
  int64_t cr1 = *s.writer().BeginCase(run1, "gmm", "gmm/t_0", "{}");
  ASSERT_TRUE(s.writer().FinishCase(cr1, {"gmm/t_0", CaseStatus::kFail, 1, "m", {}, {}}).ok());
  int64_t run2 = AddRun(s, "bbb", 2);
  (void)*s.writer().BeginCase(run2, "gmm", "gmm/t_0", "{}");  // still running: not the latest result
  auto latest = s.reader().LatestCaseResult("gmm/t_0");
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->case_result_id, cr1);
  EXPECT_EQ((*latest)->sha, "aaa");
  EXPECT_EQ((*latest)->status, CaseStatus::kFail);

  GoldenChange c{0, "gmm/t_0", "golden/ops/gmm/t_0.json", "01", "02", "fusion learned its tail", "aaa", "me", "", cr1};
  auto kept = s.golden_log().BeginGoldenChange(c);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  auto dropped = s.golden_log().BeginGoldenChange(c);
  ASSERT_TRUE(dropped.ok());
  ASSERT_EQ(s.golden_log().PendingGoldenChanges()->size(), 2u);
  EXPECT_TRUE(RecordedGoldenChanges(s.path(), "gmm/t_0")->empty()) << "an intent is not a change until it is finished";
  ASSERT_TRUE(s.golden_log().FinishGoldenChange(*kept).ok());
  ASSERT_TRUE(s.golden_log().AbandonGoldenChange(*dropped).ok());
  EXPECT_TRUE(s.golden_log().PendingGoldenChanges()->empty());
  EXPECT_FALSE(s.golden_log().FinishGoldenChange(*dropped).ok()) << "an abandoned intent records nothing";
  auto changes = RecordedGoldenChanges(s.path(), "gmm/t_0");
  ASSERT_TRUE(changes.ok());
  ASSERT_EQ(changes->size(), 1u);
  EXPECT_EQ((*changes)[0].reason, "fusion learned its tail");
  EXPECT_EQ((*changes)[0].from_case_result_id, cr1);
  EXPECT_FALSE((*changes)[0].at.empty());
  EXPECT_TRUE(RecordedGoldenChanges(s.path(), "other/t_0")->empty());
  EXPECT_EQ(RecordedGoldenChanges(s.path(), "")->size(), 1u);
}


// Migration 9 re-keys runs stored with a whole identity (format 1) by the identity rule, so a
// run stored before it pairs with one made after it: the same model behind another port and
// with a fault switched on is the same measurement; another model is not.
TEST(Store, MigrationSplitsStoredIdentitiesByTheIdentityRule) {
  TempDir dir;
  auto path = dir / "v8.db";
  ASSERT_TRUE(Store::CreateAtVersionForTest(path, 8).ok());
  auto whole = [](const std::string& url, const std::string& model, const std::string& fault) {
    return Json{{"format_version", 1},
                {"stack_config", {{"stack", "refstack"}, {"device", "D"}, {"precision", "bf16"}, {"batch", 1},
                                  {"faults", fault.empty() ? Json::array() : Json::array({fault})}}},
                {"endpoint", {{"base_url", url}, {"model", model}, {"chat", false}}},
                {"sim_profiles", Json::object()}};
  };
  const std::vector<Json> stored = {whole("http://127.0.0.1:30000", "m", ""),
                                    whole("http://10.0.0.7:30001", "m", "fp8-scale-unrepaired"),
                                    whole("http://127.0.0.1:30000", "other", "")};
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    std::string sql = "INSERT INTO commits(sha) VALUES('old');";
    for (const auto& j : stored)
      sql += "INSERT INTO runs(commit_id, stack, config_hash, config_json, host, harness_version, started_at, status)"
             " VALUES(1, 'openai', 'old-hash', '" + j.dump() + "', 'x', '0.0.1', '2026-01-01T00:00:00Z', 'pass');";
    // Not an identity of format 1 (a test's or an older tool's; a format written as text):
    // kept as it is. The text one once threw out of the migration.
    for (const char* kept : {"{}", R"({"format_version":"1","stack_config":{"faults":["f"]}})"})
      sql += std::string("INSERT INTO runs(commit_id, stack, config_hash, config_json, host, harness_version, "
                         "started_at, status) VALUES(1, 'refstack', 'kept', '") +
             kept + "', 'x', '0.0.1', '2026-01-01T00:00:00Z', 'pass');";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  std::vector<RunRow> runs;
  for (int64_t id = 1; id <= 5; ++id) runs.push_back(*(*store)->reader().Run(id));
  EXPECT_EQ(runs[0].config_hash, runs[1].config_hash) << "another port, host and a fault: one measurement";
  EXPECT_NE(runs[0].config_hash, runs[2].config_hash) << "another model is another measurement";
  EXPECT_EQ(runs[0].config_hash, SplitRunIdentity(stored[0]).hash) << "old runs are keyed as new ones";
  EXPECT_EQ(runs[3].config_hash, "kept");
  EXPECT_EQ(runs[3].config_json, "{}");
  EXPECT_EQ(runs[4].config_hash, "kept");
  EXPECT_EQ(runs[4].config_json, R"({"format_version":"1","stack_config":{"faults":["f"]}})");
  const Json context = Json::parse(runs[1].context_json);
  EXPECT_EQ(context["endpoint"]["base_url"], "http://10.0.0.7:30001") << runs[1].context_json;
  EXPECT_EQ(context["stack_config"]["faults"], Json::array({"fp8-scale-unrepaired"})) << runs[1].context_json;
  const Json measured = Json::parse(runs[1].config_json);
  EXPECT_FALSE(measured["endpoint"].contains("base_url")) << runs[1].config_json;
  EXPECT_FALSE(measured["stack_config"].contains("faults")) << runs[1].config_json;
  EXPECT_EQ(measured["endpoint"]["model"], "m");
  EXPECT_EQ(measured["format_version"], kRunIdentityFormat);
}

// Migration 11: runs stored before it are whole runs; a partial run says how many
// questions it evaluated, never zero.
TEST(Store, MigrationElevenKeepsStoredRunsWhole) {
  TempDir dir;
  auto path = dir / "v10.db";
  ASSERT_TRUE(Store::CreateAtVersionForTest(path, 10).ok());
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "INSERT INTO commits(sha) VALUES('old');"
                           "INSERT INTO runs(commit_id, stack, config_hash, config_json, host, harness_version, "
                           "started_at, status, uid) VALUES(1, 'refstack', 'h', '{}', 'x', '0.0.1', "
                           "'2026-01-01T00:00:00Z', 'pass', 'u1');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto store = std::move(Store::Open(path)).value();
  EXPECT_FALSE(store->reader().Run(1)->partial_questions.has_value()) << "stored before partial runs existed: whole";
  const int64_t c = *store->writer().UpsertCommit({"new", {}, 2, 1700000000, "s"});
  NewRun partial{c, "refstack", "h", "{}", "host", "0.1.0"};
  partial.partial_questions = 120;
  EXPECT_EQ(store->reader().Run(*store->writer().BeginRun(partial))->partial_questions, 120);
  partial.partial_questions = 0;
  EXPECT_FALSE(store->writer().BeginRun(partial).ok()) << "a partial run of no question";
}

// A partial run (harness run --questions) is newer than the whole runs around it in every
// query below, so each would pick it without its filter: it is never a baseline (at a
// commit, below an ordinal, as the prune's baseline), never a rerun of a gate, never a
// history row (nor a commit of the history), never what compare pairs at a commit, never
// counted as a run for --baseline, never a nightly; bisect still reads it, marked.
TEST(Store, APartialRunFeedsNoBaselineGateHistoryOrComparison) {
  TempDir dir;
  auto store = std::move(Store::Open(dir / "h.db")).value();
  auto add = [&](const std::string& sha, int64_t ordinal, std::optional<int64_t> partial, double accuracy) {
    NewRun r{
        *store->writer().UpsertCommit({sha, {}, ordinal, 1700000000, "s"}), "refstack", "h", "{}", "host", "0.1.0"};
    r.partial_questions = partial;
    const int64_t run = *store->writer().BeginRun(r);
    const int64_t cr = *store->writer().BeginCase(run, "gsm8k", "gsm8k/t_0", "{}");
    EXPECT_TRUE(store->writer().WriteSample(cr, {"0", SampleOutcome::kCorrect, "1", "1", 0, 0, ""}).ok());
    EXPECT_TRUE(store->writer()
                    .FinishCase(cr, {"gsm8k/t_0", CaseStatus::kPass, 1, "", {{"accuracy", accuracy, 1, {}, {}}}, {}})
                    .ok());
    EXPECT_TRUE(store->writer().FinishRun(run, RunStatus::kPass).ok());
    return run;
  };
  const int64_t whole = add("c1", 1, std::nullopt, 0.92);
  const int64_t partial = add("c1", 1, 120, 0.50);
  add("c3", 3, 40, 0.40);  // a commit only a partial run measured
  const ResultReader::CaseMatch match{"gsm8k/t_0", "h", "{}", 0, true};
  EXPECT_EQ((*store->reader().NewestCaseAt(match, "c1"))->run_id, whole) << "baseline at a commit";
  EXPECT_EQ((*store->reader().NewestCaseBelowOrdinal(match, 2))->run_id, whole) << "baseline without git";
  EXPECT_FALSE(store->reader().NewestCaseBelowOrdinal(match, 4)->value().sha == "c3") << "baseline without git";
  EXPECT_EQ(*store->reader().MetricAt(match, "c1", "accuracy"), std::vector<double>{0.92}) << "a gate's reruns";
  EXPECT_EQ(*store->reader().RunsAt("c1", "h"), std::make_pair(int64_t{1}, int64_t{1}))
      << "runs an explicit --baseline counts";
  EXPECT_EQ(*store->reader().RunsAt("c3", "h"), std::make_pair(int64_t{0}, int64_t{0}));
  for (const HistoryQuery& q : {HistoryQuery{.case_id = "gsm8k/t_0", .last_n = 5},
                                HistoryQuery{.suite = "gsm8k", .last_n = 5}}) {
    auto rows = *store->reader().History(q);
    ASSERT_EQ(rows.size(), 1u) << "history (a trend) of " << q.case_id << q.suite;
    EXPECT_EQ(rows[0].run_id, whole);
  }
  for (const HistoryQuery& q : {HistoryQuery{.case_id = "gsm8k/t_0", .last_n = 1},
                                HistoryQuery{.suite = "gsm8k", .last_n = 1}})
    EXPECT_EQ(store->reader().History(q)->size(), 1u) << "the newest commit of the history is one a whole run measured";
  EXPECT_EQ(store->reader().NewestCasesAt("c1")->at(0).run_id, whole) << "compare at a commit";
  EXPECT_TRUE(store->reader().NewestCasesAt("c3")->empty());
  EXPECT_TRUE(IsNightlyRun(*store->reader().Run(whole)));
  EXPECT_FALSE(IsNightlyRun(*store->reader().Run(partial)));
  auto evidence = *store->reader().CaseEvidenceAt("gsm8k/t_0", "c1");
  ASSERT_EQ(evidence.size(), 2u) << "bisect evidence holds both";
  EXPECT_FALSE(evidence[0].partial);
  EXPECT_TRUE(evidence[1].partial);
}

TEST(IdentityRule, MovesOnlyTheContextPathsAndKeepsTheirPlace) {
  Json whole = {{"format_version", 1},
                {"stack_config", {{"stack", "exec"}, {"batch", 4},
                                  {"exec", {{"command", {"run", "{model}"}}, {"cwd", "/src"}, {"env", {{"A", "1"}}},
                                            {"timeout_s", 60}, {"output", "auto"}}}}},
                {"endpoint", nullptr},
                {"sim_profiles", {{"p.json", "abc"}}}};
  const SplitIdentity s = SplitRunIdentity(whole);
  EXPECT_EQ(s.measured["stack_config"]["exec"], (Json{{"command", {"run", "{model}"}}, {"output", "auto"}}));
  EXPECT_EQ(s.context["stack_config"]["exec"], (Json{{"cwd", "/src"}, {"env", {{"A", "1"}}}, {"timeout_s", 60}}));
  EXPECT_EQ(s.measured["sim_profiles"], whole["sim_profiles"]);
  EXPECT_TRUE(s.measured["endpoint"].is_null());
  // Each part carries the identity's format (the stored context is read back by it too),
  // and the context holds the moved leaves and nothing else.
  EXPECT_EQ(s.measured["format_version"], kRunIdentityFormat);
  EXPECT_EQ(s.context, (Json{{"format_version", kRunIdentityFormat},
                             {"stack_config", {{"exec", {{"cwd", "/src"}, {"env", {{"A", "1"}}}, {"timeout_s", 60}}}}}}))
      << s.context.dump();
  // A different command, batch or profile is another measurement; another cwd is not.
  Json moved = whole;
  moved["stack_config"]["exec"]["cwd"] = "/elsewhere";
  EXPECT_EQ(SplitRunIdentity(moved).hash, s.hash);
  for (const char* ptr : {"/stack_config/batch", "/stack_config/exec/command/1", "/sim_profiles/p.json"}) {
    Json changed = whole;
    changed[Json::json_pointer(ptr)] = "changed";
    EXPECT_NE(SplitRunIdentity(changed).hash, s.hash) << ptr;
  }
}

// Migration 9 re-keys a stored identity of format 1 only: one of another format (a later
// harness's, 0, none, not a number) or no object at all is kept as it stands, with no
// context and no hash, so the stored hash stays.
TEST(IdentityRule, OnlyAStoredIdentityOfFormatOneIsRekeyed) {
  const Json v1 = {{"format_version", 1}, {"stack_config", {{"stack", "exec"}, {"exec", {{"cwd", "/src"}}}}}};
  const RekeyedIdentity rekeyed = RekeyStoredIdentity(v1.dump());
  const SplitIdentity split = SplitRunIdentity(v1);
  EXPECT_EQ(rekeyed.measured_json, split.measured.dump());
  EXPECT_EQ(rekeyed.context_json, split.context.dump());
  EXPECT_EQ(rekeyed.hash, split.hash);
  EXPECT_FALSE(rekeyed.hash.empty());
  for (const Json& version : {Json(2), Json(0), Json(-1), Json("1"), Json(nullptr)}) {
    Json other = v1;
    other["format_version"] = version;
    const RekeyedIdentity kept = RekeyStoredIdentity(other.dump());
    EXPECT_EQ(kept.measured_json, other.dump()) << version.dump();
    EXPECT_EQ(kept.context_json, "{}") << version.dump();
    EXPECT_EQ(kept.hash, "") << version.dump();
  }
  Json unversioned = v1;
  unversioned.erase("format_version");
  for (const std::string& text : {unversioned.dump(), std::string("[1]"), std::string("not json")}) {
    const RekeyedIdentity kept = RekeyStoredIdentity(text);
    EXPECT_EQ(kept.measured_json, text);
    EXPECT_EQ(kept.hash, "") << text;
  }
}

}  // namespace
}  // namespace harness
