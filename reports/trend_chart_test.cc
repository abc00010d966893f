#include "reports/trend_chart.h"

#include <cmath>

#include <gtest/gtest.h>

namespace harness::reports {
namespace {

Trend TwoCommits() {
  Trend t{"gsm8k/test_0", "accuracy"};
  t.gate = 0.91;
  t.points = {{0, 1, CaseStatus::kPass, 0.92, 0.90, 0.94, 1000, "AT-RISK"},
              {1, 2, CaseStatus::kPass, 0.93, 0.91, 0.95, 1000, "PASS"},
              {1, 3, CaseStatus::kFail, 0.95, 0.93, 0.97, 1000, "PASS"}};
  return t;
}

TEST(TrendChart, ScaleSpansEveryIntervalEndAndTheGatePadded) {
  const ChartScale s = ScaleFor(TwoCommits());
  // Data span [0.90, 0.97]; pad 5% of 0.07 = 0.0035 -> at least 0.005.
  EXPECT_NEAR(s.y_min, 0.895, 1e-12);
  EXPECT_NEAR(s.y_max, 0.975, 1e-12);
  EXPECT_EQ(s.columns, 2u);
  EXPECT_NEAR(s.Y(s.y_max), ChartScale::kTop, 1e-9);
  EXPECT_NEAR(s.Y(s.y_min), ChartScale::kHeight - ChartScale::kBottom, 1e-9);
  EXPECT_GT(s.Y(0.91), s.Y(0.95)) << "higher values are higher up";
  // Two columns over the 694-pixel plot: centres at 54 + 173.5 and 54 + 520.5.
  EXPECT_NEAR(s.X(0), 227.5, 1e-9);
  EXPECT_NEAR(s.X(1), 574.5, 1e-9);
  EXPECT_LT(s.X(1, 0, 2), s.X(1, 1, 2)) << "reruns of one commit side by side, oldest left";
}

// The gate and the bound are lines the reader must see even when every point is far from
// them: a case passing well above its gate, a bound use well under its bound of 1.
TEST(TrendChart, TheGateAndTheBoundStretchTheScaleBeyondThePoints) {
  Trend gated{"gsm8k/test_0", "accuracy"};
  gated.gate = 0.91;
  gated.points = {{0, 1, CaseStatus::kPass, 0.95, 0.94, 0.96, 1000, "PASS"},
                  {1, 2, CaseStatus::kPass, 0.96, 0.95, 0.97, 1000, "PASS"}};
  ChartScale s = ScaleFor(gated);
  // Span [0.91, 0.97]; pad 5% of 0.06 = 0.003 -> at least 0.005.
  EXPECT_NEAR(s.y_min, 0.905, 1e-12);
  EXPECT_NEAR(s.y_max, 0.975, 1e-12);

  Trend bounded{"kernels/test_0", "gemm_max_bound_use"};
  bounded.bound = 1.0;
  bounded.points = {{0, 1, CaseStatus::kPass, 0.40, std::nullopt, std::nullopt, 0, ""},
                    {1, 2, CaseStatus::kPass, 0.60, std::nullopt, std::nullopt, 0, ""}};
  s = ScaleFor(bounded);
  // Span [0.40, 1.00]; pad 5% of 0.60 = 0.03.
  EXPECT_NEAR(s.y_min, 0.37, 1e-12);
  EXPECT_NEAR(s.y_max, 1.03, 1e-12);
}

// The at-risk band can be far wider than the points (a few questions make a wide interval):
// it is clipped to the scale, not a reason to flatten the points into a strip.
TEST(TrendChart, TheAtRiskBandIsClippedToTheScaleNotSpannedByIt) {
  Trend t = TwoCommits();
  t.band_low = 0.60, t.band_high = 0.99;
  const ChartScale s = ScaleFor(t);
  EXPECT_NEAR(s.y_min, 0.895, 1e-12);
  EXPECT_NEAR(s.y_max, 0.975, 1e-12);
}

// Points without an interval (a metric with no n: a bound use, a latency) span the scale by
// their values alone, on either end of an interval-less point.
TEST(TrendChart, APointWithoutAnIntervalSpansTheScaleByItsValue) {
  Trend t{"kernels/test_0", "gemm_max_bound_use"};
  t.points = {{0, 1, CaseStatus::kPass, 0.40, std::nullopt, std::nullopt, 0, ""},
              {1, 2, CaseStatus::kPass, 0.55, std::nullopt, std::nullopt, 0, ""},
              {2, 3, CaseStatus::kPass, 0.70, 0.65, std::nullopt, 0, ""},
              {3, 4, CaseStatus::kPass, 0.50, std::nullopt, 0.52, 0, ""}};
  const ChartScale s = ScaleFor(t);
  // Data span [0.40, 0.70]; pad 5% of 0.30 = 0.015.
  EXPECT_NEAR(s.y_min, 0.385, 1e-12);
  EXPECT_NEAR(s.y_max, 0.715, 1e-12);
}

// An interval end or a value that is not finite (SQLite keeps an infinite REAL that another
// tool wrote; the store's own values are finite) is left out of the scale: the axis spans the
// finite numbers.
TEST(TrendChart, ANumberThatIsNotFiniteIsLeftOutOfTheScale) {
  Trend t{"kernels/test_0", "gemm_max_bound_use"};
  t.points = {{0, 1, CaseStatus::kPass, 0.40, -INFINITY, std::nullopt, 0, ""},
              {1, 2, CaseStatus::kPass, 0.70, std::nullopt, INFINITY, 0, ""},
              {2, 3, CaseStatus::kPass, INFINITY, std::nullopt, std::nullopt, 0, ""}};
  const ChartScale s = ScaleFor(t);
  EXPECT_NEAR(s.y_min, 0.385, 1e-12);
  EXPECT_NEAR(s.y_max, 0.715, 1e-12);
}

// A trend of one commit (the first nightly) is one column: its points at the middle of
// the plot, not at a quarter of it; a scale with no column yet divides by one, not zero.
TEST(TrendChart, OneCommitIsOneColumnCentredInThePlot) {
  Trend t{"gsm8k/test_0", "accuracy"};
  t.points = {{0, 1, CaseStatus::kPass, 0.92, 0.90, 0.94, 1000, "PASS"}};
  const ChartScale s = ScaleFor(t);
  EXPECT_EQ(s.columns, 1u);
  // The 694-pixel plot from 54: its middle at 401.
  EXPECT_NEAR(s.X(0), 401.0, 1e-9);
  ChartScale none;
  none.columns = 0;
  EXPECT_NEAR(none.X(0), 401.0, 1e-9);
}

// Reruns of a commit spread 4 pixels apart, but never over more than 60 % of their column:
// with many commits (narrow columns) and many reruns they stay off the neighbours' columns.
TEST(TrendChart, RerunsSpreadWithinTheirOwnColumn) {
  ChartScale s;
  s.columns = 2;
  EXPECT_NEAR(s.X(0, 2, 3) - s.X(0, 0, 3), 12.0, 1e-9) << "3 reruns, wide columns: 4 pixels per rerun";
  s.columns = 100;  // 6.94-pixel columns
  const double step = (ChartScale::kWidth - ChartScale::kLeft - ChartScale::kRight) / 100;
  for (std::size_t reruns : {2u, 5u, 12u}) {
    EXPECT_NEAR(s.X(50, reruns - 1, reruns) - s.X(50, 0, reruns), 0.6 * step, 1e-9) << reruns;
    for (std::size_t r = 0; r < reruns; ++r) {
      EXPECT_GT(s.X(50, r, reruns), s.X(49) + step / 2) << "rerun " << r << " of " << reruns;
      EXPECT_LT(s.X(50, r, reruns), s.X(51) - step / 2) << "rerun " << r << " of " << reruns;
    }
  }
}

TEST(TrendChart, SvgHasWhiskersGateTitlesAndEscapedLinks) {
  Trend t = TwoCommits();
  t.band_low = 0.89;
  t.band_high = 0.93;
  t.culprits.push_back({1, 7, "bisect session 7: <culprit>"});
  std::vector<ReportCommit> commits = {{"aaaa", "first <i>", 1}, {"bbbb", "second", 2}};
  const std::string svg = TrendSvg(t, commits, "https://h/c/{sha}?x=\"");
  EXPECT_EQ(svg.find("<i>"), std::string::npos);
  EXPECT_NE(svg.find("first &lt;i&gt;"), std::string::npos);
  EXPECT_NE(svg.find("class=\"gate\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"band\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"culprit\""), std::string::npos);
  EXPECT_NE(svg.find("session 7: &lt;culprit&gt;"), std::string::npos);
  EXPECT_NE(svg.find("href=\"https://h/c/bbbb?x=&quot;\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"pt-risk\""), std::string::npos) << "AT-RISK is amber, never the pass colour";
  size_t whiskers = 0;
  for (size_t p = svg.find("class=\"whisker\""); p != std::string::npos; p = svg.find("class=\"whisker\"", p + 1)) ++whiskers;
  EXPECT_EQ(whiskers, 3u);
}

// The axis names the first commit of the trend at its start and the last at its end, each cut
// to 8 characters and escaped: not the window's ends, and not one commit twice.
TEST(TrendChart, TheAxisNamesTheTrendsFirstAndLastCommitEscaped) {
  Trend t{"gsm8k/test_0", "accuracy"};
  t.points = {{1, 1, CaseStatus::kPass, 0.92, 0.90, 0.94, 1000, "PASS"},
              {2, 2, CaseStatus::kPass, 0.93, 0.91, 0.95, 1000, "PASS"},
              {3, 3, CaseStatus::kPass, 0.94, 0.92, 0.96, 1000, "PASS"}};
  std::vector<ReportCommit> commits = {
      {"00000000", "before", 1}, {"aaaa1111bbbb", "a", 2}, {"cccc2222", "c", 3}, {"<d&\"3333ee", "d", 4}, {"ffff", "f", 5}};
  const std::string svg = TrendSvg(t, commits, "");
  const auto tick = [&](const std::string& cls) {
    const std::size_t at = svg.find("<text class=\"" + cls + "\"");
    if (at == std::string::npos) return std::string("(none)");
    const std::size_t from = svg.find('>', at) + 1;
    return svg.substr(from, svg.find("</text>", from) - from);
  };
  EXPECT_EQ(tick("tick"), "aaaa1111") << svg;
  EXPECT_EQ(tick("tick end"), "&lt;d&amp;&quot;3333") << svg;
}

// Each point is coloured by its own state: AT-RISK before its status, then pass, fail and
// anything else (an error) apart, one class each, in the order of the points.
TEST(TrendChart, EachPointIsColouredByItsOwnState) {
  Trend t{"gsm8k/test_0", "accuracy"};
  t.gate = 0.91;
  t.points = {{0, 1, CaseStatus::kError, 0.90, 0.88, 0.92, 1000, ""},
              {1, 2, CaseStatus::kFail, 0.89, 0.87, 0.91, 1000, "FAIL"},
              {2, 3, CaseStatus::kPass, 0.92, 0.90, 0.94, 1000, "AT-RISK"},
              {3, 4, CaseStatus::kPass, 0.95, 0.93, 0.97, 1000, "PASS"}};
  std::vector<ReportCommit> commits = {{"aaaa", "a", 1}, {"bbbb", "b", 2}, {"cccc", "c", 3}, {"dddd", "d", 4}};
  const std::string svg = TrendSvg(t, commits, "");
  std::vector<std::string> classes;
  for (size_t p = svg.find("class=\"pt-"); p != std::string::npos; p = svg.find("class=\"pt-", p + 1))
    classes.push_back(svg.substr(p + 7, svg.find('"', p + 7) - (p + 7)));
  EXPECT_EQ(classes, (std::vector<std::string>{"pt-error", "pt-fail", "pt-risk", "pt-pass"})) << svg;
}

}  // namespace
}  // namespace harness::reports
