#include "harness/store/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/results/case_id.h"
#include "harness/store/identity_rule.h"
#include "harness/util/utf8.h"

namespace harness {
namespace {

// Each migration runs in one BEGIN IMMEDIATE transaction that also bumps user_version.
// Never edit a migration that has shipped: add the next one.
const char* const kMigrations[] = {
    // 1: commits, runs, case results, metrics.
    R"sql(
CREATE TABLE commits(
  id INTEGER PRIMARY KEY,
  sha TEXT NOT NULL UNIQUE,
  parents TEXT NOT NULL DEFAULT '',
  first_parent_ordinal INTEGER,
  author_time INTEGER,
  subject TEXT NOT NULL DEFAULT ''
);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  commit_id INTEGER NOT NULL REFERENCES commits(id),
  stack TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  config_json TEXT NOT NULL,
  host TEXT NOT NULL,
  harness_version TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL CHECK (status IN ('running','passed','failed','error')),
  shard TEXT NOT NULL DEFAULT '0/1'
);
CREATE INDEX runs_by_commit ON runs(commit_id, config_hash);
CREATE TABLE case_results(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  suite TEXT NOT NULL,
  case_id TEXT NOT NULL,
  params_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running','pass','fail','error','skip')),
  duration_s REAL,
  message TEXT NOT NULL DEFAULT '',
  UNIQUE(run_id, case_id)
);
CREATE TABLE metrics(
  case_result_id INTEGER NOT NULL REFERENCES case_results(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL NOT NULL,
  n INTEGER NOT NULL DEFAULT 0,
  low REAL,
  high REAL,
  PRIMARY KEY(case_result_id, name)
);
)sql",
    // 2: raw per-sample outcomes and op rows; indexes for history and per-commit samples.
    R"sql(
CREATE TABLE samples(
  case_result_id INTEGER NOT NULL REFERENCES case_results(id) ON DELETE CASCADE,
  sample_key TEXT NOT NULL,
  outcome TEXT NOT NULL,
  expected TEXT NOT NULL DEFAULT '',
  extracted TEXT NOT NULL DEFAULT '',
  latency_s REAL NOT NULL DEFAULT 0,
  tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(case_result_id, sample_key)
);
CREATE TABLE op_rows(
  case_result_id INTEGER NOT NULL REFERENCES case_results(id) ON DELETE CASCADE,
  op TEXT NOT NULL,
  input_shapes TEXT NOT NULL,
  calls INTEGER NOT NULL,
  est_seconds REAL NOT NULL
);
CREATE INDEX op_rows_by_case ON op_rows(case_result_id);
CREATE INDEX case_results_by_case ON case_results(case_id, run_id);
CREATE INDEX metrics_by_name ON metrics(name, case_result_id);
CREATE INDEX commits_by_ordinal ON commits(first_parent_ordinal);
)sql",
    // 3: one status vocabulary (runs said passed/failed, cases pass/fail), and verdict
    // metrics carry their word beside the code. SQLite cannot change a CHECK constraint,
    // so runs is rebuilt (foreign keys are off while migrations run).
    R"sql(
CREATE TABLE runs_v3(
  id INTEGER PRIMARY KEY,
  commit_id INTEGER NOT NULL REFERENCES commits(id),
  stack TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  config_json TEXT NOT NULL,
  host TEXT NOT NULL,
  harness_version TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL CHECK (status IN ('running','pass','fail','error')),
  shard TEXT NOT NULL DEFAULT '0/1'
);
INSERT INTO runs_v3(id, commit_id, stack, config_hash, config_json, host, harness_version, started_at, finished_at,
                    status, shard)
SELECT id, commit_id, stack, config_hash, config_json, host, harness_version, started_at, finished_at,
       CASE status WHEN 'passed' THEN 'pass' WHEN 'failed' THEN 'fail' ELSE status END, shard
FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v3 RENAME TO runs;
CREATE INDEX runs_by_commit ON runs(commit_id, config_hash);
ALTER TABLE metrics ADD COLUMN label TEXT NOT NULL DEFAULT '';
UPDATE metrics SET label = CASE CAST(value AS INTEGER) WHEN 0 THEN 'PASS' WHEN 1 THEN 'AT-RISK' ELSE 'FAIL' END
WHERE name = 'gate_verdict';
UPDATE metrics SET label = CASE CAST(value AS INTEGER) WHEN 0 THEN 'SAME' WHEN 1 THEN 'IMPROVED' ELSE 'REGRESSED' END
WHERE name = 'baseline_verdict';
)sql",
    // 4: bisect sessions and their steps (the replayable log of `harness bisect`), and an
    // index so `history --suite` finds a suite's results without scanning every case result.
    R"sql(
CREATE TABLE bisect_sessions(
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  good TEXT NOT NULL,
  bad TEXT NOT NULL,
  target TEXT NOT NULL,
  args_json TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'culprit', 'no-culprit', 'ambiguous', 'error')),
  culprit TEXT,
  confidence REAL,
  runs INTEGER NOT NULL DEFAULT 0,
  result_json TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE bisect_steps(
  session_id INTEGER NOT NULL REFERENCES bisect_sessions(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  sha TEXT NOT NULL,
  source TEXT NOT NULL,
  run_id INTEGER,
  exit_code INTEGER,
  evidence_json TEXT NOT NULL,
  decision_json TEXT NOT NULL,
  PRIMARY KEY(session_id, step)
);
CREATE INDEX bisect_sessions_by_culprit ON bisect_sessions(culprit);
CREATE INDEX case_results_by_suite ON case_results(suite, run_id);
)sql",
    // 5: the completion text of a sample (the report's per-question flips show it; bounded
    // by the writer, stored as sent) and the log of reviewed golden expectation changes.
    R"sql(
ALTER TABLE samples ADD COLUMN completion TEXT NOT NULL DEFAULT '';
CREATE TABLE golden_changes(
  id INTEGER PRIMARY KEY,
  case_id TEXT NOT NULL,
  path TEXT NOT NULL,
  old_hash TEXT NOT NULL,
  new_hash TEXT NOT NULL,
  reason TEXT NOT NULL,
  sha TEXT NOT NULL,
  user TEXT NOT NULL,
  at TEXT NOT NULL,
  from_case_result_id INTEGER
);
CREATE INDEX golden_changes_by_case ON golden_changes(case_id, id);
)sql",
    // 6: what `harness merge` needs. Every run and bisect session gets a random uid, so a
    // merge recognizes a run it already holds (the same input twice adds nothing); a run's
    // nightly id groups the shards of one sharded nightly into one logical run.
    R"sql(
ALTER TABLE runs ADD COLUMN uid TEXT;
UPDATE runs SET uid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX runs_by_uid ON runs(uid);
ALTER TABLE runs ADD COLUMN nightly TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_nightly ON runs(nightly, commit_id, config_hash);
ALTER TABLE bisect_sessions ADD COLUMN uid TEXT;
UPDATE bisect_sessions SET uid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX bisect_sessions_by_uid ON bisect_sessions(uid);
)sql",
    // 7: which files `harness ingest` imported, so the same file for the same commit in the
    // same format is imported once (the run it became is kept beside it).
    R"sql(
CREATE TABLE ingested_files(
  id INTEGER PRIMARY KEY,
  content_hash TEXT NOT NULL,
  format TEXT NOT NULL,
  commit_id INTEGER NOT NULL REFERENCES commits(id),
  path TEXT NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  at TEXT NOT NULL,
  UNIQUE(content_hash, format, commit_id)
);
)sql",
    // 8: golden changes under way. `golden accept` commits its intent here before it rewrites
    // the expectation file and moves it to golden_changes after, so a kill in between leaves
    // a row the next accept completes (the file was rewritten) or drops (it was not).
    R"sql(
CREATE TABLE golden_intents(
  id INTEGER PRIMARY KEY,
  case_id TEXT NOT NULL,
  path TEXT NOT NULL,
  old_hash TEXT NOT NULL,
  new_hash TEXT NOT NULL,
  reason TEXT NOT NULL,
  sha TEXT NOT NULL,
  user TEXT NOT NULL,
  at TEXT NOT NULL,
  from_case_result_id INTEGER
);
)sql",
    // 9: a run's identity split in two (store/identity_rule.h): config_json and config_hash
    // keep what was measured, context_json where and how it ran (endpoint URL, exec cwd,
    // env and timeout, fault switches). Stored identities of format 1 are re-keyed with the
    // same rule as new runs, by the SQL functions RegisterIdentityFunctions adds.
    R"sql(
ALTER TABLE runs ADD COLUMN context_json TEXT NOT NULL DEFAULT '{}';
UPDATE runs SET config_hash = harness_rekeyed_hash(config_json, config_hash),
                context_json = harness_rekeyed_context(config_json),
                config_json = harness_rekeyed_measured(config_json);
)sql",
    // 10: what `harness bisect --auto` found in a nightly: each regression against the
    // previous nightly (its cases, how they regressed), whether a rerun of the bad commit
    // confirmed it, and the bisect session that looked for its culprit.
    R"sql(
CREATE TABLE regressions(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  baseline_run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  suite TEXT NOT NULL,
  kind TEXT NOT NULL,
  cases_json TEXT NOT NULL,
  confirmation TEXT NOT NULL CHECK (confirmation IN ('confirmed', 'not-confirmed', 'not-tried')),
  confirm_json TEXT NOT NULL,
  session_id INTEGER REFERENCES bisect_sessions(id) ON DELETE SET NULL,
  at TEXT NOT NULL
);
CREATE INDEX regressions_by_run ON regressions(run_id);
)sql",
    // 11: partial runs (`harness run --questions FILE`, a bisect step's few questions): how
    // many questions such a run evaluated; NULL for a whole run. A partial run is evidence
    // for bisect only, so the baseline, rerun, history and report queries leave it out.
    R"sql(
ALTER TABLE runs ADD COLUMN partial_questions INTEGER CHECK (partial_questions IS NULL OR partial_questions > 0);
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == Store::kSchemaVersion);

std::string NowUtc() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

// A named namespace, not the anonymous one: Store::StatementCache, a member of an
// exported class, holds statements.
namespace store_sql {

// A prepared statement with typed binds; finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool prepared() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); return *this; }
  Stmt& Bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); return *this; }
  Stmt& Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(int i, std::optional<int64_t> v) {
    if (v) sqlite3_bind_int64(stmt_, i, *v); else sqlite3_bind_null(stmt_, i);
    return *this;
  }
  Stmt& Bind(int i, std::optional<double> v) {
    if (v) sqlite3_bind_double(stmt_, i, *v); else sqlite3_bind_null(stmt_, i);
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

}  // namespace store_sql
using store_sql::Stmt;

