// The ranges of bisect's numeric settings, wherever they come from: a flag
// (harness/cli/numeric_option.h) or a replayed log's header (RunBisect checks them again).
#pragma once

#include "harness/util/number_range.h"

namespace harness::bisect {

inline constexpr NumberRange kMaxRunsRange = WholeIn(0, 10000);
// A posterior below 0.5 is no answer; 1 is never reached.
inline constexpr NumberRange kConfidenceRange = NumberIn(0.5, 1, /*lo_open=*/true, /*hi_open=*/true);
// The chance a status is wrong on one run: at 0.5 a status says nothing.
inline constexpr NumberRange kFlakeRateRange = NumberIn(0, 0.5, /*lo_open=*/false, /*hi_open=*/true);
// Run-to-run sd of a metric, in the metric's units.
inline constexpr NumberRange kNoiseSigmaRange = NumberIn(0, 1e9, /*lo_open=*/true);
inline constexpr NumberRange kConfirmRange = WholeIn(0, 10);
// Steps at once (--jobs): each holds a worktree, a command and its server.
inline constexpr NumberRange kJobsRange = WholeIn(1, 64);
// Culprits searched for in one range (--max-culprits; CulpritChain, culprit_chain.h).
inline constexpr NumberRange kMaxCulpritsRange = WholeIn(1, 3);

}  // namespace harness::bisect
