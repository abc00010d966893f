#include "reports/report_json.h"

#include <cmath>
#include <map>
#include <tuple>

#include "harness/util/versions.h"

namespace harness::reports {
namespace {

Json Opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// A session's timing as bisect's own JSON writes it ("time"); null for an untimed one.
Json TimingJson(const std::optional<BisectTiming>& timing) {
  if (!timing) return Json(nullptr);
  Json t = Json::object();
  AddTiming(t, *timing);
  return t;
}

// A session that named several culprits adds "culprits", each with its own drop, in
// bisect's own shape (ChangesJson); a one-culprit note reads as it always did.
Json CulpritJson(const CulpritNote& n) {
  Json j{{"verdict", Word(n.verdict)},
         {"culprit", n.culprit.empty() ? Json(nullptr) : Json(n.culprit)},
         {"subject", n.subject},
         {"confidence", n.confidence},
         {"runs", n.runs},
         {"session", n.session ? Json(n.session) : Json(nullptr)},
         {"range", n.range},
         {"time", TimingJson(n.timing)},
         {"text", CulpritWords(n)}};
  if (n.culprits.size() > 1) j["culprits"] = ChangesJson(n.culprits);
  return j;
}

Json Changes(const std::vector<OpRowChange>& rows) {
  Json out = Json::array();
  for (const auto& r : rows)
    out.push_back({{"op", r.op}, {"input_shapes", r.input_shapes}, {"calls_before", r.calls_before},
                   {"calls_after", r.calls_after}});
  return out;
}

const std::string& CommitSha(const ReportModel& m, std::size_t commit) { return m.commits[commit].sha; }

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

Json SummaryJson(const ReportModel& m) {
  Json summary = Json::array();
  for (const auto& s : m.summary) {
    Json shards = Json::array();
    for (const auto& sh : s.shards)
      shards.push_back({{"shard", sh.shard}, {"run", sh.run_id}, {"host", sh.host}, {"attempt", sh.attempt}});
    Json reruns = Json::array();
    for (const auto& r : s.reruns)
      reruns.push_back({{"shard", r.shard}, {"run", r.run_id}, {"host", r.host}, {"attempt", r.attempt},
                        {"replaced_by_run", r.superseded_by}});
    summary.push_back({{"suite", s.suite}, {"run", s.run_id}, {"commit", CommitSha(m, s.commit)}, {"stack", s.stack},
                       {"host", s.host}, {"started_at", s.started_at}, {"finished_at", s.finished_at},
                       {"pass", s.pass}, {"at_risk", s.at_risk}, {"fail", s.fail}, {"regressed", s.regressed}, {"error", s.error},
                       {"skip", s.skip}, {"case_seconds", s.case_seconds}, {"nightly", s.nightly},
                       {"shards", shards}, {"reruns", reruns}});
  }
  return summary;
}

Json NightJson(const ReportModel& m) {
  const NightCounts& n = m.night.counts;
  return {{"verdict", Word(m.night.verdict)}, {"line", m.night.Line()}, {"exit_code", m.night.ExitCode()},
          {"pass", n.pass}, {"at_risk", n.at_risk}, {"fail", n.fail}, {"regressed", n.regressed}, {"error", n.error},
          {"skip", n.skip}, {"missing_shards", n.missing_shards}};
}

Json ChangesJson(const ReportModel& m) {
  Json changes = Json::array();
  for (const auto& c : m.changes) {
    Json j{{"kind", Word(c.kind)}, {"case", c.case_id}, {"status", Word(c.status)}, {"run", c.run_id},
           {"commit", CommitSha(m, c.commit)}, {"finding", c.finding}, {"no_culprit", c.no_culprit}};
    j["before"] = c.before_commit ? Json{{"commit", CommitSha(m, *c.before_commit)}, {"run", c.before_run},
                                         {"status", Word(c.before_status)}}
                                  : Json(nullptr);
    j["culprit"] = c.culprit ? CulpritJson(*c.culprit) : Json(nullptr);
    changes.push_back(std::move(j));
  }
  return changes;
}

Json IncompleteNightliesJson(const ReportModel& m) {
  Json incomplete = Json::array();
  for (const auto& g : m.incomplete_nightlies)
    incomplete.push_back({{"nightly", g.nightly}, {"commit", g.sha}, {"identity", g.config_hash},
                          {"missing", g.missing}, {"missing_count", g.missing_count}, {"unfinished", g.unfinished},
                          {"text", NightlyGapText(g)}});
  return incomplete;
}

Json FailuresJson(const ReportModel& m) {
  Json failures = Json::array();
  for (const auto& f : m.failures) {
    Json e{{"case", f.case_id}, {"status", Word(f.status)}, {"run", f.run_id}, {"shard", f.shard}, {"host", f.host},
           {"commit", CommitSha(m, f.commit)}, {"failing_since", CommitSha(m, f.failing_since)}, {"message", f.message}};
    if (f.ops_against_commit) {
      Json stale = Json::array();
      for (const auto& h : f.ops.stale) stale.push_back({{"from", h.from}, {"to", h.to}, {"calls", h.calls}, {"text", StaleHintText(h)}});
      e["ops"] = {{"against_commit", CommitSha(m, *f.ops_against_commit)}, {"against_run", f.ops_against_run},
                  {"added", Changes(f.ops.added)}, {"removed", Changes(f.ops.removed)},
                  {"changed", Changes(f.ops.changed)}, {"stale", stale}};
    }
    if (f.culprit) e["culprit"] = CulpritJson(*f.culprit);
    failures.push_back(e);
  }
  return failures;
}

Json RegressionsJson(const ReportModel& m) {
  Json regressions = Json::array();
  for (const auto& g : m.regressions)
    regressions.push_back({{"id", g.id}, {"run", g.run_id}, {"suite", g.suite}, {"kind", g.kind}, {"cases", g.cases},
                           {"bisect", CulpritJson(g.note)}});
  return regressions;
}

// The listed cases by suite, run and status, ids only: 50 000 of them stay a few MB.
Json FailuresListedJson(const ReportModel& m) {
  std::map<std::tuple<std::string, int64_t, std::string>, Json> groups;
  for (const auto& f : m.failures_listed) {
    Json& ids = groups[{f.suite, f.run_id, std::string(Word(f.status))}];
    if (ids.is_null()) ids = Json::array();
    ids.push_back(f.case_id);
  }
  Json listed = Json::array();
  for (auto& [key, ids] : groups)
    listed.push_back({{"suite", std::get<0>(key)}, {"run", std::get<1>(key)}, {"status", std::get<2>(key)},
                      {"cases", std::move(ids)}});
  return listed;
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

Json FlakyJson(const ReportModel& m) {
  Json flaky = Json::array();
  for (const auto& f : m.flaky) {
    const auto& e = f.estimate;
    flaky.push_back({{"case", f.case_id}, {"metric", f.metric}, {"kind", Word(f.kind)}, {"commit", CommitSha(m, f.commit)},
                     {"value", f.value}, {"threshold", f.threshold}, {"verdict", f.verdict},
                     {"false_verdict_probability", e.probability}, {"question", Word(e.question)},
                     {"center", e.center}, {"sigma", e.sigma}, {"observations", e.observations},
                     {"needed", e.needed}, {"detail", f.detail}, {"settle", f.settle}});
  }
  return flaky;
}

Json FlipsJson(const ReportModel& m) {
  Json flips = Json::array();
  for (const auto& s : m.flips) {
    Json list = Json::array();
    for (const auto& f : s.flips)
      list.push_back({{"question", f.key}, {"flip", f.lost ? "right-to-wrong" : "wrong-to-right"},
                      {"expected", f.expected}, {"baseline_outcome", std::string(Word(f.before_outcome))},
                      {"baseline_extracted", f.before_extracted}, {"baseline_completion", f.before_completion},
                      {"outcome", std::string(Word(f.after_outcome))}, {"extracted", f.after_extracted},
                      {"completion", f.after_completion}});
    flips.push_back({{"case", s.case_id}, {"run", s.run_id}, {"commit", CommitSha(m, s.commit)}, {"baseline_run", s.baseline_run},
                     {"baseline_commit", CommitSha(m, s.baseline_commit)}, {"right_to_wrong", s.losses},
                     {"wrong_to_right", s.gains}, {"flips", list}, {"omitted", s.omitted}});
  }
  return flips;
}

Json BisectJson(const ReportModel& m) {
  Json bisect = Json::array();
  for (const auto& b : m.bisect) {
    Json steps = Json::array();
    for (const auto& s : b.steps)
      steps.push_back({{"step", s.step}, {"commit", s.sha}, {"source", s.source},
                       {"run", s.run_id ? Json(*s.run_id) : Json(nullptr)},
                       {"exit_code", s.exit_code ? Json(*s.exit_code) : Json(nullptr)},
                       {"evidence", ParseJsonOrDiscarded(s.evidence_json)},
                       {"decision", ParseJsonOrDiscarded(s.decision_json)}});
    Json session{{"session", b.id}, {"good", b.good}, {"bad", b.bad}, {"target", b.target}, {"status", b.status},
                 {"culprit", b.culprit}, {"confidence", b.confidence}, {"runs", b.runs},
                 {"started_at", b.started_at}, {"finished_at", b.finished_at}, {"steps", steps},
                 {"time", TimingJson(SessionTiming(b))}};
    if (auto c = m.session_culprits.find(b.id); c != m.session_culprits.end()) session["culprits"] = ChangesJson(c->second);
    bisect.push_back(std::move(session));
  }
  return bisect;
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
