#include "harness/store/bisect_record.h"

#include <fmt/format.h>

#include "harness/store/sqlite_db.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

using store_sql::ColumnList;
using store_sql::DbError;
using store_sql::NowUtc;
using store_sql::QueryAll;
using store_sql::Stmt;
using store_sql::StepDone;
using store_sql::StepReturningId;

constexpr ColumnList<12> kSessionColumns{{{
    {"id", "id"},
    {"started_at", "started_at"},
    {"finished_at", "COALESCE(finished_at, '')"},
    {"good", "good"},
    {"bad", "bad"},
    {"target", "target"},
    {"args_json", "args_json"},
    {"status", "status"},
    {"culprit", "COALESCE(culprit, '')"},
    {"confidence", "COALESCE(confidence, 0)"},
    {"runs", "runs"},
    {"result_json", "result_json"},
}}};

BisectSessionRow SessionOf(const Stmt& st) {
  constexpr const auto& c = kSessionColumns;
  return BisectSessionRow{st.Int(c["id"]),         st.Text(c["started_at"]), st.Text(c["finished_at"]),
                          st.Text(c["good"]),      st.Text(c["bad"]),        st.Text(c["target"]),
                          st.Text(c["args_json"]), st.Text(c["status"]),     st.Text(c["culprit"]),
                          st.Real(c["confidence"]), st.Int(c["runs"]),       st.Text(c["result_json"]),
                          {}};
}

constexpr ColumnList<7> kStepColumns{{{
    {"step", "step"},
    {"sha", "sha"},
    {"source", "source"},
    {"run_id", "run_id"},
    {"exit_code", "exit_code"},
    {"evidence_json", "evidence_json"},
    {"decision_json", "decision_json"},
}}};

BisectStepRow StepOf(const Stmt& st) {
  constexpr const auto& c = kStepColumns;
  return BisectStepRow{st.Int(c["step"]),         st.Text(c["sha"]),          st.Text(c["source"]),
                       st.OptInt(c["run_id"]),    st.OptInt(c["exit_code"]), st.Text(c["evidence_json"]),
                       st.Text(c["decision_json"])};
}

constexpr ColumnList<10> kRegressionColumns{{{
    {"id", "id"},
    {"run_id", "run_id"},
    {"baseline_run_id", "baseline_run_id"},
    {"suite", "suite"},
    {"kind", "kind"},
    {"cases_json", "cases_json"},
    {"confirmation", "confirmation"},
    {"confirm_json", "confirm_json"},
    {"session_id", "session_id"},
    {"at", "at"},
}}};

RegressionRow RegressionOf(const Stmt& st) {
  constexpr const auto& c = kRegressionColumns;
  RegressionRow g{st.Int(c["id"]),           st.Int(c["run_id"]),       st.Int(c["baseline_run_id"]),
                  st.Text(c["suite"]),       st.Text(c["kind"]),        {},
                  st.Text(c["confirmation"]), st.Text(c["confirm_json"]), st.OptInt(c["session_id"]),
                  st.Text(c["at"])};
  const Json cases = ParseJsonOrDiscarded(st.Text(c["cases_json"]));
  if (cases.is_array())
    for (const auto& one : cases)
      if (one.is_string()) g.cases.push_back(one.get<std::string>());
  return g;
}

}  // namespace

Result<int64_t> BisectRecord::BeginBisect(const BisectSessionRow& s) {
  Stmt st(connection_.db, R"sql(INSERT INTO bisect_sessions(started_at, good, bad, target, args_json, status, uid)
VALUES(?1, ?2, ?3, ?4, ?5, 'running', lower(hex(randomblob(16)))) RETURNING id)sql");
  st.BindAll(NowUtc(), s.good, s.bad, s.target, s.args_json);
  return StepReturningId(connection_.db, st, "store bisect session");
}

