#include "harness/store/result_reader.h"

#include <fmt/format.h>

#include "harness/store/sqlite_db.h"
#include "harness/store/store_rows.h"
#include "harness/util/utf8.h"

namespace harness {
namespace {

using store_sql::ColumnList;
using store_sql::DbError;
using store_sql::QueryAll;
using store_sql::QueryOne;
using store_sql::Stmt;
using store_sql::StatusOf;

constexpr ColumnList<6> kStoredCaseColumns{{{
    {"id", "id"},
    {"run_id", "run_id"},
    {"case_id", "case_id"},
    {"status", "status"},
    {"message", "message"},
    {"duration_s", "COALESCE(duration_s, 0)"},
}}};

StoredCase StoredCaseOf(const Stmt& st) {
  constexpr const auto& c = kStoredCaseColumns;
  StoredCase out{st.Int(c["id"]), st.Int(c["run_id"]), {}};
  out.result.case_id = st.Text(c["case_id"]);
  out.result.status = StatusOf(st.Text(c["status"]));
  out.result.message = st.Text(c["message"]);
  out.result.duration_s = st.Real(c["duration_s"]);
  return out;
}

// The stored cases sql selects (kStoredCaseColumns from case_results, then `tail`).
Result<std::vector<StoredCase>> QueryStoredCases(sqlite3* db, const char* tail, std::string_view what,
                                                 const auto&... args) {
  const std::string sql = "SELECT " + kStoredCaseColumns.Select() + " FROM case_results" + tail;
  return QueryAll<StoredCase>(db, sql.c_str(), what, StoredCaseOf, args...);
}

constexpr ColumnList<6> kMetricColumns{{{
    {"name", "name"},
    {"value", "value"},
    {"n", "n"},
    {"low", "low"},
    {"high", "high"},
    {"label", "label"},
}}};

Metric MetricOf(const Stmt& st) {
  constexpr const auto& c = kMetricColumns;
  return Metric{st.Text(c["name"]), st.Real(c["value"]), st.Int(c["n"]), st.OptReal(c["low"]),
                st.OptReal(c["high"]), st.Text(c["label"])};
}

constexpr ColumnList<7> kSampleColumns{{{
    {"key", "sample_key"},
    {"outcome", "outcome"},
    {"expected", "expected"},
    {"extracted", "extracted"},
    {"latency_s", "latency_s"},
    {"tokens", "tokens"},
    {"completion", "completion"},
}}};

constexpr ColumnList<4> kOpRowColumns{{{
    {"op", "op"},
    {"input_shapes", "input_shapes"},
    {"calls", "calls"},
    {"est_seconds", "est_seconds"},
}}};

constexpr ColumnList<4> kCaseRefColumns{{{
    {"case_result_id", "cr.id"},
    {"run_id", "r.id"},
    {"sha", "c.sha"},
    {"status", "cr.status"},
}}};

CaseRef CaseRefOf(const Stmt& st) {
  constexpr const auto& c = kCaseRefColumns;
  return CaseRef{st.Int(c["case_result_id"]), st.Int(c["run_id"]), st.Text(c["sha"]), StatusOf(st.Text(c["status"]))};
}

// The case result a query of stored results (case_results cr JOIN runs r JOIN commits c,
// then `tail`) finds first, if any.
Result<std::optional<CaseRef>> QueryCaseRef(sqlite3* db, const char* tail, const auto&... args) {
  const std::string sql = "SELECT " + kCaseRefColumns.Select() + R"sql( FROM case_results cr
JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id)sql" + tail;
  return QueryOne<CaseRef>(db, sql.c_str(), "find case result", CaseRefOf, args...);
}

constexpr ColumnList<3> kCommitColumns{{{
    {"sha", "sha"},
    {"ordinal", "first_parent_ordinal"},
    {"subject", "subject"},
}}};

CommitInfo CommitOf(const Stmt& st) {
  constexpr const auto& c = kCommitColumns;
  return CommitInfo{st.Text(c["sha"]), {}, st.OptInt(c["ordinal"]), {}, st.Text(c["subject"])};
}

// The commits a query selects (commits, then `tail`).
Result<std::vector<CommitInfo>> QueryCommits(sqlite3* db, const char* tail, std::string_view what,
                                             const auto&... args) {
  const std::string sql = "SELECT " + kCommitColumns.Select() + " FROM commits" + tail;
  return QueryAll<CommitInfo>(db, sql.c_str(), what, CommitOf, args...);
}

}  // namespace

