#include "harness/store/sqlite_db.h"

#include <charconv>
#include <chrono>
#include <ctime>
#include <thread>

#include <fmt/format.h>

namespace harness::store_sql {

namespace {

// "database PATH" (the file SQLite has open, so "malformed" names which one), or "database"
// for one with no file.
std::string DatabaseName(sqlite3* db) {
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  return file && *file ? fmt::format("database {}", file) : "database";
}

}  // namespace

Error DbError(sqlite3* db, std::string_view what) {
  return InfraError(fmt::format("{}: {}: {}", DatabaseName(db), what, sqlite3_errmsg(db)));
}

Status Exec(sqlite3* db, const char* sql, std::string_view what) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return InfraError(fmt::format("{}: {}: {}", DatabaseName(db), what, msg));
  }
  return OkStatus();
}

Status StepDone(sqlite3* db, Stmt& st, std::string_view what) {
  int rc = st.Step();
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return DbError(db, what);
  return OkStatus();
}

Result<int64_t> StepReturningId(sqlite3* db, Stmt& st, std::string_view what) {
  if (st.Step() != SQLITE_ROW) return DbError(db, what);
  const int64_t id = st.Int(0);
  if (st.Step() != SQLITE_DONE) return DbError(db, what);
  return id;
}

Result<int> PragmaInt(sqlite3* db, const char* sql) {
  Stmt st(db, sql);
  if (st.Step() != SQLITE_ROW) return DbError(db, sql);
  return static_cast<int>(st.Int(0));
}

bool QuickCheckCouldNotRead(int step_rc, std::string_view row) {
  const auto is_io = [](long code) { return (code & 0xff) == SQLITE_IOERR; };
  if (step_rc != SQLITE_ROW && step_rc != SQLITE_DONE) return is_io(step_rc);
  static constexpr std::string_view kCode = "error code=";
  for (auto at = row.find(kCode); at != std::string_view::npos; at = row.find(kCode, at + 1)) {
    long code = 0;
    const char* first = row.data() + at + kCode.size();
    if (auto [end, ec] = std::from_chars(first, row.data() + row.size(), code); ec == std::errc() && is_io(code))
      return true;
  }
  return false;
}

std::optional<int64_t> UtcEpochSeconds(const std::string& iso) {
  std::tm tm{};
  const char* end = strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(timegm(&tm));
}

std::string NowUtc() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

StatementCache::Lease StatementCache::Get(sqlite3* db, std::string_view sql) {
  auto it = by_sql_.find(sql);
  if (it == by_sql_.end()) {
    it = by_sql_.emplace(std::string(sql), nullptr).first;
    it->second = std::make_unique<Stmt>(db, it->first.c_str());
  }
  it->second->Reset();
  return Lease(*it->second);
}

Connection::~Connection() {
  statements = StatementCache();  // finalized before the connection closes
  sqlite3_close(db);
  std::error_code ec;
  if (!copy_dir.empty()) std::filesystem::remove_all(copy_dir, ec);
}

Result<sqlite3*> OpenRaw(const std::filesystem::path& path, int flags) {
  const std::string name = path.string().starts_with("file:") ? "./" + path.string() : path.string();
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(name.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return InfraError(fmt::format("{}: cannot open database: {}", path.string(), msg));
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  return db;
}

namespace {

// Switching a new file to WAL takes an exclusive lock and answers SQLITE_BUSY at once,
// without the busy handler, while another process opens the same file; so it is retried for
// as long as the busy timeout would wait.
Status SetWal(sqlite3* db, const std::string& path) {
  for (int waited_ms = 0;; waited_ms += 10) {
    Stmt st(db, "PRAGMA journal_mode=WAL");
    const int rc = st.Step();
    if (rc == SQLITE_ROW) return OkStatus();
    if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || waited_ms >= kBusyTimeoutMs)
      return DbError(db, fmt::format("PRAGMA journal_mode=WAL ({})", path));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

Status SetPragmas(sqlite3* db, const std::string& path, bool read_only) {
  // WAL lets readers (report, history) run while a run writes; NORMAL keeps every
  // commit durable against a process kill (only an OS crash may lose the last ones).
  if (!read_only) {
    if (auto s = SetWal(db, path); !s) return s;
    if (auto s = Exec(db, "PRAGMA synchronous=NORMAL", fmt::format("PRAGMA synchronous=NORMAL ({})", path)); !s)
      return s;
  }
  // A page cache of up to 64 MiB (SQLite's default is 2 MiB): an import of thousands of
  // cases is one transaction, and a smaller cache spills its pages to the WAL mid-way and
  // writes them again; a query over a 10,000-case nightly rereads its index pages.
  if (auto s = Exec(db, "PRAGMA cache_size=-65536", fmt::format("PRAGMA cache_size ({})", path)); !s) return s;
  return Exec(db, "PRAGMA foreign_keys=ON", fmt::format("PRAGMA foreign_keys=ON ({})", path));
}

}  // namespace harness::store_sql
