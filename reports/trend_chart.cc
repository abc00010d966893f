#include "reports/trend_chart.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/results/metric_names.h"
#include "harness/util/git.h"
#include "reports/html_escape.h"

namespace harness::reports {

double ChartScale::X(std::size_t column, std::size_t rerun, std::size_t reruns) const {
  const double plot = kWidth - kLeft - kRight;
  const double step = plot / static_cast<double>(std::max<std::size_t>(columns, 1));
  const double center = kLeft + step * (static_cast<double>(column) + 0.5);
  if (reruns <= 1) return center;
  // Reruns of one commit spread over at most 60% of the column, oldest left.
  const double spread = std::min(step * 0.6, 4.0 * static_cast<double>(reruns));
  return center - spread / 2 + spread * static_cast<double>(rerun) / static_cast<double>(reruns - 1);
}

double ChartScale::Y(double value) const {
  const double plot = kHeight - kTop - kBottom;
  return kTop + plot * (y_max - value) / (y_max - y_min);
}

ChartScale ScaleFor(const Trend& t) {
  ChartScale s;
  double lo = INFINITY, hi = -INFINITY;
  auto take = [&](double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  std::size_t columns = 0;
  std::size_t last = static_cast<std::size_t>(-1);
  for (const auto& p : t.points) {
    take(p.value);
    if (p.low) take(*p.low);
    if (p.high) take(*p.high);
    if (p.commit != last) ++columns, last = p.commit;
  }
  if (t.gate) take(*t.gate);
  if (t.bound) take(*t.bound);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  const double pad = std::max((hi - lo) * 0.05, 0.005);
  s.y_min = lo - pad;
  s.y_max = hi + pad;
  s.columns = std::max<std::size_t>(columns, 1);
  return s;
}

namespace {

std::string Num(double v) { return fmt::format("{:.1f}", v); }

std::string ValueText(double v, const Trend& t) {
  return t.metric == metric_names::kAccuracy || t.gate ? fmt::format("{:.4f}", v) : fmt::format("{:.4g}", v);
}

const char* PointClass(const TrendPoint& p) {
  if (ParseGateVerdict(p.verdict) == GateVerdict::kAtRisk) return "pt-risk";
  switch (p.status) {
    case CaseStatus::kPass: return "pt-pass";
    case CaseStatus::kFail: return "pt-fail";
    default: return "pt-error";
  }
}

using S = ChartScale;

// The plot's frame and, when the trend has one, its at-risk band.
std::string FrameSvg(const Trend& t, const ChartScale& s) {
  const double x0 = S::kLeft, x1 = S::kWidth - S::kRight;
  std::string out = fmt::format(R"(<rect class="frame" x="{}" y="{}" width="{}" height="{}"/>)", Num(x0), Num(S::kTop),
                                Num(x1 - x0), Num(S::kHeight - S::kTop - S::kBottom));
  if (t.band_low && t.band_high) {
    const double top = s.Y(std::min(*t.band_high, s.y_max)), bottom = s.Y(std::max(*t.band_low, s.y_min));
    out += fmt::format(R"(<rect class="band" x="{}" y="{}" width="{}" height="{}"><title>at-risk band: an observed )"
                       R"(value in [{:.4f}, {:.4f}] has a 95% interval that straddles the gate</title></rect>)",
                       Num(x0), Num(top), Num(x1 - x0), Num(std::max(bottom - top, 1.0)), *t.band_low, *t.band_high);
  }
  return out;
}

// Axis labels: bottom, top and the threshold.
std::string AxisSvg(const Trend& t, const ChartScale& s) {
  const double x0 = S::kLeft, x1 = S::kWidth - S::kRight;
  std::string out;
  for (double v : {s.y_min, s.y_max})
    out += fmt::format(R"(<text class="axis" x="{}" y="{}">{}</text>)", Num(x0 - 4), Num(s.Y(v) + 4), ValueText(v, t));
  for (auto [value, cls, word] : {std::tuple{t.gate, "gate", "gate"}, std::tuple{t.bound, "gate", "bound"}}) {
    if (!value) continue;
    out += fmt::format(R"(<line class="{0}" x1="{1}" x2="{2}" y1="{3}" y2="{3}"><title>{4} {5}</title></line>)", cls,
                       Num(x0), Num(x1), Num(s.Y(*value)), word, ValueText(*value, t));
    out += fmt::format(R"(<text class="axis" x="{}" y="{}">{}</text>)", Num(x0 - 4), Num(s.Y(*value) + 4),
                       ValueText(*value, t));
  }
  return out;
}

// Columns: one per distinct commit among the points.
struct ChartColumns {
  std::map<std::size_t, std::size_t> column_of;  // commit -> column
  std::map<std::size_t, std::size_t> reruns_at;  // commit -> results there
};

ChartColumns ColumnsOf(const Trend& t) {
  ChartColumns c;
  for (const auto& p : t.points) {
    c.column_of.emplace(p.commit, c.column_of.size());
    c.reruns_at[p.commit]++;
  }
  return c;
}

std::string CulpritsSvg(const Trend& t, const std::vector<ReportCommit>& commits, const ChartScale& s,
                        const ChartColumns& columns) {
  std::string out;
  for (const auto& m : t.culprits) {
    auto it = columns.column_of.find(m.commit);
    if (it == columns.column_of.end()) continue;
    const double x = s.X(it->second);
    out += fmt::format(R"(<g class="culprit"><line x1="{0}" x2="{0}" y1="{1}" y2="{2}"/><path d="M{3} {1}h10l-5 8z"/>)"
                       R"(<title>{4} at {5}</title></g>)",
                       Num(x), Num(S::kTop), Num(S::kHeight - S::kBottom), Num(x - 5), HtmlEscape(m.text),
                       HtmlEscape(ShortSha(commits[m.commit].sha)));
  }
  return out;
}

// One point at x: its whisker and mark, the hover title, a link to its commit when there is one.
std::string PointSvg(const Trend& t, const TrendPoint& p, const ReportCommit& c, const ChartScale& s, double x,
                     const std::string& commit_url) {
  std::string title = fmt::format("{} {}\nrun {}: {} = {}", ShortSha(c.sha), c.subject, p.run_id, t.metric,
                                  ValueText(p.value, t));
  if (p.low && p.high) title += fmt::format(" (95% [{:.4f}, {:.4f}])", *p.low, *p.high);
  if (p.n) title += fmt::format(", n = {}", p.n);
  title += "\n" + p.verdict;
  std::string mark;
  if (p.low && p.high)
    mark += fmt::format(R"(<line class="whisker" x1="{0}" x2="{0}" y1="{1}" y2="{2}"/>)", Num(x), Num(s.Y(*p.high)),
                        Num(s.Y(*p.low)));
  mark += fmt::format(R"(<circle class="{}" cx="{}" cy="{}" r="3.5"/>)", PointClass(p), Num(x), Num(s.Y(p.value)));
  const std::string url = CommitUrl(commit_url, c.sha);
  if (url.empty()) return fmt::format("<g>{}<title>{}</title></g>", mark, HtmlEscape(title));
  return fmt::format(R"(<a href="{}">{}<title>{}</title></a>)", HtmlEscape(url), mark, HtmlEscape(title));
}

// The first and last commit under the axis.
std::string TicksSvg(const Trend& t, const std::vector<ReportCommit>& commits) {
  if (t.points.empty()) return "";
  const double x0 = S::kLeft, x1 = S::kWidth - S::kRight;
  const auto& first = commits[t.points.front().commit];
  const auto& last = commits[t.points.back().commit];
  return fmt::format(R"(<text class="tick" x="{}" y="{}">{}</text>)", Num(x0), Num(S::kHeight - 6),
                     HtmlEscape(first.sha.substr(0, 8))) +
         fmt::format(R"(<text class="tick end" x="{}" y="{}">{}</text>)", Num(x1), Num(S::kHeight - 6),
                     HtmlEscape(last.sha.substr(0, 8)));
}

}  // namespace

std::string TrendSvg(const Trend& t, const std::vector<ReportCommit>& commits, const std::string& commit_url) {
  const ChartScale s = ScaleFor(t);
  std::string out = fmt::format(
      R"(<svg class="chart" viewBox="0 0 {0} {1}" width="{0}" height="{1}" role="img" aria-label="{2}: {3} by commit">)",
      Num(S::kWidth), Num(S::kHeight), HtmlEscape(t.case_id), HtmlEscape(t.metric));
  out += FrameSvg(t, s);
  out += AxisSvg(t, s);
  ChartColumns columns = ColumnsOf(t);
  out += CulpritsSvg(t, commits, s, columns);
  std::map<std::size_t, std::size_t> seen;
  for (const auto& p : t.points) {
    const double x = s.X(columns.column_of[p.commit], seen[p.commit]++, columns.reruns_at[p.commit]);
    out += PointSvg(t, p, commits[p.commit], s, x, commit_url);
  }
  out += TicksSvg(t, commits);
  out += "</svg>";
  return out;
}

}  // namespace harness::reports
