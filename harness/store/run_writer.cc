#include "harness/store/run_writer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/store/sqlite_db.h"
#include "harness/store/store_rows.h"

namespace harness {
namespace {

using store_sql::DbError;
using store_sql::InTransaction;
using store_sql::NowUtc;
using store_sql::Stmt;
using store_sql::StepDone;
using store_sql::StepReturningId;

// Row writers shared by the one-row-at-a-time path of a run (BeginRun, BeginCase,
// WriteSample, FinishCase) and the whole-run path of an import (WriteIngestedRuns); the
// caller owns the transaction.
Result<int64_t> InsertRun(sqlite3* db, const NewRun& r) {
  Stmt st(db, R"sql(
INSERT INTO runs(commit_id, stack, config_hash, config_json, host, harness_version, started_at, status, shard,
                 nightly, uid, context_json, partial_questions)
VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8, ?9, lower(hex(randomblob(16))), ?10, ?11) RETURNING id)sql");
  st.BindAll(r.commit_id, r.stack, r.config_hash, r.config_json, r.host, r.harness_version, NowUtc(), r.shard,
             r.nightly, r.context_json, r.partial_questions);
  return StepReturningId(db, st, "store run");
}

Status UpdateRunStatus(sqlite3* db, int64_t run_id, RunStatus status) {
  Stmt st(db, "UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3");
  st.BindAll(Word(status), NowUtc(), run_id);
  return StepDone(db, st, "finish run");
}

// The statements that write cases, prepared on first use and reused for every case of a
// batch: an import of a 10,000-case file would otherwise prepare 60,000 statements, most of
// its time (docs/store.md, "At fleet scale"). Each use starts with Reset.
class CaseWriter {
 public:
  explicit CaseWriter(sqlite3* db) : db_(db) {}
  sqlite3* db() const { return db_; }
  Stmt& insert_case() { return Ready(insert_case_, R"sql(
INSERT INTO case_results(run_id, suite, case_id, params_json, status) VALUES(?1, ?2, ?3, ?4, 'running')
ON CONFLICT(run_id, case_id) DO UPDATE SET status = 'running' RETURNING id)sql"); }
  Stmt& insert_sample() { return Ready(insert_sample_, R"sql(
INSERT OR REPLACE INTO samples(case_result_id, sample_key, outcome, expected, extracted, latency_s, tokens,
                               completion)
VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8))sql"); }
  Stmt& finish() { return Ready(finish_, "UPDATE case_results SET status = ?1, duration_s = ?2, message = ?3 WHERE id = ?4"); }
  Stmt& clear_metrics() { return Ready(clear_metrics_, "DELETE FROM metrics WHERE case_result_id = ?1"); }
  Stmt& clear_ops() { return Ready(clear_ops_, "DELETE FROM op_rows WHERE case_result_id = ?1"); }
  Stmt& metric() { return Ready(metric_, R"sql(INSERT OR REPLACE INTO metrics(case_result_id, name, value, n, low, high, label)
VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7))sql"); }
  Stmt& op() { return Ready(op_, "INSERT INTO op_rows(case_result_id, op, input_shapes, calls, est_seconds) VALUES(?1, ?2, ?3, ?4, ?5)"); }

 private:
  Stmt& Ready(std::optional<Stmt>& st, const char* sql) {
    if (!st) st.emplace(db_, sql);
    st->Reset();
    return *st;
  }
  sqlite3* db_;
  std::optional<Stmt> insert_case_, insert_sample_, finish_, clear_metrics_, clear_ops_, metric_, op_;
};

Result<int64_t> InsertCase(CaseWriter& w, int64_t run_id, const std::string& suite, const std::string& case_id,
                           const std::string& params_json) {
  Stmt& st = w.insert_case();
  st.BindAll(run_id, suite, case_id, params_json);
  return StepReturningId(w.db(), st, "store case " + case_id);
}

Status InsertSample(CaseWriter& w, int64_t case_result_id, const Sample& s) {
  Stmt& st = w.insert_sample();
  st.BindAll(case_result_id, s.key, Word(s.outcome), s.expected, s.extracted, s.latency_s, s.tokens,
             s.completion.substr(0, kMaxStoredCompletionBytes));
  return StepDone(w.db(), st, "store sample " + s.key);
}

// Status, duration, message; metrics and op rows replaced (a resumed case is finished
// again: its aggregates are replaced, its samples kept).
Status WriteCaseOutcome(CaseWriter& w, int64_t case_result_id, const CaseResult& o) {
  sqlite3* db = w.db();
  if (auto s = StepDone(db, w.finish().BindAll(Word(o.status), o.duration_s, o.message, case_result_id),
                        "finish case");
      !s)
    return s;
  if (auto s = StepDone(db, w.clear_metrics().BindAll(case_result_id), "clear metrics"); !s) return s;
  if (auto s = StepDone(db, w.clear_ops().BindAll(case_result_id), "clear op rows"); !s) return s;
  for (const auto& m : o.metrics)
    if (auto s = StepDone(db, w.metric().BindAll(case_result_id, m.name, m.value, m.n, m.low, m.high, m.label),
                          "store metric " + m.name);
        !s)
      return s;
  for (const auto& r : o.ops)
    if (auto s = StepDone(db, w.op().BindAll(case_result_id, r.op, r.input_shapes, r.calls, r.est_seconds),
                          "store op row " + r.op);
        !s)
      return s;
  return OkStatus();
}

// The run an ingested file became at a commit, if it was ingested before.
Result<std::optional<int64_t>> IngestedRunOf(sqlite3* db, const IngestedRun& in) {
  return store_sql::QueryOne<int64_t>(
      db, "SELECT run_id FROM ingested_files WHERE content_hash = ?1 AND format = ?2 AND commit_id = ?3",
      "look up ingested file", store_sql::IntColumn, in.file.content_hash, in.file.format, in.run.commit_id);
}

// One ingested run written whole: the run, its cases, its status and its ingested_files row.
Result<int64_t> WriteIngestedRun(CaseWriter& w, const IngestedRun& in) {
  sqlite3* db = w.db();
  auto id = InsertRun(db, in.run);
  if (!id) return id.error();
  std::vector<CaseResult> results;
  for (const auto& c : in.cases) {
    auto case_row = InsertCase(w, *id, c.suite, c.result.case_id, "{}");
    if (!case_row) return case_row.error();
    for (const auto& sample : c.samples)
      if (auto e = InsertSample(w, *case_row, sample); !e) return e.error();
    if (auto e = WriteCaseOutcome(w, *case_row, c.result); !e) return e.error();
    results.push_back(c.result);
  }
  if (auto e = UpdateRunStatus(db, *id, CountStatuses(results).Overall()); !e) return e.error();
  const IngestedFile& file = in.file;
  Stmt record(db, R"sql(INSERT INTO ingested_files(content_hash, format, commit_id, path, run_id, at)
VALUES(?1, ?2, ?3, ?4, ?5, ?6))sql");
  record.BindAll(file.content_hash, file.format, in.run.commit_id, file.path, *id, NowUtc());
  if (auto e = StepDone(db, record, "record ingested file " + file.path); !e) return e.error();
  return *id;
}

}  // namespace

Result<int64_t> RunWriter::UpsertCommit(const CommitInfo& c) {
  sqlite3* db = connection_.db;
  Stmt st(db, R"sql(
INSERT INTO commits(sha, parents, first_parent_ordinal, author_time, subject) VALUES(?1, ?2, ?3, ?4, ?5)
ON CONFLICT(sha) DO UPDATE SET
  parents = CASE WHEN excluded.parents <> '' THEN excluded.parents ELSE commits.parents END,
  first_parent_ordinal = COALESCE(excluded.first_parent_ordinal, commits.first_parent_ordinal),
  author_time = COALESCE(excluded.author_time, commits.author_time),
  subject = CASE WHEN excluded.subject <> '' THEN excluded.subject ELSE commits.subject END
RETURNING id)sql");
  st.BindAll(c.sha, fmt::format("{}", fmt::join(c.parents, " ")), c.first_parent_ordinal, c.author_time, c.subject);
  return StepReturningId(db, st, "store commit");
}

Result<int64_t> RunWriter::BeginRun(const NewRun& r) { return InsertRun(connection_.db, r); }

Status RunWriter::FinishRun(int64_t run_id, RunStatus status) { return UpdateRunStatus(connection_.db, run_id, status); }

Result<std::vector<RunRow>> RunWriter::InterruptedRuns(int64_t commit_id) {
  static const std::string sql = "SELECT " + store_sql::kRunRowColumns.Select() + R"sql(
FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE r.commit_id = ?1 AND r.status = 'running' ORDER BY r.id DESC)sql";
  return store_sql::QueryAll<RunRow>(connection_.db, sql.c_str(), "find interrupted runs", store_sql::RunRowOf,
                                     commit_id);
}

