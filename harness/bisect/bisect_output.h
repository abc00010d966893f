// What `harness bisect` prints: text for a person, JSON (format kBisectJsonFormat) for CI.
#pragma once

#include <string>

#include "harness/bisect/auto_bisect.h"
#include "harness/bisect/bisector.h"
#include "harness/util/json_file.h"

namespace harness::bisect {

Json BisectOutcomeJson(const BisectOutcome& o);
std::string BisectOutcomeText(const BisectOutcome& o);

// `bisect --auto`: per regression its verdict in a word: culprit, no-culprit, ambiguous (a
// bisection's answers), not-confirmed (the rerun did not show it: flaky, never bisected),
// untestable (the rerun could not test it: unconfirmed, never bisected).
Json AutoBisectJson(const AutoBisectOutcome& o);
std::string AutoBisectText(const AutoBisectOutcome& o);
std::string AutoVerdictWord(const AutoRegression& g);

}  // namespace harness::bisect
