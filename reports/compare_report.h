// `harness compare`: per case the status change, paired (McNemar) or unpaired (Wilson
// interval overlap) accuracy check, metric deltas, the op-table diff as a table and stale
// expectation hints; as text or JSON (format kCompareFormat).
#pragma once

#include <string>

#include "harness/compare/compare.h"
#include "harness/util/json_file.h"

namespace harness::reports {

// What changed: a case whose status, paired verdict, proportions, metrics and op table are
// all as they were is counted, not listed; latency and throughput metrics (timing noise on
// a shared machine) are counted too. all: every case and metric, as stored.
std::string CompareText(const Comparison& c, bool all = false);
Json CompareJson(const Comparison& c);

}  // namespace harness::reports
