// What `harness bisect` prints: text for a person, JSON (format kBisectJsonFormat) for CI.
#pragma once

#include <string>

#include "harness/bisect/bisector.h"
#include "harness/util/json_file.h"

namespace harness::bisect {

Json BisectOutcomeJson(const BisectOutcome& o);
std::string BisectOutcomeText(const BisectOutcome& o);

}  // namespace harness::bisect
