// The results store: one SQLite file (docs/store.md). A store owns its connection (opened
// checked, migrated or read through a migrated copy: schema.h) and hands out the doors its
// consumers use, each a class of its own with its own row types: RunWriter (run_writer.h:
// `harness run`, ingest), ResultReader (result_reader.h: compare, history, report,
// baselines, bisect's evidence), BisectRecord (bisect_record.h: bisect sessions and
// regressions) and GoldenLog (golden_log.h: golden accept). A consumer takes the narrowest
// door it needs. A read-only open is a ReadOnlyStore: it hands out only the reading doors
// (ResultReader, BisectRecordReader, GoldenLogReader), so a write through it does not
// compile. Merge (store_merge.cc) and prune (store_prune.cc) are the writable store's own.
// All SQL of the project lives in the store's files: the doors' .cc files, the migrations
// (migrations/NNNN_what.sql, run by schema.cc), store_merge.cc, store_prune.cc and the SQLite
// helpers (sqlite_db.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/store/bisect_record.h"
#include "harness/store/golden_log.h"
#include "harness/store/result_reader.h"
#include "harness/store/run_writer.h"
#include "harness/store/schema.h"
#include "harness/util/error.h"

struct sqlite3;

namespace harness {

// What `harness merge` copied from one input database.
struct MergeCounts {
  int64_t runs_added = 0;
  int64_t runs_present = 0;          // already held (same run uid, or the same ingested file): nothing copied
  int64_t ingested_files = 0;        // rows that keep a re-ingest of a merged file from adding it again
  int64_t cases = 0, metrics = 0, samples = 0, op_rows = 0;
  int64_t golden_changes = 0;
  int64_t bisect_sessions = 0, bisect_steps = 0;
  int64_t regressions = 0;
  std::set<std::string> nightlies;   // the nightly ids of the runs added (merge checks they are whole)
};

// The retention window of `harness prune` (store/prune.h): a run is in it when it is one
// of the keep_nightlies newest nightlies of its identity (config_hash; a nightly is the
// runs of one nightly id at one commit, a run without one is a nightly of its own, ordered
// by their newest start) or started less than keep_samples_days days ago. An absent bound
// does not widen the window; runs still marked running are always in it.
struct PruneWindow {
  std::optional<int64_t> keep_nightlies;
  std::optional<int64_t> keep_samples_days;
};

// A run outside the window that holds samples: they are dropped unless kept_for names a
// reference to the run ("bisect session 3", "golden change 2", "baseline of run 9").
struct PruneCandidate {
  int64_t run_id = 0;
  std::string sha;
  std::string started_at;
  std::string nightly;
  int64_t samples = 0;
  int64_t completion_bytes = 0;
  std::vector<std::string> kept_for;
};

struct PrunePlan {
  int64_t runs = 0;            // every stored run
  int64_t in_window = 0;
  std::vector<PruneCandidate> outside;  // runs outside the window with samples, oldest first
};

// A store opened for reading (Store::OpenReadOnly): the connection and the reading doors.
// A writable Store is one too, so a consumer that only reads (the report) takes either.
class ReadOnlyStore {
 public:
  ~ReadOnlyStore();
  ReadOnlyStore(const ReadOnlyStore&) = delete;
  ReadOnlyStore& operator=(const ReadOnlyStore&) = delete;

  ResultReader& reader() { return reader_; }
  BisectRecordReader& bisect_reader() { return bisect_reader_; }
  GoldenLogReader& golden_reader() { return golden_reader_; }

  // The database file as the command named it (for messages).
  const std::filesystem::path& path() const;
  Result<int> SchemaVersion();

  // `harness prune --dry-run`: what PruneSamples would do with `window` (see there), read in
  // one read transaction; nothing is written.
  Result<PrunePlan> PlanPrune(const PruneWindow& window);

 protected:
  explicit ReadOnlyStore(std::unique_ptr<store_sql::Connection> connection);
  sqlite3* db() const;
  // Declared first, so that it is built before the doors that keep a reference to it.
  std::unique_ptr<store_sql::Connection> connection_;