namespace {

// How long a writer waits for another one's lock before it gives up.
constexpr int kBusyTimeoutMs = 10000;

Error DbError(sqlite3* db, const std::string& what) {
  return InfraError(fmt::format("database: {}: {}", what, sqlite3_errmsg(db)));
}

// Stored words are written by this file only; an unknown one means a damaged row.
CaseStatus StatusOf(const std::string& word) { return ParseCaseStatus(word).value_or(CaseStatus::kError); }

// Why a stored sample outcome word is refused, quoting it (escaped, cut to 64 bytes).
std::string UnknownOutcome(std::string_view word) {
  return fmt::format("outcome '{}' is not one of {}", TerminalText(Utf8Prefix(word, 64)), SampleOutcomeWords());
}

// The columns of a RunRow, in the order RunRowOf reads them (runs r JOIN commits c); a query
// may select more after them.
constexpr const char* kRunRowColumns =
    "r.id, c.sha, c.subject, r.stack, r.config_hash, r.config_json, r.host, r.started_at, "
    "COALESCE(r.finished_at, ''), r.status, r.shard, r.nightly, r.context_json, r.partial_questions";
constexpr int kRunRowColumnCount = 14;

RunRow RunRowOf(const Stmt& st) {
  RunRow r{st.Int(0),  st.Text(1), st.Text(2), st.Text(3), st.Text(4),
           st.Text(5), st.Text(6), st.Text(7), st.Text(8), ParseRunStatus(st.Text(9)).value_or(RunStatus::kError),
           st.Text(10), st.Text(11)};
  r.context_json = st.Text(12);
  r.partial_questions = st.OptInt(13);
  return r;
}

Status Exec(sqlite3* db, const char* sql, const std::string& what) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return InfraError(fmt::format("database: {}: {}", what, msg));
  }
  return OkStatus();
}

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

Status StepDone(sqlite3* db, Stmt& st, const std::string& what) {
  int rc = st.Step();
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return DbError(db, what);
  return OkStatus();
}

int PragmaInt(sqlite3* db, const char* sql) {
  Stmt st(db, sql);
  return st.Step() == SQLITE_ROW ? static_cast<int>(st.Int(0)) : -1;
}

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
  Stmt st(db, "SELECT type, name, tbl_name, COALESCE(sql, '') FROM main.sqlite_master");
  std::vector<SchemaObject> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back({st.Text(0), st.Text(1), st.Text(2), NormalizedSql(st.Text(3))});
  if (rc != SQLITE_DONE) return DbError(db, "read the schema");
  std::sort(out.begin(), out.end());
  return out;
}

Result<FileKind> ReadKind(sqlite3* db, const std::string& path) {
  Stmt st(db, "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM "
              "pragma_user_version)");
  if (st.Step() != SQLITE_ROW) return InfraError(fmt::format("{}: not a harness database: {}", path, sqlite3_errmsg(db)));
  auto schema = ReadSchema(db);
  if (!schema) return InfraError(fmt::format("{}: not a harness database: {}", path, schema.error().message));
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
  if (k.app == Store::kApplicationId) {
    if (k.version > Store::kSchemaVersion)
      return InfraError(fmt::format(
          "{}: database schema version {} is newer than this harness understands ({}); use a newer harness", path,
          k.version, Store::kSchemaVersion));
    return OkStatus();
  }
  if (k.app == 0 && k.version == 0 && k.schema.empty()) return OkStatus();  // empty: ours to create
  return InfraError(fmt::format(
      "{}: not a harness database (application_id {}, user_version {}, {} schema objects); refusing to touch it",
      path, k.app, k.version, k.schema.size()));
}

// The first row whose parent row is missing, in words ("table runs row 2 has a commit_id that
// names no row of commits (3 such rows)"); empty when every row has its parent.
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

Status Migrate(sqlite3* db, const std::string& path, int target) {
  if (auto s = RegisterIdentityFunctions(db); !s) return s;
  // Foreign keys off while tables are rebuilt (a DROP would cascade); checked before each commit.
  if (auto s = Exec(db, "PRAGMA foreign_keys=OFF", "migrations"); !s) return s;
  for (int v = PragmaInt(db, "PRAGMA user_version") + 1; v <= target; ++v) {
    auto s = InTransaction(db, [&]() -> Status {
      // Re-read inside the write lock: another process may have migrated meanwhile.
      if (PragmaInt(db, "PRAGMA user_version") >= v) return OkStatus();
      if (auto e = Exec(db, kMigrations[v - 1], fmt::format("{}: migration {}", path, v)); !e) return e;
      auto orphan = OrphanRow(db);
      if (!orphan) return orphan.error();
      if (!orphan->empty()) return InfraError(fmt::format("{}: after migration {}: {}", path, v, *orphan));
      std::string bump = fmt::format("PRAGMA user_version = {}; PRAGMA application_id = {};", v, Store::kApplicationId);
      return Exec(db, bump.c_str(), "set schema version");
    });
    if (!s) return s;
  }
  return Exec(db, "PRAGMA foreign_keys=ON", "migrations");
}

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

// Opens without writing anything: journal mode and migrations come after the checks.
// Every connection runs with the schema distrusted (functions with side effects may not run
// from a view, trigger or default) and defensive mode on (no writable_schema and other
// features that corrupt a file on purpose). URI names are on so that MergeFrom can attach
// an input read-only; a path that looks like a URI is made plainly relative, so it stays a path.
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
  const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
  auto db = OpenRaw(path, flags);
  if (!db) return db.error();
  auto fail = [&](Error e) -> Result<sqlite3*> {
    sqlite3_close(*db);
    return e;
  };
  auto kind = Inspect(*db, path.string());
  if (!kind) return fail(kind.error());
  if (auto s = CheckOwnership(*kind, path.string()); !s) return fail(s.error());
  if (kind->app == Store::kApplicationId)
    if (auto s = CheckSchema(*kind, path.string()); !s) return fail(s.error());
  if (read_only && kind->app != Store::kApplicationId)
    return fail(InfraError(fmt::format("{}: holds no harness results yet", path.string())));
  if (auto s = SetPragmas(*db, path.string(), read_only); !s) return fail(s.error());
  if (!read_only)
    if (auto s = Migrate(*db, path.string(), migrate_to); !s) return fail(s.error());
  return *db;
}

// Row writers shared by the one-row-at-a-time path of a run (BeginRun, BeginCase,
// WriteSample, FinishCase) and the whole-run path of an import (WriteIngestedRun); the
// caller owns the transaction.
Result<int64_t> InsertRun(sqlite3* db, const NewRun& r) {
  Stmt st(db, R"sql(
INSERT INTO runs(commit_id, stack, config_hash, config_json, host, harness_version, started_at, status, shard,
                 nightly, uid, context_json, partial_questions)
VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8, ?9, lower(hex(randomblob(16))), ?10, ?11) RETURNING id)sql");
  st.Bind(1, r.commit_id).Bind(2, r.stack).Bind(3, r.config_hash).Bind(4, r.config_json).Bind(5, r.host)
      .Bind(6, r.harness_version).Bind(7, NowUtc()).Bind(8, r.shard).Bind(9, r.nightly).Bind(10, r.context_json)
      .Bind(11, r.partial_questions);
  if (st.Step() != SQLITE_ROW) return DbError(db, "store run");
  return st.Int(0);
}

Status UpdateRunStatus(sqlite3* db, int64_t run_id, RunStatus status) {
  Stmt st(db, "UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3");
  st.Bind(1, std::string(Word(status))).Bind(2, NowUtc()).Bind(3, run_id);
  return StepDone(db, st, "finish run");
}

// The statements that write cases, prepared on first use and reused for every case of a
// batch: an import of a 10,000-case file would otherwise prepare 60,000 statements, most of
// its time (docs/store.md, "At fleet scale"). Each use starts with Reset.
class CaseWriter {
 public:
  explicit CaseWriter(sqlite3* db) : db_(db) {}
  sqlite3* db() const { return db_; }
  Stmt& insert_case() { return Ready(insert_case_, R"sql(
INSERT INTO case_results(run_id, suite, case_id, params_json, status) VALUES(?1, ?2, ?3, ?4, 'running')
ON CONFLICT(run_id, case_id) DO UPDATE SET status = 'running' RETURNING id)sql"); }
  Stmt& insert_sample() { return Ready(insert_sample_, R"sql(
INSERT OR REPLACE INTO samples(case_result_id, sample_key, outcome, expected, extracted, latency_s, tokens,
                               completion)
VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8))sql"); }
  Stmt& finish() { return Ready(finish_, "UPDATE case_results SET status = ?1, duration_s = ?2, message = ?3 WHERE id = ?4"); }
  Stmt& clear_metrics() { return Ready(clear_metrics_, "DELETE FROM metrics WHERE case_result_id = ?1"); }
  Stmt& clear_ops() { return Ready(clear_ops_, "DELETE FROM op_rows WHERE case_result_id = ?1"); }
  Stmt& metric() { return Ready(metric_, R"sql(INSERT OR REPLACE INTO metrics(case_result_id, name, value, n, low, high, label)
VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7))sql"); }
  Stmt& op() { return Ready(op_, "INSERT INTO op_rows(case_result_id, op, input_shapes, calls, est_seconds) VALUES(?1, ?2, ?3, ?4, ?5)"); }

 private:
  Stmt& Ready(std::optional<Stmt>& st, const char* sql) {
    if (!st) st.emplace(db_, sql);
    st->Reset();
    return *st;
  }
  sqlite3* db_;
  std::optional<Stmt> insert_case_, insert_sample_, finish_, clear_metrics_, clear_ops_, metric_, op_;
};

Result<int64_t> InsertCase(CaseWriter& w, int64_t run_id, const std::string& suite, const std::string& case_id,
                           const std::string& params_json) {
  Stmt& st = w.insert_case();
  st.Bind(1, run_id).Bind(2, suite).Bind(3, case_id).Bind(4, params_json);
  if (st.Step() != SQLITE_ROW) return DbError(w.db(), "store case " + case_id);
  return st.Int(0);
}

Status InsertSample(CaseWriter& w, int64_t case_result_id, const Sample& s) {
  Stmt& st = w.insert_sample();
  st.Bind(1, case_result_id).Bind(2, s.key).Bind(3, std::string(Word(s.outcome))).Bind(4, s.expected)
      .Bind(5, s.extracted).Bind(6, s.latency_s).Bind(7, s.tokens)
      .Bind(8, s.completion.substr(0, kMaxStoredCompletionBytes));
  return StepDone(w.db(), st, "store sample " + s.key);
}

// Status, duration, message; metrics and op rows replaced (a resumed case is finished
// again: its aggregates are replaced, its samples kept).
Status WriteCaseOutcome(CaseWriter& w, int64_t case_result_id, const CaseResult& o) {
  sqlite3* db = w.db();
  Stmt& up = w.finish();
  up.Bind(1, std::string(Word(o.status))).Bind(2, o.duration_s).Bind(3, o.message).Bind(4, case_result_id);
  if (auto s = StepDone(db, up, "finish case"); !s) return s;
  Stmt& clear_metrics = w.clear_metrics();
  clear_metrics.Bind(1, case_result_id);
  if (auto s = StepDone(db, clear_metrics, "clear metrics"); !s) return s;
  Stmt& clear_ops = w.clear_ops();
  clear_ops.Bind(1, case_result_id);
  if (auto s = StepDone(db, clear_ops, "clear op rows"); !s) return s;
  for (const auto& m : o.metrics) {
    Stmt& one = w.metric();
    one.Bind(1, case_result_id).Bind(2, m.name).Bind(3, m.value).Bind(4, m.n).Bind(5, m.low).Bind(6, m.high)
        .Bind(7, m.label);
    if (auto s = StepDone(db, one, "store metric " + m.name); !s) return s;
  }
  for (const auto& r : o.ops) {
    Stmt& op = w.op();
    op.Bind(1, case_result_id).Bind(2, r.op).Bind(3, r.input_shapes).Bind(4, r.calls).Bind(5, r.est_seconds);
    if (auto s = StepDone(db, op, "store op row " + r.op); !s) return s;
  }
  return OkStatus();
}

// A private folder in the temporary directory holding a migrated copy of the older database
// src is connected to (the backup API copies one snapshot, WAL included, without writing the
// original); the caller removes the folder.
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
                                  path.string(), Store::kSchemaVersion, dir.string(), why));
  };
  auto dst = OpenRaw(dir / "copy.db", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!dst) return fail(dst.error().message);
  sqlite3_backup* backup = sqlite3_backup_init(*dst, "main", src, "main");
  const int step = backup ? sqlite3_backup_step(backup, -1) : SQLITE_ERROR;
  const int finish = sqlite3_backup_finish(backup);
  const std::string copy_error = sqlite3_errmsg(*dst);
  sqlite3_close(*dst);
  if (step != SQLITE_DONE || finish != SQLITE_OK) return fail(copy_error);
  // Opened like any file for writing: its schema is checked again, then migrated.
  auto migrated = OpenChecked(dir / "copy.db", false, Store::kSchemaVersion);
  if (!migrated) return fail(migrated.error().message);
  sqlite3_close(*migrated);
  return dir;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::OpenWith(const std::filesystem::path& path, bool read_only) {
  auto db = OpenChecked(path, read_only, kSchemaVersion);
  if (!db) return db.error();
  std::unique_ptr<Store> store(new Store(*db, path));
  if (read_only && store->SchemaVersion() < kSchemaVersion) {
    // An older schema: the queries read a migrated copy, and the user's file is not written.
    auto dir = MigratedCopy(store->db_, path);
    if (!dir) return dir.error();
    store.reset();
    auto copy = OpenChecked(*dir / "copy.db", true, kSchemaVersion);
    if (!copy) {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
      return copy.error();
    }
    store.reset(new Store(*copy, path));
    store->copy_dir_ = *dir;
  }
  return store;
}

