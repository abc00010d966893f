#include "harness/store/golden_log.h"

#include <fmt/format.h>

#include "harness/store/sqlite_db.h"
#include "harness/store/store_rows.h"

namespace harness {
namespace {

using store_sql::InTransaction;
using store_sql::Stmt;
using store_sql::StepDone;
using store_sql::StepReturningId;

}  // namespace

Result<int64_t> GoldenLog::BeginGoldenChange(const GoldenChange& c) {
  sqlite3* db = connection_.db;
  Stmt st(db, R"sql(INSERT INTO golden_intents(case_id, path, old_hash, new_hash, reason, sha, user, at,
from_case_result_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id)sql");
  st.BindAll(c.case_id, c.path, c.old_hash, c.new_hash, c.reason, c.sha, c.user, store_sql::NowUtc(),
             c.from_case_result_id);
  // Its own transaction commits in here, before the file is touched.
  return StepReturningId(db, st, "record the golden change's intent");
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

Result<std::vector<GoldenChange>> GoldenLogReader::PendingGoldenChanges() {
  static const std::string sql =
      "SELECT " + store_sql::kGoldenChangeColumns.Select() + " FROM golden_intents ORDER BY id";
  return store_sql::QueryAll<GoldenChange>(connection_.db, sql.c_str(), "read pending golden changes",
                                           store_sql::GoldenChangeOf);
}

}  // namespace harness
