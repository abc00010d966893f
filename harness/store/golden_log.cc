#include "harness/store/golden_log.h"

#include <fmt/format.h>

#include "harness/store/sqlite_db.h"

namespace harness {
namespace {

using store_sql::ColumnList;
using store_sql::DbError;
using store_sql::InTransaction;
using store_sql::Stmt;
using store_sql::StepDone;

// The columns of golden_changes and golden_intents (an intent is a change not yet made).
constexpr ColumnList<10> kGoldenChangeColumns{{{
    {"id", "id"},
    {"case_id", "case_id"},
    {"path", "path"},
    {"old_hash", "old_hash"},
    {"new_hash", "new_hash"},
    {"reason", "reason"},
    {"sha", "sha"},
    {"user", "user"},
    {"at", "at"},
    {"from_case_result_id", "from_case_result_id"},
}}};

GoldenChange GoldenChangeOf(const Stmt& st) {
  constexpr const auto& c = kGoldenChangeColumns;
  return GoldenChange{st.Int(c["id"]),       st.Text(c["case_id"]), st.Text(c["path"]),
                      st.Text(c["old_hash"]), st.Text(c["new_hash"]), st.Text(c["reason"]),
                      st.Text(c["sha"]),      st.Text(c["user"]),     st.Text(c["at"]),
                      st.OptInt(c["from_case_result_id"])};
}

Result<std::vector<GoldenChange>> QueryGoldenChanges(sqlite3* db, const char* tail, std::string_view what,
                                                     const auto&... args) {
  const std::string sql = "SELECT " + kGoldenChangeColumns.Select() + tail;
  return store_sql::QueryAll<GoldenChange>(db, sql.c_str(), what, GoldenChangeOf, args...);
}

}  // namespace

Result<int64_t> GoldenLog::BeginGoldenChange(const GoldenChange& c) {
  sqlite3* db = connection_.db;
  Stmt st(db, R"sql(INSERT INTO golden_intents(case_id, path, old_hash, new_hash, reason, sha, user, at,
from_case_result_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id)sql");
  st.BindAll(c.case_id, c.path, c.old_hash, c.new_hash, c.reason, c.sha, c.user, store_sql::NowUtc(),
             c.from_case_result_id);
  if (st.Step() != SQLITE_ROW) return DbError(db, "record the golden change's intent");
  const int64_t id = st.Int(0);
  // Run to its end: the statement's own transaction commits here, before the file is touched.
  if (auto s = StepDone(db, st, "record the golden change's intent"); !s) return s.error();
  return id;
}

Status GoldenLog::FinishGoldenChange(int64_t intent_id) {
  sqlite3* db = connection_.db;
  return InTransaction(db, [&]() -> Status {
    Stmt move(db, R"sql(INSERT INTO golden_changes(case_id, path, old_hash, new_hash, reason, sha, user, at,
from_case_result_id)
SELECT case_id, path, old_hash, new_hash, reason, sha, user, at, from_case_result_id FROM golden_intents WHERE id = ?1)sql");
    if (auto s = StepDone(db, move.BindAll(intent_id), "record golden change"); !s) return s;
    if (sqlite3_changes(db) != 1) return InfraError(fmt::format("database: no pending golden change {}", intent_id));
    Stmt done(db, "DELETE FROM golden_intents WHERE id = ?1");
    return StepDone(db, done.BindAll(intent_id), "record golden change");
  });
}

Status GoldenLog::AbandonGoldenChange(int64_t intent_id) {
  Stmt st(connection_.db, "DELETE FROM golden_intents WHERE id = ?1");
  return StepDone(connection_.db, st.BindAll(intent_id), "drop a golden change's intent");
}

Result<std::vector<GoldenChange>> GoldenLog::PendingGoldenChanges() {
  return QueryGoldenChanges(connection_.db, " FROM golden_intents ORDER BY id", "read pending golden changes");
}

Result<std::vector<GoldenChange>> GoldenLog::GoldenChanges(const std::string& case_id) {
  return QueryGoldenChanges(connection_.db, " FROM golden_changes WHERE ?1 = '' OR case_id = ?1 ORDER BY id",
                            "read golden changes", case_id);
}

}  // namespace harness
