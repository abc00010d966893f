// Store::MergeFrom: what `harness merge` does with each input database.
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "harness/store/merge_local_tables.h"
#include "harness/store/store.h"
#include "harness/testing/io_fault_vfs.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;

// The first column of a query's first row; -1 when it answers none.
int64_t QueryInt(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr);
  const int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

int64_t Count(const std::filesystem::path& db, const std::string& table) {
  return QueryInt(db, "SELECT COUNT(*) FROM " + table);
}

void Sql(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(h);
}

// The tables of a database's schema, SQLite's own left out.
std::vector<std::string> SchemaTables(const std::filesystem::path& db) {
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  const char* sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name";
  sqlite3_prepare_v2(h, sql, -1, &st, nullptr);
  std::vector<std::string> out;
  while (sqlite3_step(st) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

// The rows a query answers, each as its columns' text joined by '|' (NULL as "NULL").
std::vector<std::string> QueryRows(sqlite3* h, const std::string& sql) {
  std::vector<std::string> rows;
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(h);
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string row;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const auto* text = sqlite3_column_text(st, c);
      row += (text ? std::string(reinterpret_cast<const char*>(text)) : "NULL") + "|";
    }
    rows.push_back(row);
  }
  sqlite3_finalize(st);
  return rows;
}

// Every row of every table, as text, table by table: what a database holds, to compare.
std::map<std::string, std::vector<std::string>> Rows(const std::filesystem::path& db) {
  std::map<std::string, std::vector<std::string>> out;
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  for (const auto& table : SchemaTables(db)) out[table] = QueryRows(h, "SELECT * FROM " + table + " ORDER BY rowid");
  sqlite3_close(h);
  return out;
}

bool MergeLocal(const std::string& table) {
  for (const auto& t : MergeLocalTables())
    if (t.name == table) return true;
  return false;
}

// One shard's database: a run of `shard` in nightly "n1" at commit "abc" with `cases`
// cases, each with a metric, two samples and an op row; the record of the file it was
// ingested from; a golden change and one under way; a bisect session and the regression it
// looked at: a row in every table of the schema.
void MakeShard(const std::filesystem::path& db, const std::string& shard, int cases, const std::string& tag) {
  auto s = std::move(Store::Open(db)).value();
  int64_t c = *s->writer().UpsertCommit({"abc", {"p0"}, 7, 1700000000, "the commit"});
  NewRun r{c, "refstack", "hash", "{}", "host-" + tag, "0.2.0", shard, "n1"};
  int64_t run = *s->writer().BeginRun(r);
  for (int i = 0; i < cases; ++i) {
    const std::string id = "suite/test_" + tag + "_" + std::to_string(i);
    int64_t cr = *s->writer().BeginCase(run, "suite", id, "{}");
    ASSERT_TRUE(s->writer().WriteSample(cr, {"q1", SampleOutcome::kCorrect, "1", "1", 0.1, 3, "one \xff"}).ok());
    ASSERT_TRUE(s->writer().WriteSample(cr, {"q2", SampleOutcome::kWrong, "2", "3", 0.1, 3, "three"}).ok());
    CaseResult o{id, CaseStatus::kPass, 0.5, "", {{"accuracy", 0.5, 2, 0.1, 0.9}}, {{"aten.mm.default", "[1]", 1, 0.1}}};
    ASSERT_TRUE(s->writer().FinishCase(cr, o).ok());
  }
  ASSERT_TRUE(s->writer().FinishRun(run, RunStatus::kPass).ok());
  int64_t session = *s->bisect_record().BeginBisect(BisectSessionRow{0, "", "", "g" + tag, "b" + tag, "t", "{}"});
  ASSERT_TRUE(s->bisect_record().AddBisectStep(session, {1, "abc", "store", run, std::nullopt, "{}", "{}"}).ok());
  RegressionRow g;
  g.run_id = run;
  g.baseline_run_id = run;
  g.suite = "suite";
  g.kind = "status";
  g.cases = {"suite/test_" + tag + "_0"};
  g.confirmation = "confirmed";
  g.confirm_json = "[]";
  g.session_id = session;
  ASSERT_TRUE(s->bisect_record().AddRegression(g).ok());
  s.reset();
  Sql(db, "INSERT INTO ingested_files(content_hash, format, commit_id, path, run_id, at) VALUES('h" + tag +
              "', 'junit', (SELECT id FROM commits), 'report.xml', (SELECT id FROM runs), '2026-01-01T00:00:00Z')");
  Sql(db, "INSERT INTO golden_intents(case_id, path, old_hash, new_hash, reason, sha, user, at) "
          "VALUES('suite/test_" + tag + "_0', 'golden/x.json', '2', '3', 'stale', 'abc', 'u', '2026-01-01T00:00:00Z')");
  Sql(db, "INSERT INTO golden_changes(case_id, path, old_hash, new_hash, reason, sha, user, at, from_case_result_id) "
          "VALUES('suite/test_" + tag + "_0', 'golden/x.json', '1', '2', 'stale', 'abc', 'u', '2026-01-01T00:00:00Z', "
          "(SELECT MIN(id) FROM case_results))");
}

