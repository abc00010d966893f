// SQLite beneath the store, for the store's own files only: a prepared statement with typed
// binds and reads, statements stepped to their end, transactions, typed queries (QueryAll,
// QueryOne, ForEachRow: bind, step, read each row with a row reader, collect) and column
// lists written once and read by name (ColumnList). The connection the store's doors share
// (Connection) is here too. Consumers of the store never include this file.
#pragma once

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/util/error.h"

// A named namespace, not the anonymous one: the store's exported classes hold these types.
namespace harness::store_sql {

// How long a writer waits for another one's lock before it gives up.
inline constexpr int kBusyTimeoutMs = 10000;

// A prepared statement with typed binds; finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool prepared() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); return *this; }
  Stmt& Bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); return *this; }
  Stmt& Bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, std::optional<int64_t> v) {
    if (v) sqlite3_bind_int64(stmt_, i, *v); else sqlite3_bind_null(stmt_, i);
    return *this;
  }
  Stmt& Bind(int i, std::optional<double> v) {
    if (v) sqlite3_bind_double(stmt_, i, *v); else sqlite3_bind_null(stmt_, i);
    return *this;
  }
  // Binds args to ?1, ?2, ... in order.
  template <class... Args>
  Stmt& BindAll(const Args&... args) {
    int i = 0;
    (Bind(++i, args), ...);
    return *this;
  }
  // Ready for the next row of binds.
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return prepared() ? sqlite3_step(stmt_) : rc_; }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) const {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
  }
  std::optional<double> OptReal(int col) const { return IsNull(col) ? std::nullopt : std::optional<double>(Real(col)); }
  std::optional<int64_t> OptInt(int col) const { return IsNull(col) ? std::nullopt : std::optional<int64_t>(Int(col)); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

Error DbError(sqlite3* db, std::string_view what);

// Runs sql (one or more statements, no binds); `what` names it in the error.
Status Exec(sqlite3* db, const char* sql, std::string_view what);

// Steps st once and accepts a row or its end: a write, or a read whose row is not wanted.
Status StepDone(sqlite3* db, Stmt& st, std::string_view what);

// Steps an INSERT ... RETURNING id to its row and on to its end, and gives the id. Its row
// comes before the statement's own transaction commits, and that commit can still fail (a
// lock refused): an id read and left there would name a row that was never stored.
Result<int64_t> StepReturningId(sqlite3* db, Stmt& st, std::string_view what);

// The integer a pragma answers; a pragma that cannot be read (an I/O error) is an error,
// never a number: a user_version read as -1 once made a current store look older.
Result<int> PragmaInt(sqlite3* db, const char* sql);

// Whether PRAGMA quick_check's outcome says the file could not be read rather than that it
// holds damage: a step that failed with an I/O error, or a row naming one ("Page 32: unable
// to get the page. error code=266"). A read that failed is no evidence about the pages.
bool QuickCheckCouldNotRead(int step_rc, std::string_view row);

// Now, ISO-8601 UTC: what the store's `at`, `started_at` and `finished_at` columns hold.
std::string NowUtc();
// Seconds since the epoch of a time NowUtc wrote ("2026-12-05T11:07:15Z"); none for any
// other text (a column a hand or another tool filled).
std::optional<int64_t> UtcEpochSeconds(const std::string& iso);

// Runs fn inside BEGIN IMMEDIATE ... COMMIT; rolls back on error.
template <class Fn>
Status InTransaction(sqlite3* db, Fn&& fn) {
  if (auto s = Exec(db, "BEGIN IMMEDIATE", "begin transaction"); !s) return s;
  Status s = fn();
  if (!s) {
    static_cast<void>(Exec(db, "ROLLBACK", "rollback"));  // the original error is the one worth reporting
    return s;
  }
  return Exec(db, "COMMIT", "commit");
}

// Steps st to its end and calls read(st) on each row. read returns void, or a Status whose
// error stops the query and is its answer; a failed step is DbError(what).
template <class Read>
Status ForEachRow(sqlite3* db, Stmt& st, std::string_view what, Read&& read) {
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    if constexpr (std::is_void_v<std::invoke_result_t<Read&, const Stmt&>>) {
      read(std::as_const(st));
    } else if (auto s = read(std::as_const(st)); !s) {
      return s;
    }
  }
  if (rc != SQLITE_DONE) return DbError(db, what);
  return OkStatus();
}

