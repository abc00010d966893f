// What a bisect session stores beside its rows (bisect_record.h), typed: the header (the
// request and the chosen target: bisect_sessions.args_json, the `session` line of `bisect
// log`) and each step's evidence (bisect_steps.evidence_json, a `step` line's "evidence").
// The bisector, replay, `bisect log` and the report build and read these structs; JSON
// appears only in the functions below, which keep the logged format of docs/bisect.md
// ("Sessions, log and replay"). A field of the wrong type is an error naming its place.
// Here rather than in harness/bisect/ because the report reads the header too, and the
// report may use the store but never what harness/bisect/ uses (run/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/util/json_file.h"

namespace harness {

// One value or status the search was told at a step's commit.
struct LoggedObservation {
  int series = 0;               // the target's case index; the exit-code series is cases.size()
  std::optional<bool> failed;   // a status (the case or the command failed); none: a value
  double value = 0;             // the metric's value (failed none)
  // Per-question outcomes in the order of the target's sample keys: '1' right, '0' wrong,
  // 'x' not answered, '-' not asked. Empty: the value only.
  std::string questions;
};

// A step's evidence: what the store held, or a command's run stored or its exit code said.
struct StepEvidence {
  std::vector<LoggedObservation> observations;
  bool skip = false;                         // the commit cannot be tested (exit 125, or untestable)
  // Why a command's step could not test the commit (its exit code and what it did not
  // store: docs/bisect.md, "What a step's exit means"), and the end of its stderr; empty
  // for a step that tested it.
  std::string untestable, stderr_tail;
  std::optional<int64_t> exit_code;          // a command's step
  std::vector<int64_t> case_results;         // the stored results read (each used once)
  std::optional<int64_t> questions_evaluated;  // the samples a command's run stored
};

// The noise prior of one series of the target.
struct LoggedSeries {
  bool higher_is_better = true;
  double noise_sigma = 0;
};

// What a session bisects: the cases (each a series), their metric or their statuses.
struct BisectTarget {
  bool status = false;          // the cases' pass/fail statuses rather than a metric
  std::string metric;
  std::vector<std::string> cases;
  std::vector<LoggedSeries> specs;  // one per case, then the command's exit code
  std::string words;            // the target in words
  // Per case, the sample keys of its questions when the search reads per-question
  // outcomes; empty lists: the metric's value only.
  std::vector<std::vector<std::string>> questions;
};

// The request a session ran with. Fields a log leaves out read as absent (the optionals)
// or empty; the bisector applies its defaults.
struct BisectSessionHeader {
  std::string good, bad;        // full shas of the ends
  std::string metric;
  std::vector<std::string> cases;  // format 1 logs name one, as "case"
  std::string repo;
  std::optional<int64_t> max_runs;
  // Culprits the session searched for (bisect --max-culprits); logged when above 1, so a
  // one-culprit session's log reads as before.
  std::optional<int64_t> max_culprits;
  std::optional<double> confidence, flake_rate, noise_sigma;
  std::vector<std::string> command;
  std::optional<double> command_timeout_s;  // logged as 0 when there is none
  bool full_evals = false;
  std::optional<BisectTarget> target;
  std::vector<std::string> watch;   // the watched paths the prior used (logged when any)
};

// How long a session took and what it cost in time (bisect_sessions.result_json beside its
// answer): docs/bisect.md, "Time to culprit".
struct BisectTiming {
  double wall_seconds = 0;      // from the session's start to its answer
  int64_t steps = 0;            // commands run (every step that ran the command)
  int64_t rounds = 0;           // the steps one after another: wall time in units of one step
  // bisect --auto: from the end of the nightly (its last shard's finish) to the answer.
  std::optional<double> seconds_after_nightly;
};

Json ToJson(const StepEvidence& evidence);
Json ToJson(const BisectTarget& target);
// Adds the timing's fields to a session's result object.
void AddTiming(Json& result, const BisectTiming& timing);
// The timing a session's result holds; none for a session stored before sessions were
// timed (or a result whose fields are not numbers: the report shows no time then).
std::optional<BisectTiming> BisectTimingOf(const Json& result);
// The timing in the words every rendering shows (bisect's output, the report, the JUnit
// note): "answered 2h13m after the nightly ended; the bisect took 1h50m, 8 steps
// in 8 rounds" (the first part for bisect --auto only).
std::string TimingWords(const BisectTiming& timing);
// Writes the current log format (kBisectLogFormat).
Json ToJson(const BisectSessionHeader& header);

// Errors name origin and the JSON path of the offending field (under path).
Result<StepEvidence> StepEvidenceFromJson(const Json& j, const std::string& origin, const std::string& path = "evidence");
Result<BisectTarget> BisectTargetFromJson(const Json& j, const std::string& origin, const std::string& path = "target");
// Reads format 1 and the current format.
Result<BisectSessionHeader> BisectSessionHeaderFromJson(const Json& j, const std::string& origin);

}  // namespace harness
