// `harness compare`: per case the status change, paired (McNemar) or unpaired (Wilson
// interval overlap) accuracy check, metric deltas, the op-table diff as a table and stale
// expectation hints; as text or JSON (format kCompareFormat).
#pragma once

#include <string>

#include "harness/compare/compare.h"
#include "harness/util/json_file.h"

namespace harness::reports {

std::string CompareText(const Comparison& c);
Json CompareJson(const Comparison& c);

}  // namespace harness::reports
