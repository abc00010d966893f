// Hostile databases given to the commands that read a database someone else wrote (merge,
// report, history, compare), built with the SQLite C API at test time: a view in place of a
// table (an endless recursive query), a trigger in an older-schema file that its migration
// would fire, a trigger that never ends, a row whose parent row is gone. Each is refused by
// name before any query runs; the user's file is never written, and an older one is read
// through a migrated copy. A sample outcome word the harness does not know is named where it
// is read. A damaged page is named with its file by readers, and found (PRAGMA quick_check)
// before a writer writes into the file. Every command runs with its files capped (prlimit) and a timeout, so a regression
// fails the test instead of filling the disk or hanging it.
#include <sqlite3.h>

#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

void Sql(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
  const std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(h);
  ASSERT_EQ(rc, SQLITE_OK) << message << "\n" << sql;
}

int64_t QueryInt(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  int64_t v = -1;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return v;
}

// The binary with every file it writes capped at 256 MiB and a 30 s timeout; its temporary
// folder is dir/tmp.
ProcessResult RunBounded(const TempDir& dir, const std::vector<std::string>& args) {
  fs::create_directories(dir / "tmp");
  std::vector<std::string> argv = {"prlimit", "--fsize=268435456", "--", testing_util::kHarnessBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = RunProcess(argv, {.env = {{"HARNESS_ROOT", testing_util::kSourceRoot}, {"TMPDIR", (dir / "tmp").string()}},
                             .timeout_s = 30});
  return r.ok() ? *r : ProcessResult{};
}

// A database of the current schema: selftest results with samples at two commits.
fs::path CurrentDb(const TempDir& dir) {
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "samples": 4, "ops": 2})"));
  const fs::path db = dir / "in.db";
  for (const char* commit : {"abc1234", "def5678"}) {
    auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--suite", "selftest", "--db", db.string(),
                         "--commit", commit});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return db;
}

// A database of schema version 5 (before runs had uids) holding a passing and a failing run
// of one case, with samples, as a version-5 harness wrote it.
fs::path Version5Db(const TempDir& dir) {
  const fs::path db = dir / "old.db";
  EXPECT_TRUE(Store::CreateAtVersionForTest(db, 5).ok());
  Sql(db, R"sql(
INSERT INTO commits(id, sha, subject, first_parent_ordinal) VALUES(1, 'aaaa1111', 'one', 1), (2, 'bbbb2222', 'two', 2);
INSERT INTO runs(id, commit_id, stack, config_hash, config_json, host, harness_version, started_at, finished_at, status)
VALUES(1, 1, 'refstack', 'h', '{}', 'host', '0.1.0', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 'pass'),
      (2, 2, 'refstack', 'h', '{}', 'host', '0.1.0', '2026-01-02T00:00:00Z', '2026-01-02T00:01:00Z', 'fail');
INSERT INTO case_results(id, run_id, suite, case_id, params_json, status, duration_s, message)
VALUES(1, 1, 'selftest', 'selftest/test_outcome_0', '{}', 'pass', 1, ''),
      (2, 2, 'selftest', 'selftest/test_outcome_0', '{}', 'fail', 1, 'it broke');
INSERT INTO metrics(case_result_id, name, value, n) VALUES(1, 'value', 0.5, 4), (2, 'value', 0.25, 4);
INSERT INTO samples(case_result_id, sample_key, outcome)
VALUES(1, '0', 'correct'), (1, '1', 'correct'), (2, '0', 'correct'), (2, '1', 'wrong');
)sql");
  return db;
}

// Every command that reads a database someone else wrote, on db.
std::vector<std::vector<std::string>> Readers(const TempDir& dir, const fs::path& db, const std::string& a,
                                              const std::string& b) {
  return {{"merge", (dir / "out.db").string(), db.string()},
          {"report", "--db", db.string(), "--out", (dir / "r.html").string()},
          {"history", "--db", db.string(), "--case", "selftest/test_outcome_0"},
          {"compare", "--db", db.string(), a, b}};
}

// Each reader refuses db (exit 3, naming it and `object`) at once, writing nothing.
void ExpectRefusedByEveryReader(const TempDir& dir, const fs::path& db, const std::string& object) {
  const std::string before = ReadFile(db);
  for (const auto& args : Readers(dir, db, "abc1234", "def5678")) {
    SCOPED_TRACE(args[0]);
    auto r = RunBounded(dir, args);
    EXPECT_FALSE(r.timed_out) << "it ran the hostile object";
    EXPECT_EQ(r.signal, 0) << "it ran the hostile object until the file cap killed it";
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(db.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(object), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "out.db")) << "merge checks every input before it creates the output";
  EXPECT_FALSE(fs::exists(dir / "r.html"));
  EXPECT_TRUE(ReadFile(db) == before) << "a reader wrote to the file it refused";
  EXPECT_TRUE(fs::is_empty(dir / "tmp")) << "a temporary copy was left behind";
}

