#include <cctype>

#include <fmt/format.h>

#include "harness/results/case_id.h"
#include "harness/store/merge_local_tables.h"
#include "harness/store/schema.h"
#include "harness/store/sqlite_db.h"
#include "harness/store/store.h"
#include "harness/store/store_rows.h"

// Store::MergeFrom and its input checks: the SQL of `harness merge` (docs/store.md, "Sharded
// nightlies and merge").
namespace harness {

using store_sql::DbError;
using store_sql::Exec;
using store_sql::ForEachRow;
using store_sql::InTransaction;
using store_sql::Stmt;

namespace {

// The statements of one merge, in order: each copies what the output lacks from the
// attached input `src`. temp.merge_runs/merge_cases/merge_sessions map input row ids to
// output ones; `fresh` marks what this merge added (only their children are copied).
struct MergeStep {
  const char* sql;
  int64_t MergeCounts::*count;  // what its changes count as, or nullptr
};

const MergeStep kMergeSteps[] = {
    {R"sql(INSERT INTO main.commits(sha, parents, first_parent_ordinal, author_time, subject)
SELECT sha, parents, first_parent_ordinal, author_time, subject FROM src.commits WHERE true
ON CONFLICT(sha) DO UPDATE SET
  parents = CASE WHEN excluded.parents <> '' THEN excluded.parents ELSE commits.parents END,
  first_parent_ordinal = COALESCE(excluded.first_parent_ordinal, commits.first_parent_ordinal),
  author_time = COALESCE(excluded.author_time, commits.author_time),
  subject = CASE WHEN excluded.subject <> '' THEN excluded.subject ELSE commits.subject END)sql",
     nullptr},
    {"CREATE TEMP TABLE merge_runs(src INTEGER PRIMARY KEY, uid TEXT NOT NULL, dst INTEGER, fresh INTEGER NOT NULL)",
     nullptr},
    // A run is fresh unless the output holds it (its uid) or holds the file it was ingested
    // from (same bytes, format and commit), as when two shards ingested one file.
    {R"sql(CREATE TEMP VIEW merge_ingested_twin AS
SELECT f.run_id AS src_run, d.run_id AS dst_run
FROM src.ingested_files f JOIN src.commits sc ON sc.id = f.commit_id JOIN main.commits mc ON mc.sha = sc.sha
JOIN main.ingested_files d ON d.content_hash = f.content_hash AND d.format = f.format AND d.commit_id = mc.id)sql",
     nullptr},
    {R"sql(INSERT INTO temp.merge_runs(src, uid, fresh)
SELECT r.id, r.uid, NOT EXISTS (SELECT 1 FROM main.runs m WHERE m.uid = r.uid)
                    AND NOT EXISTS (SELECT 1 FROM temp.merge_ingested_twin w WHERE w.src_run = r.id)
FROM src.runs r)sql",
     nullptr},
    {R"sql(INSERT INTO main.runs(commit_id, stack, config_hash, config_json, host, harness_version, started_at,
                      finished_at, status, shard, nightly, uid, context_json, partial_questions)
SELECT c.id, r.stack, r.config_hash, r.config_json, r.host, r.harness_version, r.started_at, r.finished_at, r.status,
       r.shard, r.nightly, r.uid, r.context_json, r.partial_questions
