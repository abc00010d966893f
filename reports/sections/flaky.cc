#include "reports/sections/flaky.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/results/metric_names.h"
#include "harness/results/metric_set.h"
#include "harness/results/word_table.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"
#include "reports/report_load.h"

namespace harness::reports {

namespace {

constexpr WordTable<FlakyKind, 3> kFlakyKindWords{{
    {FlakyKind::kGate, "gate"},
    {FlakyKind::kTolerance, "tolerance"},
    {FlakyKind::kStatus, "status"},
}};
static_assert(IsOneWordPerValue(kFlakyKindWords));

}  // namespace

std::string_view Word(FlakyKind k) { return WordIn(kFlakyKindWords, k); }

std::string FlakyCount(const std::vector<FlakyEntry>& entries) {
  int gate = 0, tolerance = 0, status = 0;
  for (const auto& e : entries) {
    switch (e.kind) {
      case FlakyKind::kGate: gate++; break;
      case FlakyKind::kTolerance: tolerance++; break;
      case FlakyKind::kStatus: status++; break;
    }
  }
  auto n = [](int k, const char* one, const char* many) { return fmt::format("{} {}", k, k == 1 ? one : many); };
  return fmt::format("{}: {}, {}, {}", n(static_cast<int>(entries.size()), "row", "rows"), n(gate, "gate", "gates"),
                     n(tolerance, "tolerance", "tolerances"), n(status, "status flip", "status flips"));
}

void RankFlaky(std::vector<FlakyEntry>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const FlakyEntry& a, const FlakyEntry& b) {
    if (a.estimate.probability != b.estimate.probability) return a.estimate.probability > b.estimate.probability;
    if (a.case_id != b.case_id) return a.case_id < b.case_id;
    return a.metric < b.metric;
  });
}

namespace {

// A run with fault switches (--fault, or faults in its stack config): a deliberately broken
// stack. Faults are context, not identity (docs/store.md), so it shares its healthy runs'
// identity; the flaky ranking must not read its results as noise.
bool HasFaults(const RunRow& run) {
  const Json config = ParseJsonOrDiscarded(run.config_json);
  const Json context = ParseJsonOrDiscarded(run.context_json);
  for (const Json* j : {&config, &context}) {
    if (!j->is_object()) continue;
    const auto stack = j->find("stack_config");
    if (stack == j->end() || !stack->is_object()) continue;
    const auto faults = stack->find("faults");
    if (faults != stack->end() && faults->is_array() && !faults->empty()) return true;
  }
  return false;
}

std::string Percent(double v) { return fmt::format("{:.2f} %", 100 * v); }

std::string SettleText(const FalseVerdictEstimate& e, const std::string& sha) {
  if (e.needed == -1) return "cannot be settled by more data: the estimate sits on the threshold";
  switch (e.question) {
    case FlakeQuestion::kRerunNoise:
    case FlakeQuestion::kCommitSpread:
      if (e.sigma == 0 && e.observations < 2) return fmt::format("one result only: rerun {} to measure its spread", ShortSha(sha));
      if (e.needed <= e.observations) return fmt::format("settled: the mean of {} results clears the threshold", e.observations);
      return fmt::format("{} results in total at {} (harness run --rerun-at-risk N), {} stored", e.needed, ShortSha(sha),
                         e.observations);
    case FlakeQuestion::kTrueRate:
      if (e.needed <= e.observations) return "settled: the 95% interval clears the gate";
      return fmt::format("{} questions at this rate for the 95% interval to clear the gate ({} asked)", e.needed,
                         e.observations);
    case FlakeQuestion::kStatusFlips:
      return fmt::format("{} reruns at {} show the minority status at least once with 95% probability", e.needed,
                         ShortSha(sha));
  }
  return "";
}

class FlakyLoad : SectionLoad {
 public:
  using SectionLoad::SectionLoad;