Result<std::unique_ptr<Store>> Store::Open(const std::filesystem::path& path) { return OpenWith(path, false); }
Result<std::unique_ptr<Store>> Store::OpenReadOnly(const std::filesystem::path& path) { return OpenWith(path, true); }

Status Store::CreateAtVersionForTest(const std::filesystem::path& path, int version) {
  auto db = OpenChecked(path, false, version);
  if (!db) return db.error();
  sqlite3_close(*db);
  return OkStatus();
}

// Statements prepared once per connection, by their SQL text (a constant of this file).
// A lease resets its statement when it goes out of scope, so a read that stops early never
// keeps a read transaction open.
struct Store::StatementCache {
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
  Lease Get(sqlite3* db, const char* sql) {
    auto& st = by_sql[sql];
    if (!st) st = std::make_unique<Stmt>(db, sql);
    st->Reset();
    return Lease(*st);
  }
  std::map<std::string, std::unique_ptr<Stmt>> by_sql;
};

Store::Store(sqlite3* db, std::filesystem::path path)
    : db_(db), path_(std::move(path)), statements_(std::make_unique<StatementCache>()) {}

Store::~Store() {
  statements_.reset();
  sqlite3_close(db_);
  std::error_code ec;
  if (!copy_dir_.empty()) std::filesystem::remove_all(copy_dir_, ec);
}

Store::ReadSnapshot::ReadSnapshot(Store& store) : db_(store.db_) {
  began_ = sqlite3_get_autocommit(db_) != 0 && sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr) == SQLITE_OK;
}

Store::ReadSnapshot::~ReadSnapshot() {
  if (began_ && sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

int Store::SchemaVersion() { return PragmaInt(db_, "PRAGMA user_version"); }

Result<int64_t> Store::UpsertCommit(const CommitInfo& c) {
  const std::string parents = fmt::format("{}", fmt::join(c.parents, " "));
  Stmt st(db_, R"sql(
INSERT INTO commits(sha, parents, first_parent_ordinal, author_time, subject) VALUES(?1, ?2, ?3, ?4, ?5)
ON CONFLICT(sha) DO UPDATE SET
  parents = CASE WHEN excluded.parents <> '' THEN excluded.parents ELSE commits.parents END,
  first_parent_ordinal = COALESCE(excluded.first_parent_ordinal, commits.first_parent_ordinal),
  author_time = COALESCE(excluded.author_time, commits.author_time),
  subject = CASE WHEN excluded.subject <> '' THEN excluded.subject ELSE commits.subject END
RETURNING id)sql");
  st.Bind(1, c.sha).Bind(2, parents).Bind(3, c.first_parent_ordinal).Bind(4, c.author_time).Bind(5, c.subject);
  if (st.Step() != SQLITE_ROW) return DbError(db_, "store commit");
  return st.Int(0);
}

Result<int64_t> Store::BeginRun(const NewRun& r) { return InsertRun(db_, r); }

Status Store::FinishRun(int64_t run_id, RunStatus status) { return UpdateRunStatus(db_, run_id, status); }

Result<std::vector<RunRow>> Store::InterruptedRuns(int64_t commit_id) {
  Stmt st(db_, (std::string("SELECT ") + kRunRowColumns + R"sql(
FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE r.commit_id = ?1 AND r.status = 'running' ORDER BY r.id DESC)sql").c_str());
  st.Bind(1, commit_id);
  std::vector<RunRow> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(RunRowOf(st));
  if (rc != SQLITE_DONE) return DbError(db_, "find interrupted runs");
  return out;
}

Status Store::ReopenRun(int64_t run_id) {
  Stmt st(db_, "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?1");
  st.Bind(1, run_id);
  return StepDone(db_, st, "reopen run");
}

Result<int64_t> Store::BeginCase(int64_t run_id, const std::string& suite, const std::string& case_id,
                                 const std::string& params_json) {
  CaseWriter w(db_);
  return InsertCase(w, run_id, suite, case_id, params_json);
}

Status Store::WriteSample(int64_t case_result_id, const Sample& s) {
  CaseWriter w(db_);
  return InsertSample(w, case_result_id, s);
}

Status Store::FinishCase(int64_t case_result_id, const CaseResult& o) {
  return InTransaction(db_, [&] {
    CaseWriter w(db_);
    return WriteCaseOutcome(w, case_result_id, o);
  });
}

Result<std::vector<std::optional<int64_t>>> Store::WriteIngestedRuns(const std::vector<IngestedRun>& runs) {
  std::vector<std::optional<int64_t>> ids;
  auto s = InTransaction(db_, [&]() -> Status {
    ids.clear();
    CaseWriter w(db_);
    for (const auto& in : runs) {
      const auto& file = in.file;
      Stmt seen(db_, "SELECT run_id FROM ingested_files WHERE content_hash = ?1 AND format = ?2 AND commit_id = ?3");
      seen.Bind(1, file.content_hash).Bind(2, file.format).Bind(3, in.run.commit_id);
      if (int rc = seen.Step(); rc == SQLITE_ROW) {
        ids.push_back(std::nullopt);
        continue;
      } else if (rc != SQLITE_DONE) {
        return DbError(db_, "look up ingested file");
      }
      auto id = InsertRun(db_, in.run);
      if (!id) return id.error();
      std::vector<CaseResult> results;
      for (const auto& c : in.cases) {
        auto case_row = InsertCase(w, *id, c.suite, c.result.case_id, "{}");
        if (!case_row) return case_row.error();
        for (const auto& sample : c.samples)
          if (auto e = InsertSample(w, *case_row, sample); !e) return e;
        if (auto e = WriteCaseOutcome(w, *case_row, c.result); !e) return e;
        results.push_back(c.result);
      }
      if (auto e = UpdateRunStatus(db_, *id, CountStatuses(results).Overall()); !e) return e;
      Stmt record(db_, R"sql(INSERT INTO ingested_files(content_hash, format, commit_id, path, run_id, at)
VALUES(?1, ?2, ?3, ?4, ?5, ?6))sql");
      record.Bind(1, file.content_hash).Bind(2, file.format).Bind(3, in.run.commit_id).Bind(4, file.path)
          .Bind(5, *id).Bind(6, NowUtc());
      if (auto e = StepDone(db_, record, "record ingested file " + file.path); !e) return e;
      ids.push_back(*id);
    }
    return OkStatus();
  });
  if (!s) return s.error();
  return ids;
}

Result<std::optional<AttachedSamples>> Store::AttachIngestedSamples(const IngestedRun& in) {
  std::optional<AttachedSamples> out;
  auto s = InTransaction(db_, [&]() -> Status {
    out.reset();
    Stmt seen(db_, "SELECT run_id FROM ingested_files WHERE content_hash = ?1 AND format = ?2 AND commit_id = ?3");
    seen.Bind(1, in.file.content_hash).Bind(2, in.file.format).Bind(3, in.run.commit_id);
    if (int rc = seen.Step(); rc == SQLITE_DONE) return OkStatus();
    else if (rc != SQLITE_ROW) return DbError(db_, "look up ingested file");
    AttachedSamples a;
    a.run_id = seen.Int(0);
    CaseWriter w(db_);
    for (const auto& c : in.cases) {
      if (c.samples.empty()) continue;
      Stmt row(db_, R"sql(SELECT id, (SELECT count(*) FROM samples s WHERE s.case_result_id = c.id)
FROM case_results c WHERE run_id = ?1 AND case_id = ?2)sql");
      row.Bind(1, a.run_id).Bind(2, c.result.case_id);
      if (int rc = row.Step(); rc == SQLITE_DONE) continue;  // a case the stored run does not hold
      else if (rc != SQLITE_ROW) return DbError(db_, "look up ingested case " + c.result.case_id);
      if (row.Int(1) > 0) continue;  // its samples are stored already
      const int64_t case_row = row.Int(0);
      for (const auto& sample : c.samples)
        if (auto e = InsertSample(w, case_row, sample); !e) return e;
      if (auto e = WriteCaseOutcome(w, case_row, c.result); !e) return e;
      ++a.cases;
      a.samples += static_cast<int64_t>(c.samples.size());
    }
    Stmt statuses(db_, "SELECT status FROM case_results WHERE run_id = ?1");
    statuses.Bind(1, a.run_id);
    StatusCounts counts;
    int rc;
    while ((rc = statuses.Step()) == SQLITE_ROW)
      if (auto st = ParseCaseStatus(statuses.Text(0))) counts.Add(*st);
    if (rc != SQLITE_DONE) return DbError(db_, "read ingested run's statuses");
    if (a.cases > 0)
      if (auto e = UpdateRunStatus(db_, a.run_id, counts.Overall()); !e) return e;
    out = a;
    return OkStatus();
  });
  if (!s) return s.error();
  return out;
}

Result<std::vector<Sample>> Store::Samples(int64_t case_result_id) {
  auto lease = statements_->Get(db_, R"sql(SELECT sample_key, outcome, expected, extracted, latency_s, tokens, completion
FROM samples WHERE case_result_id = ?1 ORDER BY sample_key)sql");
  Stmt& st = *lease;
  st.Bind(1, case_result_id);
  std::vector<Sample> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    // Outcomes are read as much as they are written: a word this harness does not know
    // (another tool's, a damaged row) would count as something it is not.
    const auto outcome = ParseSampleOutcome(st.Text(1));
    if (!outcome)
      return InfraError(fmt::format("{}: damaged database: samples row (case result {}, key '{}'): {}", path_.string(),
                                    case_result_id, TerminalText(Utf8Prefix(st.Text(0), 64)),
                                    UnknownOutcome(st.Text(1))));
    out.push_back(Sample{st.Text(0), *outcome, st.Text(2), st.Text(3), st.Real(4), st.Int(5), st.Text(6)});
  }
  if (rc != SQLITE_DONE) return DbError(db_, "read samples");
  return out;
}

Result<std::vector<Metric>> Store::Metrics(int64_t case_result_id) {
  auto lease =
      statements_->Get(db_, "SELECT name, value, n, low, high, label FROM metrics WHERE case_result_id = ?1 ORDER BY name");
  Stmt& st = *lease;
  st.Bind(1, case_result_id);
  std::vector<Metric> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW)
    out.push_back(Metric{st.Text(0), st.Real(1), st.Int(2), st.OptReal(3), st.OptReal(4), st.Text(5)});
  if (rc != SQLITE_DONE) return DbError(db_, "read metrics");
  return out;
}

Result<std::vector<OpRow>> Store::Ops(int64_t case_result_id) {
  auto lease = statements_->Get(
      db_, "SELECT op, input_shapes, calls, est_seconds FROM op_rows WHERE case_result_id = ?1 ORDER BY rowid");
  Stmt& st = *lease;
  st.Bind(1, case_result_id);
  std::vector<OpRow> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(OpRow{st.Text(0), st.Text(1), st.Int(2), st.Real(3)});
  if (rc != SQLITE_DONE) return DbError(db_, "read op rows");
  return out;
}

Result<std::vector<StoredCase>> Store::Cases(int64_t run_id) {
  Stmt st(db_, R"sql(SELECT id, run_id, case_id, status, message, COALESCE(duration_s, 0) FROM case_results
WHERE run_id = ?1 ORDER BY id)sql");
  st.Bind(1, run_id);
  std::vector<StoredCase> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    StoredCase c{st.Int(0), st.Int(1), {}};
    c.result.case_id = st.Text(2);
    c.result.status = StatusOf(st.Text(3));
    c.result.message = st.Text(4);
    c.result.duration_s = st.Real(5);
    out.push_back(std::move(c));
  }
  if (rc != SQLITE_DONE) return DbError(db_, "read cases");
  return out;
}