TEST(StoreMerge, CopiesEveryTableAndTheSameInputTwiceAddsNothing) {
  TempDir dir;
  MakeShard(dir / "a.db", "0/2", 3, "a");
  MakeShard(dir / "b.db", "1/2", 2, "b");
  auto out = std::move(Store::Open(dir / "out.db")).value();
  auto a = out->MergeFrom(dir / "a.db");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->runs_added, 1);
  EXPECT_EQ(a->cases, 3);
  EXPECT_EQ(a->metrics, 3);
  EXPECT_EQ(a->samples, 6);
  EXPECT_EQ(a->op_rows, 3);
  EXPECT_EQ(a->golden_changes, 1);
  EXPECT_EQ(a->bisect_sessions, 1);
  EXPECT_EQ(a->bisect_steps, 1);
  EXPECT_EQ(a->regressions, 1);
  EXPECT_EQ(a->ingested_files, 1);
  EXPECT_EQ(a->nightlies, std::set<std::string>{"n1"}) << "the nightly merge checks is whole";
  auto b = out->MergeFrom(dir / "b.db");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->cases, 2);

  const std::vector<std::string> tables = SchemaTables(dir / "out.db");
  std::map<std::string, int64_t> before;
  for (const auto& t : tables) before[t] = Count(dir / "out.db", t);
  EXPECT_EQ(before["commits"], 1) << "one commit, held by both shards";
  EXPECT_EQ(before["samples"], 10);
  auto again = out->MergeFrom(dir / "a.db");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->runs_added, 0);
  EXPECT_EQ(again->runs_present, 1);
  EXPECT_EQ(again->golden_changes, 0);
  EXPECT_EQ(again->bisect_sessions, 0);
  EXPECT_EQ(again->regressions, 0);
  EXPECT_TRUE(again->nightlies.empty()) << "no run added, no nightly of this merge's to check";
  for (const auto& t : tables) EXPECT_EQ(Count(dir / "out.db", t), before[t]) << t;
  // Both inputs again: a session is known by its uid, however the two (random) uids sort.
  auto again_b = out->MergeFrom(dir / "b.db");
  ASSERT_TRUE(again_b.ok());
  EXPECT_EQ(again_b->bisect_sessions, 0);
  for (const auto& t : tables) EXPECT_EQ(Count(dir / "out.db", t), before[t]) << t;

  // The copies keep their children: samples, the completion bytes, the commit's metadata.
  auto runs = out->reader().LogicalRun(out->reader().Run(0)->id);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u) << "the two shards of nightly n1 are one logical run";
  EXPECT_EQ((*runs)[0].shard, "0/2");
  EXPECT_EQ((*runs)[1].shard, "1/2");
  auto cases = *out->reader().Cases((*runs)[0].id);
  ASSERT_EQ(cases.size(), 3u);
  auto samples = *out->reader().Samples(cases[0].id);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].completion, "one \xff");
  EXPECT_EQ(out->reader().Ops(cases[0].id)->size(), 1u);
  auto session = out->bisect_record().BisectSession(2);
  ASSERT_TRUE(session.ok());
  ASSERT_EQ(session->steps.size(), 1u);
  EXPECT_EQ(session->steps[0].run_id, (*runs)[1].id) << "a step's run id follows its run into the output";
  EXPECT_EQ(out->reader().MatchCommits("abc")->at(0).first_parent_ordinal, 7);
}

// What a database holds, with every row id replaced by what the row is (a run by its uid, a
// case by its run and case id, a session by its uid): the same content reads the same in any
// database, whatever ids the rows got there.
std::multiset<std::string> Content(const std::filesystem::path& db) {
  static const char* const kQueries[] = {
      "SELECT 'run', uid, shard, nightly, status, c.sha FROM runs r JOIN commits c ON c.id = r.commit_id",
      "SELECT 'case', r.uid, x.case_id, x.status, x.message FROM case_results x JOIN runs r ON r.id = x.run_id",
      "SELECT 'metric', r.uid, x.case_id, m.name, m.value FROM metrics m JOIN case_results x ON x.id = "
      "m.case_result_id JOIN runs r ON r.id = x.run_id",
      "SELECT 'sample', r.uid, x.case_id, m.sample_key, m.outcome FROM samples m JOIN case_results x ON x.id = "
      "m.case_result_id JOIN runs r ON r.id = x.run_id",
      "SELECT 'op', r.uid, x.case_id, m.op FROM op_rows m JOIN case_results x ON x.id = m.case_result_id "
      "JOIN runs r ON r.id = x.run_id",
      "SELECT 'golden', g.case_id, g.old_hash, g.new_hash, r.uid, x.case_id FROM golden_changes g "
      "LEFT JOIN case_results x ON x.id = g.from_case_result_id LEFT JOIN runs r ON r.id = x.run_id",
      "SELECT 'ingested', f.content_hash, f.format, c.sha, r.uid FROM ingested_files f JOIN commits c ON c.id = "
      "f.commit_id JOIN runs r ON r.id = f.run_id",
      "SELECT 'session', uid, good, bad FROM bisect_sessions",
      "SELECT 'step', s.uid, x.step, x.sha, r.uid FROM bisect_steps x JOIN bisect_sessions s ON s.id = x.session_id "
      "LEFT JOIN runs r ON r.id = x.run_id",
      "SELECT 'regression', g.uid, r.uid, b.uid, s.uid, g.cases_json FROM regressions g LEFT JOIN runs r ON "
      "r.id = g.run_id LEFT JOIN runs b ON b.id = g.baseline_run_id LEFT JOIN bisect_sessions s ON s.id = g.session_id",
  };
  std::multiset<std::string> out;
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  for (const char* q : kQueries)
    for (auto& row : QueryRows(h, q)) out.insert(std::move(row));
  sqlite3_close(h);
  return out;
}

