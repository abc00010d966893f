#include "harness/store/schema.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/store/identity_rule.h"
#include "harness/store/sqlite_db.h"
#include "harness/util/utf8.h"

namespace harness::store_schema {
namespace {

using store_sql::DbError;
using store_sql::Exec;
using store_sql::InTransaction;
using store_sql::PragmaInt;
using store_sql::Stmt;


// Each migration runs in one BEGIN IMMEDIATE transaction that also bumps user_version. One
// file each, harness/store/migrations/NNNN_what.sql, generated into this list in order (the
// file's opening "--" comment, which says what it adds, left out; harness/store/CMakeLists.txt).
// Never edit a migration that has shipped: add the next file.
const char* const kMigrations[] = {
#include "harness/store/migrations.inc"
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kVersion);

// One row of sqlite_master, the part that says what an object is (rootpage left out).
struct SchemaObject {
  std::string type, name, tbl_name, sql;
  auto operator<=>(const SchemaObject&) const = default;
};

// What a file holds before we touch it: read in one read transaction, which writes nothing
// and sees one snapshot (another process may be creating the schema this very moment).
struct FileKind {
  int app = 0, version = 0;
  std::vector<SchemaObject> schema;
};

bool PlainIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// The sql SQLite keeps for an object is the text that created it, edited by ALTER TABLE
// (which may quote a renamed table's name): compared without its layout (runs of
// whitespace, spaces beside parentheses and commas) or the quotes of plain identifiers.
// String literals are kept as written.
std::string NormalizedSql(std::string_view sql) {
  std::string out;
  bool space = false, literal = false;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'') literal = !literal;  // a doubled quote inside a literal toggles twice
    if (!literal && std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty() && out.back() != '(' && out.back() != ',' && c != ')' && c != ',' && c != '(') out += ' ';
    space = false;
    if (!literal && c == '"') {
      const std::size_t end = sql.find('"', i + 1);
      if (end != std::string_view::npos && PlainIdentifier(sql.substr(i + 1, end - i - 1))) {
        out += sql.substr(i + 1, end - i - 1);
        i = end;
        continue;
      }
    }
    out += c;
  }
  return out;
}

Result<std::vector<SchemaObject>> ReadSchema(sqlite3* db) {
  auto out = store_sql::QueryAll<SchemaObject>(
      db, "SELECT type, name, tbl_name, COALESCE(sql, '') FROM main.sqlite_master", "read the schema",
      [](const Stmt& st) { return SchemaObject{st.Text(0), st.Text(1), st.Text(2), NormalizedSql(st.Text(3))}; });
  if (out) std::sort(out->begin(), out->end());
  return out;
}

// A header or schema that could not be read: a file SQLite calls no database is not ours;
// an I/O error says nothing of whose the file is.
Error UnreadableKind(sqlite3* db, const std::string& path, const std::string& why) {
  if ((sqlite3_extended_errcode(db) & 0xff) == SQLITE_NOTADB)
    return InfraError(fmt::format("{}: not a harness database: {}", path, why));
  return InfraError(fmt::format("{}: cannot read what the file is: {}", path, why));
}

Result<FileKind> ReadKind(sqlite3* db, const std::string& path) {
  Stmt st(db, "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM "
              "pragma_user_version)");
  if (st.Step() != SQLITE_ROW) return UnreadableKind(db, path, sqlite3_errmsg(db));
  auto schema = ReadSchema(db);
  if (!schema) return UnreadableKind(db, path, schema.error().message);
  return FileKind{static_cast<int>(st.Int(0)), static_cast<int>(st.Int(1)), std::move(*schema)};
}

Result<FileKind> Inspect(sqlite3* db, const std::string& path) {
  if (auto s = Exec(db, "BEGIN", fmt::format("{}: begin reading", path)); !s) return s.error();
  auto kind = ReadKind(db, path);
  static_cast<void>(Exec(db, "COMMIT", "end reading"));  // a read: there is nothing to lose
  return kind;
}

