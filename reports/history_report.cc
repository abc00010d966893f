#include "reports/history_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/git.h"
#include "harness/util/utf8.h"
#include "harness/util/versions.h"

namespace harness::reports {

std::vector<HistoryGroup> GroupHistory(const std::vector<HistoryRow>& rows) {
  std::vector<HistoryGroup> out;
  for (const auto& r : rows) {  // the store returns a commit's runs of a case next to each other
    if (out.empty() || out.back().sha != r.sha || out.back().case_id != r.case_id)
      out.push_back({r.sha, r.ordinal, r.subject, r.case_id, {}, {}});
    out.back().runs.push_back(r);
  }
  for (auto& g : out) {
    double sum = 0;
    int values = 0;
    bool verdict = false;
    for (const auto& r : g.runs) {
      verdict |= !r.label.empty();
      if (r.value) {
        sum += *r.value;
        ++values;
      }
    }
    if (values && !verdict) g.mean = sum / values;
  }
  return out;
}

namespace {

// The metric column: the verdict words, the one run's value with its interval, or the mean.
std::string MetricCell(const HistoryGroup& g) {
  std::vector<std::string> labels;
  for (const auto& r : g.runs)
    if (!r.label.empty()) labels.push_back(r.label);
  if (!labels.empty()) return fmt::format("{}", fmt::join(labels, " "));
  if (!g.mean) return "-";
  const auto& only = g.runs.front();
  if (g.runs.size() == 1 && only.low && only.high) return fmt::format("{:.4g} [{:.3g},{:.3g}]", *g.mean, *only.low, *only.high);
  return g.runs.size() == 1 ? fmt::format("{:.4g}", *g.mean) : fmt::format("mean {:.4g}", *g.mean);
}

}  // namespace

std::string HistoryText(const HistoryQuery& q, const std::vector<HistoryRow>& rows) {
  const auto groups = GroupHistory(rows);
  size_t case_width = 4;
  for (const auto& g : groups) case_width = std::max(case_width, g.case_id.size());
  std::string out = fmt::format("{:<12}  {:<6}  {:<{}}  {:>4}  {:<14}  {:<18}  {}\n", "COMMIT", "ORD", "CASE",
                                case_width, "RUNS", "STATUS", q.metric.empty() ? "-" : q.metric, "SUBJECT");
  for (const auto& g : groups) {
    std::vector<std::string_view> statuses;
    for (const auto& r : g.runs) statuses.push_back(Label(r.status));
    out += fmt::format("{:<12}  {:<6}  {:<{}}  {:>4}  {:<14}  {:<18}  {}\n", ShortSha(g.sha),
                       g.ordinal ? std::to_string(*g.ordinal) : "-", g.case_id, case_width, g.runs.size(),
                       fmt::format("{}", fmt::join(statuses, ",")), MetricCell(g), g.subject);
  }
  return TerminalText(out);
}

Json HistoryJson(const HistoryQuery& q, const std::vector<HistoryRow>& rows) {
  Json j{{"format_version", kHistoryFormat}, {"metric", q.metric}, {"commits", Json::array()}};
  j["case"] = q.case_id.empty() ? Json(nullptr) : Json(q.case_id);
  j["suite"] = q.suite.empty() ? Json(nullptr) : Json(q.suite);
  for (const auto& g : GroupHistory(rows)) {
    Json& commits = j["commits"];
    if (commits.empty() || commits.back()["commit"] != g.sha) {
      Json c{{"commit", g.sha}, {"subject", g.subject}, {"cases", Json::array()}};
      c["ordinal"] = g.ordinal ? Json(*g.ordinal) : Json(nullptr);
      commits.push_back(c);
    }
    Json cj{{"case", g.case_id}, {"count", g.runs.size()}, {"runs", Json::array()}};
    if (!q.metric.empty()) cj["mean"] = g.mean ? Json(*g.mean) : Json(nullptr);
    for (const auto& r : g.runs) {
      Json rj{{"run_id", r.run_id}, {"started_at", r.started_at}, {"status", Word(r.status)}};
      if (!q.metric.empty()) {
        rj["value"] = r.value ? Json(*r.value) : Json(nullptr);
        if (r.n) rj["n"] = r.n;
        if (r.low) rj["low"] = *r.low;
        if (r.high) rj["high"] = *r.high;
        if (!r.label.empty()) rj["verdict"] = r.label;
      }
      cj["runs"].push_back(rj);
    }
    commits.back()["cases"].push_back(cj);
  }
  return j;
}

}  // namespace harness::reports