// The output holds what the inputs hold, row for row (Content), nothing more or less.
void ExpectContentIsTheUnion(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs) {
  std::multiset<std::string> want;
  for (const auto& in : inputs)
    for (const auto& row : Content(in)) want.insert(row);
  const auto got = Content(out);
  std::vector<std::string> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  EXPECT_TRUE(missing.empty() && extra.empty()) << "missing: " << ::testing::PrintToString(missing)
                                                << "\nextra: " << ::testing::PrintToString(extra);
}

// A database with two of everything merge maps an id of: two runs at two commits, two
// cases in each, two bisect sessions (uids that sort after any a store makes) with a step
// on each run, two regressions whose run and baseline are each the other's (so neither
// column is always the file's first run), and golden changes from a case that is neither
// the first of its run nor of the file.
void MakeTwoOfEverything(const std::filesystem::path& db) {
  auto s = std::move(Store::Open(db)).value();
  int64_t c1 = *s->writer().UpsertCommit({"c1", {}, 1, 1700000000, "one"});
  int64_t c2 = *s->writer().UpsertCommit({"c2", {"c1"}, 2, 1700000100, "two"});
  std::vector<int64_t> runs, cases;
  for (int r = 0; r < 2; ++r) {
    NewRun nr{r == 0 ? c1 : c2, "refstack", "hash", "{}", "host", "0.2.0", "0/1", "night-" + std::to_string(r)};
    runs.push_back(*s->writer().BeginRun(nr));
    for (int i = 0; i < 2; ++i) {
      const std::string id = "suite/t" + std::to_string(i);
      cases.push_back(*s->writer().BeginCase(runs.back(), "suite", id, "{}"));
      const double v = 0.1 * (1 + 2 * r + i);
      ASSERT_TRUE(s->writer().WriteSample(cases.back(), {"q" + std::to_string(r), SampleOutcome::kCorrect, "1", "1",
                                                         0.1, 3, "c"}).ok());
      CaseResult o{id, CaseStatus::kPass, 0.5, "r" + std::to_string(r), {{"accuracy", v, 2, 0, 1}},
                   {{"op" + std::to_string(r) + std::to_string(i), "[1]", 1, 0.1}}};
      ASSERT_TRUE(s->writer().FinishCase(cases.back(), o).ok());
    }
    ASSERT_TRUE(s->writer().FinishRun(runs.back(), RunStatus::kPass).ok());
  }
  for (int k = 0; k < 2; ++k) {
    int64_t session = *s->bisect_record().BeginBisect(BisectSessionRow{0, "", "", "c1", "c2", "t" + std::to_string(k), "{}"});
    ASSERT_TRUE(s->bisect_record().AddBisectStep(session, {1, "c2", "store", runs[1 - k], std::nullopt, "{}", "{}"}).ok());
    RegressionRow g;
    g.run_id = runs[1 - k];
    g.baseline_run_id = runs[k];
    g.suite = "suite";
    g.kind = "status";
    g.cases = {"suite/t" + std::to_string(k)};
    g.confirmation = "confirmed";
    g.confirm_json = "[]";
    g.session_id = session;
    ASSERT_TRUE(s->bisect_record().AddRegression(g).ok());
  }
  s.reset();
  Sql(db, "UPDATE bisect_sessions SET uid = 'ffffffffffffffffffffffffffffff0' || id");
  for (int k : {1, 3})
    Sql(db, "INSERT INTO golden_changes(case_id, path, old_hash, new_hash, reason, sha, user, at, from_case_result_id) "
            "VALUES('suite/t1', 'golden/x.json', '" + std::to_string(k) + "', 'n', 'stale', 'c2', 'u', "
            "'2026-01-01T00:00:00Z', " + std::to_string(cases[k]) + ")");
}

// Every id merge maps (a case's run, a metric's case, a golden change's case, a step's
// session and run, a regression's runs and session) maps to the row it named: the target
// holds what it held and what the input holds, row for row, whatever ids they have there.
TEST(StoreMerge, EveryRowOfSeveralRunsCasesAndSessionsKeepsWhatItPointsAt) {
  TempDir dir;
  MakeShard(dir / "a.db", "0/1", 3, "a");
  MakeTwoOfEverything(dir / "two.db");
  auto out = std::move(Store::Open(dir / "out.db")).value();
  ASSERT_TRUE(out->MergeFrom(dir / "a.db").ok());
  auto merged = out->MergeFrom(dir / "two.db");
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->runs_added, 2);
  EXPECT_EQ(merged->cases, 4);
  EXPECT_EQ(merged->golden_changes, 2);
  EXPECT_EQ(merged->bisect_sessions, 2);
  EXPECT_EQ(merged->bisect_steps, 2);
  EXPECT_EQ(merged->regressions, 2);
  EXPECT_EQ(merged->nightlies, (std::set<std::string>{"night-0", "night-1"}));
  ExpectContentIsTheUnion(dir / "out.db", {dir / "a.db", dir / "two.db"});
}

