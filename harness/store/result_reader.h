// The store's door for whatever reads stored results: runs, their cases with samples,
// metrics and op rows, a case's history, a commit's newest results, the stored results a
// running case pairs with (baselines, a gate's reruns), bisect's evidence, commits by sha
// prefix or ordinal. compare, history, report, baseline and bisect read through it; every
// store hands it out (store.h: reader()).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/results/results.h"
#include "harness/store/run_row.h"
#include "harness/store/store_door.h"
#include "harness/util/error.h"
#include "harness/util/git.h"

struct sqlite3;

namespace harness {

// What `history` asks for: one case or every case of a suite, a metric (may be empty) and
// how many of the most recent commits that hold a finished result.
struct HistoryQuery {
  std::string case_id;               // exactly one of case_id and suite is set
  std::string suite;
  std::string metric;
  int last_n = 20;
};

// One row of `history`: one finished result of a case at a commit. A commit run more than
// once has one row per run.
struct HistoryRow {
  std::string sha;
  std::optional<int64_t> ordinal;
  std::string subject;
  std::string case_id;
  int64_t run_id = 0;
  std::string started_at;
  CaseStatus status = CaseStatus::kRunning;
  std::optional<double> value;       // the metric, when asked for and present
  int64_t n = 0;
  std::optional<double> low, high;
  std::string label;                 // the metric's word, when it is a verdict
};

// A stored case result: its row ids and the result (metrics and ops are read separately).
struct StoredCase {
  int64_t id = 0;
  int64_t run_id = 0;
  CaseResult result;
};

// A stored case result and where it comes from.
struct CaseRef {
  int64_t case_result_id = 0;
  int64_t run_id = 0;
  std::string sha;
  CaseStatus status = CaseStatus::kRunning;
};

// One stored result of a case at a commit, as bisect evidence.
struct CaseEvidence {
  int64_t case_result_id = 0;
  int64_t run_id = 0;
  CaseStatus status = CaseStatus::kRunning;
  std::vector<Metric> metrics;     // name, value, n
  bool partial = false;            // of a partial run: evidence only through its samples
};

class ResultReader : private StoreDoor {
 public:
  using StoreDoor::StoreDoor;

  // One read transaction over the reads made while it lives: they see one snapshot of the
  // file, and SQLite takes and drops its read lock once instead of once per query (compare
  // and report read per case: thousands of queries at fleet scale). Inside a transaction
  // already, it does nothing.
  class ReadSnapshot {
   public:
    explicit ReadSnapshot(ResultReader& reader);
    ~ReadSnapshot();
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

   private:
    sqlite3* db_;
    bool began_ = false;
  };

  // The database file as the command named it (for messages).
  const std::filesystem::path& path() const;

