// What `harness bisect` prints: text for a person, JSON (format kBisectJsonFormat) for CI.
#pragma once

#include <string>

#include "harness/bisect/auto_bisect.h"
#include "harness/bisect/bisector.h"
#include "harness/store/bisect_changes.h"
#include "harness/util/json_file.h"

namespace harness::bisect {

Json BisectOutcomeJson(const BisectOutcome& o);
// Every culprit a session found: ChangesJson and its reader ChangesFromJson are in
// harness/store/bisect_changes.h, where the report reads them too.
// The text lines listing them ("" for fewer than two: the CULPRIT line says it all).
std::string ChangesText(const std::vector<BisectChange>& changes, const std::string& indent);
std::string BisectOutcomeText(const BisectOutcome& o);

// `bisect --auto`: per regression its verdict (RegressionVerdict, its word in the JSON):
// culprit, no-culprit, ambiguous (a bisection's answers), not-confirmed (the rerun did not
// show it: flaky, never bisected), untestable (the rerun could not test it: unconfirmed,
// never bisected).
Json AutoBisectJson(const AutoBisectOutcome& o);
std::string AutoBisectText(const AutoBisectOutcome& o);
RegressionVerdict AutoVerdict(const AutoRegression& g);

}  // namespace harness::bisect