 private:
  friend class Store;  // opens read-only stores
  ResultReader reader_;
  BisectRecordReader bisect_reader_;
  GoldenLogReader golden_reader_;
};

class Store final : public ReadOnlyStore {
 public:
  static constexpr int kSchemaVersion = store_schema::kVersion;
  static constexpr int32_t kApplicationId = store_schema::kApplicationId;

  // Opens for writing, creating the file and migrating as needed. Only a missing or empty
  // file or a harness database is accepted: anything else (another application's SQLite
  // file, a file that is not SQLite, a newer schema, a harness database whose schema holds
  // an object its migrations did not create) is an exit-3 error and the file is left
  // byte-identical, because the check runs before anything is written. An empty path is a
  // usage error (SQLite would use a temporary database and lose the results). Every
  // connection distrusts the schema (SQLITE_DBCONFIG_TRUSTED_SCHEMA off) and is defensive.
  static Result<std::unique_ptr<Store>> Open(const std::filesystem::path& path);
  // Opens an existing harness database read-only, for query commands: never creates a
  // file and never writes one, works on a file the user may only read. An older schema is
  // read through a migrated copy in the temporary folder (removed when the store closes).
  static Result<std::unique_ptr<ReadOnlyStore>> OpenReadOnly(const std::filesystem::path& path);
  // Test hook: creates a database at an older schema version (migrations 1..version only).
  static Status CreateAtVersionForTest(const std::filesystem::path& path, int version);
  ~Store();

  RunWriter& writer() { return writer_; }
  BisectRecord& bisect_record() { return bisect_record_; }
  GoldenLog& golden_log() { return golden_log_; }

  // Copies every run (with its cases, metrics, samples and op rows), golden change and
  // bisect session of the harness database at `input` that this one does not hold yet, in
  // one transaction: runs and bisect sessions are recognized by their uid, golden changes
  // by their content, commits by sha. The input is only read (an older schema through a
  // migrated copy, as for query commands); a newer schema, a file that is no harness
  // database (foreign schema objects included), a corrupt one and one with a row whose
  // parent row is missing are exit-3 errors that name the input, a case id CaseIdProblem
  // refuses (one that would name a file outside the golden folder) an exit-2 error naming it.
  Result<MergeCounts> MergeFrom(const std::filesystem::path& input);
  // The input checks of MergeFrom alone, so a merge can refuse a bad input before it
  // copies any other.
  static Status CheckMergeInput(const std::filesystem::path& input);

  // Ids of the runs still marked running (live, or left so by a process that died).
  Result<std::vector<int64_t>> RunningRunIds();
  // `harness prune`'s deletion: in one BEGIN IMMEDIATE transaction, so no writer can add a
  // reference between the plan and the delete, finds the runs outside `window` that hold
  // samples and the references that keep some of them (a bisect step's run, the case result
  // a golden change or a change under way was accepted from, the baseline of a result in
  // the window that has samples: the newest passing result of the same case, identity and
  // parameters at an earlier first-parent ordinal, as the baseline lookup without git picks
  // it), and deletes the samples (completion text included) of the others. Statuses,
  // messages, metrics and op rows stay. PlanPrune is the same plan with nothing deleted.
  Result<PrunePlan> PruneSamples(const PruneWindow& window);
  // VACUUM (in place: SQLite rewrites the file through the WAL, one transaction, so a kill
  // leaves the old file or the new one), then a truncating checkpoint so the file's size is
  // what it holds.
  Status Compact();

 private:
  explicit Store(std::unique_ptr<store_sql::Connection> connection);
  static Result<std::unique_ptr<store_sql::Connection>> Connect(const std::filesystem::path& path, bool read_only);
  // OpenReadOnly, then the checks MergeFrom makes of an input.
  static Result<std::unique_ptr<ReadOnlyStore>> OpenMergeInput(const std::filesystem::path& input);

  RunWriter writer_;
  BisectRecord bisect_record_;
  GoldenLog golden_log_;
};

}  // namespace harness
