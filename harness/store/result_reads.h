// What each consumer of stored results may ask: narrow interfaces that ResultReader
// (result_reader.h) implements, one per group of consumers, each with only the reads that
// group makes, so a consumer's function takes the few methods it uses, not all of the door.
// The shared parts are virtual bases (one ResultReader under many interfaces):
//   ResultFile      the file's path (for messages) and ReadSnapshot: every interface
//   CaseRowsReader  a stored case result's samples, metrics and op rows
//   CommitLookup    stored commits by sha prefix (resolve_commit.h)
//   RunWindowReader finished runs, a run's logical run, its finished cases and metrics
// and the consumers' interfaces: BaselineReads (baseline.h, a run's rerun values),
// ResumeReads (a resumed run), CompareReads (compare), HistoryReads (history),
// EvidenceReads (bisect's search), NightlyReads (bisect --auto's nightly pair and its
// JUnit), ReportReads (the report), GoldenReads (golden review). docs/store.md lists who
// takes which.
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
#include "harness/util/error.h"
#include "harness/util/git.h"

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

// The file every read comes from. Virtual base of every interface below.
class ResultFile {
 public:
  // One read transaction over the reads made while it lives: they see one snapshot of the
  // file, and SQLite takes and drops its read lock once instead of once per query (compare
  // and report read per case: thousands of queries at fleet scale). Inside a transaction
  // already, it does nothing.
  class ReadSnapshot {
   public:
    explicit ReadSnapshot(ResultFile& file) : file_(file), began_(file.BeginSnapshot()) {}
    ~ReadSnapshot() {
      if (began_) file_.EndSnapshot();
    }
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

   private:
    ResultFile& file_;
    bool began_;
  };

  // The database file as the command named it (for messages).
  virtual const std::filesystem::path& path() const = 0;

  virtual ~ResultFile() = default;

 private:
  // Begins a read transaction unless one is open; true when it began one.
  virtual bool BeginSnapshot() = 0;
  virtual void EndSnapshot() = 0;
};

// A stored case result's rows.
class CaseRowsReader : public virtual ResultFile {
 public:
  virtual Result<std::vector<Sample>> Samples(int64_t case_result_id) = 0;
  virtual Result<std::vector<Metric>> Metrics(int64_t case_result_id) = 0;
  virtual Result<std::vector<OpRow>> Ops(int64_t case_result_id) = 0;
};

// Stored commits by sha prefix: what ResolveCommit and StoredSpelling ask (resolve_commit.h).
class CommitLookup : public virtual ResultFile {
 public:
  // The stored commits whose sha starts with sha_prefix (lowercase hex), sorted by sha; at
  // most 20. A commit named on the command line goes through ResolveCommit (resolve_commit.h).
  virtual Result<std::vector<CommitInfo>> MatchCommits(const std::string& sha_prefix) = 0;
  // The stored commits whose sha is a shorter prefix of sha (a short sha stored as given
  // before its full sha arrived), sorted by sha; at most 20.
  virtual Result<std::vector<CommitInfo>> CommitsPrefixOf(const std::string& sha) = 0;
};

// A window of whole runs: what the report and bisect --auto's nightly pairing read.
class RunWindowReader : public virtual ResultFile {
 public:
  // Every finished run (not running), commits in the order history uses (commits stored
  // without git first, by when they were first seen; then first-parent ordinal), runs of
  // one commit oldest first: the report's window is cut from this.
  virtual Result<std::vector<RunRow>> FinishedRuns() = 0;
  // The runs that make one logical run with run_id: every run of its nightly id at the
  // same commit and identity (the shards of a sharded nightly), sorted by shard then id;
  // just run_id when it has no nightly id.
  virtual Result<std::vector<RunRow>> LogicalRun(int64_t run_id) = 0;
  // The finished results of one run, sorted by case id.
  virtual Result<std::vector<StoredCase>> FinishedCases(int64_t run_id) = 0;
  // The metrics of every case of a run in one query: case_result_id -> metrics by name.
  virtual Result<std::map<int64_t, std::vector<Metric>>> MetricsOfRun(int64_t run_id) = 0;
};

// The stored results a running case pairs with: its baseline (baseline.h) and a gate's
// reruns (run.cc).
class BaselineReads : public virtual CaseRowsReader {
 public:
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
  virtual Result<std::optional<CaseRef>> NewestCaseAt(const CaseMatch& match, const std::string& sha) = 0;
  // The value of `metric` in every finished matching result at commit sha (its reruns),
  // oldest first.
  virtual Result<std::vector<double>> MetricAt(const CaseMatch& match, const std::string& sha,
                                               const std::string& metric) = 0;
  // The same over every commit whose first-parent ordinal is below `ordinal`, newest first.
  virtual Result<std::optional<CaseRef>> NewestCaseBelowOrdinal(const CaseMatch& match, int64_t ordinal) = 0;
  // Whether any finished result of case_id exists at commit sha (under any identity).
  virtual Result<bool> HasCaseAt(const std::string& case_id, const std::string& sha) = 0;
  // How many finished whole (not partial) runs commit sha has: of this identity (config_hash),
  // and of any.
  virtual Result<std::pair<int64_t, int64_t>> RunsAt(const std::string& sha, const std::string& config_hash) = 0;
};