// Every table of the schema is copied by merge or declared local to its database with a
// reason (MergeLocalTables): a table a new migration adds without a merge step, or without a
// row in MakeShard, fails here.
TEST(StoreMerge, EveryTableIsCopiedOrDeclaredLocal) {
  TempDir dir;
  MakeShard(dir / "a.db", "0/1", 1, "a");
  const auto tables = SchemaTables(dir / "a.db");
  ASSERT_GE(tables.size(), 12u);
  for (const auto& t : MergeLocalTables()) {
    EXPECT_NE(std::find(tables.begin(), tables.end(), t.name), tables.end()) << t.name << ": no such table";
    EXPECT_FALSE(t.reason.empty()) << t.name;
  }
  auto out = std::move(Store::Open(dir / "out.db")).value();
  ASSERT_TRUE(out->MergeFrom(dir / "a.db").ok());
  for (const auto& t : tables) {
    ASSERT_GT(Count(dir / "a.db", t), 0) << t << ": MakeShard writes no row of it";
    if (MergeLocal(t)) EXPECT_EQ(Count(dir / "out.db", t), 0) << t << " is local to its database";
    else EXPECT_EQ(Count(dir / "out.db", t), Count(dir / "a.db", t)) << t << ": not copied by merge";
  }
}

// One file ingested (one run, one case) into a database at a commit ("abc" unless named), in
// a format ("junit" unless named).
void IngestInto(const std::filesystem::path& db, const std::string& hash, const std::string& sha = "abc",
                const std::string& format = "junit") {
  auto s = std::move(Store::Open(db)).value();
  int64_t c = *s->writer().UpsertCommit({sha, {}, 7, 1700000000, "the commit"});
  FinishedCase fc{format, {format + "/a", CaseStatus::kPass, 0.1, "", {}, {}}, {}};
  auto ids = s->writer().WriteIngestedRuns(
      {IngestedRun{{c, "ingest:" + format, "h", "{}", "ci", "0.2.0"}, {fc}, {hash, format, "report.xml"}}});
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  ASSERT_TRUE(ids->at(0).has_value());
}

TEST(StoreMerge, TheRecordOfIngestedFilesTravelsAndOneFileIngestedTwiceIsCopiedOnce) {
  TempDir dir;
  IngestInto(dir / "a.db", "hash-1");
  IngestInto(dir / "b.db", "hash-1");  // the same file, ingested by another shard
  IngestInto(dir / "c.db", "hash-2");
  auto out = std::move(Store::Open(dir / "out.db")).value();
  auto a = out->MergeFrom(dir / "a.db");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->runs_added, 1);
  EXPECT_EQ(a->ingested_files, 1);
  auto b = out->MergeFrom(dir / "b.db");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->runs_added, 0);
  EXPECT_EQ(b->runs_present, 1);
  EXPECT_EQ(b->cases, 0);
  auto c = out->MergeFrom(dir / "c.db");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->runs_added, 1);
  EXPECT_EQ(Count(dir / "out.db", "runs"), 2);
  EXPECT_EQ(Count(dir / "out.db", "ingested_files"), 2);
  // Ingesting the merged file again into the output adds nothing.
  int64_t commit = *out->writer().UpsertCommit({"abc", {}, 7, 1700000000, "the commit"});
  FinishedCase fc{"junit", {"junit/a", CaseStatus::kPass, 0.1, "", {}, {}}, {}};
  auto again = out->writer().WriteIngestedRuns(
      {IngestedRun{{commit, "ingest:junit", "h", "{}", "ci", "0.2.0"}, {fc}, {"hash-1", "junit", "report.xml"}}});
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(again->at(0).has_value()) << "a merged ingested file was stored again";
  EXPECT_EQ(Count(dir / "out.db", "runs"), 2);
}

// The same bytes ingested at another commit are another run (a report that did not change
// between two commits): only the same file at the same commit is one. Each input holds both
// commits, in either order of ids, so a commit matched by anything but its own id shows.
TEST(StoreMerge, OneFileIngestedAtTwoCommitsIsTwoRuns) {
  TempDir dir;
  IngestInto(dir / "a.db", "hash-1", "abc");
  IngestInto(dir / "a.db", "hash-2", "def");
  {
    auto b = std::move(Store::Open(dir / "b.db")).value();
    ASSERT_TRUE(b->writer().UpsertCommit({"abc", {}, 7, 1700000000, "the commit"}).ok());
    ASSERT_TRUE(b->writer().UpsertCommit({"def", {}, 7, 1700000000, "the commit"}).ok());
  }
  IngestInto(dir / "b.db", "hash-1", "def");
  IngestInto(dir / "b.db", "hash-2", "abc");
  auto out = std::move(Store::Open(dir / "out.db")).value();
  ASSERT_TRUE(out->MergeFrom(dir / "a.db").ok());
  auto b = out->MergeFrom(dir / "b.db");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->runs_added, 2);
  EXPECT_EQ(b->runs_present, 0);
  EXPECT_EQ(Count(dir / "out.db", "runs"), 4);
  EXPECT_EQ(Count(dir / "out.db", "ingested_files"), 4);
  ExpectContentIsTheUnion(dir / "out.db", {dir / "a.db", dir / "b.db"});
  auto again = out->MergeFrom(dir / "b.db");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->runs_added, 0);
  EXPECT_EQ(again->runs_present, 2);
}