// Overwrites the b-tree page of `table` (its root page) with bytes no page has, as a disk
// or a copy gone wrong would: the file still opens and its schema reads.
void CorruptRootPageOf(const fs::path& db, const std::string& table) {
  const int64_t page = QueryInt(db, "SELECT rootpage FROM sqlite_master WHERE name = '" + table + "'");
  const int64_t size = QueryInt(db, "PRAGMA page_size");
  ASSERT_GT(page, 1) << table;
  ASSERT_FALSE(fs::exists(db.string() + "-wal") && fs::file_size(db.string() + "-wal") > 0) << "a WAL would hide the page";
  std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp((page - 1) * size);
  const std::string garbage(static_cast<std::size_t>(size), '\xEE');
  f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  ASSERT_TRUE(f.good());
}

// A damaged page that `run` would not read: quick_check finds it when the file is opened for
// writing, and nothing is written into the file (byte-identical), with the file named.
TEST(HostileDbE2E, ADamagedPageIsFoundBeforeAnythingIsWrittenAndTheFileIsNamed) {
  TempDir dir;
  const fs::path db = CurrentDb(dir);
  CorruptRootPageOf(db, "bisect_steps");
  if (HasFatalFailure()) return;
  const std::string before = ReadFile(db);
  TempDir other;
  const fs::path healthy = CurrentDb(other);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--suites-dir", (dir / "suites").string(), "--suite", "selftest", "--db",
                                 db.string(), "--commit", "abc9999"},
        std::vector<std::string>{"merge", db.string(), healthy.string()}}) {
    SCOPED_TRACE(args[0]);
    auto r = RunBounded(dir, args);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find(db.string() + ": damaged database, refusing to write into it (PRAGMA quick_check: "),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(ReadFile(db) == before) << "the damaged file was written";
  }
}

// A damaged page a reader reads: every reader's error names the file, not only "malformed".
TEST(HostileDbE2E, AMalformedPageIsReportedWithTheFilesName) {
  TempDir dir;
  const fs::path db = CurrentDb(dir);
  CorruptRootPageOf(db, "case_results");
  if (HasFatalFailure()) return;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", "--db", db.string(), "--format", "text"},
        std::vector<std::string>{"history", "--db", db.string(), "--suite", "selftest"},
        std::vector<std::string>{"compare", "--db", db.string(), "abc1234", "def5678"}}) {
    SCOPED_TRACE(args[0]);
    auto r = RunBounded(dir, args);
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find(db.filename().string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("database " + fs::absolute(db).string()), std::string::npos) << r.err;
  }
}

TEST(HostileDbE2E, AViewInPlaceOfATableIsRefusedBeforeAnyQueryRunsIt) {
  TempDir dir;
  const fs::path db = CurrentDb(dir);
  // An endless recursive query whose rows match no case: a query that reads it never ends.
  Sql(db, R"sql(PRAGMA foreign_keys = OFF; DROP TABLE samples;
CREATE VIEW samples(case_result_id, sample_key, outcome, expected, extracted, latency_s, tokens, completion) AS
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
SELECT -i, CAST(i AS TEXT), 'correct', '', '', 0, 0, '' FROM n;)sql");
  ExpectRefusedByEveryReader(dir, db, "view samples");
}

TEST(HostileDbE2E, AnEndlessTriggerIsRefusedBeforeAnyQueryFiresIt) {
  TempDir dir;
  const fs::path db = CurrentDb(dir);
  Sql(db, R"sql(CREATE TRIGGER endless AFTER UPDATE ON runs BEGIN
  SELECT count(*) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n);
END;)sql");
  ExpectRefusedByEveryReader(dir, db, "trigger endless on runs");
}

// Migration 6 updates every run (it gives each a uid), which fired this trigger in the
// user's own file: the input's samples were deleted and the merge copied none.
TEST(HostileDbE2E, ATriggerInAnOlderSchemaIsRefusedAndNeverFires) {
  TempDir dir;
  const fs::path db = Version5Db(dir);
  Sql(db, "CREATE TRIGGER wipe AFTER UPDATE ON runs BEGIN DELETE FROM samples; END;");
  ExpectRefusedByEveryReader(dir, db, "trigger wipe on runs");
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM samples"), 4);
  EXPECT_EQ(QueryInt(db, "PRAGMA user_version"), 5) << "the user's file was migrated";

  // The same trigger, endless, as a query command meets it.
  Sql(db, R"sql(DROP TRIGGER wipe; CREATE TRIGGER wipe AFTER UPDATE ON runs BEGIN
  SELECT count(*) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n);
END;)sql");
  ExpectRefusedByEveryReader(dir, db, "trigger wipe on runs");
}