Result<RunRow> Store::Run(int64_t id) {
  Stmt st(db_, (std::string("SELECT ") + kRunRowColumns + R"sql(
FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE (?1 = 0 OR r.id = ?1) ORDER BY r.id DESC LIMIT 1)sql").c_str());
  st.Bind(1, id);
  int rc = st.Step();
  if (rc == SQLITE_DONE)
    return UsageError(id ? fmt::format("no run with id {} in the database", id) : "the database holds no run yet");
  if (rc != SQLITE_ROW) return DbError(db_, "read run");
  return RunRowOf(st);
}

Result<std::vector<RunRow>> Store::FinishedRuns() {
  Stmt st(db_, (std::string("SELECT ") + kRunRowColumns + R"sql(, c.first_parent_ordinal
FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE r.status <> 'running'
ORDER BY c.first_parent_ordinal IS NULL DESC, c.first_parent_ordinal, c.id, r.id)sql").c_str());
  std::vector<RunRow> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    out.push_back(RunRowOf(st));
    out.back().ordinal = st.OptInt(kRunRowColumnCount);
  }
  if (rc != SQLITE_DONE) return DbError(db_, "read runs");
  return out;
}

Result<std::map<int64_t, std::vector<Metric>>> Store::MetricsOfRun(int64_t run_id) {
  Stmt st(db_, R"sql(SELECT m.case_result_id, m.name, m.value, m.n, m.low, m.high, m.label
FROM case_results cr JOIN metrics m ON m.case_result_id = cr.id
WHERE cr.run_id = ?1 ORDER BY m.case_result_id, m.name)sql");
  st.Bind(1, run_id);
  std::map<int64_t, std::vector<Metric>> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW)
    out[st.Int(0)].push_back(Metric{st.Text(1), st.Real(2), st.Int(3), st.OptReal(4), st.OptReal(5), st.Text(6)});
  if (rc != SQLITE_DONE) return DbError(db_, "read metrics");
  return out;
}

Result<std::vector<HistoryRow>> Store::History(const HistoryQuery& q) {
  // The last N commits with a finished result of the case (or suite), then every finished
  // result there. A case's commits come from one pass over its rows (a correlated EXISTS
  // per commit rescanned them for every commit: quadratic in the history); a suite's from
  // one index probe per run (a suite of 10,000 cases has 10,000 rows per run to pass
  // over). Then the picked commits' runs, and their rows by (suite or case, run): the
  // CROSS JOINs keep SQLite from driving the query from the suite's rows of every run
  // (docs/store.md, "At fleet scale"). Commits without an ordinal (stored without git)
  // order by when they were first seen. The column is chosen from two constants, never
  // from input.
  const bool by_case = q.suite.empty();
  const char* const column = by_case ? "case_id" : "suite";
  const char* const hit = by_case ? R"sql(
  SELECT DISTINCT r.commit_id FROM case_results cr JOIN runs r ON r.id = cr.run_id
  WHERE cr.case_id = ?1 AND cr.status <> 'running' AND r.partial_questions IS NULL)sql"
                                  : R"sql(
  SELECT DISTINCT r.commit_id FROM runs r
  WHERE r.partial_questions IS NULL
    AND EXISTS (SELECT 1 FROM case_results cr WHERE cr.suite = ?1 AND cr.run_id = r.id AND cr.status <> 'running'))sql";
  const std::string sql = fmt::format(R"sql(
WITH hit AS ({1}
), picked AS (
  SELECT c.id AS commit_id FROM hit h JOIN commits c ON c.id = h.commit_id
  ORDER BY c.first_parent_ordinal IS NULL, c.first_parent_ordinal DESC, c.id DESC
  LIMIT ?3
)
SELECT c.sha, c.first_parent_ordinal, c.subject, cr.case_id, r.id, r.started_at, cr.status, m.value, m.n, m.low,
       m.high, COALESCE(m.label, '')
FROM picked p
CROSS JOIN commits c ON c.id = p.commit_id
CROSS JOIN runs r ON r.commit_id = c.id AND r.partial_questions IS NULL
CROSS JOIN case_results cr ON cr.run_id = r.id AND cr.{0} = ?1 AND cr.status <> 'running'
LEFT JOIN metrics m ON m.case_result_id = cr.id AND m.name = ?2
ORDER BY c.first_parent_ordinal IS NULL DESC, c.first_parent_ordinal, c.id, cr.case_id, cr.id)sql",
                                      column, hit);
  Stmt st(db_, sql.c_str());
  st.Bind(1, q.suite.empty() ? q.case_id : q.suite).Bind(2, q.metric).Bind(3, static_cast<int64_t>(q.last_n));
  std::vector<HistoryRow> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    HistoryRow h;
    h.sha = st.Text(0);
    h.ordinal = st.OptInt(1);
    h.subject = st.Text(2);
    h.case_id = st.Text(3);
    h.run_id = st.Int(4);
    h.started_at = st.Text(5);
    h.status = StatusOf(st.Text(6));
    h.value = st.OptReal(7);
    h.n = st.IsNull(8) ? 0 : st.Int(8);
    h.low = st.OptReal(9);
    h.high = st.OptReal(10);
    h.label = st.Text(11);
    out.push_back(std::move(h));
  }
  if (rc != SQLITE_DONE) return DbError(db_, "read history");
  return out;
}

namespace {

// Columns: id, run_id, case_id, status, message, duration.
Result<std::vector<StoredCase>> StoredCasesOf(sqlite3* db, Stmt& st, const std::string& what) {
  std::vector<StoredCase> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    StoredCase c{st.Int(0), st.Int(1), {}};
    c.result.case_id = st.Text(2);
    c.result.status = StatusOf(st.Text(3));
    c.result.message = st.Text(4);
    c.result.duration_s = st.Real(5);
    out.push_back(std::move(c));
  }
  if (rc != SQLITE_DONE) return DbError(db, what);
  return out;
}

}  // namespace

Result<std::vector<StoredCase>> Store::NewestCasesAt(const std::string& sha) {
  Stmt st(db_, R"sql(
SELECT cr.id, cr.run_id, cr.case_id, cr.status, cr.message, COALESCE(cr.duration_s, 0) FROM case_results cr
WHERE cr.id IN (SELECT MAX(x.id) FROM commits c JOIN runs r ON r.commit_id = c.id
                JOIN case_results x ON x.run_id = r.id
                WHERE c.sha = ?1 AND x.status <> 'running' AND r.partial_questions IS NULL GROUP BY x.case_id)
ORDER BY cr.case_id)sql");
  st.Bind(1, sha);
  return StoredCasesOf(db_, st, "read the newest cases of " + sha);
}

Result<std::vector<StoredCase>> Store::FinishedCases(int64_t run_id) {
  Stmt st(db_, R"sql(
SELECT id, run_id, case_id, status, message, COALESCE(duration_s, 0) FROM case_results
WHERE run_id = ?1 AND status <> 'running' ORDER BY case_id)sql");
  st.Bind(1, run_id);
  return StoredCasesOf(db_, st, "read the cases of a run");
}