// Every row of st, each read into a Row by read(st). A reader that may refuse a row uses
// ForEachRow: a Result<Row> per row costs the per-question reads (Samples) a few percent.
template <class Row, class Read>
Result<std::vector<Row>> ReadAll(sqlite3* db, Stmt& st, std::string_view what, Read&& read) {
  std::vector<Row> out;
  auto s = ForEachRow(db, st, what, [&](const Stmt& row) { out.push_back(read(row)); });
  if (!s) return s.error();
  return out;
}

// Prepares sql, binds args to ?1, ?2, ... and reads every row (ReadAll).
template <class Row, class Read, class... Args>
Result<std::vector<Row>> QueryAll(sqlite3* db, const char* sql, std::string_view what, Read&& read,
                                  const Args&... args) {
  Stmt st(db, sql);
  st.BindAll(args...);
  return ReadAll<Row>(db, st, what, read);
}

// The first row of st read by read(st), or empty when there is none.
template <class Row, class Read>
Result<std::optional<Row>> ReadOne(sqlite3* db, Stmt& st, std::string_view what, Read&& read) {
  const int rc = st.Step();
  if (rc == SQLITE_ROW) return std::optional<Row>(read(std::as_const(st)));
  if (rc != SQLITE_DONE) return DbError(db, what);
  return std::optional<Row>();
}

// Prepares sql, binds args and reads its first row (ReadOne).
template <class Row, class Read, class... Args>
Result<std::optional<Row>> QueryOne(sqlite3* db, const char* sql, std::string_view what, Read&& read,
                                    const Args&... args) {
  Stmt st(db, sql);
  st.BindAll(args...);
  return ReadOne<Row>(db, st, what, read);
}

// The single column of every row.
inline int64_t IntColumn(const Stmt& st) { return st.Int(0); }
inline std::string TextColumn(const Stmt& st) { return st.Text(0); }

// A column list written once: each column's name and the SQL expression that selects it.
// Select() is the list for a SELECT; a reader finds a column by its name, at compile time
// (a misspelt name does not compile), so no query reads a column by a number of its own.
struct Column {
  std::string_view name;
  std::string_view sql;
};

template <std::size_t N>
struct ColumnList {
  std::array<Column, N> columns;

  // The index of the column called name.
  consteval int operator[](std::string_view name) const {
    for (std::size_t i = 0; i < N; ++i)
      if (columns[i].name == name) return static_cast<int>(i);
    throw "no column of that name in the list";  // not a constant expression: a compile error
  }
  static constexpr int size() { return static_cast<int>(N); }
  // "expr, expr, ...": the SELECT list, in order.
  std::string Select() const {
    std::string out;
    for (const auto& c : columns) {
      if (!out.empty()) out += ", ";
      out += c.sql;
    }
    return out;
  }
};

// Statements prepared once per connection, by their SQL text. A lease resets its statement
// when it goes out of scope, so a read that stops early never keeps a read transaction open.
class StatementCache {
 public:
  class Lease {
   public:
    explicit Lease(Stmt& st) : st_(st) {}
    ~Lease() { st_.Reset(); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Stmt& operator*() const { return st_; }
    Stmt* operator->() const { return &st_; }

   private:
    Stmt& st_;
  };
  Lease Get(sqlite3* db, std::string_view sql);

 private:
  std::map<std::string, std::unique_ptr<Stmt>, std::less<>> by_sql_;
};

// One open database: what every door of a store works on. Closing it finalizes the cached
// statements, closes the connection and removes the folder of a migrated copy, if any.
struct Connection {
  Connection(sqlite3* open_db, std::filesystem::path db_path) : db(open_db), path(std::move(db_path)) {}
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* db;
  std::filesystem::path path;       // as the command named it
  std::filesystem::path copy_dir;   // the migrated copy of an older file read instead, if any
  // The per-case reads (Metrics, Ops, Samples) prepared once: compare and report ask them
  // for every case, thousands at fleet scale.
  StatementCache statements;
};

// Opens without writing anything. Every connection runs with the schema distrusted
// (functions with side effects may not run from a view, trigger or default) and defensive
// mode on (no writable_schema and other features that corrupt a file on purpose). URI names
// are on so that a merge can attach an input read-only; a path that looks like a URI is made
// plainly relative, so it stays a path.
Result<sqlite3*> OpenRaw(const std::filesystem::path& path, int flags);

// WAL and synchronous=NORMAL for a writer; the page cache and foreign keys for every
// connection.
Status SetPragmas(sqlite3* db, const std::string& path, bool read_only);

}  // namespace harness::store_sql
