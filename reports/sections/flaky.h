// The flaky thresholds: gates, tolerances near their bounds and flipping statuses, each with
// the probability that its verdict is false, the evidence, and what would settle it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "harness/stats/false_verdict.h"
#include "reports/sections/section.h"

namespace harness::reports {

// A flaky row's kind: a gate, a tolerance near its bound, or a status that flips.
enum class FlakyKind { kGate, kTolerance, kStatus };
// gate | tolerance | status: the word every format prints.
std::string_view Word(FlakyKind k);

struct FlakyEntry {
  std::string case_id;
  std::string metric;        // the metric, or "status"
  FlakyKind kind = FlakyKind::kGate;
  std::size_t commit = 0;
  double value = 0;          // the newest value (the newest status share for kind status)
  double threshold = 0;
  std::string verdict;       // the newest verdict word
  FalseVerdictEstimate estimate;
  std::string detail;        // the evidence in a sentence
  std::string settle;        // what would settle it, in a sentence
  std::string suite;         // case_id's suite, parsed once where the model is loaded
};

// "5 rows: 2 gates, 1 tolerance, 2 status flips": the flaky section's heading, counted from
// the rows it shows.
std::string FlakyCount(const std::vector<FlakyEntry>& entries);

// Ranks flaky entries: probability of a false verdict descending, then case id, metric.
void RankFlaky(std::vector<FlakyEntry>& entries);

// Reads them after the bisect sessions: their culprits are change points of the ranking.
Status LoadFlaky(ReportLoad& load);
void FlakyHtml(HtmlPage& page);
// The rows likely enough to be false (kMarkdownFlakyMin).
void FlakyMarkdown(MarkdownPage& page);
std::string FlakyText(const ReportModel& m);
Json FlakyJson(const ReportModel& m);

}  // namespace harness::reports