  // The flaky ranking reads neither fault-switched runs (a deliberately broken stack is no
  // noise) nor, across commits, past the newest known change point (ChangePoint).
  void Flaky() {
    for (const auto& [case_id, all] : by_case_) {
      std::vector<const Loaded*> list;
      for (const Loaded* r : all)
        if (!HasFaults(runs_[r->run_index])) list.push_back(r);
      if (list.empty()) continue;
      const Loaded* newest = list.back();
      std::vector<const Loaded*> reruns;  // the newest commit's results of the newest identity
      for (const Loaded* r : list)
        if (r->commit == newest->commit && r->config_hash == newest->config_hash) reruns.push_back(r);
      const std::string& sha = model_.commits[newest->commit].sha;
      const Segment segment = ChangePoint(case_id, list);
      std::vector<const Loaded*> since;  // the results of the newest segment
      for (const Loaded* r : list)
        if (r->commit >= segment.from) since.push_back(r);
      GateEntry(case_id, newest, reruns, sha);
      for (const auto& m : newest->metrics)
        if (m.name.ends_with(metric_names::kBoundUseSuffix)) ToleranceEntry(case_id, m.name, since, reruns, sha, segment);
      StatusEntry(case_id, since, reruns, sha, segment);
    }
    RankFlaky(model_.flaky);
  }

  // The newest segment of a case's history: from its newest known change point (a bisect
  // culprit of the case, or a commit where its paired test said REGRESSED or IMPROVED) at or
  // before its newest result; the whole window when it has none.
  struct Segment {
    std::size_t from = 0;
    std::string why;   // "since the culprit abc123 of bisect session 3", or empty
  };

  Segment ChangePoint(const std::string& case_id, const std::vector<const Loaded*>& list) const {
    Segment seg;
    const std::size_t newest = list.back()->commit;
    for (const auto& p : culprit_points_)
      if ((p.cases.empty() || p.cases.count(case_id)) && p.commit <= newest && p.commit >= seg.from && p.commit > 0) {
        seg.from = p.commit;
        seg.why = fmt::format("since {}, the culprit bisect session {} found", ShortSha(model_.commits[p.commit].sha),
                              p.session);
      }
    for (const Loaded* r : list) {
      const MetricSet metrics(r->metrics);
      const Metric* paired = metrics.Find(metric_names::kBaselineVerdict);
      if (!paired || metrics.Paired() == BaselineVerdict::kSame || r->commit <= seg.from || r->commit == 0) continue;
      seg.from = r->commit;
      seg.why = fmt::format("since {}, where the paired test said {}", ShortSha(model_.commits[r->commit].sha),
                            paired->label);
    }
    return seg;
  }

  void GateEntry(const std::string& case_id, const Loaded* newest, const std::vector<const Loaded*>& reruns,
                 const std::string& sha) {
    const MetricSet metrics(newest->metrics);
    const Metric* gate = metrics.Find(metric_names::kGate);
    const Metric* acc = metrics.Find(metric_names::kAccuracy);
    if (!gate || !acc || acc->n <= 0) return;
    FlakyEntry e{case_id, metric_names::kAccuracy, FlakyKind::kGate, newest->commit, acc->value, gate->value};
    e.suite = newest->key.suite();
    const Metric* verdict = metrics.Find(metric_names::kGateVerdict);
    e.verdict = verdict ? verdict->label : std::string(Label(newest->stored.result.status));
    std::vector<double> values;
    for (const Loaded* r : reruns)
      if (auto a = MetricSet(r->metrics).Value(metric_names::kAccuracy)) values.push_back(*a);
    const auto correct = static_cast<int64_t>(std::llround(acc->value * static_cast<double>(acc->n)));
    if (values.size() >= 2) {
      e.estimate = RerunNoiseEstimate(values, gate->value);
      e.detail = fmt::format(
          "will a rerun flip it? {} runs of {} (one identity): mean {}, rerun sigma {} pp; P(one more rerun lands on "
          "the other side of gate {:.4g}) = {:.3g} (Student t)",
          values.size(), ShortSha(sha), Percent(e.estimate.center), fmt::format("{:.3f}", 100 * e.estimate.sigma),
          gate->value, e.estimate.probability);
    } else {
      e.estimate = TrueRateEstimate(correct, acc->n, gate->value);
      e.detail = fmt::format(
          "is the true accuracy above the gate? no reruns stored, so the binomial question: {}/{} = {}, standard "
          "error {} pp; P(the true rate is on the other side of gate {:.4g}) = {:.3g}",
          correct, acc->n, Percent(acc->value), fmt::format("{:.3f}", 100 * e.estimate.sigma), gate->value,
          e.estimate.probability);
    }
    e.settle = SettleText(e.estimate, sha);
    model_.flaky.push_back(std::move(e));
  }