FROM src.runs r JOIN temp.merge_runs t ON t.src = r.id AND t.fresh
JOIN src.commits sc ON sc.id = r.commit_id JOIN main.commits c ON c.sha = sc.sha ORDER BY r.id)sql",
     &MergeCounts::runs_added},
    {R"sql(UPDATE temp.merge_runs SET dst = COALESCE(
  (SELECT m.id FROM main.runs m WHERE m.uid = merge_runs.uid),
  (SELECT w.dst_run FROM temp.merge_ingested_twin w WHERE w.src_run = merge_runs.src)))sql",
     nullptr},
    {R"sql(INSERT INTO main.ingested_files(content_hash, format, commit_id, path, run_id, at)
SELECT f.content_hash, f.format, mc.id, f.path, t.dst, f.at
FROM src.ingested_files f JOIN temp.merge_runs t ON t.src = f.run_id AND t.fresh
JOIN src.commits sc ON sc.id = f.commit_id JOIN main.commits mc ON mc.sha = sc.sha WHERE true ORDER BY f.id
ON CONFLICT DO NOTHING)sql",
     &MergeCounts::ingested_files},
    {R"sql(INSERT INTO main.case_results(run_id, suite, case_id, params_json, status, duration_s, message)
SELECT t.dst, cr.suite, cr.case_id, cr.params_json, cr.status, cr.duration_s, cr.message
FROM src.case_results cr JOIN temp.merge_runs t ON t.src = cr.run_id AND t.fresh ORDER BY cr.id)sql",
     &MergeCounts::cases},
    {"CREATE TEMP TABLE merge_cases(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL, fresh INTEGER NOT NULL)", nullptr},
    {R"sql(INSERT INTO temp.merge_cases(src, dst, fresh)
SELECT cr.id, d.id, t.fresh FROM src.case_results cr JOIN temp.merge_runs t ON t.src = cr.run_id
JOIN main.case_results d ON d.run_id = t.dst AND d.case_id = cr.case_id)sql",
     nullptr},
    {R"sql(INSERT INTO main.metrics(case_result_id, name, value, n, low, high, label)
SELECT t.dst, x.name, x.value, x.n, x.low, x.high, x.label
FROM src.metrics x JOIN temp.merge_cases t ON t.src = x.case_result_id AND t.fresh)sql",
     &MergeCounts::metrics},
    {R"sql(INSERT INTO main.samples(case_result_id, sample_key, outcome, expected, extracted, latency_s, tokens, completion)
SELECT t.dst, x.sample_key, x.outcome, x.expected, x.extracted, x.latency_s, x.tokens, x.completion
FROM src.samples x JOIN temp.merge_cases t ON t.src = x.case_result_id AND t.fresh)sql",
     &MergeCounts::samples},
    {R"sql(INSERT INTO main.op_rows(case_result_id, op, input_shapes, calls, est_seconds)
SELECT t.dst, x.op, x.input_shapes, x.calls, x.est_seconds
FROM src.op_rows x JOIN temp.merge_cases t ON t.src = x.case_result_id AND t.fresh ORDER BY x.rowid)sql",
     &MergeCounts::op_rows},
    {R"sql(INSERT INTO main.golden_changes(case_id, path, old_hash, new_hash, reason, sha, user, at, from_case_result_id)
SELECT g.case_id, g.path, g.old_hash, g.new_hash, g.reason, g.sha, g.user, g.at, t.dst
FROM src.golden_changes g LEFT JOIN temp.merge_cases t ON t.src = g.from_case_result_id
WHERE NOT EXISTS (SELECT 1 FROM main.golden_changes d WHERE d.case_id = g.case_id AND d.path = g.path
                  AND d.old_hash = g.old_hash AND d.new_hash = g.new_hash AND d.reason = g.reason AND d.sha = g.sha
                  AND d.user = g.user AND d.at = g.at)
ORDER BY g.id)sql",
     &MergeCounts::golden_changes},
    {"CREATE TEMP TABLE merge_sessions(src INTEGER PRIMARY KEY, uid TEXT NOT NULL, dst INTEGER, fresh INTEGER NOT NULL)",
     nullptr},
    {R"sql(INSERT INTO temp.merge_sessions(src, uid, fresh)
SELECT s.id, s.uid, NOT EXISTS (SELECT 1 FROM main.bisect_sessions m WHERE m.uid = s.uid) FROM src.bisect_sessions s)sql",
     nullptr},
    {R"sql(INSERT INTO main.bisect_sessions(started_at, finished_at, good, bad, target, args_json, status, culprit,
                                 confidence, runs, result_json, uid)
SELECT s.started_at, s.finished_at, s.good, s.bad, s.target, s.args_json, s.status, s.culprit, s.confidence, s.runs,
       s.result_json, s.uid