  Result<std::vector<Sample>> Samples(int64_t case_result_id);
  Result<std::vector<Metric>> Metrics(int64_t case_result_id);
  Result<std::vector<OpRow>> Ops(int64_t case_result_id);
  // Every case result of a run (running ones too), in the order they were begun.
  Result<std::vector<StoredCase>> Cases(int64_t run_id);
  // A run by id, or the newest run when id is 0; an unknown id is a usage error.
  Result<RunRow> Run(int64_t id);
  // Every finished result of the case (or the suite's cases) at the last_n most recent
  // commits holding one: commits in first-parent order (oldest first), then case id, then
  // run (oldest first). Partial runs are left out: their values are over a few questions.
  Result<std::vector<HistoryRow>> History(const HistoryQuery& q);
  // The names of the metrics any finished result of the case (or, with case_id empty, of
  // the suite's cases) stored, sorted: what `history --metric` may name.
  Result<std::vector<std::string>> MetricNames(const std::string& case_id, const std::string& suite);
  // Per case, the newest finished (not running) result of a whole run at commit sha, sorted
  // by case id (what `compare` pairs when it is given commits).
  Result<std::vector<StoredCase>> NewestCasesAt(const std::string& sha);
  // The finished results of one run, sorted by case id.
  Result<std::vector<StoredCase>> FinishedCases(int64_t run_id);
  // Every finished run (not running), commits in the order history uses (commits stored
  // without git first, by when they were first seen; then first-parent ordinal), runs of
  // one commit oldest first: the report's window is cut from this.
  Result<std::vector<RunRow>> FinishedRuns();
  // The metrics of every case of a run in one query: case_result_id -> metrics by name.
  Result<std::map<int64_t, std::vector<Metric>>> MetricsOfRun(int64_t run_id);
  // Which stored results may pair with a running case: the same case, run identity and
  // parameter row, leaving out the running run itself and every partial run.
  struct CaseMatch {
    std::string case_id;
    std::string config_hash;
    std::string params_json;
    int64_t exclude_run = 0;
    bool passing_only = false;
  };
  // The newest finished matching result at commit sha.
  Result<std::optional<CaseRef>> NewestCaseAt(const CaseMatch& match, const std::string& sha);
  // The value of `metric` in every finished matching result at commit sha (its reruns),
  // oldest first.
  Result<std::vector<double>> MetricAt(const CaseMatch& match, const std::string& sha, const std::string& metric);
  // The same over every commit whose first-parent ordinal is below `ordinal`, newest first.
  Result<std::optional<CaseRef>> NewestCaseBelowOrdinal(const CaseMatch& match, int64_t ordinal);
  // The parameter row a run stored for each of its cases: case id -> params_json.
  Result<std::map<std::string, std::string>> CaseParams(int64_t run_id);
  // Every finished (pass, fail, error) result of case_id at commit sha, oldest first, with
  // its metrics: bisect's evidence (any run identity: the bisect command decides; partial
  // runs too, marked).
  Result<std::vector<CaseEvidence>> CaseEvidenceAt(const std::string& case_id, const std::string& sha);
  // Case ids stored at commit sha that start with prefix ("gsm8k/").
  Result<std::vector<std::string>> CaseIdsAt(const std::string& sha, const std::string& prefix);
  // The stored commits whose sha starts with sha_prefix (lowercase hex), sorted by sha; at
  // most 20. A commit named on the command line goes through ResolveCommit (resolve_commit.h).
  Result<std::vector<CommitInfo>> MatchCommits(const std::string& sha_prefix);
  // The stored commits whose sha is a shorter prefix of sha (a short sha stored as given
  // before its full sha arrived), sorted by sha; at most 20.
  Result<std::vector<CommitInfo>> CommitsPrefixOf(const std::string& sha);
  // Commits with a first-parent ordinal in (after, up_to], in that order.
  Result<std::vector<CommitInfo>> CommitsInOrdinalRange(int64_t after, int64_t up_to);
  Result<int64_t> NewestCaseResultId();
  // Whether any finished result of case_id exists at commit sha (under any identity).
  Result<bool> HasCaseAt(const std::string& case_id, const std::string& sha);
  // How many finished whole (not partial) runs commit sha has: of this identity (config_hash),
  // and of any.
  Result<std::pair<int64_t, int64_t>> RunsAt(const std::string& sha, const std::string& config_hash);
  // The runs that make one logical run with run_id: every run of its nightly id at the
  // same commit and identity (the shards of a sharded nightly), sorted by shard then id;
  // just run_id when it has no nightly id.
  Result<std::vector<RunRow>> LogicalRun(int64_t run_id);
  // Every run (any status) with this nightly id, by commit, identity, shard and id
  // (store/nightly_shards.h counts their shards).
  Result<std::vector<RunRow>> NightlyRuns(const std::string& nightly);
  // Every case id ever stored, sorted (for "unknown case" messages).
  Result<std::vector<std::string>> KnownCases();
  // The newest finished (not running) result of case_id under any run: the run that
  // started last, then the newest row. Empty when the case was never stored.
  Result<std::optional<CaseRef>> LatestCaseResult(const std::string& case_id);
};

}  // namespace harness
