#include "harness/bisect/regressions.h"

#include <map>

#include <fmt/format.h>

#include "harness/results/case_id.h"
#include "harness/results/metric_names.h"
#include "harness/run/suite_table.h"
#include "harness/stats/verdict.h"
#include "harness/util/json_file.h"

namespace harness::bisect {
namespace {

// The shards of the run's nightly; a rerun that shares the nightly id is not one of them.
Result<Nightly> NightlyOf(NightlyReads& store, int64_t run_id) {
  auto runs = store.LogicalRun(run_id);
  if (!runs) return runs.error();
  Nightly n;
  for (auto& r : *runs)
    if (IsNightlyRun(r) || r.id == run_id) n.runs.push_back(std::move(r));
  return n;
}

std::string LabelOf(const std::vector<Metric>& metrics, const std::string& name) {
  for (const auto& m : metrics)
    if (m.name == name) return m.label;
  return "";
}

// A stored case result of a nightly, its id parsed once where it is read.
struct CaseView {
  CaseId case_id;
  int64_t id = 0;
  CaseStatus status = CaseStatus::kRunning;
  std::vector<Metric> metrics;
};

Result<std::map<std::string, CaseView>> CasesOf(NightlyReads& store, const Nightly& nightly) {
  std::map<std::string, CaseView> out;
  for (const auto& run : nightly.runs) {
    auto cases = store.FinishedCases(run.id);
    if (!cases) return cases.error();
    auto metrics = store.MetricsOfRun(run.id);
    if (!metrics) return metrics.error();
    for (auto& c : *cases) {
      CaseView v{CaseId(c.result.case_id), c.id, c.result.status, {}};
      if (auto it = metrics->find(c.id); it != metrics->end()) v.metrics = it->second;
      out.insert_or_assign(c.result.case_id, std::move(v));
    }
  }
  return out;
}

// How the case regressed from prev to cur, or none.
std::optional<RegressionKind> KindOf(const CaseView& cur, const CaseView& prev) {
  if (LabelOf(cur.metrics, metric_names::kBaselineVerdict) == Word(BaselineVerdict::kRegressed))
    return RegressionKind::kPaired;
  const std::string gate = LabelOf(cur.metrics, metric_names::kGateVerdict);
  const std::string before = LabelOf(prev.metrics, metric_names::kGateVerdict);
  if (gate == Word(GateVerdict::kFail) && (before == Word(GateVerdict::kPass) || before == Word(GateVerdict::kAtRisk)))
    return RegressionKind::kGate;
  const bool failing = cur.status == CaseStatus::kFail || cur.status == CaseStatus::kError;
  if (failing && prev.status == CaseStatus::kPass) return RegressionKind::kStatus;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> RegressionTarget::CaseIds() const {
  std::vector<std::string> out;
  for (const auto& c : cases) out.push_back(c.case_id);
  return out;
}

Result<NightlyPair> FindNightlyPair(NightlyReads& store, std::optional<int64_t> run_id) {
  auto runs = store.FinishedRuns();
  if (!runs) return runs.error();
  NightlyPair pair;
  if (run_id) {
    auto run = store.Run(*run_id);
    if (!run) return run.error();
    if (run->status == RunStatus::kRunning)
      return UsageError(fmt::format("--run {}: the run has not finished", *run_id));
    auto n = NightlyOf(store, *run_id);
    if (!n) return n.error();
    pair.current = std::move(n).value();
  } else {
    auto newest = std::find_if(runs->rbegin(), runs->rend(), IsNightlyRun);
    if (newest == runs->rend())
      return UsageError(fmt::format("{}: the database holds no finished nightly run", store.path().string()));
    auto n = NightlyOf(store, newest->id);
    if (!n) return n.error();
    pair.current = std::move(n).value();
  }
  const RunRow& cur = pair.current.first();
  // FinishedRuns lists commits in first-parent order: the previous nightly is the newest
  // nightly of this identity listed before the current nightly's commit.
  auto at = std::find_if(runs->begin(), runs->end(), [&](const RunRow& r) { return r.sha == cur.sha; });
  for (auto it = std::make_reverse_iterator(at); it != runs->rend(); ++it)
    if (it->config_hash == cur.config_hash && IsNightlyRun(*it)) {
      auto n = NightlyOf(store, it->id);
      if (!n) return n.error();
      pair.previous = std::move(n).value();
      break;
    }
  return pair;
}

Result<std::vector<RegressionTarget>> FindRegressions(NightlyReads& store, const Nightly& current, const Nightly& previous,
                                                      const std::filesystem::path& suites_dir) {
  auto cur = CasesOf(store, current);
  if (!cur) return cur.error();
  auto prev = CasesOf(store, previous);
  if (!prev) return prev.error();
  auto tables = LoadSuiteTables(suites_dir);
  if (!tables) return tables.error();
  std::map<std::string, std::string> headline;
  for (const auto& t : *tables) headline[t.suite] = t.headline_metric;
  // Per suite: the metric target (index 0) and the status target (index 1).
  std::map<std::string, RegressionTarget[2]> by_suite;
  for (const auto& [id, view] : *cur) {
    auto p = prev->find(id);
    if (p == prev->end()) continue;  // a new case: nothing to regress from
    const std::optional<RegressionKind> found = KindOf(view, p->second);
    if (!found) continue;
    const RegressionKind kind = *found;
    const std::string suite = view.case_id.suite();
    const std::string& metric = headline[suite];
    const bool by_metric = kind != RegressionKind::kStatus && !metric.empty();
    RegressionTarget& t = by_suite[suite][by_metric ? 0 : 1];
    t.suite = suite;
    if (by_metric) t.metric = metric;
    if (t.cases.empty() || kind > t.kind) t.kind = kind;  // the worst: paired > gate > status
    t.cases.push_back({id, kind, view.id, p->second.id});
  }
  std::vector<RegressionTarget> out;
  for (auto& [suite, targets] : by_suite)
    for (auto& t : targets)
      if (!t.cases.empty()) out.push_back(std::move(t));
  return out;
}

Result<std::optional<bool>> Reproduces(NightlyReads& store, const RegressionTarget& target, const std::string& sha,
                                       int64_t after_case_result_id) {
  std::optional<bool> out;
  for (const auto& c : target.cases) {
    auto evidence = store.CaseEvidenceAt(c.case_id, sha);
    if (!evidence) return evidence.error();
    for (const auto& e : *evidence) {
      // An error result (infrastructure) shows nothing of the stack, either way.
      if (e.case_result_id <= after_case_result_id || e.status == CaseStatus::kError) continue;
      bool again = false;
      if (c.kind == RegressionKind::kStatus) {
        again = e.status == CaseStatus::kFail;
      } else if (c.kind == RegressionKind::kGate) {
        auto metrics = store.Metrics(e.case_result_id);
        if (!metrics) return metrics.error();
        again = LabelOf(*metrics, metric_names::kGateVerdict) == Word(GateVerdict::kFail);
      } else {
        auto before = store.Samples(c.previous_case_result_id);
        if (!before) return before.error();
        auto now = store.Samples(e.case_result_id);
        if (!now) return now.error();
        again = CompareToBaseline(*before, *now).verdict == BaselineVerdict::kRegressed;
      }
      out = out.value_or(false) || again;
    }
  }
  return out;
}

}  // namespace harness::bisect