namespace {

Result<std::optional<CaseRef>> OneCaseRef(sqlite3* db, Stmt& st) {
  int rc = st.Step();
  if (rc == SQLITE_ROW) return std::optional<CaseRef>(CaseRef{st.Int(0), st.Int(1), st.Text(2), StatusOf(st.Text(3))});
  if (rc != SQLITE_DONE) return DbError(db, "find case result");
  return std::optional<CaseRef>();
}

}  // namespace

Result<std::optional<CaseRef>> Store::NewestCaseAt(const CaseMatch& m, const std::string& sha) {
  Stmt st(db_, R"sql(
SELECT cr.id, r.id, c.sha, cr.status FROM case_results cr
JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
WHERE cr.case_id = ?1 AND c.sha = ?2 AND r.id <> ?3 AND r.config_hash = ?5 AND cr.params_json = ?6
  AND cr.status IN ('pass', 'fail') AND (?4 = 0 OR cr.status = 'pass') AND r.partial_questions IS NULL
ORDER BY cr.id DESC LIMIT 1)sql");
  st.Bind(1, m.case_id).Bind(2, sha).Bind(3, m.exclude_run).Bind(4, static_cast<int64_t>(m.passing_only))
      .Bind(5, m.config_hash).Bind(6, m.params_json);
  return OneCaseRef(db_, st);
}

Result<std::vector<double>> Store::MetricAt(const CaseMatch& m, const std::string& sha, const std::string& metric) {
  Stmt st(db_, R"sql(
SELECT mt.value FROM case_results cr
JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
JOIN metrics mt ON mt.case_result_id = cr.id AND mt.name = ?4
WHERE cr.case_id = ?1 AND c.sha = ?2 AND r.config_hash = ?5 AND cr.params_json = ?6 AND r.id <> ?3
  AND cr.status IN ('pass', 'fail') AND r.partial_questions IS NULL
ORDER BY cr.id)sql");
  st.Bind(1, m.case_id).Bind(2, sha).Bind(3, m.exclude_run).Bind(4, metric).Bind(5, m.config_hash)
      .Bind(6, m.params_json);
  std::vector<double> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(st.Real(0));
  if (rc != SQLITE_DONE) return DbError(db_, "read the reruns of a case");
  return out;
}

Result<std::optional<CaseRef>> Store::NewestCaseBelowOrdinal(const CaseMatch& m, int64_t ordinal) {
  Stmt st(db_, R"sql(
SELECT cr.id, r.id, c.sha, cr.status FROM case_results cr
JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
WHERE cr.case_id = ?1 AND c.first_parent_ordinal < ?2 AND r.id <> ?3 AND r.config_hash = ?5 AND cr.params_json = ?6
  AND cr.status IN ('pass', 'fail') AND (?4 = 0 OR cr.status = 'pass') AND r.partial_questions IS NULL
ORDER BY c.first_parent_ordinal DESC, cr.id DESC LIMIT 1)sql");
  st.Bind(1, m.case_id).Bind(2, ordinal).Bind(3, m.exclude_run).Bind(4, static_cast<int64_t>(m.passing_only))
      .Bind(5, m.config_hash).Bind(6, m.params_json);
  return OneCaseRef(db_, st);
}

Result<std::map<std::string, std::string>> Store::CaseParams(int64_t run_id) {
  Stmt st(db_, "SELECT case_id, params_json FROM case_results WHERE run_id = ?1");
  st.Bind(1, run_id);
  std::map<std::string, std::string> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out[st.Text(0)] = st.Text(1);
  if (rc != SQLITE_DONE) return DbError(db_, "read case parameters");
  return out;
}

Result<std::vector<CaseEvidence>> Store::CaseEvidenceAt(const std::string& case_id, const std::string& sha) {
  Stmt st(db_, R"sql(
SELECT cr.id, r.id, cr.status, m.name, m.value, m.n, r.partial_questions IS NOT NULL FROM case_results cr
JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
LEFT JOIN metrics m ON m.case_result_id = cr.id
WHERE cr.case_id = ?1 AND c.sha = ?2 AND cr.status IN ('pass', 'fail', 'error')
ORDER BY cr.id)sql");
  st.Bind(1, case_id).Bind(2, sha);
  std::vector<CaseEvidence> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    if (out.empty() || out.back().case_result_id != st.Int(0))
      out.push_back(CaseEvidence{st.Int(0), st.Int(1), StatusOf(st.Text(2)), {}, st.Int(6) != 0});
    if (!st.IsNull(3)) out.back().metrics.push_back(Metric{st.Text(3), st.Real(4), st.Int(5), {}, {}, ""});
  }
  if (rc != SQLITE_DONE) return DbError(db_, "read evidence of " + case_id);
  return out;
}

Result<std::vector<std::string>> Store::CaseIdsAt(const std::string& sha, const std::string& prefix) {
  Stmt st(db_, R"sql(
SELECT DISTINCT cr.case_id FROM case_results cr JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
WHERE c.sha = ?1 AND substr(cr.case_id, 1, length(?2)) = ?2 ORDER BY cr.case_id)sql");
  st.Bind(1, sha).Bind(2, prefix);
  std::vector<std::string> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(st.Text(0));
  if (rc != SQLITE_DONE) return DbError(db_, "read case ids");
  return out;
}

Result<std::vector<CommitInfo>> Store::MatchCommits(const std::string& sha_prefix) {
  // GLOB with a bound pattern that starts with the literal prefix uses the sha index; the
  // caller passes hex only, so the prefix holds no GLOB metacharacter.
  Stmt st(db_, R"sql(SELECT sha, first_parent_ordinal, subject FROM commits
WHERE sha GLOB ?1 ORDER BY sha LIMIT 20)sql");
  st.Bind(1, sha_prefix + "*");
  std::vector<CommitInfo> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(CommitInfo{st.Text(0), {}, st.OptInt(1), {}, st.Text(2)});
  if (rc != SQLITE_DONE) return DbError(db_, "find commit");
  return out;
}

Result<std::vector<CommitInfo>> Store::CommitsInOrdinalRange(int64_t after, int64_t up_to) {
  Stmt st(db_, R"sql(SELECT sha, first_parent_ordinal, subject FROM commits
WHERE first_parent_ordinal > ?1 AND first_parent_ordinal <= ?2 ORDER BY first_parent_ordinal, id)sql");
  st.Bind(1, after).Bind(2, up_to);
  std::vector<CommitInfo> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(CommitInfo{st.Text(0), {}, st.OptInt(1), {}, st.Text(2)});
  if (rc != SQLITE_DONE) return DbError(db_, "read commits");
  return out;
}

Result<int64_t> Store::NewestCaseResultId() {
  Stmt st(db_, "SELECT COALESCE(MAX(id), 0) FROM case_results");
  if (st.Step() != SQLITE_ROW) return DbError(db_, "read case results");
  return st.Int(0);
}

Result<int64_t> Store::BeginBisect(const BisectSessionRow& s) {
  Stmt st(db_, R"sql(INSERT INTO bisect_sessions(started_at, good, bad, target, args_json, status, uid)
VALUES(?1, ?2, ?3, ?4, ?5, 'running', lower(hex(randomblob(16)))) RETURNING id)sql");
  st.Bind(1, NowUtc()).Bind(2, s.good).Bind(3, s.bad).Bind(4, s.target).Bind(5, s.args_json);
  if (st.Step() != SQLITE_ROW) return DbError(db_, "store bisect session");
  return st.Int(0);
}

Result<int64_t> Store::AddRegression(const RegressionRow& g) {
  Stmt st(db_, R"sql(INSERT INTO regressions(uid, run_id, baseline_run_id, suite, kind, cases_json, confirmation,
confirm_json, session_id, at) VALUES(lower(hex(randomblob(16))), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id)sql");
  st.Bind(1, g.run_id).Bind(2, g.baseline_run_id).Bind(3, g.suite).Bind(4, g.kind).Bind(5, Json(g.cases).dump())
      .Bind(6, g.confirmation).Bind(7, g.confirm_json).Bind(8, g.session_id).Bind(9, NowUtc());
  if (st.Step() != SQLITE_ROW) return DbError(db_, "store a regression");
  return st.Int(0);
}

Status Store::SetRegressionSession(int64_t regression_id, int64_t session_id) {
  Stmt st(db_, "UPDATE regressions SET session_id = ?2 WHERE id = ?1");
  st.Bind(1, regression_id).Bind(2, session_id);
  if (st.Step() != SQLITE_DONE) return DbError(db_, "link a regression to its bisect session");
  return OkStatus();
}

Result<std::vector<RegressionRow>> Store::Regressions() {
  Stmt st(db_, R"sql(SELECT id, run_id, baseline_run_id, suite, kind, cases_json, confirmation, confirm_json,
session_id, at FROM regressions ORDER BY id)sql");
  std::vector<RegressionRow> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    RegressionRow g{st.Int(0), st.Int(1), st.Int(2), st.Text(3), st.Text(4), {}, st.Text(6), st.Text(7),
                    std::nullopt, st.Text(9)};
    const Json cases = ParseJsonOrDiscarded(st.Text(5));
    if (cases.is_array())
      for (const auto& c : cases)
        if (c.is_string()) g.cases.push_back(c.get<std::string>());
    if (!st.IsNull(8)) g.session_id = st.Int(8);
    out.push_back(std::move(g));
  }
  if (rc != SQLITE_DONE) return DbError(db_, "read the regressions");
  return out;
}

Status Store::AddBisectStep(int64_t session_id, const BisectStepRow& s) {
  Stmt st(db_, R"sql(INSERT INTO bisect_steps(session_id, step, sha, source, run_id, exit_code, evidence_json,
decision_json) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8))sql");
  st.Bind(1, session_id).Bind(2, s.step).Bind(3, s.sha).Bind(4, s.source).Bind(5, s.run_id).Bind(6, s.exit_code)
      .Bind(7, s.evidence_json).Bind(8, s.decision_json);
  return StepDone(db_, st, "store bisect step");
}

Status Store::FinishBisect(int64_t session_id, const BisectSessionRow& s) {
  Stmt st(db_, R"sql(UPDATE bisect_sessions SET finished_at = ?1, status = ?2, culprit = ?3, confidence = ?4,
runs = ?5, result_json = ?6 WHERE id = ?7)sql");
  st.Bind(1, NowUtc()).Bind(2, s.status).Bind(3, s.culprit).Bind(4, s.confidence).Bind(5, s.runs)
      .Bind(6, s.result_json).Bind(7, session_id);
  return StepDone(db_, st, "finish bisect session");
}

Result<std::vector<int64_t>> Store::BisectSessionIds() {
  Stmt st(db_, "SELECT id FROM bisect_sessions ORDER BY id");
  std::vector<int64_t> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(st.Int(0));
  if (rc != SQLITE_DONE) return DbError(db_, "read bisect sessions");
  return out;
}

