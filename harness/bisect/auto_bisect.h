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
  std::vector<std::string> command;       // argv with {sha}, {worktree}, {db}, {questions}
  std::optional<double> command_timeout_s;
  bool full_evals = false;                // BisectRequest::full_evals
  BisectObserver observer;                // each confirming rerun and each bisect step (may be empty)
};

// One rerun of the bad commit and what it showed of each target.
struct ConfirmingRun {
  int64_t exit_code = 0;
  std::vector<std::optional<bool>> reproduced;  // per target; empty: the rerun stored nothing of it
};

struct AutoRegression {
  RegressionTarget target;
  int64_t regression_id = 0;
  std::string confirmation;               // confirmed | not-confirmed | not-tried
  std::optional<BisectOutcome> bisect;    // confirmed ones (and all with --confirm 0)
};

struct AutoBisectOutcome {
  Nightly nightly;
  std::optional<Nightly> previous;
  std::vector<ConfirmingRun> confirming;
  std::vector<AutoRegression> regressions;
  int runs_total = 0;
};

// Exit-2 errors for bad input, exit-3 for a command that failed in a way that is no answer;
// what was found up to then stays stored.
Result<AutoBisectOutcome> RunAutoBisect(const AutoBisectRequest& request, Store& store);

}  // namespace harness::bisect