// What a resumed run reads back of the run it continues (run.cc).
class ResumeReads : public virtual CaseRowsReader {
 public:
  // Every case result of a run (running ones too), in the order they were begun.
  virtual Result<std::vector<StoredCase>> Cases(int64_t run_id) = 0;
  // The parameter row a run stored for each of its cases: case id -> params_json.
  virtual Result<std::map<std::string, std::string>> CaseParams(int64_t run_id) = 0;
};

// What compare reads: a side's run or commit, its cases and their rows.
class CompareReads : public virtual CaseRowsReader, public virtual CommitLookup {
 public:
  // A run by id, or the newest run when id is 0; an unknown id is a usage error.
  virtual Result<RunRow> Run(int64_t id) = 0;
  // Per case, the newest finished (not running) result of a whole run at commit sha, sorted
  // by case id (what `compare` pairs when it is given commits).
  virtual Result<std::vector<StoredCase>> NewestCasesAt(const std::string& sha) = 0;
  // The finished results of one run, sorted by case id.
  virtual Result<std::vector<StoredCase>> FinishedCases(int64_t run_id) = 0;
};

// What `history` reads.
class HistoryReads : public virtual ResultFile {
 public:
  // Every finished result of the case (or the suite's cases) at the last_n most recent
  // commits holding one: commits in first-parent order (oldest first), then case id, then
  // run (oldest first). Partial runs are left out: their values are over a few questions.
  virtual Result<std::vector<HistoryRow>> History(const HistoryQuery& q) = 0;
  // The names of the metrics any finished result of the case (or, with case_id empty, of
  // the suite's cases) stored, sorted: what `history --metric` may name.
  virtual Result<std::vector<std::string>> MetricNames(const std::string& case_id, const std::string& suite) = 0;
  // Every case id ever stored, sorted (for "unknown case" messages).
  virtual Result<std::vector<std::string>> KnownCases() = 0;
};

// What bisect's search reads: the commits of its range, the evidence stored at them.
class EvidenceReads : public virtual CaseRowsReader, public virtual CommitLookup {
 public:
  // A run by id, or the newest run when id is 0; an unknown id is a usage error.
  virtual Result<RunRow> Run(int64_t id) = 0;
  // Every finished (pass, fail, error) result of case_id at commit sha, oldest first, with
  // its metrics: bisect's evidence (any run identity: the bisect command decides; partial
  // runs too, marked).
  virtual Result<std::vector<CaseEvidence>> CaseEvidenceAt(const std::string& case_id, const std::string& sha) = 0;
  // Case ids stored at commit sha that start with prefix ("gsm8k/").
  virtual Result<std::vector<std::string>> CaseIdsAt(const std::string& sha, const std::string& prefix) = 0;
  // Commits with a first-parent ordinal in (after, up_to], in that order.
  virtual Result<std::vector<CommitInfo>> CommitsInOrdinalRange(int64_t after, int64_t up_to) = 0;
  // The id of the newest stored case result (0 when there is none): what a step's run added.
  virtual Result<int64_t> NewestCaseResultId() = 0;
};

// What bisect --auto reads of its nightlies: the pair, their cases, a regression's evidence
// at a commit (bisect/regressions.h), and the nightly's JUnit.
class NightlyReads : public virtual RunWindowReader, public virtual CaseRowsReader {
 public:
  // A run by id, or the newest run when id is 0; an unknown id is a usage error.
  virtual Result<RunRow> Run(int64_t id) = 0;
  // Every finished result of case_id at commit sha, oldest first, with its metrics.
  virtual Result<std::vector<CaseEvidence>> CaseEvidenceAt(const std::string& case_id, const std::string& sha) = 0;
  // The id of the newest stored case result (0 when there is none): what a confirming rerun added.
  virtual Result<int64_t> NewestCaseResultId() = 0;
};

// What the report reads of stored results (it reads bisect sessions through
// BisectRecordReader): its window of runs, their rows, commits a culprit names.
class ReportReads : public virtual RunWindowReader, public virtual CaseRowsReader, public virtual CommitLookup {};

// What golden review reads: a case's newest result and its op rows.
class GoldenReads : public virtual CaseRowsReader {
 public:
  // The newest finished (not running) result of case_id under any run: the run that
  // started last, then the newest row. Empty when the case was never stored.
  virtual Result<std::optional<CaseRef>> LatestCaseResult(const std::string& case_id) = 0;
};

}  // namespace harness
