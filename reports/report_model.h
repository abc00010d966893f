// The triage report's model: read from the store in one place, rendered as HTML, text and
// JSON (reports/report_html, report_text, report_json). Its readers triage a red nightly
// or a flaky threshold: what failed, is it real, since when, why (docs/report.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/golden/golden_ops.h"
#include "harness/results/night_verdict.h"
#include "harness/results/results.h"
#include "harness/stats/false_verdict.h"
#include "harness/store/bisect_changes.h"
#include "harness/store/bisect_evidence.h"
#include "harness/store/bisect_words.h"
#include "harness/store/nightly_shards.h"
#include "harness/store/store.h"
#include "harness/util/error.h"
#include "harness/util/git.h"

namespace harness::reports {

struct ReportQuery {
  int last_n = 30;           // the newest N commits holding a finished run
  std::string since;         // else: this commit (a sha prefix) and every later one
  std::string suite;         // empty: every suite
  std::string case_glob;     // empty: every case (fnmatch on the case id)
};

// Bounds that keep a year of nightlies a report one can open (docs/report.md).
inline constexpr std::size_t kMaxTrendPoints = 400;   // per chart: the newest results
inline constexpr std::size_t kMaxFlipsPerCase = 60;   // per case: losses first, then gains
inline constexpr std::size_t kMaxCompletionBytes = 1500;  // of each completion shown
inline constexpr std::size_t kMaxSubjectBytes = 200;      // of each commit subject (its first line)
// Failures shown in full (message, op-table diff): the first of each suite in case-id order,
// and no more than the total; every other failing case is counted and listed by id.
inline constexpr std::size_t kMaxFullFailuresPerSuite = 100;
inline constexpr std::size_t kMaxFullFailures = 1000;
// Changes since the previous nightly shown in full, per kind; the others are listed by id
// (a night that breaks a whole suite still opens fast).
inline constexpr std::size_t kMaxFullChangesPerKind = 100;

struct ReportCommit {
  std::string sha;
  std::string subject;
  std::optional<int64_t> ordinal;
};

// One shard of a sharded nightly (`harness run --shard I/N --nightly ID`, then `merge`): where
// to look for its CI job's log.
struct ShardRef {
  std::string shard;         // "I/N"
  int64_t run_id = 0;
  std::string host;
  int64_t attempt = 1;       // RunRow::attempt: a CI re-run of the shard's job is attempt 2...
  int64_t superseded_by = 0; // reruns: the run of the attempt that replaced this one
};

// The latest run of one suite: pass, fail, error and skip partition its cases; at_risk
// counts the passes whose gate is AT-RISK (an annotation, not a status) and regressed the
// failures that are paired regressions only (night_verdict.h). For a sharded nightly the
// counts are over all its shards, and shards names them.
struct SuiteSummary {
  std::string suite;
  int64_t run_id = 0;
  std::size_t commit = 0;    // index into ReportModel::commits
  std::string stack;
  std::string host;
  std::string started_at, finished_at;
  int pass = 0, at_risk = 0, fail = 0, regressed = 0, error = 0, skip = 0;
  double case_seconds = 0;   // sum of the cases' durations
  std::string nightly;       // the nightly id, when the run has one
  std::vector<ShardRef> shards;  // the runs holding the suite's cases, when sharded (else empty)
  // Earlier attempts of its shards that a CI re-run replaced: stored, not counted.
  std::vector<ShardRef> reruns;
};

// What `harness bisect --auto` said of a regression (Store::Regressions): for the failing
// cases it names and the report's summary.
struct CulpritNote {
  // culprit | no-culprit | ambiguous | not-confirmed | untestable (its Word, as bisect --auto
  // answered it: AutoVerdict)
  RegressionVerdict verdict = RegressionVerdict::kAmbiguous;
  std::string culprit, subject;     // with verdict culprit
  double confidence = 0;
  int64_t runs = 0;                 // commands its bisection ran
  int64_t session = 0;              // its bisect session; 0: not bisected
  std::vector<std::string> range;   // with verdict ambiguous: the commits the culprit is among
  std::optional<BisectTiming> timing;  // its session's time (since the nightly ended); none: untimed
  // With verdict culprit, when its session named several (bisect --max-culprits): each with
  // its own drop and confidence, in first-parent order. Empty for one: culprit says it all.
  std::vector<BisectChange> culprits;
};

// "1. abc123def456 subject: moved -0.0060 (-0.60 pp), posterior 0.990; 2. ...": a session's
// several culprits in the words the text renderings show; "" for fewer than two.
std::string CulpritListWords(const std::vector<BisectChange>& culprits);
// One of them, without its number: "abc123def456 subject: moved -0.0060 (-0.60 pp), posterior 0.990".
std::string CulpritChangeWords(const BisectChange& culprit);
// The same words with the sha and subject as a rendering writes them (Markdown: the sha
// linked, the subject escaped), so the wording exists once.
std::string CulpritChangeWords(const BisectChange& culprit, std::string_view sha, std::string_view subject);

// "culprit abc123def456 subject (confidence 0.990, 6 runs, bisect session 3)", "not confirmed
// (flaky): ...", "bisect ambiguous: ...": the words every rendering shows; a session that named
// several culprits adds "; 2 culprits in the range: " and CulpritListWords.
std::string CulpritWords(const CulpritNote& note);
// A culprit's "(confidence ..., N runs, bisect session S; answered ... after the nightly
// ended; the bisect took ..., N steps in R rounds)", for renderings that write the
// sha and subject their own way (a link in Markdown).
std::string CulpritEvidence(const CulpritNote& note);
// A stored session's timing (from its result), none for an untimed or unfinished one.
std::optional<BisectTiming> SessionTiming(const BisectSessionRow& session);

// A stored bisect session as the report holds it: its row, the status printed as stored,
// and that status read through its word table once, where the report loads it (none: a word
// outside the table, which the report warns of; such a session names no culprit, and a
// regression it answered is ambiguous).
struct ReportSession : BisectSessionRow {
  std::optional<SessionStatus> read_status;
};

struct RegressionEntry {
  int64_t id = 0;
  int64_t run_id = 0;
  std::string suite, kind;
  std::vector<std::string> cases;
  CulpritNote note;
};

struct FailureEntry {
  std::string case_id;
  CaseStatus status = CaseStatus::kFail;
  int64_t run_id = 0;
  std::string shard;              // the run's shard "I/N" when sharded, else empty
  std::string host;               // the host that ran it
  std::size_t commit = 0;
  std::size_t failing_since = 0;  // the first commit of the current run of not-passing results
  std::string message;
  // The op table against the newest earlier passing result of the case (when it stored one).
  std::optional<std::size_t> ops_against_commit;
  int64_t ops_against_run = 0;
  OpTableDiff ops;
  std::optional<CulpritNote> culprit;  // when bisect --auto looked at the case's regression
  std::string suite;              // case_id's suite, parsed once where the model is loaded
};

// A failing case beyond the bounds of the full failures: listed by id.
struct ListedFailure {
  std::string case_id;
  CaseStatus status = CaseStatus::kFail;
  int64_t run_id = 0;
  std::string suite;         // case_id's suite, parsed once where the model is loaded
};

// What changed since the previous nightly, for a case of the latest runs (the report opens
// with these): a new failure (failing or erroring now, passing or absent in the previous
// nightly of its run identity), a paired regression (its baseline_verdict is REGRESSED
// while its gate holds; it may pass tonight) or a fix (passing now, failing before).
// The kinds of change, in the order the report lists them (the model sorts by it).
enum class ChangeKind { kNewFailure, kPairedRegression, kFixed };
// new-failure | paired-regression | fixed: the word the text and JSON print.
std::string_view Word(ChangeKind k);

struct ChangeEntry {
  ChangeKind kind = ChangeKind::kNewFailure;
  std::string case_id;
  CaseStatus status = CaseStatus::kFail;
  int64_t run_id = 0;
  std::size_t commit = 0;
  std::optional<std::size_t> before_commit;  // the previous nightly's result of the case
  int64_t before_run = 0;
  CaseStatus before_status = CaseStatus::kPass;
  std::string finding;                    // the first line of its message
  std::optional<CulpritNote> culprit;     // what bisect --auto said of it
  std::string no_culprit;                 // else: why it has none
  std::string suite;                      // case_id's suite, parsed once where the model is loaded
};

struct TrendPoint {
  std::size_t commit = 0;
  int64_t run_id = 0;
  CaseStatus status = CaseStatus::kPass;
  double value = 0;
  std::optional<double> low, high;
  int64_t n = 0;
  std::string verdict;       // gate_verdict's word, else the status label
};

struct TrendMarker {
  std::size_t commit = 0;
  int64_t session = 0;
  std::string text;          // the bisect session's target and confidence
};

struct Trend {
  std::string case_id;
  std::string metric;
  std::optional<double> gate;        // a gate line (a gate metric stored beside it)
  std::optional<double> bound;       // a tolerance bound (x_bound_use fails above 1)
  std::optional<double> band_low, band_high;  // observed values whose 95% interval straddles the gate
  std::vector<TrendPoint> points;    // commits in first-parent order, runs oldest first
  std::size_t omitted = 0;           // older points left out (kMaxTrendPoints)
  std::vector<TrendMarker> culprits;
  std::string suite;                 // case_id's suite, parsed once where the model is loaded
};

// A flaky row's kind: a gate, a tolerance near its bound, or a status that flips.
enum class FlakyKind { kGate, kTolerance, kStatus };
// gate | tolerance | status: the word every format prints.
std::string_view Word(FlakyKind k);

struct FlakyEntry {
  std::string case_id;
  std::string metric;        // the metric, or "status"
  FlakyKind kind = FlakyKind::kGate;
  std::size_t commit = 0;
  double value = 0;          // the newest value (the newest status share for kind status)
  double threshold = 0;
  std::string verdict;       // the newest verdict word
  FalseVerdictEstimate estimate;
  std::string detail;        // the evidence in a sentence
  std::string settle;        // what would settle it, in a sentence
  std::string suite;         // case_id's suite, parsed once where the model is loaded
};

struct FlipEntry {
  std::string key;
  bool lost = true;          // right -> wrong (else wrong -> right)
  std::string expected;
  SampleOutcome before_outcome = SampleOutcome::kError, after_outcome = SampleOutcome::kError;
  std::string before_extracted, after_extracted;
  std::string before_completion, after_completion;  // cut at kMaxCompletionBytes
};

struct FlipSet {
  std::string case_id;
  int64_t run_id = 0, baseline_run = 0;
  std::size_t commit = 0, baseline_commit = 0;
  int64_t losses = 0, gains = 0;
  std::vector<FlipEntry> flips;
  std::size_t omitted = 0;
  std::string suite;         // case_id's suite, parsed once where the model is loaded
};

struct ReportModel {
  ReportQuery query;
  // The night's verdict over the summary's runs and the shards they lack: the same function
  // and line as harness run's stdout, exit code and JUnit (harness/results/night_verdict.h).
  NightSummary night;
  std::vector<ChangeEntry> changes;   // new failures, paired regressions, fixes; by kind, case id
  std::vector<ReportCommit> commits;  // the window, first-parent order
  int64_t runs = 0;
  std::vector<SuiteSummary> summary;  // by suite name
  // The nightlies the summary shows that lack shards (a lost CI job): their counts are of
  // part of the cases. Judged over every run of the nightly, whatever the filters.
  std::vector<NightlyGap> incomplete_nightlies;
  std::vector<FailureEntry> failures;         // shown in full, by case id
  std::vector<ListedFailure> failures_listed; // the other failing cases, by case id
  std::vector<Trend> trends;
  std::vector<FlakyEntry> flaky;      // most likely false verdict first
  std::vector<FlipSet> flips;
  std::vector<ReportSession> bisect;
  // By bisect session id, the sessions of bisect that named several culprits: every one,
  // subjects cut at kMaxSubjectBytes. A one-culprit session is not here (its row says it).
  std::map<int64_t, std::vector<BisectChange>> session_culprits;
  // What the store held that could not be read (a session's malformed list of culprits: that
  // session shows its first culprit only; a stored word outside its table: ReportSession,
  // CulpritNote). harness report prints them to stderr.
  std::vector<std::string> warnings;
  // The regressions bisect --auto found in the window's latest runs: "N regressions, K with
  // a culprit".
  std::vector<RegressionEntry> regressions;
  std::size_t RegressionsWithCulprit() const;
};

// A usage error (exit 2) when the database holds no finished run, --since names no commit
// with a finished run (or an ambiguous prefix), or the filters leave no case.
Result<ReportModel> BuildReport(ReadOnlyStore& store, const ReportQuery& q);

// A case is AT-RISK when it stored gate_verdict AT-RISK (it passed unless fail_at_risk).
bool IsAtRisk(const std::vector<Metric>& metrics);

// The range of observed rates k/n whose Wilson 95% interval straddles gate: [low, high];
// none when no k does.
std::optional<std::pair<double, double>> AtRiskBand(int64_t n, double gate);

// "5 rows: 2 gates, 1 tolerance, 2 status flips": the flaky section's heading, counted from
// the rows it shows.
std::string FlakyCount(const std::vector<FlakyEntry>& entries);

// Ranks flaky entries: probability of a false verdict descending, then case id, metric.
void RankFlaky(std::vector<FlakyEntry>& entries);

// A message's headline: its text up to the first newline.
std::string FirstLine(const std::string& s);

}  // namespace harness::reports