Status RunWriter::ReopenRun(int64_t run_id) {
  Stmt st(connection_.db, "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?1");
  return StepDone(connection_.db, st.BindAll(run_id), "reopen run");
}

Result<int64_t> RunWriter::BeginCase(int64_t run_id, const std::string& suite, const std::string& case_id,
                                     const std::string& params_json) {
  CaseWriter w(connection_.db);
  return InsertCase(w, run_id, suite, case_id, params_json);
}

Status RunWriter::WriteSample(int64_t case_result_id, const Sample& s) {
  CaseWriter w(connection_.db);
  return InsertSample(w, case_result_id, s);
}

Status RunWriter::FinishCase(int64_t case_result_id, const CaseResult& o) {
  return InTransaction(connection_.db, [&] {
    CaseWriter w(connection_.db);
    return WriteCaseOutcome(w, case_result_id, o);
  });
}

Result<std::vector<std::optional<int64_t>>> RunWriter::WriteIngestedRuns(const std::vector<IngestedRun>& runs) {
  sqlite3* db = connection_.db;
  std::vector<std::optional<int64_t>> ids;
  auto s = InTransaction(db, [&]() -> Status {
    ids.clear();
    CaseWriter w(db);
    for (const auto& in : runs) {
      auto seen = IngestedRunOf(db, in);
      if (!seen) return seen.error();
      if (*seen) {
        ids.push_back(std::nullopt);
        continue;
      }
      auto id = WriteIngestedRun(w, in);
      if (!id) return id.error();
      ids.push_back(*id);
    }
    return OkStatus();
  });
  if (!s) return s.error();
  return ids;
}

