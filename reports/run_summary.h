// The end-of-run summary of `harness run`: a table (status, case, the key detail) for a
// terminal, or JSON (format kRunSummaryFormat) for scripts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/results/night_verdict.h"
#include "harness/results/results.h"
#include "harness/util/json_file.h"

namespace harness::reports {

// The first line of a message the summary shows whole (longer ones end in "...").
inline constexpr std::size_t kMaxKeyDetailBytes = 400;

// The one line a person reads first: a failure's or note's first line, else the first metric.
std::string KeyDetail(const CaseResult& c);
// The table, then the night's line (night.Line(), the same the exit code, JUnit and the
// reports state).
std::string RunSummaryText(const std::vector<CaseResult>& cases, const NightSummary& night);
// identity_hash and context: what the run measured and where and how it ran (docs/store.md).
Json RunSummaryJson(int64_t run_id, const std::string& commit, const std::string& identity_hash, const Json& context,
                    const std::vector<CaseResult>& cases);
// Metrics as JSON objects: name, value, n, interval and the verdict word when there is one.
Json MetricsJson(const std::vector<Metric>& metrics);

}  // namespace harness::reports
