// The results model: plain value types every layer speaks (suite -> stack -> case record
// -> store -> report), and the one table of words for statuses and verdicts. Nothing
// here depends on anything else of the project.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

// A case's status. Runs use the same words (RunStatus has no kSkip).
enum class CaseStatus { kRunning, kPass, kFail, kError, kSkip };
enum class RunStatus { kRunning, kPass, kFail, kError };

// The stored and machine-readable word: running, pass, fail, error, skip.
std::string_view Word(CaseStatus s);
std::string_view Word(RunStatus s);
// The word as a person reads it in tables and reports: RUNNING, PASS, FAIL, ERROR, SKIP.
std::string_view Label(CaseStatus s);
std::string_view Label(RunStatus s);
std::optional<CaseStatus> ParseCaseStatus(std::string_view word);
std::optional<RunStatus> ParseRunStatus(std::string_view word);

// Gate verdict of a proportion metric (docs/gsm8k.md): PASS, AT-RISK, FAIL.
enum class GateVerdict { kPass = 0, kAtRisk = 1, kFail = 2 };
// Paired verdict against a baseline: SAME, IMPROVED, REGRESSED.
enum class BaselineVerdict { kSame = 0, kImproved = 1, kRegressed = 2 };
// One table of words each (results.cc): Word writes the stored word, Parse reads it back
// where a stored or imported metric enters; nothing for a word outside the table.
std::string_view Word(GateVerdict v);
std::string_view Word(BaselineVerdict v);
std::optional<GateVerdict> ParseGateVerdict(std::string_view word);
std::optional<BaselineVerdict> ParseBaselineVerdict(std::string_view word);

struct Metric {
  std::string name;
  double value = 0;
  int64_t n = 0;                     // sample count behind the value (0: not a proportion)
  std::optional<double> low, high;   // interval, when the metric has one
  std::string label;                 // a verdict metric's word (value is its code); else empty
};

// A verdict as a metric: the code as value, the word beside it.
Metric VerdictMetric(const std::string& name, GateVerdict v);
Metric VerdictMetric(const std::string& name, BaselineVerdict v);

// What one sample (a question, a test) came to: GSM8K's five (docs/gsm8k.md) and a test's
// pass or fail (selftest samples, ingested test results). Stored as its word; a word
// outside this set is refused where it enters (the store's reader, merge).
enum class SampleOutcome { kCorrect, kWrong, kInvalid, kTruncated, kError, kPass, kFail };

// The stored word: correct, wrong, invalid, truncated, error, pass, fail.
std::string_view Word(SampleOutcome o);
std::optional<SampleOutcome> ParseSampleOutcome(std::string_view word);
// Every word, comma-separated, for a message that refuses another.
std::string SampleOutcomeWords();
// A success when two runs' samples are paired: correct or pass. (An error was not answered,
// so it pairs with nothing; the other outcomes are answered and not right.)
bool IsSuccess(SampleOutcome o);

struct Sample {
  std::string key;                   // e.g. the question index "17"
  SampleOutcome outcome = SampleOutcome::kError;
  std::string expected;
  std::string extracted;
  double latency_s = 0;
  int64_t tokens = 0;
  std::string completion;            // the answer text as sent, at most kMaxStoredCompletionBytes
};

// A completion is kept for the report's per-question flips; a runaway answer is cut here so
// 365 nightlies of 1319 questions stay a database one can copy around.
inline constexpr std::size_t kMaxStoredCompletionBytes = 4096;

// One row of a performance table: op name as namespace.op.overload, the input shapes
// string ("[1, 64, 5120], [5120]"), calls and estimated seconds over all calls.
struct OpRow {
  std::string op;
  std::string input_shapes;
  int64_t calls = 0;
  double est_seconds = 0;
  bool operator==(const OpRow&) const = default;
};

// One case's result as the listener records it, the store keeps it and reports show it.
struct CaseResult {
  std::string case_id;               // suite/test_N
  CaseStatus status = CaseStatus::kRunning;
  double duration_s = 0;
  std::string message;               // failure text, else the passing case's notes
  std::vector<Metric> metrics;
  std::vector<OpRow> ops;
};

// A finished case written whole, with its suite and per-sample outcomes: what an importer
// (harness ingest) produces and the store writes in one transaction.
struct FinishedCase {
  std::string suite;
  CaseResult result;
  std::vector<Sample> samples;
};

// A stored earlier result of a case that a running one is compared with, question by
// question (the baseline policy, harness/store/baseline.h, finds it).
struct Baseline {
  std::string sha;
  int64_t run_id = 0;
  CaseStatus status = CaseStatus::kRunning;
  std::vector<Sample> samples;
};

// What a case body found, for the run's listener to store: metrics, notes for the person
// triaging (a verdict short of failure, say AT-RISK), the lines the case fails with (none:
// it passes) and an infrastructure failure (the case is stored as error, the run exits 3).
struct CaseOutcome {
  std::vector<Metric> metrics;
  std::vector<std::string> notes;
  std::vector<std::string> failures;
  std::optional<std::string> infra_error;
};

// Counts per status over a list of cases, and the run status they add up to.
struct StatusCounts {
  int pass = 0, fail = 0, error = 0, skip = 0, running = 0;
  void Add(CaseStatus s);
  RunStatus Overall() const;         // error before fail before pass
};
StatusCounts CountStatuses(const std::vector<CaseResult>& cases);

}  // namespace harness