Status BisectRecord::AddBisectStep(int64_t session_id, const BisectStepRow& s) {
  Stmt st(connection_.db, R"sql(INSERT INTO bisect_steps(session_id, step, sha, source, run_id, exit_code, evidence_json,
decision_json) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8))sql");
  st.BindAll(session_id, s.step, s.sha, s.source, s.run_id, s.exit_code, s.evidence_json, s.decision_json);
  return StepDone(connection_.db, st, "store bisect step");
}

Status BisectRecord::FinishBisect(int64_t session_id, const BisectSessionRow& s) {
  Stmt st(connection_.db, R"sql(UPDATE bisect_sessions SET finished_at = ?1, status = ?2, culprit = ?3, confidence = ?4,
runs = ?5, result_json = ?6 WHERE id = ?7)sql");
  st.BindAll(NowUtc(), s.status, s.culprit, s.confidence, s.runs, s.result_json, session_id);
  return StepDone(connection_.db, st, "finish bisect session");
}

Result<BisectSessionRow> BisectRecordReader::BisectSession(int64_t session_id) {
  static const std::string session_sql = "SELECT " + kSessionColumns.Select() + " FROM bisect_sessions WHERE id = ?1";
  auto session = store_sql::QueryOne<BisectSessionRow>(connection_.db, session_sql.c_str(), "read bisect session",
                                                       SessionOf, session_id);
  if (!session) return session.error();
  if (!*session) return UsageError(fmt::format("no bisect session {} in the database", session_id));
  static const std::string steps_sql =
      "SELECT " + kStepColumns.Select() + " FROM bisect_steps WHERE session_id = ?1 ORDER BY step";
  auto steps = QueryAll<BisectStepRow>(connection_.db, steps_sql.c_str(), "read bisect steps", StepOf, session_id);
  if (!steps) return steps.error();
  (*session)->steps = std::move(*steps);
  return std::move(**session);
}

Result<std::vector<int64_t>> BisectRecordReader::BisectSessionIds() {
  return QueryAll<int64_t>(connection_.db, "SELECT id FROM bisect_sessions ORDER BY id", "read bisect sessions",
                           store_sql::IntColumn);
}

Result<std::vector<int64_t>> BisectRecordReader::RunningBisectSessionIds() {
  return QueryAll<int64_t>(connection_.db, "SELECT id FROM bisect_sessions WHERE status = 'running' ORDER BY id",
                           "read bisect sessions", store_sql::IntColumn);
}

Result<int64_t> BisectRecord::AddRegression(const RegressionRow& g) {
  Stmt st(connection_.db, R"sql(INSERT INTO regressions(uid, run_id, baseline_run_id, suite, kind, cases_json, confirmation,
confirm_json, session_id, at) VALUES(lower(hex(randomblob(16))), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id)sql");
  st.BindAll(g.run_id, g.baseline_run_id, g.suite, g.kind, Json(g.cases).dump(), g.confirmation, g.confirm_json,
             g.session_id, NowUtc());
  return StepReturningId(connection_.db, st, "store a regression");
}

Status BisectRecord::SetRegressionSession(int64_t regression_id, int64_t session_id) {
  Stmt st(connection_.db, "UPDATE regressions SET session_id = ?2 WHERE id = ?1");
  st.BindAll(regression_id, session_id);
  if (st.Step() != SQLITE_DONE) return DbError(connection_.db, "link a regression to its bisect session");
  return OkStatus();
}

Result<std::vector<RegressionRow>> BisectRecordReader::Regressions() {
  static const std::string sql = "SELECT " + kRegressionColumns.Select() + " FROM regressions ORDER BY id";
  return QueryAll<RegressionRow>(connection_.db, sql.c_str(), "read the regressions", RegressionOf);
}

Status BisectRecord::DeleteRegressionsOf(int64_t run_id) {
  Stmt st(connection_.db, "DELETE FROM regressions WHERE run_id = ?1");
  st.BindAll(run_id);
  if (st.Step() != SQLITE_DONE) return DbError(connection_.db, "replace the nightly's regressions");
  return OkStatus();
}

}  // namespace harness
