// The results store: one SQLite file. Versioned schema (application_id + user_version,
// numbered migrations each in one BEGIN IMMEDIATE transaction), WAL, busy timeout,
// prepared statements only. All SQL of the project lives in store.cc. Schema: docs/store.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/util/error.h"
#include "harness/util/git.h"

struct sqlite3;

namespace harness {

struct NewRun {
  int64_t commit_id = 0;
  std::string stack;
  std::string config_hash;           // the measured identity's hash (store/identity_rule.h)
  std::string config_json;           // the measured identity itself, canonical JSON
  std::string host;
  std::string harness_version;
  std::string shard = "0/1";
  std::string nightly;               // groups the shards of one nightly (empty: a run of its own)
  std::string context_json = "{}";   // where and how it ran (endpoint URL, cwd, faults, ...)
  // A partial run (`harness run --questions FILE`): the questions it evaluated, fewer than
  // the suite's. Bisect evidence only: never a baseline, a gate's rerun, a trend, the
  // report's flaky ranking or a nightly. Empty: a whole run.
  std::optional<int64_t> partial_questions;
};

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
  RunStatus status = RunStatus::kRunning;
  std::string shard = "0/1";
  std::string nightly;
  std::string context_json = "{}";
  std::optional<int64_t> ordinal;    // the commit's first-parent ordinal (FinishedRuns only)
  std::optional<int64_t> partial_questions;  // NewRun::partial_questions
};

// Whether a run is a nightly: not made by a `harness bisect` command ("bisect" in its
// context), not an --rerun-at-risk rerun ("rerun_of") and not partial. The others are
// evidence about a commit; the report's latest runs and bisect --auto's nightlies are nightlies.
bool IsNightlyRun(const RunRow& run);

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

struct BisectStepRow {
  int64_t step = 0;
  std::string sha;
  std::string source;              // store | command
  std::optional<int64_t> run_id;
  std::optional<int64_t> exit_code;
  std::string evidence_json;
  std::string decision_json;
};

struct BisectSessionRow {
  int64_t id = 0;
  std::string started_at, finished_at;
  std::string good, bad, target;
  std::string args_json;
  std::string status;              // running | culprit | no-culprit | ambiguous | error
  std::string culprit;
  double confidence = 0;
  int64_t runs = 0;
  std::string result_json;
  std::vector<BisectStepRow> steps;
};

// A regression `harness bisect --auto` found in a nightly against the previous one.
struct RegressionRow {
  int64_t id = 0;
  int64_t run_id = 0;              // the nightly (its first shard's run)
  int64_t baseline_run_id = 0;     // the previous nightly of the same measured identity
  std::string suite;
  std::string kind;                // paired | gate | status
  std::vector<std::string> cases;
  std::string confirmation;        // confirmed | not-confirmed | not-tried
  std::string confirm_json;        // the confirming reruns: [{"exit_code", "reproduced", "runs"}]
  std::optional<int64_t> session_id;  // the bisect session of a confirmed regression
  std::string at;
};

// One reviewed change of a golden expectation (`harness golden accept`).
struct GoldenChange {
  int64_t id = 0;
  std::string case_id;
  std::string path;                // the expectation file as the command named it
  std::string old_hash, new_hash;  // Fnv1a64Hex of the file's bytes before and after
  std::string reason;
  std::string sha;                 // the commit of the run whose actual table was accepted
  std::string user;
  std::string at;                  // ISO-8601 UTC; filled by the store
  std::optional<int64_t> from_case_result_id;
};

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

// The file a run was ingested from (`harness ingest`): the same bytes in the same format for
// the same commit are stored once.
struct IngestedFile {
  std::string content_hash;        // Fnv1a64Hex of the file's bytes
  std::string format;              // junit | gtest-json | lm-eval | sglang-gsm8k | tensorcast-table
  std::string path;                // as the command named it
};

// What AttachIngestedSamples added to an ingested run.
struct AttachedSamples {
  int64_t run_id = 0;
  int cases = 0;                   // cases that received samples
  int64_t samples = 0;
};

struct IngestedRun {
  NewRun run;
  std::vector<FinishedCase> cases;
  IngestedFile file;
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

class Store {
 public:
  static constexpr int kSchemaVersion = 11;
  static constexpr int32_t kApplicationId = 0x48524e53;  // "HRNS"

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
  static Result<std::unique_ptr<Store>> OpenReadOnly(const std::filesystem::path& path);
  // Test hook: creates a database at an older schema version (migrations 1..version only).
  static Status CreateAtVersionForTest(const std::filesystem::path& path, int version);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int SchemaVersion();
  const std::filesystem::path& path() const { return path_; }

  // One read transaction over the reads made while it lives: they see one snapshot of the
  // file, and SQLite takes and drops its read lock once instead of once per query (compare
  // and report read per case: thousands of queries at fleet scale). Inside a transaction
  // already, it does nothing.
  class ReadSnapshot {
   public:
    explicit ReadSnapshot(Store& store);
    ~ReadSnapshot();
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;

   private:
    sqlite3* db_;
    bool began_ = false;
  };

  Result<int64_t> UpsertCommit(const CommitInfo& c);
  Result<int64_t> BeginRun(const NewRun& r);
  Status FinishRun(int64_t run_id, RunStatus status);
  // Runs of this commit that did not finish (status running), newest first, with their
  // identity; --resume picks the one whose identity matches.
  Result<std::vector<RunRow>> InterruptedRuns(int64_t commit_id);
  Status ReopenRun(int64_t run_id);