  void ToleranceEntry(const std::string& case_id, const std::string& metric, const std::vector<const Loaded*>& list,
                      const std::vector<const Loaded*>& reruns, const std::string& sha, const Segment& segment) {
    constexpr double kNear = 0.5;  // half the bound used: worth watching
    const Loaded* newest = list.back();
    const Metric* m = MetricSet(newest->metrics).Find(metric);
    if (!m || m->value < kNear) return;
    FlakyEntry e{case_id, metric, FlakyKind::kTolerance, newest->commit, m->value, 1.0};
    e.suite = newest->key.suite();
    e.verdict = std::string(Label(newest->stored.result.status));
    std::vector<double> values;
    for (const Loaded* r : reruns)
      if (auto v = MetricSet(r->metrics).Value(metric)) values.push_back(*v);
    if (values.size() >= 2) {
      e.estimate = RerunNoiseEstimate(values, 1.0);
      e.detail = fmt::format("{} runs of {} (one identity): mean {:.4g} of the bound, sigma {:.3g}", values.size(), ShortSha(sha),
                             e.estimate.center, e.estimate.sigma);
    } else {
      // No reruns: the newest result of this identity per commit over the last ten commits of
      // the newest segment (list holds only its results).
      std::map<std::size_t, double> per_commit;
      for (const Loaded* r : list)
        if (r->config_hash == newest->config_hash)
          if (auto v = MetricSet(r->metrics).Value(metric)) per_commit[r->commit] = *v;
      values.clear();
      for (auto it = per_commit.rbegin(); it != per_commit.rend() && values.size() < 10; ++it) values.push_back(it->second);
      e.estimate = CommitSpreadEstimate(values, 1.0);
      e.detail = fmt::format(
          "uses {:.1f} % of its bound; no reruns stored, so the spread over the last {} commits{} (an upper bound on "
          "rerun noise: it may include changes no bisect or paired test named): sigma {:.3g}",
          100 * m->value, values.size(), segment.why.empty() ? "" : " " + segment.why, e.estimate.sigma);
    }
    e.settle = SettleText(e.estimate, sha);
    model_.flaky.push_back(std::move(e));
  }

  void StatusEntry(const std::string& case_id, const std::vector<const Loaded*>& list,
                   const std::vector<const Loaded*>& reruns, const std::string& sha, const Segment& segment) {
    auto passed = [](const Loaded* r) { return r->stored.result.status == CaseStatus::kPass; };
    const auto pass = std::count_if(reruns.begin(), reruns.end(), passed);
    const auto other = static_cast<int64_t>(reruns.size()) - pass;
    const Loaded* newest = list.back();
    FlakyEntry e{case_id, "status", FlakyKind::kStatus, newest->commit, 0, 0};
    e.suite = newest->key.suite();
    e.verdict = std::string(Label(newest->stored.result.status));
    if (pass > 0 && other > 0) {
      const int64_t minority = std::min<int64_t>(pass, other);
      e.estimate = StatusFlipEstimate(minority, static_cast<int64_t>(reruns.size()));
      e.value = e.estimate.probability;
      e.detail = fmt::format("runs of one commit disagree: {} passed and {} did not at {}", pass, other, ShortSha(sha));
    } else {
      // Back and forth across commits: the newest result of this identity per commit, last
      // ten commits (another identity's status is not this one's flip).
      std::map<std::size_t, bool> per_commit;
      for (const Loaded* r : list)
        if (r->config_hash == newest->config_hash) per_commit[r->commit] = passed(r);
      std::vector<bool> seq;
      for (auto it = per_commit.rbegin(); it != per_commit.rend() && seq.size() < 10; ++it) seq.push_back(it->second);
      int64_t changes = 0;
      for (std::size_t i = 1; i < seq.size(); ++i) changes += seq[i] != seq[i - 1];
      if (changes < 2) return;  // one change is a regression or a fix, not a flake
      e.estimate = StatusFlipEstimate(changes, static_cast<int64_t>(seq.size()) - 1);
      e.value = e.estimate.probability;
      e.detail = fmt::format("status changed {} times between consecutive commits over the last {} commits{}",
                             changes, seq.size(), segment.why.empty() ? "" : " " + segment.why);
    }
    e.settle = SettleText(e.estimate, sha);
    model_.flaky.push_back(std::move(e));
  }
};

}  // namespace

Status LoadFlaky(ReportLoad& load) {
  FlakyLoad(load).Flaky();
  return OkStatus();
}

}  // namespace harness::reports
