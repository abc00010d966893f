// Raw SQL on a database file for tests that set up what the binary cannot write itself (a run
// started days ago, a run left `running`): sqlite3 directly, never the store under test.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace harness::testing_util {

// Runs sql (one or more statements) on the database at db_path; a failure fails the test.
inline void ExecSql(const std::filesystem::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// The one integer `sql` answers on the database at `db`, read on a connection of its own; -1
// when it cannot be read.
inline int64_t CountOf(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  sqlite3_stmt* st = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

// For a fault sweep (io_fault_vfs.h): dir/h.db copied afresh to dir/faulted.db, without the
// WAL and shared-memory files an earlier copy's connection left.
inline std::filesystem::path FreshFaultedCopy(const std::filesystem::path& dir) {
  for (const char* leftover : {"faulted.db-wal", "faulted.db-shm"}) std::filesystem::remove(dir / leftover);
  std::filesystem::copy_file(dir / "h.db", dir / "faulted.db", std::filesystem::copy_options::overwrite_existing);
  return dir / "faulted.db";
}

}  // namespace harness::testing_util