bool ResultReader::BeginSnapshot() {
  sqlite3* db = connection_.db;
  return sqlite3_get_autocommit(db) != 0 && sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK;
}

void ResultReader::EndSnapshot() {
  sqlite3* db = connection_.db;
  if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
}

const std::filesystem::path& ResultReader::path() const { return connection_.path; }

Result<std::vector<Sample>> ResultReader::Samples(int64_t case_result_id) {
  static const std::string sql =
      "SELECT " + kSampleColumns.Select() + " FROM samples WHERE case_result_id = ?1 ORDER BY sample_key";
  auto lease = connection_.statements.Get(connection_.db, sql);
  // Outcomes are read as much as they are written: a word this harness does not know
  // (another tool's, a damaged row) would count as something it is not.
  std::vector<Sample> out;
  auto s = store_sql::ForEachRow(connection_.db, lease->BindAll(case_result_id), "read samples",
                                 [&](const Stmt& st) -> Status {
    constexpr const auto& c = kSampleColumns;
    const auto outcome = ParseSampleOutcome(st.Text(c["outcome"]));
    if (!outcome)
      return InfraError(fmt::format("{}: damaged database: samples row (case result {}, key '{}'): {}",
                                    connection_.path.string(), case_result_id,
                                    TerminalText(Utf8Prefix(st.Text(c["key"]), 64)),
                                    store_sql::UnknownOutcome(st.Text(c["outcome"]))));
    out.push_back(Sample{st.Text(c["key"]), *outcome, st.Text(c["expected"]), st.Text(c["extracted"]),
                         st.Real(c["latency_s"]), st.Int(c["tokens"]), st.Text(c["completion"])});
    return OkStatus();
  });
  if (!s) return s.error();
  return out;
}

Result<std::vector<Metric>> ResultReader::Metrics(int64_t case_result_id) {
  static const std::string sql =
      "SELECT " + kMetricColumns.Select() + " FROM metrics WHERE case_result_id = ?1 ORDER BY name";
  auto lease = connection_.statements.Get(connection_.db, sql);
  return store_sql::ReadAll<Metric>(connection_.db, lease->BindAll(case_result_id), "read metrics", MetricOf);
}

Result<std::vector<OpRow>> ResultReader::Ops(int64_t case_result_id) {
  static const std::string sql =
      "SELECT " + kOpRowColumns.Select() + " FROM op_rows WHERE case_result_id = ?1 ORDER BY rowid";
  auto lease = connection_.statements.Get(connection_.db, sql);
  return store_sql::ReadAll<OpRow>(connection_.db, lease->BindAll(case_result_id), "read op rows", [](const Stmt& st) {
    constexpr const auto& c = kOpRowColumns;
    return OpRow{st.Text(c["op"]), st.Text(c["input_shapes"]), st.Int(c["calls"]), st.Real(c["est_seconds"])};
  });
}

Result<std::vector<StoredCase>> ResultReader::Cases(int64_t run_id) {
  return QueryStoredCases(connection_.db, " WHERE run_id = ?1 ORDER BY id", "read cases", run_id);
}

Result<RunRow> ResultReader::Run(int64_t id) {
  static const std::string sql = "SELECT " + store_sql::kRunRowColumns.Select() + R"sql(
FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE (?1 = 0 OR r.id = ?1) ORDER BY r.id DESC LIMIT 1)sql";
  auto run = QueryOne<RunRow>(connection_.db, sql.c_str(), "read run", store_sql::RunRowOf, id);
  if (!run) return run.error();
  if (!*run) return UsageError(id ? fmt::format("no run with id {} in the database", id) : "the database holds no run yet");
  return std::move(**run);
}

