// The suites: the latest nightly of each, its cases counted by status (its shards and the
// attempts a CI re-run replaced named), and the nightlies that lack shards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reports/sections/section.h"

namespace harness::reports {

// One shard of a sharded nightly (`harness run --shard I/N --nightly ID`, then `merge`): where
// to look for its CI job's log.
struct ShardRef {
  std::string shard;         // "I/N"
  int64_t run_id = 0;
  std::string host;
  int64_t attempt = 1;       // RunRow::attempt: a CI re-run of the shard's job is attempt 2...
  int64_t superseded_by = 0; // reruns: the run of the attempt that replaced this one
};

// The latest run of one suite: pass, fail, error and skip partition its cases; at_risk
// counts the passes whose gate is AT-RISK (an annotation, not a status) and regressed the
// failures that are paired regressions only (night_verdict.h). For a sharded nightly the
// counts are over all its shards, and shards names them.
struct SuiteSummary {
  std::string suite;
  int64_t run_id = 0;
  std::size_t commit = 0;    // index into ReportModel::commits
  std::string stack;
  std::string host;
  std::string started_at, finished_at;
  int pass = 0, at_risk = 0, fail = 0, regressed = 0, error = 0, skip = 0;
  double case_seconds = 0;   // sum of the cases' durations
  std::string nightly;       // the nightly id, when the run has one
  std::vector<ShardRef> shards;  // the runs holding the suite's cases, when sharded (else empty)
  // Earlier attempts of its shards that a CI re-run replaced: stored, not counted.
  std::vector<ShardRef> reruns;
};

// Reads it first after the window: it counts the cases the night, the failures and the changes
// read (ReportLoad).
Status LoadSummary(ReportLoad& load);
void SummaryHtml(HtmlPage& page);
// The Markdown warns of the incomplete nightlies at its top and counts the suites after the
// failures.
void IncompleteMarkdown(MarkdownPage& page);
void SuitesMarkdown(MarkdownPage& page);
std::string SummaryText(const ReportModel& m);
Json SummaryJson(const ReportModel& m);
Json IncompleteNightliesJson(const ReportModel& m);

}  // namespace harness::reports