FROM src.bisect_sessions s JOIN temp.merge_sessions t ON t.src = s.id AND t.fresh ORDER BY s.id)sql",
     &MergeCounts::bisect_sessions},
    {"UPDATE temp.merge_sessions SET dst = (SELECT m.id FROM main.bisect_sessions m WHERE m.uid = merge_sessions.uid)",
     nullptr},
    {R"sql(INSERT INTO main.bisect_steps(session_id, step, sha, source, run_id, exit_code, evidence_json, decision_json)
SELECT t.dst, x.step, x.sha, x.source, (SELECT r.dst FROM temp.merge_runs r WHERE r.src = x.run_id), x.exit_code,
       x.evidence_json, x.decision_json
FROM src.bisect_steps x JOIN temp.merge_sessions t ON t.src = x.session_id AND t.fresh)sql",
     &MergeCounts::bisect_steps},
    {R"sql(INSERT INTO main.regressions(uid, run_id, baseline_run_id, suite, kind, cases_json, confirmation,
                             confirm_json, session_id, at)
SELECT g.uid, (SELECT r.dst FROM temp.merge_runs r WHERE r.src = g.run_id),
       (SELECT r.dst FROM temp.merge_runs r WHERE r.src = g.baseline_run_id), g.suite, g.kind, g.cases_json,
       g.confirmation, g.confirm_json, (SELECT t.dst FROM temp.merge_sessions t WHERE t.src = g.session_id), g.at
FROM src.regressions g WHERE NOT EXISTS (SELECT 1 FROM main.regressions m WHERE m.uid = g.uid) ORDER BY g.id)sql",
     &MergeCounts::regressions},
};

const MergeLocalTable kLocalTables[] = {
    {"golden_intents", "a golden accept under way: its expectation file is in the golden folder of the database's "
                       "own checkout, where the next accept completes or drops it"},
};

const char* const kMergeCleanup = "DROP VIEW IF EXISTS temp.merge_ingested_twin; DROP TABLE IF EXISTS temp.merge_runs; "
                                  "DROP TABLE IF EXISTS temp.merge_cases; DROP TABLE IF EXISTS temp.merge_sessions;";

// A file: URI that opens path read-only (every byte but unreserved ones and '/' escaped).
std::string ReadOnlyUri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') uri += static_cast<char>(c);
    else uri += fmt::format("%{:02X}", c);
  }
  return uri + "?mode=ro";
}

}  // namespace

std::span<const MergeLocalTable> MergeLocalTables() { return kLocalTables; }

Result<std::unique_ptr<ReadOnlyStore>> Store::OpenMergeInput(const std::filesystem::path& input) {
  // Opened as a query command opens a file (never created; a newer schema, a foreign file or
  // foreign schema objects refused; an older schema read through a migrated copy), then its
  // pages and rows are checked.
  auto in = OpenReadOnly(input);
  if (!in) return in.error();
  sqlite3* db = (*in)->db();
  Stmt check(db, "PRAGMA quick_check(1)");
  const int rc = check.Step();
  if (rc != SQLITE_ROW || check.Text(0) != "ok") {
    const std::string said = rc == SQLITE_ROW ? check.Text(0) : std::string(sqlite3_errmsg(db));
    if (store_sql::QuickCheckCouldNotRead(rc, said))
      return InfraError(fmt::format("{}: cannot read it (PRAGMA quick_check: {}); nothing merged", input.string(), said));
    return InfraError(fmt::format("{}: damaged database (PRAGMA quick_check: {}); nothing merged", input.string(), said));
  }
  // A row whose parent is gone would be copied with a NULL parent id; name it instead.
  auto orphan = store_schema::OrphanRow(db);
  if (!orphan) return orphan.error();
  if (!orphan->empty()) return InfraError(fmt::format("{}: damaged database: {}; nothing merged", input.string(), *orphan));
  Stmt no_uid(db, R"sql(
SELECT 'runs', id FROM runs WHERE uid IS NULL UNION ALL SELECT 'bisect_sessions', id FROM bisect_sessions WHERE uid IS NULL
LIMIT 1)sql");
  const int u = no_uid.Step();
  if (u == SQLITE_ROW)
    return InfraError(fmt::format("{}: damaged database: table {} row {} has no uid; nothing merged", input.string(),
                                  no_uid.Text(0), no_uid.Int(1)));
  if (u != SQLITE_DONE) return DbError(db, "check the rows of " + input.string());
  // A case id names a golden expectation file: an input could be crafted to reach outside
  // the golden folder with one, so every id is checked before anything is copied.
  Stmt ids(db, "SELECT DISTINCT 'case_results', case_id FROM case_results "
               "UNION SELECT DISTINCT 'golden_changes', case_id FROM golden_changes");
  if (auto s = ForEachRow(db, ids, "read the case ids of " + input.string(), [&](const Stmt& row) -> Status {
        if (auto problem = CaseIdProblem(row.Text(1)))
          return UsageError(fmt::format("{}: {}: case id '{}' {}; refusing to merge it", input.string(), row.Text(0),
                                        PrintableCaseId(row.Text(1)), *problem));
        return OkStatus();
      });
      !s)
    return s.error();
  // Nor is a sample outcome word copied that no reader of the merged database would accept.
  Stmt outcomes(db, "SELECT outcome, min(rowid) FROM samples GROUP BY outcome");
  if (auto s = ForEachRow(db, outcomes, "read the sample outcomes of " + input.string(), [&](const Stmt& row) -> Status {
        if (!ParseSampleOutcome(row.Text(0)))
          return InfraError(fmt::format("{}: damaged database: table samples row {}: {}; nothing merged",
                                        input.string(), row.Int(1), store_sql::UnknownOutcome(row.Text(0))));
        return OkStatus();
      });
      !s)
    return s.error();
  return in;
}