// A commit both files hold keeps what either knows of it: a file written without git (no
// parents, no subject, no ordinal) neither erases what the other holds nor keeps it from
// being filled in.
TEST(StoreMerge, ACommitKeepsWhatEitherFileKnowsOfIt) {
  TempDir dir;
  for (const char* name : {"known.db", "bare.db"}) {
    auto s = std::move(Store::Open(dir / name)).value();
    const bool known = std::string(name) == "known.db";
    CommitInfo c{"abc", {}, std::nullopt, std::nullopt, ""};
    if (known) c = {"abc", {"p0", "p1"}, 7, 1700000000, "the subject"};
    ASSERT_TRUE(s->writer().UpsertCommit(c).ok());
  }
  for (const auto& order : {std::vector<std::string>{"known.db", "bare.db"}, {"bare.db", "known.db"}}) {
    const auto out_path = dir / ("out-" + order[0]);
    auto out = std::move(Store::Open(out_path)).value();
    for (const auto& in : order) ASSERT_TRUE(out->MergeFrom(dir / in).ok()) << in;
    EXPECT_EQ(Rows(out_path).at("commits"), (std::vector<std::string>{"1|abc|p0 p1|7|1700000000|the subject|"}))
        << order[0] << " first";
  }
}

// The same bytes read in another format are another run: a file is the output's already
// only in the format it was read in.
TEST(StoreMerge, OneFileReadInTwoFormatsIsTwoRuns) {
  TempDir dir;
  IngestInto(dir / "a.db", "hash-1", "abc", "junit");
  IngestInto(dir / "a.db", "hash-2", "abc", "gtest-json");
  IngestInto(dir / "b.db", "hash-1", "abc", "gtest-json");
  IngestInto(dir / "b.db", "hash-2", "abc", "junit");
  auto out = std::move(Store::Open(dir / "out.db")).value();
  ASSERT_TRUE(out->MergeFrom(dir / "a.db").ok());
  auto b = out->MergeFrom(dir / "b.db");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->runs_added, 2);
  EXPECT_EQ(b->runs_present, 0);
  ExpectContentIsTheUnion(dir / "out.db", {dir / "a.db", dir / "b.db"});
}

std::string Join(const std::vector<std::string>& fields) {
  std::string out;
  for (const auto& f : fields) out += f + "|";
  return out;
}

// A golden change is the output's already only when every field of it matches one there: a
// change that differs from one in a single field (a later change of the same case and file,
// another reason, user, time...) is another change and is copied.
TEST(StoreMerge, AGoldenChangeDifferingInAnyOneFieldIsAnotherChange) {
  TempDir dir;
  const std::vector<std::string> base = {"suite/c", "golden/x.json", "h1", "h2", "stale", "abc", "u",
                                         "2026-01-01T00:00:00Z"};
  auto insert = [&](const std::filesystem::path& db, const std::vector<std::string>& v) {
    Sql(db, "INSERT INTO golden_changes(case_id, path, old_hash, new_hash, reason, sha, user, at) VALUES('" + v[0] +
                "', '" + v[1] + "', '" + v[2] + "', '" + v[3] + "', '" + v[4] + "', '" + v[5] + "', '" + v[6] + "', '" +
                v[7] + "')");
  };
  std::move(Store::Open(dir / "a.db")).value().reset();
  std::move(Store::Open(dir / "b.db")).value().reset();
  insert(dir / "a.db", base);
  insert(dir / "b.db", base);
  std::multiset<std::string> want = {Join(base)};
  for (std::size_t field = 0; field < base.size(); ++field) {
    auto after = base, before = base;  // sorting after the shared change's field, and before it
    after[field] += "x";
    before[field].pop_back();
    for (const auto& v : {after, before}) {
      insert(dir / "b.db", v);
      want.insert(Join(v));
    }
  }
  auto out = std::move(Store::Open(dir / "out.db")).value();
  ASSERT_TRUE(out->MergeFrom(dir / "a.db").ok());
  auto b = out->MergeFrom(dir / "b.db");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->golden_changes, 2 * static_cast<int64_t>(base.size())) << "each variant once, the shared one not again";
  std::multiset<std::string> got;
  const auto rows = Rows(dir / "out.db");
  for (const auto& row : rows.at("golden_changes")) got.insert(row.substr(row.find('|') + 1));
  std::multiset<std::string> want_rows;
  for (const auto& w : want) want_rows.insert(w + "NULL|");  // from_case_result_id: none
  EXPECT_EQ(got, want_rows);
}