// Only an empty file or a harness database of a schema we understand may be written.
Status CheckOwnership(const FileKind& k, const std::string& path) {
  if (k.app == kApplicationId) {
    if (k.version > kVersion)
      return InfraError(fmt::format(
          "{}: database schema version {} is newer than this harness understands ({}); use a newer harness", path,
          k.version, kVersion));
    return OkStatus();
  }
  if (k.app == 0 && k.version == 0 && k.schema.empty()) return OkStatus();  // empty: ours to create
  return InfraError(fmt::format(
      "{}: not a harness database (application_id {}, user_version {}, {} schema objects); refusing to touch it",
      path, k.app, k.version, k.schema.size()));
}

}  // namespace

Result<std::string> OrphanRow(sqlite3* db) {
  Stmt st(db, R"sql(
SELECT f."table", f.rowid, l."from", f.parent, (SELECT count(*) FROM pragma_foreign_key_check)
FROM pragma_foreign_key_check AS f JOIN pragma_foreign_key_list(f."table") AS l ON l.id = f.fkid LIMIT 1)sql");
  const int rc = st.Step();
  if (rc == SQLITE_DONE) return std::string();
  if (rc != SQLITE_ROW) return DbError(db, "check that every row has its parent");
  return fmt::format("table {} row {} has a {} that names no row of {} ({} such rows)", st.Text(0), st.Int(1),
                     st.Text(2), st.Text(3), st.Int(4));
}