Result<std::vector<int64_t>> Store::RunningBisectSessionIds() {
  Stmt st(db_, "SELECT id FROM bisect_sessions WHERE status = 'running' ORDER BY id");
  std::vector<int64_t> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(st.Int(0));
  if (rc != SQLITE_DONE) return DbError(db_, "read bisect sessions");
  return out;
}

Result<std::vector<int64_t>> Store::RunningRunIds() {
  Stmt st(db_, "SELECT id FROM runs WHERE status = 'running' ORDER BY id");
  std::vector<int64_t> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(st.Int(0));
  if (rc != SQLITE_DONE) return DbError(db_, "read running runs");
  return out;
}

namespace {

// Per run: whether it is in the prune window (see PruneWindow). ?1 keep_nightlies, ?2
// keep_samples_days, -1 when absent.
constexpr const char* kPruneWindowSql = R"sql(
WITH logical AS (
  SELECT id, config_hash, started_at, status,
         CASE WHEN nightly <> '' THEN 'n' || commit_id || '/' || nightly ELSE 'r' || id END AS nightly_key
  FROM runs),
nightlies AS (
  SELECT config_hash, nightly_key, MAX(started_at) AS newest, MAX(id) AS last_id FROM logical
  GROUP BY config_hash, nightly_key),
ranked AS (
  SELECT config_hash, nightly_key,
         ROW_NUMBER() OVER (PARTITION BY config_hash ORDER BY newest DESC, last_id DESC) AS age
  FROM nightlies)
SELECT l.id,
       l.status = 'running'
       OR (?1 >= 0 AND g.age <= ?1)
       OR (?2 >= 0 AND l.started_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-' || ?2 || ' days'))
FROM logical l JOIN ranked g ON g.config_hash = l.config_hash AND g.nightly_key = l.nightly_key
ORDER BY l.id)sql";

// The runs the baselines of one in-window run's results with samples come from (?1).
constexpr const char* kBaselineRunsSql = R"sql(
SELECT DISTINCT (
  SELECT b.run_id FROM case_results b JOIN runs br ON br.id = b.run_id JOIN commits bc ON bc.id = br.commit_id
  WHERE b.case_id = k.case_id AND b.params_json = k.params_json AND br.config_hash = kr.config_hash
    AND bc.first_parent_ordinal < kc.first_parent_ordinal AND br.id <> k.run_id AND b.status = 'pass'
    AND br.partial_questions IS NULL
  ORDER BY bc.first_parent_ordinal DESC, b.id DESC LIMIT 1)
FROM case_results k JOIN runs kr ON kr.id = k.run_id JOIN commits kc ON kc.id = kr.commit_id
WHERE k.run_id = ?1 AND kc.first_parent_ordinal IS NOT NULL AND kr.partial_questions IS NULL
  AND EXISTS (SELECT 1 FROM samples s WHERE s.case_result_id = k.id))sql";

// The stored runs split by whether they are in the prune window.
struct RunsByWindow {
  std::vector<int64_t> in_window, outside;
};

Result<RunsByWindow> RunsByPruneWindow(sqlite3* db, const PruneWindow& window) {
  RunsByWindow runs;
  Stmt st(db, kPruneWindowSql);
  st.Bind(1, window.keep_nightlies.value_or(-1)).Bind(2, window.keep_samples_days.value_or(-1));
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) (st.Int(1) ? runs.in_window : runs.outside).push_back(st.Int(0));
  if (rc != SQLITE_DONE) return DbError(db, "find the runs in the prune window");
  return runs;
}

// run id -> why its samples are kept though it is outside the window: the bisect sessions,
// regressions and golden changes that cite it, and the in-window runs it is the baseline of.
using KeptFor = std::map<int64_t, std::vector<std::string>>;

Result<KeptFor> ReasonsToKeep(sqlite3* db, const std::vector<int64_t>& in_window) {
  KeptFor kept_for;
  {
    Stmt st(db, "SELECT DISTINCT session_id, run_id FROM bisect_steps WHERE run_id IS NOT NULL ORDER BY 1, 2");
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) kept_for[st.Int(1)].push_back(fmt::format("bisect session {}", st.Int(0)));
    if (rc != SQLITE_DONE) return DbError(db, "read bisect steps");
  }
  {  // a regression bisect --auto found: its nightly and the previous one are its evidence
    Stmt st(db, "SELECT id, run_id FROM regressions UNION ALL SELECT id, baseline_run_id FROM regressions ORDER BY 1, 2");
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) kept_for[st.Int(1)].push_back(fmt::format("regression {}", st.Int(0)));
    if (rc != SQLITE_DONE) return DbError(db, "read regressions");
  }
  for (const auto& [table, word] : {std::pair<const char*, const char*>{"golden_changes", "golden change"},
                                    {"golden_intents", "golden change under way"}}) {
    Stmt st(db, fmt::format("SELECT g.id, cr.run_id FROM {} g JOIN case_results cr ON cr.id = g.from_case_result_id "
                            "ORDER BY g.id",
                            table)
                    .c_str());
    int rc;
    while ((rc = st.Step()) == SQLITE_ROW) kept_for[st.Int(1)].push_back(fmt::format("{} {}", word, st.Int(0)));
    if (rc != SQLITE_DONE) return DbError(db, fmt::format("read {}", table));
  }
  Stmt baselines(db, kBaselineRunsSql);
  for (int64_t run : in_window) {
    baselines.Reset();
    baselines.Bind(1, run);
    int rc;
    while ((rc = baselines.Step()) == SQLITE_ROW)
      if (!baselines.IsNull(0)) kept_for[baselines.Int(0)].push_back(fmt::format("baseline of run {}", run));
    if (rc != SQLITE_DONE) return DbError(db, "find the baselines of the runs in the prune window");
  }
  return kept_for;
}

// The runs outside the window that hold samples, into plan.outside (oldest first); unless
// dry_run, the samples of those nothing keeps are deleted.
Status PlanOutside(sqlite3* db, const std::vector<int64_t>& outside, const KeptFor& kept_for, bool dry_run,
                   PrunePlan& plan) {
  Stmt held(db, R"sql(
SELECT c.sha, r.started_at, r.nightly, COUNT(s.case_result_id), COALESCE(SUM(length(CAST(s.completion AS BLOB))), 0)
FROM runs r JOIN commits c ON c.id = r.commit_id JOIN case_results cr ON cr.run_id = r.id
JOIN samples s ON s.case_result_id = cr.id WHERE r.id = ?1 GROUP BY r.id)sql");
  Stmt drop(db, "DELETE FROM samples WHERE case_result_id IN (SELECT id FROM case_results WHERE run_id = ?1)");
  for (int64_t run : outside) {
    held.Reset();
    held.Bind(1, run);
    const int rc = held.Step();
    if (rc == SQLITE_DONE) continue;  // no samples: nothing to drop
    if (rc != SQLITE_ROW) return DbError(db, "count the samples of a run");
    PruneCandidate c{run, held.Text(0), held.Text(1), held.Text(2), held.Int(3), held.Int(4), {}};
    if (auto it = kept_for.find(run); it != kept_for.end()) c.kept_for = it->second;
    if (!dry_run && c.kept_for.empty()) {
      drop.Reset();
      drop.Bind(1, run);
      if (auto s = StepDone(db, drop, "delete the samples of a run"); !s) return s;
    }
    plan.outside.push_back(std::move(c));
  }
  std::sort(plan.outside.begin(), plan.outside.end(), [](const PruneCandidate& a, const PruneCandidate& b) {
    return std::tie(a.started_at, a.run_id) < std::tie(b.started_at, b.run_id);
  });
  return OkStatus();
}

}  // namespace

Result<PrunePlan> Store::PruneSamples(const PruneWindow& window, bool dry_run) {
  PrunePlan plan;
  auto plan_and_delete = [&]() -> Status {
    auto runs = RunsByPruneWindow(db_, window);
    if (!runs) return runs.error();
    plan.runs = static_cast<int64_t>(runs->in_window.size() + runs->outside.size());
    plan.in_window = static_cast<int64_t>(runs->in_window.size());
    auto kept_for = ReasonsToKeep(db_, runs->in_window);
    if (!kept_for) return kept_for.error();
    return PlanOutside(db_, runs->outside, *kept_for, dry_run, plan);
  };
  if (dry_run) {
    // A read transaction: one snapshot, nothing written.
    if (auto s = Exec(db_, "BEGIN", "begin transaction"); !s) return s.error();
    Status s = plan_and_delete();
    static_cast<void>(Exec(db_, "ROLLBACK", "rollback"));
    if (!s) return s.error();
    return plan;
  }
  if (auto s = InTransaction(db_, plan_and_delete); !s) return s.error();
  return plan;
}

Status Store::Compact() {
  if (auto s = Exec(db_, "VACUUM", "vacuum"); !s) return s;
  Stmt st(db_, "PRAGMA wal_checkpoint(TRUNCATE)");
  if (st.Step() != SQLITE_ROW) return DbError(db_, "checkpoint after vacuum");
  return OkStatus();
}

Result<BisectSessionRow> Store::BisectSession(int64_t session_id) {
  Stmt st(db_, R"sql(SELECT id, started_at, COALESCE(finished_at, ''), good, bad, target, args_json, status,
COALESCE(culprit, ''), COALESCE(confidence, 0), runs, result_json FROM bisect_sessions WHERE id = ?1)sql");
  st.Bind(1, session_id);
  int rc = st.Step();
  if (rc == SQLITE_DONE) return UsageError(fmt::format("no bisect session {} in the database", session_id));
  if (rc != SQLITE_ROW) return DbError(db_, "read bisect session");
  BisectSessionRow s{st.Int(0), st.Text(1), st.Text(2), st.Text(3), st.Text(4), st.Text(5), st.Text(6),
                     st.Text(7), st.Text(8), st.Real(9), st.Int(10), st.Text(11), {}};
  Stmt steps(db_, R"sql(SELECT step, sha, source, run_id, exit_code, evidence_json, decision_json FROM bisect_steps
WHERE session_id = ?1 ORDER BY step)sql");
  steps.Bind(1, session_id);
  while ((rc = steps.Step()) == SQLITE_ROW)
    s.steps.push_back(BisectStepRow{steps.Int(0), steps.Text(1), steps.Text(2), steps.OptInt(3), steps.OptInt(4),
                                    steps.Text(5), steps.Text(6)});
  if (rc != SQLITE_DONE) return DbError(db_, "read bisect steps");
  return s;
}

Result<std::pair<int64_t, int64_t>> Store::RunsAt(const std::string& sha, const std::string& config_hash) {
  Stmt st(db_, R"sql(
SELECT COALESCE(SUM(r.config_hash = ?2), 0), COUNT(*) FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE c.sha = ?1 AND r.status <> 'running' AND r.partial_questions IS NULL)sql");
  st.Bind(1, sha).Bind(2, config_hash);
  if (st.Step() != SQLITE_ROW) return DbError(db_, "count runs");
  return std::make_pair(st.Int(0), st.Int(1));
}

