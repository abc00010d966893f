// The failures of the latest runs: each in full (since when it fails, its message, its op
// table against the last passing result, its culprit) up to the bounds below, the others
// listed by id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/golden/golden_ops.h"
#include "harness/results/results.h"
#include "reports/sections/regressions.h"
#include "reports/sections/section.h"

namespace harness::reports {

// Failures shown in full (message, op-table diff): the first of each suite in case-id order,
// and no more than the total; every other failing case is counted and listed by id.
inline constexpr std::size_t kMaxFullFailuresPerSuite = 100;
inline constexpr std::size_t kMaxFullFailures = 1000;

struct FailureEntry {
  std::string case_id;
  CaseStatus status = CaseStatus::kFail;
  int64_t run_id = 0;
  std::string shard;              // the run's shard "I/N" when sharded, else empty
  std::string host;               // the host that ran it
  std::size_t commit = 0;
  std::size_t failing_since = 0;  // the first commit of the current run of not-passing results
  std::string message;
  // The op table against the newest earlier passing result of the case (when it stored one).
  std::optional<std::size_t> ops_against_commit;
  int64_t ops_against_run = 0;
  OpTableDiff ops;
  std::optional<CulpritNote> culprit;  // when bisect --auto looked at the case's regression
  std::string suite;              // case_id's suite, parsed once where the model is loaded
};

// A failing case beyond the bounds of the full failures: listed by id.
struct ListedFailure {
  std::string case_id;
  CaseStatus status = CaseStatus::kFail;
  int64_t run_id = 0;
  std::string suite;         // case_id's suite, parsed once where the model is loaded
};

Status LoadFailures(ReportLoad& load);
void FailuresHtml(HtmlPage& page);
// What still fails since an earlier commit (the new failures are among the changes).
void FailuresMarkdown(MarkdownPage& page);
// With the count of the regressions bisect --auto found (the regressions section).
std::string FailuresText(const ReportModel& m);
Json FailuresJson(const ReportModel& m);
Json FailuresListedJson(const ReportModel& m);

}  // namespace harness::reports