namespace {

// The SQL functions of the re-keying migration: each applies store/identity_rule.h to one
// stored config_json, so old runs are keyed exactly as new ones.
void RekeyedPart(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  const RekeyedIdentity r = RekeyStoredIdentity(text ? std::string_view(text, sqlite3_value_bytes(argv[0])) : "");
  const auto part = static_cast<const char*>(sqlite3_user_data(ctx));
  std::string out = part[0] == 'm' ? r.measured_json : part[0] == 'c' ? r.context_json : r.hash;
  if (out.empty() && argc > 1) {  // not an identity of format 1: keep the stored hash
    sqlite3_result_value(ctx, argv[1]);
    return;
  }
  sqlite3_result_text(ctx, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
}

Status RegisterIdentityFunctions(sqlite3* db) {
  struct Fn {
    const char* name;
    int args;
    const char* part;
  };
  static const Fn fns[] = {{"harness_rekeyed_measured", 1, "m"}, {"harness_rekeyed_context", 1, "c"},
                           {"harness_rekeyed_hash", 2, "h"}};
  for (const auto& f : fns)
    if (sqlite3_create_function_v2(db, f.name, f.args, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_DIRECTONLY,
                                   const_cast<char*>(f.part), RekeyedPart, nullptr, nullptr, nullptr) != SQLITE_OK)
      return DbError(db, fmt::format("register {}", f.name));
  return OkStatus();
}

}  // namespace

Status Migrate(sqlite3* db, const std::string& path, int target) {
  if (auto s = RegisterIdentityFunctions(db); !s) return s;
  // Foreign keys off while tables are rebuilt (a DROP would cascade); checked before each commit.
  if (auto s = Exec(db, "PRAGMA foreign_keys=OFF", "migrations"); !s) return s;
  auto from = PragmaInt(db, "PRAGMA user_version");
  if (!from) return from.error();
  for (int v = *from + 1; v <= target; ++v) {
    auto s = InTransaction(db, [&]() -> Status {
      // Re-read inside the write lock: another process may have migrated meanwhile.
      auto now = PragmaInt(db, "PRAGMA user_version");
      if (!now) return now.error();
      if (*now >= v) return OkStatus();
      if (auto e = Exec(db, kMigrations[v - 1], fmt::format("{}: migration {}", path, v)); !e) return e;
      auto orphan = OrphanRow(db);
      if (!orphan) return orphan.error();
      if (!orphan->empty()) return InfraError(fmt::format("{}: after migration {}: {}", path, v, *orphan));
      std::string bump = fmt::format("PRAGMA user_version = {}; PRAGMA application_id = {};", v, kApplicationId);
      return Exec(db, bump.c_str(), "set schema version");
    });
    if (!s) return s;
  }
  return Exec(db, "PRAGMA foreign_keys=ON", "migrations");
}

namespace {


// The schema objects of a database at `version`: migrations 1..version run on an empty
// in-memory database, so the answer stays right as migrations are added. Once per version.
Result<std::vector<SchemaObject>> ExpectedSchema(int version) {
  static std::mutex mu;
  static std::map<int, std::vector<SchemaObject>> known;
  std::lock_guard lock(mu);
  if (auto it = known.find(version); it != known.end()) return it->second;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return InfraError("database: cannot open an in-memory database");
  }
  auto schema = [&]() -> Result<std::vector<SchemaObject>> {
    if (auto s = Migrate(db, "the expected schema", version); !s) return s.error();
    return ReadSchema(db);
  }();
  sqlite3_close(db);
  if (schema) known[version] = *schema;
  return schema;
}

std::string Describe(const SchemaObject& o) {
  return o.tbl_name == o.name ? fmt::format("{} {}", o.type, o.name)
                              : fmt::format("{} {} on {}", o.type, o.name, o.tbl_name);
}

// A harness database holds exactly the objects its migrations create. Anything else (a view
// in place of a table, a trigger, another table or index) would run inside the harness's
// queries and migrations, so such a file is refused before any of them runs.
Status CheckSchema(const FileKind& k, const std::string& path) {
  auto expected = ExpectedSchema(k.version);
  if (!expected) return expected.error();
  if (k.schema == *expected) return OkStatus();
  std::map<std::pair<std::string, std::string>, const SchemaObject*> ours;
  for (const auto& o : *expected) ours[{o.type, o.name}] = &o;
  std::vector<std::string> foreign, changed, missing;
  for (const auto& o : k.schema) {
    auto it = ours.find({o.type, o.name});
    if (it == ours.end()) {
      foreign.push_back(Describe(o));
      continue;
    }
    if (*it->second != o) changed.push_back(Describe(o));
    ours.erase(it);
  }
  for (const auto& [key, o] : ours) missing.push_back(Describe(*o));
  auto list = [](const char* what, const std::vector<std::string>& items) -> std::string {
    constexpr std::size_t kNamed = 5;
    if (items.empty()) return "";
    std::string text = fmt::format("; {}: {}", what,
                                   fmt::join(items.begin(), items.begin() + std::min(items.size(), kNamed), ", "));
    if (items.size() > kNamed) text += fmt::format(" and {} more", items.size() - kNamed);
    return text;
  };
  return InfraError(fmt::format(
      "{}: its schema is not the one harness schema version {} creates{}{}{}; refusing to open it (a view or "
      "trigger would run inside the harness's own queries)",
      path, k.version, list("not created by the harness", foreign), list("changed", changed),
      list("missing", missing)));
}

// How long the check before a write may read: quick_check reads every page, about 5 s per
// GB on the shared CI machine; past this a big store is written unchecked beyond what was
// read (docs/store.md, "Damaged pages"). Its b-tree walk is one VDBE step, which a progress
// handler cannot stop: a watchdog interrupts it.
constexpr auto kPageCheckBudget = std::chrono::seconds(2);

// A harness database about to be written: its pages are checked first (PRAGMA quick_check:
// b-tree structure, page and record format; not index contents), so a damaged file is named
// and left as it is instead of having results written into it. docs/store.md has the cost.
Status CheckPagesBeforeWriting(sqlite3* db, const std::string& path) {
  // A page that could not be read (an I/O error) says nothing about the file: only a damaged
  // one is worth restoring from a copy.
  auto refuse = [&path](bool could_not_read, const std::string& said) {
    if (could_not_read)
      return InfraError(fmt::format("{}: cannot read it, refusing to write into it (PRAGMA quick_check: {})", path, said));
    return InfraError(fmt::format(
        "{}: damaged database, refusing to write into it (PRAGMA quick_check: {}); restore it from a copy", path, said));
  };
  store_sql::Stmt st(db, "PRAGMA quick_check(3)");
  std::vector<std::string> problems;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, kPageCheckBudget, [&] { return done; })) sqlite3_interrupt(db);
  });
  int rc = SQLITE_ROW;
  while ((rc = st.Step()) == SQLITE_ROW) problems.push_back(st.Text(0));
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
  if (rc == SQLITE_INTERRUPT && problems.empty()) return OkStatus();  // out of time, nothing found so far
  if (rc != SQLITE_DONE && rc != SQLITE_INTERRUPT) {
    const std::string said = sqlite3_errmsg(db);
    return refuse(store_sql::QuickCheckCouldNotRead(rc, said), said);
  }
  if (problems.size() == 1 && problems[0] == "ok") return OkStatus();
  std::string first;
  for (const auto& p : problems) first += (first.empty() ? "" : "; ") + ValidUtf8(Utf8Prefix(p, 200));
  return refuse(store_sql::QuickCheckCouldNotRead(SQLITE_DONE, first), first);
}

}  // namespace

