// The inline SVG chart of one trend: a point per run at its commit (first-parent order,
// reruns of a commit side by side), its 95% interval as a whisker, the gate line, the
// at-risk band, bisect culprits as markers; a <title> per point for the hover.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "reports/report_model.h"

namespace harness::reports {

// Maps commits and values to SVG coordinates. The value axis spans every point, interval
// end, gate and bound, padded by 5% (at least 0.005) so nothing sits on the frame; the
// at-risk band, often far wider than the points, is clipped to it.
struct ChartScale {
  static constexpr double kWidth = 760, kHeight = 190;
  static constexpr double kLeft = 54, kRight = 12, kTop = 10, kBottom = 22;
  double y_min = 0, y_max = 1;
  std::size_t columns = 1;                 // distinct commits among the points
  double X(std::size_t column, std::size_t rerun = 0, std::size_t reruns = 1) const;
  double Y(double value) const;
};
ChartScale ScaleFor(const Trend& t);

// commit_url: the --commit-url template (empty: no links).
std::string TrendSvg(const Trend& t, const std::vector<ReportCommit>& commits, const std::string& commit_url);

}  // namespace harness::reports
