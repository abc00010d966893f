#include "harness/store/sqlite_db.h"

#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness::store_sql {
namespace {

// An in-memory database with one table of three rows.
class SqliteDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(sqlite3_open(":memory:", &db_), SQLITE_OK);
    ASSERT_TRUE(Exec(db_, "CREATE TABLE t(k TEXT, v INTEGER); INSERT INTO t VALUES('a', 1), ('b', 2), ('c', 3);",
                     "fill")
                    .ok());
  }
  void TearDown() override { sqlite3_close(db_); }
  sqlite3* db_ = nullptr;
};

constexpr ColumnList<2> kColumns{{{{"key", "k"}, {"value", "v * 10"}}}};

struct Row {
  std::string key;
  int64_t value = 0;
};

Row RowOf(const Stmt& st) { return Row{st.Text(kColumns["key"]), st.Int(kColumns["value"])}; }

TEST_F(SqliteDbTest, QueryAllBindsInOrderAndReadsColumnsByName) {
  EXPECT_EQ(kColumns.Select(), "k, v * 10");
  const std::string sql = "SELECT " + kColumns.Select() + " FROM t WHERE v >= ?1 AND k <> ?2 ORDER BY v";
  auto rows = QueryAll<Row>(db_, sql.c_str(), "read t", RowOf, int64_t{2}, "c");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].key, "b");
  EXPECT_EQ((*rows)[0].value, 20);
}

TEST_F(SqliteDbTest, QueryOneIsEmptyWithoutARow) {
  auto none = QueryOne<int64_t>(db_, "SELECT v FROM t WHERE k = ?1", "find", IntColumn, "z");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto one = QueryOne<int64_t>(db_, "SELECT v FROM t WHERE k = ?1", "find", IntColumn, "b");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->value_or(0), 2);
}

TEST_F(SqliteDbTest, AReadersErrorStopsTheQueryAndAFailedStatementNamesIt) {
  int read = 0;
  Stmt st(db_, "SELECT v FROM t ORDER BY v");
  auto stopped = ForEachRow(db_, st, "read t", [&](const Stmt& row) -> Status {
    ++read;
    return row.Int(0) == 2 ? Status(InfraError("row 2 refused")) : OkStatus();
  });
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.error().message, "row 2 refused");
  EXPECT_EQ(read, 2);
  auto bad = QueryAll<int64_t>(db_, "SELECT nope FROM t", "read the missing column", IntColumn);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, ::testing::HasSubstr("database: read the missing column: no such column: nope"));
}

TEST_F(SqliteDbTest, InTransactionRollsBackOnError) {
  auto s = InTransaction(db_, [&]() -> Status {
    if (auto e = Exec(db_, "DELETE FROM t", "delete"); !e) return e;
    return InfraError("changed my mind");
  });
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(*PragmaInt(db_, "SELECT count(*) FROM t"), 3);
}

// A pragma that cannot be read is an error naming it, never a number to compare.
TEST_F(SqliteDbTest, APragmaThatCannotBeReadIsAnError) {
  auto answer = PragmaInt(db_, "SELECT nope FROM t");
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.error().message, ::testing::HasSubstr("SELECT nope FROM t: no such column: nope"));
}

}  // namespace
}  // namespace harness::store_sql

namespace harness::store_sql {
namespace sqlite_db_time_test {

// quick_check's own words for a page it could not read (SQLite's btree.c writes "unable to
// get the page. error code=%d") against damage it found; an I/O error in the step itself.
TEST(QuickCheckCouldNotRead, AnIoErrorCodeIsAReadErrorAnythingElseIsWhatThePagesHold) {
  EXPECT_TRUE(QuickCheckCouldNotRead(SQLITE_ROW, "*** in database main ***\nPage 32: unable to get the page. "
                                                 "error code=266"));
  EXPECT_TRUE(QuickCheckCouldNotRead(SQLITE_DONE, "Page 3: x error code=11; Page 4: y error code=10"));
  EXPECT_FALSE(QuickCheckCouldNotRead(SQLITE_ROW, "Page 32: unable to get the page. error code=11"));
  EXPECT_FALSE(QuickCheckCouldNotRead(SQLITE_ROW, "Page 5: btreeInitPage() returns error code 11"));
  EXPECT_FALSE(QuickCheckCouldNotRead(SQLITE_ROW, "error code=x266"));
  EXPECT_FALSE(QuickCheckCouldNotRead(SQLITE_ROW, "ok"));
  EXPECT_TRUE(QuickCheckCouldNotRead(SQLITE_IOERR_READ, "disk I/O error"));
  EXPECT_TRUE(QuickCheckCouldNotRead(SQLITE_IOERR, ""));
  EXPECT_FALSE(QuickCheckCouldNotRead(SQLITE_CORRUPT, "database disk image is malformed"));
  EXPECT_FALSE(QuickCheckCouldNotRead(SQLITE_NOTADB, "file is not a database"));
}

TEST(UtcEpochSeconds, ReadsWhatNowUtcWritesAndNothingElse) {
  EXPECT_EQ(UtcEpochSeconds("1970-01-01T00:00:00Z"), int64_t{0});
  EXPECT_EQ(UtcEpochSeconds("2026-12-05T11:07:15Z"), int64_t{1796468835});
  // Bracketed by the clock NowUtc reads: std::time() may read a coarser clock that lags
  // the system clock by a tick, and so a second, at a second's boundary (it made this flaky).
  const auto wall = [] { return static_cast<int64_t>(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())); };
  const int64_t before = wall();
  const auto now = UtcEpochSeconds(NowUtc());
  const int64_t after = wall();
  ASSERT_TRUE(now.has_value());
  EXPECT_GE(*now, before);
  EXPECT_LE(*now, after);
  EXPECT_FALSE(UtcEpochSeconds(""));
  EXPECT_FALSE(UtcEpochSeconds("2026-12-05 11:07:15"));
  EXPECT_FALSE(UtcEpochSeconds("2026-12-05T11:07:15Z trailing"));
}

}  // namespace sqlite_db_time_test
}  // namespace harness::store_sql
