// What `harness bisect --auto` looks for: the regressions of a nightly against the previous
// nightly of the same measured identity, grouped into bisect targets, and whether a rerun
// of the bad commit shows a target's regression again (docs/bisect.md, "--auto").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/bisect_words.h"
#include "harness/store/result_reads.h"
#include "harness/util/error.h"

namespace harness::bisect {

// A nightly: every shard run of one logical run (RunWindowReader::LogicalRun), first shard first.
struct Nightly {
  std::vector<RunRow> runs;
  const RunRow& first() const { return runs.front(); }
};

// The nightly to look at (run_id, or the newest finished run that is a nightly: not made
// by a bisect command nor an --rerun-at-risk rerun) and the previous nightly of the same
// measured identity at an earlier commit, when there is one.
struct NightlyPair {
  Nightly current;
  std::optional<Nightly> previous;
};
Result<NightlyPair> FindNightlyPair(NightlyReads& store, std::optional<int64_t> run_id);

// One case's regression (RegressionKind, bisect_words.h): paired (its paired verdict against
// its baseline is REGRESSED), gate (its gate went from PASS or AT-RISK to FAIL), status (it
// passed in the previous nightly and fails or errors now).
struct CaseRegression {
  std::string case_id;
  RegressionKind kind = RegressionKind::kStatus;
  int64_t case_result_id = 0;           // the nightly's result
  int64_t previous_case_result_id = 0;  // the previous nightly's result
};

// Cases of one suite that regressed together, bisected as one: by the suite's headline
// metric when each of them regressed in it (paired or gate), else by their statuses.
struct RegressionTarget {
  std::string suite;
  RegressionKind kind = RegressionKind::kStatus;  // the worst of the cases' kinds: paired > gate > status
  std::string metric;                   // the headline metric, or empty for statuses
  std::vector<CaseRegression> cases;
  std::vector<std::string> CaseIds() const;
};

// The nightly's regressions against the previous one, as targets sorted by suite. A nightly
// with no previous one has nothing to regress from: its caller has nothing to ask.
Result<std::vector<RegressionTarget>> FindRegressions(NightlyReads& store, const Nightly& current, const Nightly& previous,
                                                      const std::filesystem::path& suites_dir);

// Whether the results stored after `after_case_result_id` at sha show the target's
// regression again: a case fails again (status), its gate is FAIL again (gate), or its
// samples are again REGRESSED against the previous nightly's (paired). Empty when the
// rerun stored no result of any of the target's cases.
Result<std::optional<bool>> Reproduces(NightlyReads& store, const RegressionTarget& target, const std::string& sha,
                                       int64_t after_case_result_id);

}  // namespace harness::bisect