Result<std::vector<RunRow>> ResultReader::FinishedRuns() {
  static const std::string sql = "SELECT " + store_sql::kRunRowColumns.Select() + R"sql(, c.first_parent_ordinal
FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE r.status <> 'running'
ORDER BY c.first_parent_ordinal IS NULL DESC, c.first_parent_ordinal, c.id, r.id)sql";
  return QueryAll<RunRow>(connection_.db, sql.c_str(), "read runs", [](const Stmt& st) {
    RunRow run = store_sql::RunRowOf(st);
    run.ordinal = st.OptInt(store_sql::kRunRowColumns.size());
    return run;
  });
}

Result<std::map<int64_t, std::vector<Metric>>> ResultReader::MetricsOfRun(int64_t run_id) {
  static const std::string sql = "SELECT " + kMetricColumns.Select() + R"sql(, m.case_result_id
FROM case_results cr JOIN metrics m ON m.case_result_id = cr.id
WHERE cr.run_id = ?1 ORDER BY m.case_result_id, m.name)sql";
  Stmt st(connection_.db, sql.c_str());
  std::map<int64_t, std::vector<Metric>> out;
  auto s = store_sql::ForEachRow(connection_.db, st.BindAll(run_id), "read metrics", [&](const Stmt& row) {
    out[row.Int(kMetricColumns.size())].push_back(MetricOf(row));
  });
  if (!s) return s.error();
  return out;
}

namespace {

constexpr ColumnList<7> kEvidenceColumns{{{
    {"case_result_id", "cr.id"},
    {"run_id", "r.id"},
    {"status", "cr.status"},
    {"metric", "m.name"},
    {"value", "m.value"},
    {"n", "m.n"},
    {"partial", "r.partial_questions IS NOT NULL"},
}}};

constexpr ColumnList<12> kHistoryColumns{{{
    {"sha", "c.sha"},
    {"ordinal", "c.first_parent_ordinal"},
    {"subject", "c.subject"},
    {"case_id", "cr.case_id"},
    {"run_id", "r.id"},
    {"started_at", "r.started_at"},
    {"status", "cr.status"},
    {"value", "m.value"},
    {"n", "m.n"},
    {"low", "m.low"},
    {"high", "m.high"},
    {"label", "COALESCE(m.label, '')"},
}}};

HistoryRow HistoryRowOf(const Stmt& st) {
  constexpr const auto& c = kHistoryColumns;
  HistoryRow h;
  h.sha = st.Text(c["sha"]);
  h.ordinal = st.OptInt(c["ordinal"]);
  h.subject = st.Text(c["subject"]);
  h.case_id = st.Text(c["case_id"]);
  h.run_id = st.Int(c["run_id"]);
  h.started_at = st.Text(c["started_at"]);
  h.status = StatusOf(st.Text(c["status"]));
  h.value = st.OptReal(c["value"]);
  h.n = st.IsNull(c["n"]) ? 0 : st.Int(c["n"]);
  h.low = st.OptReal(c["low"]);
  h.high = st.OptReal(c["high"]);
  h.label = st.Text(c["label"]);
  return h;
}

}  // namespace