// Twins and new runs in one input: the run between two new ones is the output's already,
// and each new one is copied whatever its place.
TEST(StoreMerge, OnlyTheRunsWhoseFileTheOutputHoldsAreLeftOut) {
  TempDir dir;
  IngestInto(dir / "a.db", "hash-2");
  for (const char* hash : {"hash-1", "hash-2", "hash-3"}) IngestInto(dir / "b.db", hash);
  auto out = std::move(Store::Open(dir / "out.db")).value();
  ASSERT_TRUE(out->MergeFrom(dir / "a.db").ok());
  auto b = out->MergeFrom(dir / "b.db");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->runs_added, 2);
  EXPECT_EQ(b->runs_present, 1);
  EXPECT_EQ(b->cases, 2);
  EXPECT_EQ(Count(dir / "out.db", "runs"), 3);
  EXPECT_EQ(Count(dir / "out.db", "ingested_files"), 3);
}

// A run the output already holds as another shard's ingest of the same file is not copied;
// what points at it (a bisect step) then points at the output's twin of that very run, and
// with two such runs each keeps its own.
TEST(StoreMerge, AStepOnARunIngestedTwiceFollowsItsOwnTwin) {
  TempDir dir;
  for (const char* db : {"a.db", "b.db"})
    for (const char* hash : {"hash-1", "hash-2", "hash-3"}) IngestInto(dir / db, hash);
  {
    auto b = std::move(Store::Open(dir / "b.db")).value();
    int64_t session = *b->bisect_record().BeginBisect(BisectSessionRow{0, "", "", "g", "b", "t", "{}"});
    for (int64_t run : {3, 2, 1})
      ASSERT_TRUE(b->bisect_record().AddBisectStep(session, {static_cast<int>(4 - run), "abc", "store", run,
                                                             std::nullopt, "{}", "{}"}).ok());
  }
  // The record of run 1's file read last: the first read is then neither the first run's
  // nor the last's.
  Sql(dir / "b.db", "UPDATE ingested_files SET id = 100 WHERE run_id = 1");
  auto out = std::move(Store::Open(dir / "out.db")).value();
  ASSERT_TRUE(out->MergeFrom(dir / "a.db").ok());
  auto b = out->MergeFrom(dir / "b.db");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->runs_added, 0);
  EXPECT_EQ(b->runs_present, 3);
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2((dir / "out.db").c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  EXPECT_EQ(QueryRows(h, "SELECT x.step, f.content_hash FROM bisect_steps x LEFT JOIN ingested_files f ON "
                         "f.run_id = x.run_id ORDER BY x.step"),
            (std::vector<std::string>{"1|hash-3|", "2|hash-2|", "3|hash-1|"}));
  sqlite3_close(h);
}

// A bisect step's partial run stays partial in the merged database (else it would become
// a baseline there).
TEST(StoreMerge, APartialRunTravelsMarked) {
  TempDir dir;
  {
    auto s = std::move(Store::Open(dir / "in.db")).value();
    NewRun r{*s->writer().UpsertCommit({"abc", {}, 7, 1700000000, "c"}), "refstack", "hash", "{}", "h", "0.2.0"};
    r.partial_questions = 7;
    ASSERT_TRUE(s->writer().FinishRun(*s->writer().BeginRun(r), RunStatus::kPass).ok());
  }
  auto out = std::move(Store::Open(dir / "out.db")).value();
  ASSERT_TRUE(out->MergeFrom(dir / "in.db").ok());
  EXPECT_EQ(out->reader().Run(0)->partial_questions, 7);
}

TEST(StoreMerge, ARunOfItsOwnIsItsOwnLogicalRun) {
  TempDir dir;
  auto s = std::move(Store::Open(dir / "h.db")).value();
  int64_t c = *s->writer().UpsertCommit({"abc", {}, 1, 1, "x"});
  int64_t r1 = *s->writer().BeginRun({c, "refstack", "hash", "{}", "h", "0.2.0"});
  ASSERT_TRUE(s->writer().BeginRun({c, "refstack", "hash", "{}", "h", "0.2.0"}).ok());
  EXPECT_EQ(s->reader().LogicalRun(r1)->size(), 1u);
  EXPECT_FALSE(s->reader().LogicalRun(999).ok());
}

TEST(StoreMerge, ManyMoreInputsThanSqliteAttachesAtOnce) {
  TempDir dir;
  auto out = std::move(Store::Open(dir / "out.db")).value();
  for (int i = 0; i < 12; ++i) {
    const auto in = dir / ("s" + std::to_string(i) + ".db");
    MakeShard(in, std::to_string(i) + "/12", 1, std::to_string(i));
    auto m = out->MergeFrom(in);
    ASSERT_TRUE(m.ok()) << i << ": " << m.error().message;
  }
  EXPECT_EQ(Count(dir / "out.db", "runs"), 12);
  EXPECT_EQ(out->reader().LogicalRun(1)->size(), 12u);
}

// The words of an error a read or lock fault explains: SQLite's for a failed read, lock or
// open (an ATTACH opens the input again), or the quick check's that could not read a page.
bool SaysAFaultStoppedIt(const std::string& message) {
  for (const char* words : {"cannot read it", "disk I/O error", "locked", "unable to open database"})
    if (message.find(words) != std::string::npos) return true;
  return false;
}