namespace {

// The cases of `in` with samples whose stored case in run a.run_id has none yet get them and
// `in`'s outcome; a counts them.
Status AttachSamplesToCases(CaseWriter& w, const IngestedRun& in, AttachedSamples& a) {
  sqlite3* db = w.db();
  for (const auto& c : in.cases) {
    if (c.samples.empty()) continue;
    struct StoredCaseRow {
      int64_t id = 0, samples = 0;
    };
    auto row = store_sql::QueryOne<StoredCaseRow>(
        db, R"sql(SELECT id, (SELECT count(*) FROM samples s WHERE s.case_result_id = c.id)
FROM case_results c WHERE run_id = ?1 AND case_id = ?2)sql",
        "look up ingested case " + c.result.case_id,
        [](const Stmt& st) { return StoredCaseRow{st.Int(0), st.Int(1)}; }, a.run_id, c.result.case_id);
    if (!row) return row.error();
    if (!*row || (*row)->samples > 0) continue;  // a case the stored run does not hold, or holds samples of
    for (const auto& sample : c.samples)
      if (auto e = InsertSample(w, (*row)->id, sample); !e) return e;
    if (auto e = WriteCaseOutcome(w, (*row)->id, c.result); !e) return e;
    ++a.cases;
    a.samples += static_cast<int64_t>(c.samples.size());
  }
  return OkStatus();
}

}  // namespace

Result<std::optional<AttachedSamples>> RunWriter::AttachIngestedSamples(const IngestedRun& in) {
  sqlite3* db = connection_.db;
  std::optional<AttachedSamples> out;
  auto s = InTransaction(db, [&]() -> Status {
    out.reset();
    auto run = IngestedRunOf(db, in);
    if (!run) return run.error();
    if (!*run) return OkStatus();
    AttachedSamples a;
    a.run_id = **run;
    CaseWriter w(db);
    if (auto e = AttachSamplesToCases(w, in, a); !e) return e;
    Stmt statuses(db, "SELECT status FROM case_results WHERE run_id = ?1");
    StatusCounts counts;
    if (auto e = store_sql::ForEachRow(db, statuses.BindAll(a.run_id), "read ingested run's statuses",
                                       [&](const Stmt& st) {
                                         if (auto word = ParseCaseStatus(st.Text(0))) counts.Add(*word);
                                       });
        !e)
      return e;
    if (a.cases > 0)
      if (auto e = UpdateRunStatus(db, a.run_id, counts.Overall()); !e) return e;
    out = a;
    return OkStatus();
  });
  if (!s) return s.error();
  return out;
}

}  // namespace harness