Result<std::vector<HistoryRow>> ResultReader::History(const HistoryQuery& q) {
  // The last N commits with a finished result of the case (or suite), then every finished
  // result there. A case's commits come from one pass over its rows (a correlated EXISTS
  // per commit rescanned them for every commit: quadratic in the history); a suite's from
  // one index probe per run (a suite of 10,000 cases has 10,000 rows per run to pass
  // over). Then the picked commits' runs, and their rows by (suite or case, run): the
  // CROSS JOINs keep SQLite from driving the query from the suite's rows of every run
  // (docs/store.md, "At fleet scale"). Commits without an ordinal (stored without git)
  // order by when they were first seen. The column is chosen from two constants, never
  // from input.
  const bool by_case = q.suite.empty();
  const char* const column = by_case ? "case_id" : "suite";
  const char* const hit = by_case ? R"sql(
  SELECT DISTINCT r.commit_id FROM case_results cr JOIN runs r ON r.id = cr.run_id
  WHERE cr.case_id = ?1 AND cr.status <> 'running' AND r.partial_questions IS NULL)sql"
                                  : R"sql(
  SELECT DISTINCT r.commit_id FROM runs r
  WHERE r.partial_questions IS NULL
    AND EXISTS (SELECT 1 FROM case_results cr WHERE cr.suite = ?1 AND cr.run_id = r.id AND cr.status <> 'running'))sql";
  const std::string sql = fmt::format(R"sql(
WITH hit AS ({1}
), picked AS (
  SELECT c.id AS commit_id FROM hit h JOIN commits c ON c.id = h.commit_id
  ORDER BY c.first_parent_ordinal IS NULL, c.first_parent_ordinal DESC, c.id DESC
  LIMIT ?3
)
SELECT {2}
FROM picked p
CROSS JOIN commits c ON c.id = p.commit_id
CROSS JOIN runs r ON r.commit_id = c.id AND r.partial_questions IS NULL
CROSS JOIN case_results cr ON cr.run_id = r.id AND cr.{0} = ?1 AND cr.status <> 'running'
LEFT JOIN metrics m ON m.case_result_id = cr.id AND m.name = ?2
ORDER BY c.first_parent_ordinal IS NULL DESC, c.first_parent_ordinal, c.id, cr.case_id, cr.id)sql",
                                      column, hit, kHistoryColumns.Select());
  return QueryAll<HistoryRow>(connection_.db, sql.c_str(), "read history", HistoryRowOf,
                              by_case ? q.case_id : q.suite, q.metric, static_cast<int64_t>(q.last_n));
}

Result<std::vector<std::string>> ResultReader::MetricNames(const std::string& case_id, const std::string& suite) {
  // The column is chosen from two constants, never from input.
  const std::string sql = fmt::format(R"sql(
SELECT DISTINCT m.name FROM case_results cr JOIN metrics m ON m.case_result_id = cr.id
WHERE cr.{} = ?1 AND cr.status <> 'running' ORDER BY m.name)sql",
                                      case_id.empty() ? "suite" : "case_id");
  return QueryAll<std::string>(connection_.db, sql.c_str(), "read metric names", store_sql::TextColumn,
                               case_id.empty() ? suite : case_id);
}

Result<std::vector<StoredCase>> ResultReader::NewestCasesAt(const std::string& sha) {
  // An attempt of a shard a later attempt replaced is a rerun, not the commit's result.
  static const std::string where = std::string(R"sql(
WHERE id IN (SELECT MAX(x.id) FROM commits c JOIN runs r ON r.commit_id = c.id
             JOIN case_results x ON x.run_id = r.id
             WHERE c.sha = ?1 AND x.status <> 'running' AND r.partial_questions IS NULL
               AND ()sql") + store_sql::kRunSupersededBySql + R"sql() IS NULL GROUP BY x.case_id)
ORDER BY case_id)sql";
  return QueryStoredCases(connection_.db, where.c_str(), "read the newest cases of " + sha, sha);
}

Result<std::vector<StoredCase>> ResultReader::FinishedCases(int64_t run_id) {
  return QueryStoredCases(connection_.db, " WHERE run_id = ?1 AND status <> 'running' ORDER BY case_id",
                          "read the cases of a run", run_id);
}

Result<std::optional<CaseRef>> ResultReader::NewestCaseAt(const CaseMatch& m, const std::string& sha) {
  return QueryCaseRef(connection_.db, R"sql(
WHERE cr.case_id = ?1 AND c.sha = ?2 AND r.id <> ?3 AND r.config_hash = ?5 AND cr.params_json = ?6
  AND cr.status IN ('pass', 'fail') AND (?4 = 0 OR cr.status = 'pass') AND r.partial_questions IS NULL
ORDER BY cr.id DESC LIMIT 1)sql",
                      m.case_id, sha, m.exclude_run, static_cast<int64_t>(m.passing_only), m.config_hash,
                      m.params_json);
}

Result<std::vector<double>> ResultReader::MetricAt(const CaseMatch& m, const std::string& sha,
                                                   const std::string& metric) {
  return QueryAll<double>(connection_.db, R"sql(
SELECT mt.value FROM case_results cr
JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
JOIN metrics mt ON mt.case_result_id = cr.id AND mt.name = ?4
WHERE cr.case_id = ?1 AND c.sha = ?2 AND r.config_hash = ?5 AND cr.params_json = ?6 AND r.id <> ?3
  AND cr.status IN ('pass', 'fail') AND r.partial_questions IS NULL
ORDER BY cr.id)sql",
                          "read the reruns of a case", [](const Stmt& st) { return st.Real(0); }, m.case_id, sha,
                          m.exclude_run, metric, m.config_hash, m.params_json);
}