Status Store::CheckMergeInput(const std::filesystem::path& input) {
  auto in = OpenMergeInput(input);
  if (!in) return in.error();
  return OkStatus();
}

Result<MergeCounts> Store::MergeFrom(const std::filesystem::path& input) {
  const std::string name = input.string();
  std::error_code ec;
  if (std::filesystem::equivalent(input, path(), ec))
    return UsageError(fmt::format("{}: is the output database itself", name));
  auto in = OpenMergeInput(input);
  if (!in) return in.error();
  // What was checked is what is copied: the input itself, or its migrated copy (kept until
  // the input's store closes), attached read-only. One input at a time: SQLite attaches at
  // most 10, and any number may be merged.
  Stmt attach(db(), "ATTACH DATABASE ?1 AS src");
  attach.BindAll(ReadOnlyUri(sqlite3_db_filename((*in)->db(), "main")));
  if (attach.Step() != SQLITE_DONE) return DbError(db(), "attach " + name);
  MergeCounts counts;
  Status copied = InTransaction(db(), [&]() -> Status {
    for (const auto& step : kMergeSteps) {
      Stmt st(db(), step.sql);
      if (st.Step() != SQLITE_DONE) return DbError(db(), "copy rows");
      if (step.count) counts.*step.count += sqlite3_changes(db());
    }
    Stmt present(db(), "SELECT COUNT(*) FROM temp.merge_runs WHERE NOT fresh");
    if (present.Step() != SQLITE_ROW) return DbError(db(), "count the runs present");
    counts.runs_present = present.Int(0);
    Stmt nightlies(db(), R"sql(SELECT DISTINCT r.nightly FROM temp.merge_runs t JOIN main.runs r ON r.id = t.dst
WHERE t.fresh AND r.nightly <> '' ORDER BY r.nightly)sql");
    if (auto s = ForEachRow(db(), nightlies, "read the merged nightlies",
                            [&](const Stmt& row) { counts.nightlies.insert(row.Text(0)); });
        !s)
      return s;
    Stmt fk(db(), "PRAGMA main.foreign_key_check");
    if (fk.Step() != SQLITE_DONE) return InfraError("a copied row lost its parent");
    return OkStatus();
  });
  // The maps go after the transaction (a DROP would wait for this transaction's statements).
  static_cast<void>(Exec(db(), kMergeCleanup, "merge cleanup"));
  Stmt detach(db(), "DETACH DATABASE src");
  const bool detached = detach.Step() == SQLITE_DONE;
  // One prefix for every step, BEGIN and COMMIT included: they lock the input too, and the
  // user must learn which input a failure was merging.
  if (!copied) return Error{copied.error().code, fmt::format("merge {}: {}", name, copied.error().message)};
  if (!detached) return DbError(db(), "detach " + name);
  return counts;
}

}  // namespace harness
