// `harness bisect`: the commits between a known-good and a known-bad one, the evidence the
// store already holds for them, a command run in a git worktree of a commit when the
// search (bisect_search.h) asks for more, and every step stored as a replayable session.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/bisect_progress.h"
#include "harness/bisect/bisect_search.h"
#include "harness/store/bisect_changes.h"  // BisectChange: one culprit of several
#include "harness/store/bisect_evidence.h"
#include "harness/store/store.h"
#include "harness/util/error.h"

namespace harness::bisect {

// A `bisect replay`: the logged target and the logged steps, whose evidence is used as written.
struct ReplayedStep {
  std::string sha;
  StepEvidence evidence;
};
struct ReplayLog {
  BisectTarget target;
  std::vector<ReplayedStep> steps;
};

struct BisectRequest {
  std::string good, bad;                  // revisions of repo, or stored sha prefixes without one
  std::string metric;                     // SUITE (its headline metric) or SUITE/METRIC; empty: status
  std::vector<std::string> cases;         // narrow --metric to these cases; alone: bisect their pass/fail status
  // --watch: path prefixes (watched_paths.h) beside the "watch" lists of the target's suites;
  // the commits that touch one hold BisectDefaults::kWatchedPrior of the prior. From a
  // replayed log: the list the session used, the suites' included.
  std::vector<std::string> watch;
  std::filesystem::path repo;             // empty: the store's first-parent ordinals (made absolute)
  std::filesystem::path db;               // the store's file: {db}, $HARNESS_DB of the command, the session lock (made absolute)
  std::filesystem::path suites_dir;       // for headline metrics
  int max_runs = BisectDefaults::kMaxRuns;
  // Culprits searched for in the range (CulpritChain; BisectDefaults::kMaxCulprits).
  int max_culprits = BisectDefaults::kMaxCulprits;
  double confidence = BisectDefaults::kConfidence;
  std::optional<double> noise_sigma;      // run-to-run sd of the metric (default from its n)
  double flake_rate = BisectDefaults::kFlakeRate;  // of statuses
  std::vector<std::string> command;       // argv with {sha}, {worktree}, {db}, {questions}, {slot}; empty: store only
  // Steps run at once (--jobs), each in its own slot (0..jobs-1, {slot}); 1: one at a time.
  int jobs = 1;
  // Whole evals only: {questions} names a file of every question ('*'). A command without
  // {questions} evaluates every question anyway, and the search plans for that.
  bool full_evals = false;
  std::optional<double> command_timeout_s;  // none: no timeout; else in (0, kMaxTimeoutS]
  // A Slurm step (slurm_step.h) whose job has not started within this long is cancelled: untestable.
  std::optional<double> step_start_timeout_s;
  std::string made_for;                   // what runs the command stores record (default "session N")
  std::optional<ReplayLog> replay;        // from `bisect replay`: the target and the steps as logged
  // bisect --auto: when the nightly ended (its last shard's finished_at, as NowUtc writes
  // it), for the time from it to the answer; empty for a bisect started by hand.
  std::string nightly_finished_at;
  BisectObserver observer;                // told as each command starts and its step ends (may be empty)
};

struct BisectStep {
  int index = 0;
  std::string sha;
  std::string source;                     // store | command | replay
  std::optional<int64_t> run_id;
  std::optional<int64_t> exit_code;
  StepEvidence evidence;
  double probability_bad = 0;             // P(this commit is bad) after the step
  StepVerdict verdict = StepVerdict::kUnknown;  // good | bad | unknown | skip (at the time)
};

struct BisectOutcome {
  int64_t session_id = 0;
  Verdict verdict = Verdict::kAmbiguous;
  std::string culprit, subject;           // full sha, its subject (the first culprit)
  std::vector<BisectChange> changes;      // every culprit found, in first-parent order
  double confidence = 0;
  int runs = 0;                           // commands run
  // Questions the commands' runs evaluated: the samples they stored for the target's cases.
  int64_t questions_evaluated = 0;
  // Questions of one whole eval of a case (GSM8K: 1319), from the target's question keys;
  // 0 when the target reads no per-question outcomes (then there is no full-eval count).
  int64_t questions_per_eval = 0;
  int flip_history_runs = 0;              // stored runs before the range its flip rates were learned from
  std::vector<std::string> skipped, range;
  // Priors from what a commit changed: the watched paths (none: every commit alike), the
  // commits of the range that touch one, and whether the prior weighed them (some but not
  // all commits touch one; no --repo, no changed files: not).
  std::vector<std::string> watch, watched;
  int changes_read = 0;                   // commits whose changed files were read (0: no --repo)
  bool priors_applied = false;
  double unwatched_weight = 1;            // what the prior weighed a commit that touches none (UnwatchedWeight)
  std::vector<BisectStep> steps;
  std::string target;                     // what was bisected, in words
  std::vector<std::string> cases;
  std::string reason;                     // why it stopped, for ambiguous and no-culprit answers
  // Wall time, steps, rounds (stored in the session's result); none for a session stored
  // before sessions were timed.
  std::optional<BisectTiming> timing;
};

// Exit-2 errors for bad input, exit-3 for a command that failed in a way that is no answer
// (>= 128, killed, timed out) or an interrupt (SIGINT, SIGTERM, SIGHUP: forwarded to the
// command's process group, its worktree removed); the partial session stays stored. First
// cleans up after sessions of the same database whose process died (session_lock.h).
Result<BisectOutcome> RunBisect(const BisectRequest& request, Store& store);

// The session as JSON lines: a header with the request, then one line per step.
Result<std::string> BisectLog(BisectRecordReader& store, int64_t session_id);
// Parses a log written by BisectLog back into a request (its target and steps become
// replay); a field of the wrong type is an error naming its line and key (exit 2).
Result<BisectRequest> ParseBisectLog(const std::string& text, const std::string& origin);

// The largest log `bisect replay` reads: a session of the default 60 runs logs well under
// 1 MiB even with 1319 questions a step, so 64 MiB (as for JSON files) is generous.
inline constexpr std::uintmax_t kMaxBisectLogBytes = std::uintmax_t{64} << 20;
// ParseBisectLog of a file read within kMaxBisectLogBytes: a directory, a device, a FIFO or
// a larger file is an input error (exit 2) naming it, in bounded memory.
Result<BisectRequest> ReadBisectLog(const std::filesystem::path& file);

}  // namespace harness::bisect