// What a merge of a.db that failed under a read fault may say and leave: an error a fault
// caused (one with no fault behind it is a bug of its own: false, so the sweep stops there,
// not after 20000 merges), exit 3 naming the input, in a fault's words and claiming nothing
// about what the file is, and the target as it was.
bool FailedAsAFaultMay(const Error& e, int64_t refused, int64_t budget, const std::filesystem::path& target,
                       const std::map<std::string, std::vector<std::string>>& held) {
  if (refused == 0) {
    ADD_FAILURE() << "an error with nothing refused: " << e.message;
    return false;
  }
  EXPECT_EQ(e.code, ExitCode::kInfra) << budget << ": " << e.message;
  EXPECT_NE(e.message.find("a.db"), std::string::npos) << budget << ": " << e.message;
  for (const char* claim : {"not a harness database", "older", "newer", "corrupt", "damaged"})
    EXPECT_EQ(e.message.find(claim), std::string::npos) << budget << ": " << e.message;
  EXPECT_TRUE(SaysAFaultStoppedIt(e.message)) << "an error no fault explains: " << e.message;
  if (Rows(target) == held) return true;
  ADD_FAILURE() << "a fault at operation " << budget << " changed the target";
  return false;
}

// A read or lock that fails anywhere in an input (each in turn, from the first until the
// merge needs no more: a failing disk, a file cut short under the merge) is an error naming the
// input, never an exception or half a merge: the target holds exactly what it held before,
// and the merge that reads everything then adds the input.
TEST(StoreMerge, AReadFaultAnywhereInAnInputIsAnErrorAndTheTargetKeepsWhatItHeld) {
  TempDir dir;
  MakeShard(dir / "a.db", "0/2", 3, "a");
  MakeShard(dir / "b.db", "1/2", 2, "b");
  // Before the target opens: an attached input is read through its connection's VFS.
  testing_util::IoFaultVfs vfs((dir / "a.db").string());
  auto out = std::move(Store::Open(dir / "out.db")).value();
  ASSERT_TRUE(out->MergeFrom(dir / "b.db").ok());
  const auto held = Rows(dir / "out.db");
  ASSERT_EQ(held.at("case_results").size(), 2u);

  int64_t budget = 0;
  for (;; ++budget) {
    ASSERT_LT(budget, 20000) << "the merge kept reading";
    vfs.FailAfter(budget);
    auto merged = out->MergeFrom(dir / "a.db");
    const int64_t refused = vfs.refused();
    vfs.Off();
    if (merged.ok()) {
      EXPECT_EQ(merged->cases, 3) << "after " << budget << " operations";
      break;
    }
    ASSERT_TRUE(FailedAsAFaultMay(merged.error(), refused, budget, dir / "out.db", held));
  }
  EXPECT_GT(budget, 20) << "the input was read in so few operations that the sweep proves little";
  EXPECT_EQ(Rows(dir / "out.db").at("case_results").size(), 5u);
}

// The same with each fault alone, the file readable again at the next operation: a merge
// either fails as above or, when SQLite retried past the fault, holds exactly what both
// inputs hold; never a merge that went on past a read it did not make.
TEST(StoreMerge, AReadFaultThatPassesIsAnErrorOrAWholeMerge) {
  TempDir dir;
  MakeShard(dir / "a.db", "0/2", 3, "a");
  MakeShard(dir / "b.db", "1/2", 2, "b");
  testing_util::IoFaultVfs vfs((dir / "a.db").string());
  {
    auto held = std::move(Store::Open(dir / "held.db")).value();
    ASSERT_TRUE(held->MergeFrom(dir / "b.db").ok());
  }
  const auto held = Rows(dir / "held.db");
  int errors = 0;
  for (int64_t budget = 0;; ++budget) {
    ASSERT_LT(budget, 20000) << "the merge kept reading";
    const auto target = dir / ("t" + std::to_string(budget) + ".db");
    std::filesystem::copy_file(dir / "held.db", target);
    auto out = std::move(Store::Open(target)).value();
    vfs.FailOnceAfter(budget);
    auto merged = out->MergeFrom(dir / "a.db");
    const int64_t refused = vfs.refused();
    vfs.Off();
    out.reset();
    if (merged.ok()) {
      ExpectContentIsTheUnion(target, {dir / "a.db", dir / "b.db"});
      if (refused == 0) break;
      continue;
    }
    ++errors;
    ASSERT_TRUE(FailedAsAFaultMay(merged.error(), refused, budget, target, held));
    std::filesystem::remove(target);
  }
  EXPECT_GT(errors, 10) << "the sweep reached too little of the merge";
}

