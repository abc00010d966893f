// The trends: each case's proportion or tolerance metric over the window, one point per run,
// with its gate, its at-risk band and the bisect culprits marked (drawn by trend_chart).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/results/results.h"
#include "reports/sections/section.h"

namespace harness::reports {

inline constexpr std::size_t kMaxTrendPoints = 400;   // per chart: the newest results

struct TrendPoint {
  std::size_t commit = 0;
  int64_t run_id = 0;
  CaseStatus status = CaseStatus::kPass;
  double value = 0;
  std::optional<double> low, high;
  int64_t n = 0;
  std::string verdict;       // gate_verdict's word, else the status label
};

struct TrendMarker {
  std::size_t commit = 0;
  int64_t session = 0;
  std::string text;          // the bisect session's target and confidence
};

struct Trend {
  std::string case_id;
  std::string metric;
  std::optional<double> gate;        // a gate line (a gate metric stored beside it)
  std::optional<double> bound;       // a tolerance bound (x_bound_use fails above 1)
  std::optional<double> band_low, band_high;  // observed values whose 95% interval straddles the gate
  std::vector<TrendPoint> points;    // commits in first-parent order, runs oldest first
  std::size_t omitted = 0;           // older points left out (kMaxTrendPoints)
  std::vector<TrendMarker> culprits;
  std::string suite;                 // case_id's suite, parsed once where the model is loaded
};

// The range of observed rates k/n whose Wilson 95% interval straddles gate: [low, high];
// none when no k does.
std::optional<std::pair<double, double>> AtRiskBand(int64_t n, double gate);

// Reads them before the bisect sessions, which mark their culprits on them.
Status LoadTrends(ReportLoad& load);
void TrendsHtml(HtmlPage& page);
std::string TrendsText(const ReportModel& m);
Json TrendsJson(const ReportModel& m);

}  // namespace harness::reports
