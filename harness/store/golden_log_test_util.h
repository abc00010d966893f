// The golden changes a database records, for tests. Nothing in the harness reads the
// golden_changes table back (golden accept writes it, merge copies it, prune cites it), so
// the read is the tests' own, beside the store that owns the table.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/store/golden_log.h"
#include "harness/store/sqlite_db.h"
#include "harness/store/store_rows.h"

namespace harness {

// The recorded changes of case_id (every case when empty) in the database at db, oldest
// first, read on a read-only connection of its own.
inline Result<std::vector<GoldenChange>> RecordedGoldenChanges(const std::filesystem::path& db,
                                                               const std::string& case_id) {
  auto raw = store_sql::OpenRaw(db, SQLITE_OPEN_READONLY);
  if (!raw) return raw.error();
  const std::string sql = "SELECT " + store_sql::kGoldenChangeColumns.Select() +
                          " FROM golden_changes WHERE ?1 = '' OR case_id = ?1 ORDER BY id";
  auto changes = store_sql::QueryAll<GoldenChange>(*raw, sql.c_str(), "read golden changes",
                                                   store_sql::GoldenChangeOf, case_id);
  sqlite3_close(*raw);
  return changes;
}

}  // namespace harness
