// The results store: one SQLite file. Versioned schema (application_id + user_version,
// numbered migrations each in one BEGIN IMMEDIATE transaction), WAL, busy timeout,
// prepared statements only. All SQL of the project lives in store.cc. Schema: docs/store.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/case_record.h"
#include "harness/error.h"

struct sqlite3;

namespace harness {

struct CommitInfo {
  std::string sha;
  std::vector<std::string> parents;
  std::optional<int64_t> first_parent_ordinal;  // commits on the first-parent chain before it
  std::optional<int64_t> author_time;           // unix seconds
  std::string subject;
};

struct NewRun {
  int64_t commit_id = 0;
  std::string stack;
  std::string config_hash;
  std::string config_json;
  std::string host;
  std::string harness_version;
  std::string shard = "0/1";
};

struct CaseOutcome {
  std::string status;   // pass | fail | error | skip
  double duration_s = 0;
  std::string message;
  std::vector<Metric> metrics;
  std::vector<OpRow> ops;
};

// One row of `history`: a case at a commit, newest run there.
struct HistoryRow {
  std::string sha;
  std::optional<int64_t> ordinal;
  std::string subject;
  int64_t run_id = 0;
  std::string started_at;
  std::string status;
  std::optional<double> value;       // the metric, when asked for and present
  int64_t n = 0;
  std::optional<double> low, high;
};

struct RunRow {
  int64_t id = 0;
  std::string sha;
  std::string subject;
  std::string stack;
  std::string config_hash;
  std::string config_json;
  std::string host;
  std::string started_at;
  std::string finished_at;
  std::string status;
};

struct StoredCase {
  int64_t id = 0;
  int64_t run_id = 0;
  std::string case_id;
  std::string status;
  std::string message;
  double duration_s = 0;
};

// A stored case result and where it comes from.
struct CaseRef {
  int64_t case_result_id = 0;
  int64_t run_id = 0;
  std::string sha;
  std::string status;
};

class Store {
 public:
  static constexpr int kSchemaVersion = 2;
  static constexpr int32_t kApplicationId = 0x48524e53;  // "HRNS"

  // Opens (creating and migrating as needed). Unwritable path or a newer schema: exit-3 error.
  static Result<std::unique_ptr<Store>> Open(const std::filesystem::path& path);
  // Test hook: creates a database at an older schema version (migrations 1..version only).
  static Status CreateAtVersionForTest(const std::filesystem::path& path, int version);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int SchemaVersion();

  Result<int64_t> UpsertCommit(const CommitInfo& c);
  Result<int64_t> BeginRun(const NewRun& r);
  Status FinishRun(int64_t run_id, const std::string& status);
  // The newest run with this commit and config that did not finish (for --resume).
  Result<std::optional<int64_t>> FindInterruptedRun(int64_t commit_id, const std::string& config_hash);
  Status ReopenRun(int64_t run_id);

  // Creates the case row in status "running" (or returns the existing one on resume).
  Result<int64_t> BeginCase(int64_t run_id, const std::string& suite, const std::string& case_id,
                            const std::string& params_json);
  Status WriteSample(int64_t case_result_id, const Sample& s);
  // Status, duration, message, metrics and op rows in one transaction.
  Status FinishCase(int64_t case_result_id, const CaseOutcome& outcome);

  Result<std::vector<Sample>> Samples(int64_t case_result_id);
  Result<std::vector<Metric>> Metrics(int64_t case_result_id);
  Result<std::vector<OpRow>> Ops(int64_t case_result_id);
  Result<std::vector<StoredCase>> Cases(int64_t run_id);
  // A run by id, or the newest run when id is 0; an unknown id is a usage error.
  Result<RunRow> Run(int64_t id);
  // Per commit (first-parent order, newest last), the newest run's status of case_id and
  // the metric's value; at most last_n commits.
  Result<std::vector<HistoryRow>> History(const std::string& case_id, const std::string& metric, int last_n);
  // The newest finished result of case_id at commit sha (only passing ones when asked),
  // leaving out run exclude_run.
  Result<std::optional<CaseRef>> NewestCaseAt(const std::string& case_id, const std::string& sha, bool passing_only,
                                              int64_t exclude_run);
  // The same over every commit whose first-parent ordinal is below `ordinal`, newest first.
  Result<std::optional<CaseRef>> NewestCaseBelowOrdinal(const std::string& case_id, int64_t ordinal, bool passing_only,
                                                        int64_t exclude_run);
  // Every case id ever stored, sorted (for "unknown case" messages).
  Result<std::vector<std::string>> KnownCases();

 private:
  explicit Store(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

}  // namespace harness
