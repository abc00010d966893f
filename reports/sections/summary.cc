#include "reports/sections/summary.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "harness/results/night_verdict.h"
#include "harness/results/shard.h"
#include "reports/report_load.h"

namespace harness::reports {

namespace {

// "I/N" -> I, so shard 10/12 sorts after 2/12; a word that is no shard (never written by
// the harness) sorts first.
long long ShardIndex(const std::string& shard) {
  const auto s = ParseShardWord(shard);
  return s ? s->index : -1;
}

}  // namespace

namespace {

class SummaryLoad : SectionLoad {
 public:
  using SectionLoad::SectionLoad;

  // One case of the nightly a suite's summary shows: its status counted, the night told.
  void CountCase(const Loaded& r, SuiteSummary& s) {
    s.commit = r.commit;
    s.case_seconds += r.stored.result.duration_s;
    night_.Add(r.stored.result.status, r.metrics);
    latest_cases_.push_back(&r);
    switch (r.stored.result.status) {
      case CaseStatus::kPass:
        s.pass++;
        if (IsAtRisk(r.metrics)) s.at_risk++;
        break;
      case CaseStatus::kFail:
        s.fail++;
        if (IsPairedRegressionOnly(r.stored.result.status, r.metrics)) s.regressed++;
        break;
      case CaseStatus::kError: s.error++; break;
      case CaseStatus::kSkip: s.skip++; break;
      case CaseStatus::kRunning: break;
    }
    if (r.stored.result.status == CaseStatus::kFail || r.stored.result.status == CaseStatus::kError)
      failing_.push_back(&r);
  }

  Status Summarize() {
    // The shards of one nightly (same nightly id, commit and identity; harness merge) are one
    // logical run: the summary counts every shard's cases.
    std::vector<std::string> logical_run;
    for (const RunRow& run : runs_)
      logical_run.push_back(run.nightly.empty() ? fmt::format("run {}", run.id)
                                                : fmt::format("nightly {} {} {}", run.nightly, run.sha, run.config_hash));
    // The latest nightly per suite: a run a bisect made or an --rerun-at-risk rerun holds
    // some cases of one commit, not the suite's state (the latest run of any kind when the
    // window has no nightly of the suite).
    std::map<std::string, std::size_t> latest_run, latest_nightly;  // suite -> run index
    for (const auto& r : results_) {
      latest_run[r.key.suite()] = r.run_index;
      if (IsNightlyRun(runs_[r.run_index])) latest_nightly[r.key.suite()] = r.run_index;
    }
    for (const auto& [suite, run_index] : latest_nightly) latest_run[suite] = run_index;
    for (const auto& [suite, run_index] : latest_run) {
      const RunRow& run = runs_[run_index];
      SuiteSummary s{suite, run.id, 0, run.stack, run.host, run.started_at, run.finished_at};
      s.nightly = run.nightly;
      std::set<std::size_t> shard_runs, rerun_runs;
      for (const auto& r : results_) {
        if (logical_run[r.run_index] != logical_run[run_index]) continue;
        if (r.key.suite() != suite) continue;
        // A rerun shares its nightly's id; its cases are the nightly's cases again. So does an
        // attempt of a shard a CI re-run replaced: named, not counted.
        if (runs_[r.run_index].superseded_by) rerun_runs.insert(r.run_index);
        if (IsNightlyRun(run) && !IsNightlyRun(runs_[r.run_index])) continue;
        shard_runs.insert(r.run_index);
        CountCase(r, s);
      }
      const auto ref = [&](const RunRow& r) {
        return ShardRef{r.shard, r.id, r.host, r.attempt, r.superseded_by.value_or(0)};
      };
      for (std::size_t i : shard_runs)
        if (Sharded(runs_[i])) s.shards.push_back(ref(runs_[i]));
      for (std::size_t i : rerun_runs) s.reruns.push_back(ref(runs_[i]));
      const auto by_shard = [](const ShardRef& a, const ShardRef& b) {
        return std::pair(ShardIndex(a.shard), a.attempt) < std::pair(ShardIndex(b.shard), b.attempt);
      };
      std::sort(s.shards.begin(), s.shards.end(), by_shard);
      std::sort(s.reruns.begin(), s.reruns.end(), by_shard);
      model_.summary.push_back(std::move(s));
    }
    return IncompleteNightlies(latest_run);
  }

  // The shards of each nightly the summary shows, counted over all its runs in the store
  // (a shard holding none of the filtered cases is still there).
  Status IncompleteNightlies(const std::map<std::string, std::size_t>& latest_run) {
    std::set<std::size_t> shown;
    for (const auto& [suite, run_index] : latest_run)
      if (!runs_[run_index].nightly.empty()) shown.insert(run_index);
    std::set<std::tuple<std::string, std::string, std::string>> judged;
    for (std::size_t i : shown) {
      const RunRow& run = runs_[i];
      if (!judged.insert({run.nightly, run.sha, run.config_hash}).second) continue;
      auto logical = reads_.LogicalRun(run.id);
      if (!logical) return logical.error();
      for (auto& gap : NightlyGaps(*logical)) model_.incomplete_nightlies.push_back(std::move(gap));
    }
    return OkStatus();
  }
};

}  // namespace

Status LoadSummary(ReportLoad& load) { return SummaryLoad(load).Summarize(); }

}  // namespace harness::reports
