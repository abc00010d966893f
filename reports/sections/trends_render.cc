#include "reports/sections/trends.h"

#include <algorithm>

#include <fmt/format.h>

#include "reports/html_section.h"
#include "reports/report_json.h"
#include "reports/report_model.h"
#include "reports/report_text.h"
#include "reports/trend_chart.h"

namespace harness::reports {

namespace {

Json Opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

class TrendsHtmlSection : HtmlSection {
 public:
  using HtmlSection::HtmlSection;

  void Trends() {
    out_ += fmt::format("<section id=\"trends\"><h2>Trends <span class=\"count\">{} metric cases</span></h2>\n",
                        m_.trends.size());
    if (m_.trends.empty()) out_ += "<p class=\"none\">No case stored a proportion or tolerance metric.</p>\n";
    else
      out_ += "<p class=\"legend\">One point per run, commits in first-parent order (reruns of a commit side by side); "
              "whiskers: 95% interval; dashed red: gate or bound; amber band: values whose interval straddles the gate "
              "(AT-RISK); black marker: a bisect culprit. Hover a point for its commit, value and verdict.</p>\n";
    for (const auto& t : m_.trends) {
      const auto& last = t.points.back();
      std::string status = AtRisk(last.verdict) ? "at-risk" : std::string(Word(last.status));
      out_ += fmt::format(R"(<article class="item" data-suite="{}" data-status="{}"><h3>{} {} <span class="since">{}</span></h3>)",
                          E(t.suite), status, Badge(VerdictClass(last.verdict), last.verdict),
                          E(t.case_id), E(t.metric));
      out_ += TrendSvg(t, m_.commits, o_.commit_url);
      std::string legend = fmt::format("{} runs", t.points.size());
      if (t.omitted) legend += fmt::format(" (the {} older runs are left out)", t.omitted);
      legend += fmt::format("; newest {} = {:.4f}", t.metric, last.value);
      if (last.low && last.high) legend += fmt::format(" [{:.4f}, {:.4f}]", *last.low, *last.high);
      if (t.gate) legend += fmt::format("; gate {:.4f}", *t.gate);
      if (t.band_low) legend += fmt::format("; at-risk band [{:.4f}, {:.4f}]", *t.band_low, *t.band_high);
      if (t.bound) legend += "; fails above 1 (the whole bound used)";
      out_ += "<p class=\"legend\">" + E(legend) + "</p></article>\n";
    }
    out_ += "</section>\n";
  }
};

}  // namespace

void TrendsHtml(HtmlPage& page) { TrendsHtmlSection(page).Trends(); }

std::string TrendsText(const ReportModel& m) {
  std::string out = fmt::format("\nTRENDS ({})\n", m.trends.size());
  for (const auto& t : m.trends) {
    const auto [lo, hi] = std::minmax_element(t.points.begin(), t.points.end(),
                                              [](const TrendPoint& a, const TrendPoint& b) { return a.value < b.value; });
    out += fmt::format("  {} {}: {} runs, first {:.4f} at {}, newest {:.4f} at {} ({}), min {:.4f}, max {:.4f}", t.case_id,
                       t.metric, t.points.size(), t.points.front().value, ShortCommit(m, t.points.front().commit),
                       t.points.back().value, ShortCommit(m, t.points.back().commit), t.points.back().verdict, lo->value,
                       hi->value);
    if (t.gate) out += fmt::format(", gate {:.4f}", *t.gate);
    for (const auto& c : t.culprits) out += fmt::format(", culprit {}", ShortCommit(m, c.commit));
    out += "\n";
  }
  return out;
}

Json TrendsJson(const ReportModel& m) {
  Json trends = Json::array();
  for (const auto& t : m.trends) {
    Json points = Json::array();
    for (const auto& p : t.points)
      points.push_back({{"commit", CommitSha(m, p.commit)}, {"run", p.run_id}, {"status", Word(p.status)}, {"value", p.value},
                        {"low", Opt(p.low)}, {"high", Opt(p.high)}, {"n", p.n}, {"verdict", p.verdict}});
    Json culprits = Json::array();
    for (const auto& c : t.culprits) culprits.push_back({{"commit", CommitSha(m, c.commit)}, {"session", c.session}, {"text", c.text}});
    trends.push_back({{"case", t.case_id}, {"metric", t.metric}, {"gate", Opt(t.gate)}, {"bound", Opt(t.bound)},
                      {"at_risk_band", t.band_low ? Json::array({*t.band_low, *t.band_high}) : Json(nullptr)},
                      {"points", points}, {"omitted", t.omitted}, {"culprits", culprits}});
  }
  return trends;
}

}  // namespace harness::reports