Result<std::optional<CaseRef>> ResultReader::NewestCaseBelowOrdinal(const CaseMatch& m, int64_t ordinal) {
  return QueryCaseRef(connection_.db, R"sql(
WHERE cr.case_id = ?1 AND c.first_parent_ordinal < ?2 AND r.id <> ?3 AND r.config_hash = ?5 AND cr.params_json = ?6
  AND cr.status IN ('pass', 'fail') AND (?4 = 0 OR cr.status = 'pass') AND r.partial_questions IS NULL
ORDER BY c.first_parent_ordinal DESC, cr.id DESC LIMIT 1)sql",
                      m.case_id, ordinal, m.exclude_run, static_cast<int64_t>(m.passing_only), m.config_hash,
                      m.params_json);
}

Result<std::optional<CaseRef>> ResultReader::LatestCaseResult(const std::string& case_id) {
  return QueryCaseRef(connection_.db, R"sql(
WHERE cr.case_id = ?1 AND cr.status <> 'running'
ORDER BY r.started_at DESC, cr.id DESC LIMIT 1)sql",
                      case_id);
}

Result<std::map<std::string, std::string>> ResultReader::CaseParams(int64_t run_id) {
  Stmt st(connection_.db, "SELECT case_id, params_json FROM case_results WHERE run_id = ?1");
  std::map<std::string, std::string> out;
  auto s = store_sql::ForEachRow(connection_.db, st.BindAll(run_id), "read case parameters",
                                 [&](const Stmt& row) { out[row.Text(0)] = row.Text(1); });
  if (!s) return s.error();
  return out;
}

Result<std::vector<CaseEvidence>> ResultReader::CaseEvidenceAt(const std::string& case_id, const std::string& sha) {
  // One row per metric of each result (or one without a metric): grouped by result.
  static const std::string sql = "SELECT " + kEvidenceColumns.Select() + R"sql( FROM case_results cr
JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
LEFT JOIN metrics m ON m.case_result_id = cr.id
WHERE cr.case_id = ?1 AND c.sha = ?2 AND cr.status IN ('pass', 'fail', 'error')
ORDER BY cr.id)sql";
  Stmt st(connection_.db, sql.c_str());
  std::vector<CaseEvidence> out;
  auto s = store_sql::ForEachRow(connection_.db, st.BindAll(case_id, sha), "read evidence of " + case_id,
                                 [&](const Stmt& row) {
    constexpr const auto& c = kEvidenceColumns;
    if (out.empty() || out.back().case_result_id != row.Int(c["case_result_id"]))
      out.push_back(CaseEvidence{row.Int(c["case_result_id"]), row.Int(c["run_id"]), StatusOf(row.Text(c["status"])),
                                 {}, row.Int(c["partial"]) != 0});
    if (!row.IsNull(c["metric"]))
      out.back().metrics.push_back(Metric{row.Text(c["metric"]), row.Real(c["value"]), row.Int(c["n"]), {}, {}, ""});
  });
  if (!s) return s.error();
  return out;
}

Result<std::vector<std::string>> ResultReader::CaseIdsAt(const std::string& sha, const std::string& prefix) {
  return QueryAll<std::string>(connection_.db, R"sql(
SELECT DISTINCT cr.case_id FROM case_results cr JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
WHERE c.sha = ?1 AND substr(cr.case_id, 1, length(?2)) = ?2 ORDER BY cr.case_id)sql",
                               "read case ids", store_sql::TextColumn, sha, prefix);
}

Result<std::vector<CommitInfo>> ResultReader::MatchCommits(const std::string& sha_prefix) {
  // GLOB with a bound pattern that starts with the literal prefix uses the sha index; the
  // caller passes hex only, so the prefix holds no GLOB metacharacter.
  return QueryCommits(connection_.db, " WHERE sha GLOB ?1 ORDER BY sha LIMIT 20", "find commit", sha_prefix + "*");
}