Result<bool> Store::HasCaseAt(const std::string& case_id, const std::string& sha) {
  Stmt st(db_, R"sql(
SELECT 1 FROM case_results cr JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
WHERE cr.case_id = ?1 AND c.sha = ?2 AND cr.status <> 'running' LIMIT 1)sql");
  st.Bind(1, case_id).Bind(2, sha);
  int rc = st.Step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return DbError(db_, "find case result");
  return rc == SQLITE_ROW;
}

Result<std::vector<std::string>> Store::KnownCases() {
  Stmt st(db_, "SELECT DISTINCT case_id FROM case_results ORDER BY case_id");
  std::vector<std::string> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(st.Text(0));
  if (rc != SQLITE_DONE) return DbError(db_, "read case ids");
  return out;
}

Result<std::optional<CaseRef>> Store::LatestCaseResult(const std::string& case_id) {
  Stmt st(db_, R"sql(
SELECT cr.id, r.id, c.sha, cr.status FROM case_results cr
JOIN runs r ON r.id = cr.run_id JOIN commits c ON c.id = r.commit_id
WHERE cr.case_id = ?1 AND cr.status <> 'running'
ORDER BY r.started_at DESC, cr.id DESC LIMIT 1)sql");
  st.Bind(1, case_id);
  return OneCaseRef(db_, st);
}

Result<int64_t> Store::BeginGoldenChange(const GoldenChange& c) {
  Stmt st(db_, R"sql(INSERT INTO golden_intents(case_id, path, old_hash, new_hash, reason, sha, user, at,
from_case_result_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id)sql");
  st.Bind(1, c.case_id).Bind(2, c.path).Bind(3, c.old_hash).Bind(4, c.new_hash).Bind(5, c.reason).Bind(6, c.sha)
      .Bind(7, c.user).Bind(8, NowUtc()).Bind(9, c.from_case_result_id);
  if (st.Step() != SQLITE_ROW) return DbError(db_, "record the golden change's intent");
  const int64_t id = st.Int(0);
  // Run to its end: the statement's own transaction commits here, before the file is touched.
  if (auto s = StepDone(db_, st, "record the golden change's intent"); !s) return s.error();
  return id;
}

Status Store::FinishGoldenChange(int64_t intent_id) {
  return InTransaction(db_, [&]() -> Status {
    Stmt move(db_, R"sql(INSERT INTO golden_changes(case_id, path, old_hash, new_hash, reason, sha, user, at,
from_case_result_id)
SELECT case_id, path, old_hash, new_hash, reason, sha, user, at, from_case_result_id FROM golden_intents WHERE id = ?1)sql");
    move.Bind(1, intent_id);
    if (auto s = StepDone(db_, move, "record golden change"); !s) return s;
    if (sqlite3_changes(db_) != 1) return InfraError(fmt::format("database: no pending golden change {}", intent_id));
    Stmt done(db_, "DELETE FROM golden_intents WHERE id = ?1");
    done.Bind(1, intent_id);
    return StepDone(db_, done, "record golden change");
  });
}

Status Store::AbandonGoldenChange(int64_t intent_id) {
  Stmt st(db_, "DELETE FROM golden_intents WHERE id = ?1");
  st.Bind(1, intent_id);
  return StepDone(db_, st, "drop a golden change's intent");
}

namespace {

Result<std::vector<GoldenChange>> ReadGoldenChanges(sqlite3* db, Stmt& st, const char* what) {
  std::vector<GoldenChange> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW)
    out.push_back(GoldenChange{st.Int(0), st.Text(1), st.Text(2), st.Text(3), st.Text(4), st.Text(5), st.Text(6),
                               st.Text(7), st.Text(8), st.OptInt(9)});
  if (rc != SQLITE_DONE) return DbError(db, what);
  return out;
}

}  // namespace

Result<std::vector<GoldenChange>> Store::PendingGoldenChanges() {
  Stmt st(db_, R"sql(SELECT id, case_id, path, old_hash, new_hash, reason, sha, user, at, from_case_result_id
FROM golden_intents ORDER BY id)sql");
  return ReadGoldenChanges(db_, st, "read pending golden changes");
}

Result<std::vector<GoldenChange>> Store::GoldenChanges(const std::string& case_id) {
  Stmt st(db_, R"sql(SELECT id, case_id, path, old_hash, new_hash, reason, sha, user, at, from_case_result_id
FROM golden_changes WHERE ?1 = '' OR case_id = ?1 ORDER BY id)sql");
  st.Bind(1, case_id);
  return ReadGoldenChanges(db_, st, "read golden changes");
}

bool IsNightlyRun(const RunRow& run) {
  if (run.partial_questions) return false;
  const Json context = ParseJsonOrDiscarded(run.context_json);
  return !context.is_object() || (!context.contains("bisect") && !context.contains("rerun_of"));
}

Result<std::vector<RunRow>> Store::LogicalRun(int64_t run_id) {
  Stmt st(db_, (std::string("SELECT ") + kRunRowColumns + R"sql(
FROM runs me JOIN runs r ON r.id = me.id OR (me.nightly <> '' AND r.nightly = me.nightly
                                            AND r.commit_id = me.commit_id AND r.config_hash = me.config_hash)
JOIN commits c ON c.id = r.commit_id
WHERE me.id = ?1
ORDER BY CAST(substr(r.shard, 1, instr(r.shard, '/') - 1) AS INTEGER), r.id)sql").c_str());
  st.Bind(1, run_id);
  std::vector<RunRow> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(RunRowOf(st));
  if (rc != SQLITE_DONE) return DbError(db_, "read the shards of a run");
  if (out.empty()) return UsageError(fmt::format("no run with id {} in the database", run_id));
  return out;
}

Result<std::vector<RunRow>> Store::NightlyRuns(const std::string& nightly) {
  Stmt st(db_, (std::string("SELECT ") + kRunRowColumns + R"sql(
FROM runs r JOIN commits c ON c.id = r.commit_id
WHERE r.nightly = ?1 AND r.nightly <> ''
ORDER BY c.sha, r.config_hash, CAST(substr(r.shard, 1, instr(r.shard, '/') - 1) AS INTEGER), r.id)sql").c_str());
  st.Bind(1, nightly);
  std::vector<RunRow> out;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(RunRowOf(st));
  if (rc != SQLITE_DONE) return DbError(db_, "read the runs of a nightly");
  return out;
}

namespace {

// The statements of one merge, in order: each copies what the output lacks from the
// attached input `src`. temp.merge_runs/merge_cases/merge_sessions map input row ids to
// output ones; `fresh` marks what this merge added (only their children are copied).
struct MergeStep {
  const char* sql;
  int64_t MergeCounts::*count;  // what its changes count as, or nullptr
};

const MergeStep kMergeSteps[] = {
    {R"sql(INSERT INTO main.commits(sha, parents, first_parent_ordinal, author_time, subject)
SELECT sha, parents, first_parent_ordinal, author_time, subject FROM src.commits WHERE true
ON CONFLICT(sha) DO UPDATE SET
  parents = CASE WHEN excluded.parents <> '' THEN excluded.parents ELSE commits.parents END,
  first_parent_ordinal = COALESCE(excluded.first_parent_ordinal, commits.first_parent_ordinal),
  author_time = COALESCE(excluded.author_time, commits.author_time),
  subject = CASE WHEN excluded.subject <> '' THEN excluded.subject ELSE commits.subject END)sql",
     nullptr},
    {"CREATE TEMP TABLE merge_runs(src INTEGER PRIMARY KEY, uid TEXT NOT NULL, dst INTEGER, fresh INTEGER NOT NULL)",
     nullptr},
    // A run is fresh unless the output holds it (its uid) or holds the file it was ingested
    // from (same bytes, format and commit), as when two shards ingested one file.
    {R"sql(CREATE TEMP VIEW merge_ingested_twin AS
SELECT f.run_id AS src_run, d.run_id AS dst_run
FROM src.ingested_files f JOIN src.commits sc ON sc.id = f.commit_id JOIN main.commits mc ON mc.sha = sc.sha
JOIN main.ingested_files d ON d.content_hash = f.content_hash AND d.format = f.format AND d.commit_id = mc.id)sql",
     nullptr},
    {R"sql(INSERT INTO temp.merge_runs(src, uid, fresh)
SELECT r.id, r.uid, NOT EXISTS (SELECT 1 FROM main.runs m WHERE m.uid = r.uid)
                    AND NOT EXISTS (SELECT 1 FROM temp.merge_ingested_twin w WHERE w.src_run = r.id)
FROM src.runs r)sql",
     nullptr},
    {R"sql(INSERT INTO main.runs(commit_id, stack, config_hash, config_json, host, harness_version, started_at,
                      finished_at, status, shard, nightly, uid, context_json, partial_questions)
SELECT c.id, r.stack, r.config_hash, r.config_json, r.host, r.harness_version, r.started_at, r.finished_at, r.status,
       r.shard, r.nightly, r.uid, r.context_json, r.partial_questions
FROM src.runs r JOIN temp.merge_runs t ON t.src = r.id AND t.fresh
JOIN src.commits sc ON sc.id = r.commit_id JOIN main.commits c ON c.sha = sc.sha ORDER BY r.id)sql",
     &MergeCounts::runs_added},
    {R"sql(UPDATE temp.merge_runs SET dst = COALESCE(
  (SELECT m.id FROM main.runs m WHERE m.uid = merge_runs.uid),
  (SELECT w.dst_run FROM temp.merge_ingested_twin w WHERE w.src_run = merge_runs.src)))sql",
     nullptr},
    {R"sql(INSERT INTO main.ingested_files(content_hash, format, commit_id, path, run_id, at)
SELECT f.content_hash, f.format, mc.id, f.path, t.dst, f.at
FROM src.ingested_files f JOIN temp.merge_runs t ON t.src = f.run_id AND t.fresh
JOIN src.commits sc ON sc.id = f.commit_id JOIN main.commits mc ON mc.sha = sc.sha WHERE true ORDER BY f.id
ON CONFLICT DO NOTHING)sql",
     &MergeCounts::ingested_files},
    {R"sql(INSERT INTO main.case_results(run_id, suite, case_id, params_json, status, duration_s, message)
SELECT t.dst, cr.suite, cr.case_id, cr.params_json, cr.status, cr.duration_s, cr.message
FROM src.case_results cr JOIN temp.merge_runs t ON t.src = cr.run_id AND t.fresh ORDER BY cr.id)sql",
     &MergeCounts::cases},
    {"CREATE TEMP TABLE merge_cases(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL, fresh INTEGER NOT NULL)", nullptr},
    {R"sql(INSERT INTO temp.merge_cases(src, dst, fresh)
SELECT cr.id, d.id, t.fresh FROM src.case_results cr JOIN temp.merge_runs t ON t.src = cr.run_id
JOIN main.case_results d ON d.run_id = t.dst AND d.case_id = cr.case_id)sql",
     nullptr},
    {R"sql(INSERT INTO main.metrics(case_result_id, name, value, n, low, high, label)
SELECT t.dst, x.name, x.value, x.n, x.low, x.high, x.label
FROM src.metrics x JOIN temp.merge_cases t ON t.src = x.case_result_id AND t.fresh)sql",
     &MergeCounts::metrics},
    {R"sql(INSERT INTO main.samples(case_result_id, sample_key, outcome, expected, extracted, latency_s, tokens, completion)
SELECT t.dst, x.sample_key, x.outcome, x.expected, x.extracted, x.latency_s, x.tokens, x.completion
FROM src.samples x JOIN temp.merge_cases t ON t.src = x.case_result_id AND t.fresh)sql",
     &MergeCounts::samples},
    {R"sql(INSERT INTO main.op_rows(case_result_id, op, input_shapes, calls, est_seconds)
SELECT t.dst, x.op, x.input_shapes, x.calls, x.est_seconds
FROM src.op_rows x JOIN temp.merge_cases t ON t.src = x.case_result_id AND t.fresh ORDER BY x.rowid)sql",
     &MergeCounts::op_rows},
    {R"sql(INSERT INTO main.golden_changes(case_id, path, old_hash, new_hash, reason, sha, user, at, from_case_result_id)
SELECT g.case_id, g.path, g.old_hash, g.new_hash, g.reason, g.sha, g.user, g.at, t.dst
FROM src.golden_changes g LEFT JOIN temp.merge_cases t ON t.src = g.from_case_result_id
WHERE NOT EXISTS (SELECT 1 FROM main.golden_changes d WHERE d.case_id = g.case_id AND d.path = g.path
                  AND d.old_hash = g.old_hash AND d.new_hash = g.new_hash AND d.reason = g.reason AND d.sha = g.sha
                  AND d.user = g.user AND d.at = g.at)
ORDER BY g.id)sql",
     &MergeCounts::golden_changes},
    {"CREATE TEMP TABLE merge_sessions(src INTEGER PRIMARY KEY, uid TEXT NOT NULL, dst INTEGER, fresh INTEGER NOT NULL)",
     nullptr},
    {R"sql(INSERT INTO temp.merge_sessions(src, uid, fresh)
SELECT s.id, s.uid, NOT EXISTS (SELECT 1 FROM main.bisect_sessions m WHERE m.uid = s.uid) FROM src.bisect_sessions s)sql",
     nullptr},
    {R"sql(INSERT INTO main.bisect_sessions(started_at, finished_at, good, bad, target, args_json, status, culprit,
                                 confidence, runs, result_json, uid)
