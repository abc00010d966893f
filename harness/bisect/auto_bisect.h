// `harness bisect --auto`: the nightly bisects its own regressions. It takes a nightly and
// the previous nightly of the same measured identity (regressions.h), confirms what
// regressed by rerunning the bad commit with the command, and bisects each confirmed
// target between the two nightlies' commits, within one budget of commands for the whole
// night. Every regression is stored (Store::AddRegression) with its confirmation and
// bisect session, for the report (docs/bisect.md, "--auto").
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/bisector.h"
#include "harness/bisect/regressions.h"
#include "harness/store/store.h"
#include "harness/util/error.h"

namespace harness::bisect {

struct AutoBisectRequest {
  std::optional<int64_t> run_id;          // the nightly; default: the newest one
  std::filesystem::path repo;             // as for RunBisect (made absolute)
  std::filesystem::path db;
  std::filesystem::path suites_dir;
  int max_runs = BisectDefaults::kMaxRuns;  // commands of the whole night, confirmations included
  int confirm = 1;                        // reruns of the bad commit before any bisection
  double confidence = BisectDefaults::kConfidence;
  std::vector<std::string> command;       // argv with {sha}, {worktree}, {db}, {questions}, {slot}
  std::optional<double> command_timeout_s;
  // A Slurm step (slurm_step.h) whose job has not started within this long is cancelled: untestable.
  std::optional<double> step_start_timeout_s;
  bool full_evals = false;                // BisectRequest::full_evals
  int jobs = 1;                           // BisectRequest::jobs: steps at once in each bisection
  int max_culprits = 1;                   // BisectRequest::max_culprits: culprits each bisection looks for
  // The nightly's stored answer (a bisect --auto that answered it before) is reported as it
  // stands unless again: then it is replaced by a new one.
  bool again = false;
  BisectObserver observer;                // each confirming rerun and each bisect step (may be empty)
};

// One rerun of the bad commit and what it showed of each target.
struct ConfirmingRun {
  int64_t exit_code = 0;
  std::vector<std::optional<bool>> reproduced;  // per target; empty: the rerun stored nothing of it
  // Per target: why the rerun could not test it (step_exit.h: its exit code, what it did
  // not store, its stderr's end); empty when it could. Never a confirmation.
  std::vector<std::string> untestable;
};

struct AutoRegression {
  RegressionTarget target;
  int64_t regression_id = 0;
  Confirmation confirmation = Confirmation::kNotTried;
  std::string untestable;                 // not-confirmed because a confirming rerun could not test it: why
  std::optional<BisectOutcome> bisect;    // confirmed ones (and all with --confirm 0)
};

struct AutoBisectOutcome {
  Nightly nightly;
  std::optional<Nightly> previous;
  std::vector<ConfirmingRun> confirming;
  std::vector<AutoRegression> regressions;
  int runs_total = 0;
  bool stored = false;                    // the answer an earlier bisect --auto stored; nothing ran now
  // What could not be read back of a stored answer (a malformed list of culprits): for stderr.
  std::vector<std::string> warnings;
};

// Exit-2 errors for bad input, exit-3 for a command that failed in a way that is no answer;
// what was found up to then stays stored. One answer per nightly: a nightly answered before
// is reported from the store (unless again), and while one bisect --auto works on a nightly
// (DB.auto-bisect-RUN.lock beside the database, flock(2)) another is exit 3 naming its pid.
Result<AutoBisectOutcome> RunAutoBisect(const AutoBisectRequest& request, Store& store);

}  // namespace harness::bisect
