#include "reports/report_json.h"

#include "harness/util/versions.h"

namespace harness::reports {

const std::string& CommitSha(const ReportModel& m, std::size_t commit) { return m.commits[commit].sha; }

namespace {

Json QueryJson(const ReportQuery& q) {
  return {{"last", q.since.empty() ? Json(q.last_n) : Json(nullptr)},
          {"since", q.since.empty() ? Json(nullptr) : Json(q.since)},
          {"suite", q.suite},
          {"case", q.case_glob}};
}

Json CommitsJson(const ReportModel& m) {
  Json commits = Json::array();
  for (const auto& c : m.commits)
    commits.push_back({{"sha", c.sha}, {"subject", c.subject}, {"ordinal", c.ordinal ? Json(*c.ordinal) : Json(nullptr)}});
  return commits;
}

Json NightJson(const ReportModel& m) {
  const NightCounts& n = m.night.counts;
  return {{"verdict", Word(m.night.verdict)}, {"line", m.night.Line()}, {"exit_code", m.night.ExitCode()},
          {"pass", n.pass}, {"at_risk", n.at_risk}, {"fail", n.fail}, {"regressed", n.regressed}, {"error", n.error},
          {"skip", n.skip}, {"missing_shards", n.missing_shards}};
}

}  // namespace

Json ReportJson(const ReportModel& m) {
  Json j{{"format_version", kReportFormat}, {"runs", m.runs}};
  j["query"] = QueryJson(m.query);
  j["commits"] = CommitsJson(m);
  j["night"] = NightJson(m);
  j["changes"] = ChangesJson(m);
  j["summary"] = SummaryJson(m);
  j["incomplete_nightlies"] = IncompleteNightliesJson(m);
  j["failures"] = FailuresJson(m);
  j["regressions"] = RegressionsJson(m);
  j["regressions_with_culprit"] = m.RegressionsWithCulprit();
  j["failures_listed"] = FailuresListedJson(m);
  j["trends"] = TrendsJson(m);
  j["flaky"] = FlakyJson(m);
  j["flips"] = FlipsJson(m);
  j["bisect"] = BisectJson(m);
  return j;
}

}  // namespace harness::reports
