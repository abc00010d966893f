#include "reports/run_summary.h"

#include <fmt/format.h>

#include "harness/util/utf8.h"
#include "harness/util/versions.h"

namespace harness::reports {

std::string KeyDetail(const CaseResult& c) {
  if (!c.message.empty()) {  // a failure's finding, or a passing case's note (an AT-RISK verdict)
    // The first line is the finding in domain words with its numbers (the location and the
    // framework's text follow it in the message): shown whole, up to a bound that keeps a
    // runaway line from flooding the terminal.
    const std::string first = c.message.substr(0, c.message.find('\n'));
    const std::string_view kept = Utf8Prefix(first, kMaxKeyDetailBytes);
    return kept.size() == first.size() ? first : std::string(kept) + "...";
  }
  if (!c.metrics.empty()) {
    const auto& m = c.metrics.front();
    std::string d = fmt::format("{}={:.4g}", m.name, m.value);
    if (m.low && m.high) d += fmt::format(" [{:.4g}, {:.4g}]", *m.low, *m.high);
    return d;
  }
  return "";
}

Json MetricsJson(const std::vector<Metric>& metrics) {
  Json out = Json::array();
  for (const auto& m : metrics) {
    Json mj{{"name", m.name}, {"value", m.value}, {"n", m.n}};
    if (m.low) mj["low"] = *m.low;
    if (m.high) mj["high"] = *m.high;
    if (!m.label.empty()) mj["verdict"] = m.label;
    out.push_back(mj);
  }
  return out;
}

Json RunSummaryJson(int64_t run_id, const std::string& commit, const std::string& identity_hash, const Json& context,
                    const std::vector<CaseResult>& cases) {
  Json j;
  j["format_version"] = kRunSummaryFormat;
  j["run_id"] = run_id;
  j["commit"] = commit;
  j["identity"] = identity_hash;
  j["context"] = context;
  j["cases"] = Json::array();
  for (const auto& c : cases) {
    Json cj{{"id", c.case_id}, {"status", Word(c.status)}, {"message", c.message}, {"duration_s", c.duration_s}};
    cj["metrics"] = MetricsJson(c.metrics);
    j["cases"].push_back(cj);
  }
  const StatusCounts counts = CountStatuses(cases);
  j["summary"] = {{"pass", counts.pass}, {"fail", counts.fail}, {"error", counts.error}, {"skip", counts.skip}};
  j["status"] = Word(counts.Overall());
  const NightSummary night = JudgeNight(cases);
  j["night_verdict"] = Word(night.verdict);
  j["night"] = night.Line();
  return j;
}

std::string RunSummaryText(const std::vector<CaseResult>& cases, const NightSummary& night) {
  std::size_t width = 4;
  for (const auto& c : cases) width = std::max(width, c.case_id.size());
  std::string out = fmt::format("{:<6}  {:<{}}  {}\n", "STATUS", "CASE", width, "DETAIL");
  for (const auto& c : cases) out += fmt::format("{:<6}  {:<{}}  {}\n", Label(c.status), c.case_id, width, KeyDetail(c));
  out += night.Line() + "\n";
  return TerminalText(out);
}

}  // namespace harness::reports