SELECT s.started_at, s.finished_at, s.good, s.bad, s.target, s.args_json, s.status, s.culprit, s.confidence, s.runs,
       s.result_json, s.uid
FROM src.bisect_sessions s JOIN temp.merge_sessions t ON t.src = s.id AND t.fresh ORDER BY s.id)sql",
     &MergeCounts::bisect_sessions},
    {"UPDATE temp.merge_sessions SET dst = (SELECT m.id FROM main.bisect_sessions m WHERE m.uid = merge_sessions.uid)",
     nullptr},
    {R"sql(INSERT INTO main.bisect_steps(session_id, step, sha, source, run_id, exit_code, evidence_json, decision_json)
SELECT t.dst, x.step, x.sha, x.source, (SELECT r.dst FROM temp.merge_runs r WHERE r.src = x.run_id), x.exit_code,
       x.evidence_json, x.decision_json
FROM src.bisect_steps x JOIN temp.merge_sessions t ON t.src = x.session_id AND t.fresh)sql",
     &MergeCounts::bisect_steps},
    {R"sql(INSERT INTO main.regressions(uid, run_id, baseline_run_id, suite, kind, cases_json, confirmation,
                             confirm_json, session_id, at)
SELECT g.uid, (SELECT r.dst FROM temp.merge_runs r WHERE r.src = g.run_id),
       (SELECT r.dst FROM temp.merge_runs r WHERE r.src = g.baseline_run_id), g.suite, g.kind, g.cases_json,
       g.confirmation, g.confirm_json, (SELECT t.dst FROM temp.merge_sessions t WHERE t.src = g.session_id), g.at
FROM src.regressions g WHERE NOT EXISTS (SELECT 1 FROM main.regressions m WHERE m.uid = g.uid) ORDER BY g.id)sql",
     &MergeCounts::regressions},
};

const char* const kMergeCleanup = "DROP VIEW IF EXISTS temp.merge_ingested_twin; DROP TABLE IF EXISTS temp.merge_runs; "
                                  "DROP TABLE IF EXISTS temp.merge_cases; DROP TABLE IF EXISTS temp.merge_sessions;";

}  // namespace

namespace {

// A file: URI that opens path read-only (every byte but unreserved ones and '/' escaped).
std::string ReadOnlyUri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') uri += static_cast<char>(c);
    else uri += fmt::format("%{:02X}", c);
  }
  return uri + "?mode=ro";
}

}  // namespace

Result<std::unique_ptr<Store>> Store::OpenMergeInput(const std::filesystem::path& input) {
  // Opened as a query command opens a file (never created; a newer schema, a foreign file or
  // foreign schema objects refused; an older schema read through a migrated copy), then its
  // pages and rows are checked.
  auto in = OpenReadOnly(input);
  if (!in) return in.error();
  sqlite3* db = (*in)->db_;
  Stmt check(db, "PRAGMA quick_check(1)");
  const int rc = check.Step();
  if (rc != SQLITE_ROW || check.Text(0) != "ok")
    return InfraError(fmt::format("{}: corrupt database: {}", input.string(),
                                  rc == SQLITE_ROW ? check.Text(0) : std::string(sqlite3_errmsg(db))));
  // A row whose parent is gone would be copied with a NULL parent id; name it instead.
  auto orphan = OrphanRow(db);
  if (!orphan) return orphan.error();
  if (!orphan->empty()) return InfraError(fmt::format("{}: damaged database: {}; nothing merged", input.string(), *orphan));
  Stmt no_uid(db, R"sql(
SELECT 'runs', id FROM runs WHERE uid IS NULL UNION ALL SELECT 'bisect_sessions', id FROM bisect_sessions WHERE uid IS NULL
LIMIT 1)sql");
  const int u = no_uid.Step();
  if (u == SQLITE_ROW)
    return InfraError(fmt::format("{}: damaged database: table {} row {} has no uid; nothing merged", input.string(),
                                  no_uid.Text(0), no_uid.Int(1)));
  if (u != SQLITE_DONE) return DbError(db, "check the rows of " + input.string());
  // A case id names a golden expectation file: an input could be crafted to reach outside
  // the golden folder with one, so every id is checked before anything is copied.
  Stmt ids(db, "SELECT DISTINCT 'case_results', case_id FROM case_results "
               "UNION SELECT DISTINCT 'golden_changes', case_id FROM golden_changes");
  int step;
  while ((step = ids.Step()) == SQLITE_ROW)
    if (auto problem = CaseIdProblem(ids.Text(1)))
      return UsageError(fmt::format("{}: {}: case id '{}' {}; refusing to merge it", input.string(), ids.Text(0),
                                    PrintableCaseId(ids.Text(1)), *problem));
  if (step != SQLITE_DONE) return DbError(db, "read the case ids of " + input.string());
  // Nor is a sample outcome word copied that no reader of the merged database would accept.
  Stmt outcomes(db, "SELECT outcome, min(rowid) FROM samples GROUP BY outcome");
  while ((step = outcomes.Step()) == SQLITE_ROW)
    if (!ParseSampleOutcome(outcomes.Text(0)))
      return InfraError(fmt::format("{}: damaged database: table samples row {}: {}; nothing merged", input.string(),
                                    outcomes.Int(1), UnknownOutcome(outcomes.Text(0))));
  if (step != SQLITE_DONE) return DbError(db, "read the sample outcomes of " + input.string());
  return in;
}

Status Store::CheckMergeInput(const std::filesystem::path& input) {
  auto in = OpenMergeInput(input);
  if (!in) return in.error();
  return OkStatus();
}

Result<MergeCounts> Store::MergeFrom(const std::filesystem::path& input) {
  const std::string name = input.string();
  std::error_code ec;
  if (std::filesystem::equivalent(input, path_, ec))
    return UsageError(fmt::format("{}: is the output database itself", name));
  auto in = OpenMergeInput(input);
  if (!in) return in.error();
  // What was checked is what is copied: the input itself, or its migrated copy (kept until
  // the input's store closes), attached read-only. One input at a time: SQLite attaches at
  // most 10, and any number may be merged.
  Stmt attach(db_, "ATTACH DATABASE ?1 AS src");
  attach.Bind(1, ReadOnlyUri(sqlite3_db_filename((*in)->db_, "main")));
  if (attach.Step() != SQLITE_DONE) return DbError(db_, "attach " + name);
  MergeCounts counts;
  Status copied = InTransaction(db_, [&]() -> Status {
    for (const auto& step : kMergeSteps) {
      Stmt st(db_, step.sql);
      if (st.Step() != SQLITE_DONE) return DbError(db_, "merge " + name);
      if (step.count) counts.*step.count += sqlite3_changes(db_);
    }
    Stmt present(db_, "SELECT COUNT(*) FROM temp.merge_runs WHERE NOT fresh");
    if (present.Step() != SQLITE_ROW) return DbError(db_, "merge " + name);
    counts.runs_present = present.Int(0);
    Stmt nightlies(db_, R"sql(SELECT DISTINCT r.nightly FROM temp.merge_runs t JOIN main.runs r ON r.id = t.dst
WHERE t.fresh AND r.nightly <> '' ORDER BY r.nightly)sql");
    int rc;
    while ((rc = nightlies.Step()) == SQLITE_ROW) counts.nightlies.insert(nightlies.Text(0));
    if (rc != SQLITE_DONE) return DbError(db_, "merge " + name);
    Stmt fk(db_, "PRAGMA main.foreign_key_check");
    if (fk.Step() != SQLITE_DONE) return InfraError(fmt::format("merge {}: a copied row lost its parent", name));
    return OkStatus();
  });
  // The maps go after the transaction (a DROP would wait for this transaction's statements).
  static_cast<void>(Exec(db_, kMergeCleanup, "merge cleanup"));
  Stmt detach(db_, "DETACH DATABASE src");
  const bool detached = detach.Step() == SQLITE_DONE;
  if (!copied) return copied.error();
  if (!detached) return DbError(db_, "detach " + name);
  return counts;
}

}  // namespace harness