Result<sqlite3*> OpenChecked(const std::filesystem::path& path, bool read_only, int migrate_to) {
  if (path.empty()) return UsageError("--db is empty: name the results database file");
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (read_only && !exists) return UsageError(fmt::format("{}: no results database there", path.string()));
  if (exists && std::filesystem::is_directory(path, ec))
    return UsageError(fmt::format("{}: is a folder, not a results database", path.string()));
  // SQLite would write a device or fifo as if it were a file, and put its -wal beside it.
  if (exists && !std::filesystem::is_regular_file(path, ec))
    return UsageError(fmt::format("{}: is not a regular file (a device, fifo or socket), not a results database",
                                  path.string()));
  // A reader opens a file it may write for writing, and refuses every write itself
  // (query_only): SQLite leaves the -wal and -shm files behind when the last connection to
  // close is a read-only one (every nightly ended with them beside out/harness.db, left by
  // `harness report`), and checkpoints and removes them when it may write.
  const bool writable = access(path.c_str(), W_OK) == 0;
  const int flags = read_only ? (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY)
                              : SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
  auto db = store_sql::OpenRaw(path, flags);
  if (!db) return db.error();
  auto fail = [&](Error e) -> Result<sqlite3*> {
    sqlite3_close(*db);
    return e;
  };
  if (read_only)
    if (auto s = store_sql::Exec(*db, "PRAGMA query_only=1", fmt::format("PRAGMA query_only ({})", path.string())); !s)
      return fail(s.error());
  auto kind = Inspect(*db, path.string());
  if (!kind) return fail(kind.error());
  if (auto s = CheckOwnership(*kind, path.string()); !s) return fail(s.error());
  if (kind->app == kApplicationId)
    if (auto s = CheckSchema(*kind, path.string()); !s) return fail(s.error());
  if (read_only && kind->app != kApplicationId)
    return fail(InfraError(fmt::format("{}: holds no harness results yet", path.string())));
  if (auto s = store_sql::SetPragmas(*db, path.string(), read_only); !s) return fail(s.error());
  if (!read_only && kind->app == kApplicationId)
    if (auto s = CheckPagesBeforeWriting(*db, path.string()); !s) return fail(s.error());
  if (!read_only)
    if (auto s = Migrate(*db, path.string(), migrate_to); !s) return fail(s.error());
  return *db;
}

Result<std::filesystem::path> MigratedCopy(sqlite3* src, const std::filesystem::path& path) {
  std::error_code ec;
  std::string tmpl = (std::filesystem::temp_directory_path(ec) / "harness-migrated-XXXXXX").string();
  if (ec || !mkdtemp(tmpl.data()))
    return InfraError(fmt::format("{}: no temporary folder for a migrated copy of its older schema", path.string()));
  const std::filesystem::path dir = tmpl;
  auto fail = [&](const std::string& why) -> Result<std::filesystem::path> {
    std::filesystem::remove_all(dir, ec);
    return InfraError(fmt::format("{}: its schema is older than this harness's ({}) and a migrated copy in {} "
                                  "failed: {}",
                                  path.string(), kVersion, dir.string(), why));
  };
  auto dst = store_sql::OpenRaw(dir / "copy.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!dst) return fail(dst.error().message);
  sqlite3_backup* backup = sqlite3_backup_init(*dst, "main", src, "main");
  const int step = backup ? sqlite3_backup_step(backup, -1) : SQLITE_ERROR;
  const int finish = sqlite3_backup_finish(backup);
  const std::string copy_error = sqlite3_errmsg(*dst);
  sqlite3_close(*dst);
  if (step != SQLITE_DONE || finish != SQLITE_OK) return fail(copy_error);
  // Opened like any file for writing: its schema is checked again, then migrated.
  auto migrated = OpenChecked(dir / "copy.db", false, kVersion);
  if (!migrated) return fail(migrated.error().message);
  sqlite3_close(*migrated);
  return dir;
}

}  // namespace harness::store_schema