  // Creates the case row in status "running" (or returns the existing one on resume).
  Result<int64_t> BeginCase(int64_t run_id, const std::string& suite, const std::string& case_id,
                            const std::string& params_json);
  Status WriteSample(int64_t case_result_id, const Sample& s);
  // Status, duration, message, metrics and op rows in one transaction.
  Status FinishCase(int64_t case_result_id, const CaseResult& result);

  // Imported runs (one file's) written whole in one transaction: per run the run row
  // (finished, status from its cases), every case with metrics, op rows and samples, and
  // its ingested_files row. A run whose (content hash, format, commit) was ingested before
  // is skipped: its entry in the answer is empty. On any error nothing is written.
  Result<std::vector<std::optional<int64_t>>> WriteIngestedRuns(const std::vector<IngestedRun>& runs);
  // Samples given after their file was ingested (lm-eval --samples, sglang's raw results):
  // for each case of `in` with samples whose stored case, in the run the same file became at
  // the same commit, has none yet, the samples are added and its outcome (status, message,
  // metrics) replaced by `in`'s, which the samples informed. One transaction. Empty when
  // the file was not ingested for that commit.
  Result<std::optional<AttachedSamples>> AttachIngestedSamples(const IngestedRun& in);

  Result<std::vector<Sample>> Samples(int64_t case_result_id);
  Result<std::vector<Metric>> Metrics(int64_t case_result_id);
  Result<std::vector<OpRow>> Ops(int64_t case_result_id);
  Result<std::vector<StoredCase>> Cases(int64_t run_id);
  // A run by id, or the newest run when id is 0; an unknown id is a usage error.
  Result<RunRow> Run(int64_t id);
  // Every finished result of the case (or the suite's cases) at the last_n most recent
  // commits holding one: commits in first-parent order (oldest first), then case id, then
  // run (oldest first). Partial runs are left out: their values are over a few questions.
  Result<std::vector<HistoryRow>> History(const HistoryQuery& q);
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
  // Commits with a first-parent ordinal in (after, up_to], in that order.
  Result<std::vector<CommitInfo>> CommitsInOrdinalRange(int64_t after, int64_t up_to);
  Result<int64_t> NewestCaseResultId();

  // Bisect sessions: begun, one row per step as it happens, finished with the answer.
  Result<int64_t> BeginBisect(const BisectSessionRow& session);
  Status AddBisectStep(int64_t session_id, const BisectStepRow& step);
  Status FinishBisect(int64_t session_id, const BisectSessionRow& session);
  Result<BisectSessionRow> BisectSession(int64_t session_id);
  // Every stored bisect session's id, oldest first.
  Result<std::vector<int64_t>> BisectSessionIds();
  // The sessions still marked running (live, or left so by a process that died), oldest first.
  Result<std::vector<int64_t>> RunningBisectSessionIds();

  // Regressions found by `bisect --auto`, linked to their nightly and bisect session.
  Result<int64_t> AddRegression(const RegressionRow& regression);
  Status SetRegressionSession(int64_t regression_id, int64_t session_id);
  Result<std::vector<RegressionRow>> Regressions();  // oldest first

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
  // messages, metrics and op rows stay. dry_run: the plan only; nothing is written.
  Result<PrunePlan> PruneSamples(const PruneWindow& window, bool dry_run);
  // VACUUM (in place: SQLite rewrites the file through the WAL, one transaction, so a kill
  // leaves the old file or the new one), then a truncating checkpoint so the file's size is
  // what it holds.
  Status Compact();

  // Every case id ever stored, sorted (for "unknown case" messages).
  Result<std::vector<std::string>> KnownCases();

  // The newest finished (not running) result of case_id under any run: the run that
  // started last, then the newest row. Empty when the case was never stored.
  Result<std::optional<CaseRef>> LatestCaseResult(const std::string& case_id);
  // A golden change in three steps, so that a kill at any point leaves something the next
  // `golden accept` can finish (docs/golden.md): Begin commits the intent and returns its
  // id, the caller rewrites the file, Finish moves the intent into golden_changes in one
  // transaction. Abandon drops an intent whose file was not rewritten: nothing is recorded.
  Result<int64_t> BeginGoldenChange(const GoldenChange& change);
  Status FinishGoldenChange(int64_t intent_id);
  Status AbandonGoldenChange(int64_t intent_id);
  // Intents neither finished nor abandoned (an accept was killed), oldest first; id is the intent's.
  Result<std::vector<GoldenChange>> PendingGoldenChanges();
  // The recorded changes of case_id (every case when empty), oldest first.
  Result<std::vector<GoldenChange>> GoldenChanges(const std::string& case_id);

 private:
  Store(sqlite3* db, std::filesystem::path path);
  static Result<std::unique_ptr<Store>> OpenWith(const std::filesystem::path& path, bool read_only);
  // OpenReadOnly, then the checks MergeFrom makes of an input.
  static Result<std::unique_ptr<Store>> OpenMergeInput(const std::filesystem::path& input);
  sqlite3* db_;
  std::filesystem::path path_;
  std::filesystem::path copy_dir_;   // the migrated copy of an older file this store reads, if any
  // The per-case reads (Metrics, Ops, Samples) prepared once: compare and report ask them
  // for every case, thousands at fleet scale. Finalized before the connection closes.
  struct StatementCache;
  std::unique_ptr<StatementCache> statements_;
};

}  // namespace harness
