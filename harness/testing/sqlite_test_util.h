// Raw SQL on a database file for tests that set up what the binary cannot write itself (a run
// started days ago, a run left `running`): sqlite3 directly, never the store under test.
#pragma once

#include <sqlite3.h>

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

}  // namespace harness::testing_util