// The same over a damaged input (a run without its uid): a fault at any read or lock, even
// one the next operation gets past, never lets it through. Each merge is refused, as damaged
// or for the fault (SQLite's words for it), and the target keeps what it held; a check that
// could not read its rows is no check passed.
TEST(StoreMerge, AReadFaultNeverLetsADamagedInputThrough) {
  TempDir dir;
  MakeShard(dir / "a.db", "0/2", 3, "a");
  Sql(dir / "a.db", "UPDATE runs SET uid = NULL WHERE id = 1");
  testing_util::IoFaultVfs vfs((dir / "a.db").string());
  auto out = std::move(Store::Open(dir / "out.db")).value();
  const auto held = Rows(dir / "out.db");
  const std::string damaged = (dir / "a.db").string() + ": damaged database: table runs row 1 has no uid";
  int faults = 0;
  for (int64_t budget = 0;; ++budget) {
    ASSERT_LT(budget, 20000) << "the merge kept reading";
    SCOPED_TRACE(budget);
    vfs.FailOnceAfter(budget);
    auto merged = out->MergeFrom(dir / "a.db");
    const int64_t refused = vfs.refused();
    vfs.Off();
    ASSERT_FALSE(merged.ok()) << "a damaged input merged";
    if (merged.error().message.find(damaged) != std::string::npos) {
      EXPECT_EQ(Rows(dir / "out.db"), held);
      if (refused == 0) break;
      continue;
    }
    ++faults;
    ASSERT_TRUE(FailedAsAFaultMay(merged.error(), refused, budget, dir / "out.db", held));
  }
  EXPECT_GT(faults, 3) << "the sweep reached too little of the checks";
}

// An input is opened read-only through a file: URI, so a name with the characters a URI
// gives meaning ('#' a fragment, '?' a query, '%' an escape, '&', '=', a space, UTF-8) must
// be escaped byte by byte: the input is that file, never a shorter name or a decoded one,
// and a decoy named as the escapes would decode is never read.
TEST(StoreMerge, AnInputWhoseNameAURIWouldReadOtherwiseIsReadAsThatFile) {
  TempDir dir;
  const std::string name = "night #1 %41 ?mode=rw&cache=shared \xc3\xa9.db";
  MakeShard(dir / name, "0/1", 2, "u");
  MakeShard(dir / "night A ?mode=rw&cache=shared \xc3\xa9.db", "0/1", 5, "d");  // %41 decoded
  MakeShard(dir / "night ", "0/1", 7, "f");                                   // cut at '#'
  auto out = std::move(Store::Open(dir / "out.db")).value();
  auto merged = out->MergeFrom(dir / name);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  out.reset();
  EXPECT_EQ(Count(dir / "out.db", "runs"), 1);
  EXPECT_EQ(Count(dir / "out.db", "case_results"), 2) << "the named input's two cases, not a decoy's 5 or 7";
}

TEST(StoreMerge, RefusesANewerSchemaAForeignFileACorruptOneAndItself) {
  TempDir dir;
  MakeShard(dir / "newer.db", "0/1", 1, "n");
  Sql(dir / "newer.db", "PRAGMA user_version = 99");
  auto out = std::move(Store::Open(dir / "out.db")).value();
  auto newer = out->MergeFrom(dir / "newer.db");
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.error().code, ExitCode::kInfra);
  EXPECT_NE(newer.error().message.find("newer.db"), std::string::npos) << newer.error().message;
  EXPECT_NE(newer.error().message.find("99"), std::string::npos) << newer.error().message;

  Sql(dir / "foreign.db", "CREATE TABLE t(x)");
  auto foreign = out->MergeFrom(dir / "foreign.db");
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("foreign.db: not a harness database"), std::string::npos)
      << foreign.error().message;

  // The b-tree page headers of a real shard overwritten: SQLite finds the damage.
  MakeShard(dir / "corrupt.db", "0/1", 40, "c");
  Sql(dir / "corrupt.db", "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE");
  {
    std::fstream f(dir / "corrupt.db", std::ios::in | std::ios::out | std::ios::binary);
    const std::string junk(64, '\x5a');
    for (int page = 1; page < 8; ++page) {
      f.seekp(4096 * page);
      f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
  }
  auto corrupt = out->MergeFrom(dir / "corrupt.db");
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.error().code, ExitCode::kInfra);
  EXPECT_NE(corrupt.error().message.find("corrupt.db"), std::string::npos) << corrupt.error().message;

  // A page no query of the merge reaches before its check: the file opens and its schema
  // reads, and quick_check names the damage (its rows begin "*** in database main ***").
  MakeShard(dir / "damaged.db", "0/1", 3, "d");
  Sql(dir / "damaged.db", "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE");
  const int64_t root = QueryInt(dir / "damaged.db", "SELECT rootpage FROM sqlite_master WHERE name = 'bisect_steps'");
  const int64_t page_size = QueryInt(dir / "damaged.db", "PRAGMA page_size");
  ASSERT_GT(root, 1);
  {
    std::fstream f(dir / "damaged.db", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((root - 1) * page_size);
    const std::string junk(static_cast<std::size_t>(page_size), '\xEE');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto damaged = out->MergeFrom(dir / "damaged.db");
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.error().code, ExitCode::kInfra);
  EXPECT_EQ(damaged.error().message.rfind((dir / "damaged.db").string() + ": damaged database (PRAGMA quick_check: ***", 0),
            0u)
      << damaged.error().message;
  EXPECT_NE(damaged.error().message.find("; nothing merged"), std::string::npos) << damaged.error().message;
  EXPECT_EQ(Count(dir / "out.db", "runs"), 0) << "nothing was merged";

  auto self = out->MergeFrom(dir / "out.db");
  ASSERT_FALSE(self.ok());
  EXPECT_EQ(Count(dir / "out.db", "runs"), 0) << "nothing was half-merged";
}

}  // namespace
}  // namespace harness