Result<std::vector<CommitInfo>> ResultReader::CommitsPrefixOf(const std::string& sha) {
  // A scan of the commits (thousands of rows, once per run or import); no index serves
  // "is a prefix of".
  return QueryCommits(connection_.db,
                      " WHERE length(sha) < length(?1) AND substr(?1, 1, length(sha)) = sha ORDER BY sha LIMIT 20",
                      "find commit", sha);
}

Result<std::vector<CommitInfo>> ResultReader::CommitsInOrdinalRange(int64_t after, int64_t up_to) {
  return QueryCommits(connection_.db,
                      " WHERE first_parent_ordinal > ?1 AND first_parent_ordinal <= ?2 ORDER BY first_parent_ordinal, id",
                      "read commits", after, up_to);
}

Result<int64_t> ResultReader::NewestCaseResultId() {
  auto id = QueryOne<int64_t>(connection_.db, "SELECT COALESCE(MAX(id), 0) FROM case_results", "read case results",
                              store_sql::IntColumn);
  if (!id) return id.error();
  if (!*id) return DbError(connection_.db, "read case results");
  return **id;
}

Result<std::pair<int64_t, int64_t>> ResultReader::RunsAt(const std::string& sha, const std::string& config_hash) {
  using Counts = std::pair<int64_t, int64_t>;
  auto counts = QueryOne<Counts>(connection_.db, R"sql(
SELECT COALESCE(SUM(r.config_hash = ?2), 0), COUNT(*) FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE c.sha = ?1 AND r.status <> 'running' AND r.partial_questions IS NULL)sql",
                                 "count runs", [](const Stmt& st) { return Counts(st.Int(0), st.Int(1)); }, sha,
                                 config_hash);
  if (!counts) return counts.error();
  if (!*counts) return DbError(connection_.db, "count runs");
  return **counts;
}

Result<bool> ResultReader::HasCaseAt(const std::string& case_id, const std::string& sha) {
  auto hit = QueryOne<int64_t>(connection_.db, R"sql(
SELECT 1 FROM case_results cr JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
WHERE cr.case_id = ?1 AND c.sha = ?2 AND cr.status <> 'running' LIMIT 1)sql",
                               "find case result", store_sql::IntColumn, case_id, sha);
  if (!hit) return hit.error();
  return hit->has_value();
}

Result<std::vector<std::string>> ResultReader::KnownCases() {
  return QueryAll<std::string>(connection_.db, "SELECT DISTINCT case_id FROM case_results ORDER BY case_id",
                               "read case ids", store_sql::TextColumn);
}

Result<std::vector<RunRow>> ResultReader::LogicalRun(int64_t run_id) {
  static const std::string sql = "SELECT " + store_sql::kRunRowColumns.Select() + R"sql(
FROM runs me JOIN runs r ON r.id = me.id OR (me.nightly <> '' AND r.nightly = me.nightly
                                            AND r.commit_id = me.commit_id AND r.config_hash = me.config_hash)
JOIN commits c ON c.id = r.commit_id
WHERE me.id = ?1
ORDER BY CAST(substr(r.shard, 1, instr(r.shard, '/') - 1) AS INTEGER), r.id)sql";
  auto runs = QueryAll<RunRow>(connection_.db, sql.c_str(), "read the shards of a run", store_sql::RunRowOf, run_id);
  if (runs && runs->empty()) return UsageError(fmt::format("no run with id {} in the database", run_id));
  return runs;
}

Result<std::vector<RunRow>> ResultReader::NightlyRuns(const std::string& nightly) {
  static const std::string sql = "SELECT " + store_sql::kRunRowColumns.Select() + R"sql(
FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE r.nightly = ?1 AND r.nightly <> ''
ORDER BY c.sha, r.config_hash, CAST(substr(r.shard, 1, instr(r.shard, '/') - 1) AS INTEGER), r.id)sql";
  return QueryAll<RunRow>(connection_.db, sql.c_str(), "read the runs of a nightly", store_sql::RunRowOf, nightly);
}

}  // namespace harness