TEST(HostileDbE2E, AnOlderSchemaIsReadThroughAMigratedCopyAndNeverWritten) {
  TempDir dir;
  const fs::path db = Version5Db(dir);
  fs::permissions(db, fs::perms::owner_write, fs::perm_options::remove);  // as read-only as a user can make it
  const std::string before = ReadFile(db);
  auto history = RunBounded(dir, {"history", "--db", db.string(), "--case", "selftest/test_outcome_0"});
  EXPECT_EQ(history.exit_code, 0) << history.err;
  EXPECT_NE(history.out.find("bbbb2222"), std::string::npos) << history.out;
  auto compare = RunBounded(dir, {"compare", "--db", db.string(), "aaaa1111", "bbbb2222"});
  EXPECT_EQ(compare.exit_code, 1) << "pass -> fail is a regression: " << compare.err;
  EXPECT_NE(compare.out.find("PASS → FAIL"), std::string::npos) << compare.out;
  auto report = RunBounded(dir, {"report", "--db", db.string(), "--out", (dir / "r.html").string()});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(ReadFile(dir / "r.html").find("it broke"), std::string::npos);
  auto merge = RunBounded(dir, {"merge", (dir / "out.db").string(), db.string()});
  EXPECT_EQ(merge.exit_code, 0) << merge.err;
  EXPECT_NE(merge.out.find("2 runs added"), std::string::npos) << merge.out;
  EXPECT_EQ(QueryInt(dir / "out.db", "SELECT COUNT(*) FROM samples"), 4);
  EXPECT_EQ(QueryInt(dir / "out.db", "SELECT COUNT(*) FROM runs WHERE uid IS NOT NULL"), 2);

  EXPECT_TRUE(ReadFile(db) == before) << "a reader wrote to the user's file";
  EXPECT_EQ(QueryInt(db, "PRAGMA user_version"), 5) << "the user's file was migrated in place";
  EXPECT_TRUE(fs::is_empty(dir / "tmp")) << "the migrated copy was left behind";
}

// A sample outcome word the harness does not know (another tool's, a damaged row) is named
// by every command that reads samples, and never read as some other outcome.
TEST(HostileDbE2E, AnUnknownSampleOutcomeIsNamedAndNothingIsMergedOrReported) {
  TempDir dir;
  const fs::path db = CurrentDb(dir);
  Sql(db, "UPDATE samples SET outcome = 'maybe' WHERE sample_key = '1'");
  const std::string before = ReadFile(db);
  const std::string named = "outcome 'maybe' is not one of correct, wrong, invalid, truncated, error, pass, fail";
  auto merge = RunBounded(dir, {"merge", (dir / "out.db").string(), db.string()});
  EXPECT_EQ(merge.exit_code, 3) << merge.err;
  EXPECT_NE(merge.err.find(db.string() + ": damaged database: table samples row "), std::string::npos) << merge.err;
  EXPECT_NE(merge.err.find(named), std::string::npos) << merge.err;
  EXPECT_FALSE(fs::exists(dir / "out.db"));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", "--db", db.string(), "--out", (dir / "r.html").string()},
        std::vector<std::string>{"compare", "--db", db.string(), "abc1234", "def5678"}}) {
    SCOPED_TRACE(args[0]);
    auto r = RunBounded(dir, args);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(db.string() + ": damaged database: samples row"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("key '1'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "r.html"));
  EXPECT_TRUE(ReadFile(db) == before) << "a reader wrote to the file it refused";
}

TEST(HostileDbE2E, AnOrphanRowIsNamedAndNothingIsMerged) {
  TempDir dir;
  const fs::path db = CurrentDb(dir);
  Sql(db, "PRAGMA foreign_keys = OFF; DELETE FROM commits WHERE sha LIKE 'def5678%';");
  auto merge = RunBounded(dir, {"merge", (dir / "out.db").string(), db.string()});
  EXPECT_EQ(merge.exit_code, 3) << merge.err;
  EXPECT_NE(merge.err.find(db.string()), std::string::npos) << merge.err;
  EXPECT_NE(merge.err.find("table runs row 2 has a commit_id that names no row of commits"), std::string::npos)
      << merge.err;
  EXPECT_EQ(merge.err.find("constraint"), std::string::npos) << merge.err;
  EXPECT_FALSE(fs::exists(dir / "out.db"));
}

// A run or a bisect session without its uid (the identity a merge keys rows by) is named,
// table and row, and nothing is merged: each table in turn, the other one whole.
TEST(HostileDbE2E, ARowWithoutItsUidIsNamedAndNothingIsMerged) {
  for (const std::string table : {"runs", "bisect_sessions"}) {
    SCOPED_TRACE(table);
    TempDir dir;
    const fs::path db = CurrentDb(dir);
    if (table == "bisect_sessions")  // a finished session, as a harness before uids left it
      Sql(db, "INSERT INTO bisect_sessions(started_at, good, bad, target, args_json, status) VALUES "
              "('2026-01-01T00:00:00Z', 'abc1234', 'def5678', 'selftest/test_outcome_0', '{}', 'no-culprit')");
    else
      Sql(db, "UPDATE runs SET uid = NULL WHERE id = 2");
    const int64_t row = QueryInt(db, "SELECT MAX(id) FROM " + table);
    auto merge = RunBounded(dir, {"merge", (dir / "out.db").string(), db.string()});
    EXPECT_EQ(merge.exit_code, 3) << merge.err;
    EXPECT_NE(merge.err.find(fmt::format("{}: damaged database: table {} row {} has no uid; nothing merged",
                                         db.string(), table, row)),
              std::string::npos)
        << merge.err;
    EXPECT_FALSE(fs::exists(dir / "out.db"));
  }
}

}  // namespace
}  // namespace harness
