#include "reports/report_model.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/results/case_id.h"
#include "harness/results/metric_names.h"
#include "harness/results/metric_set.h"
#include "harness/results/shard.h"
#include "harness/results/word_table.h"
#include "harness/stats/stats.h"
#include "harness/store/bisect_evidence.h"
#include "harness/store/resolve_commit.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"
#include "harness/util/utf8.h"

namespace harness::reports {

namespace {

constexpr WordTable<ChangeKind, 3> kChangeKindWords{{
    {ChangeKind::kNewFailure, "new-failure"},
    {ChangeKind::kPairedRegression, "paired-regression"},
    {ChangeKind::kFixed, "fixed"},
}};
constexpr WordTable<FlakyKind, 3> kFlakyKindWords{{
    {FlakyKind::kGate, "gate"},
    {FlakyKind::kTolerance, "tolerance"},
    {FlakyKind::kStatus, "status"},
}};

}  // namespace

std::string_view Word(ChangeKind k) { return WordIn(kChangeKindWords, k); }
std::string_view Word(FlakyKind k) { return WordIn(kFlakyKindWords, k); }

bool IsAtRisk(const std::vector<Metric>& metrics) { return HasAtRiskGate(metrics); }

std::optional<std::pair<double, double>> AtRiskBand(int64_t n, double gate) {
  std::optional<std::pair<double, double>> band;
  if (n <= 0) return band;
  for (int64_t k = 0; k <= n; ++k) {
    const Interval ci = WilsonInterval(k, n);
    if (ci.low < gate && ci.high >= gate) {
      const double p = static_cast<double>(k) / static_cast<double>(n);
      if (!band) band = std::pair{p, p};
      band->second = p;
    }
  }
  return band;
}

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

// One finished case result in the window.
struct Loaded {
  StoredCase stored;
  std::vector<Metric> metrics;
  std::size_t commit = 0;
  std::size_t run_index = 0;   // into the window's runs
  std::string config_hash;
  CaseId key;                  // stored.result.case_id, parsed once as it is loaded
};

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

// A run of a sharded nightly (an unsharded run is shard "0/1", NewRun's default).
bool Sharded(const RunRow& run) { return run.shard != "0/1"; }

// "I/N" -> I, so shard 10/12 sorts after 2/12; a word that is no shard (never written by
// the harness) sorts first.
long long ShardIndex(const std::string& shard) {
  const auto s = ParseShardWord(shard);
  return s ? s->index : -1;
}

std::string Cut(const std::string& s) {
  return s.size() <= kMaxCompletionBytes ? s : s.substr(0, kMaxCompletionBytes) + " [...]";
}

// A commit subject as every format shows it: its first line, cut at kMaxSubjectBytes on a
// character boundary (a subject is the committer's text: it may be a megabyte).
std::string CutSubject(const std::string& subject) {
  const std::string_view line = std::string_view(subject).substr(0, subject.find('\n'));
  const std::string_view cut = Utf8Prefix(line, kMaxSubjectBytes);
  return std::string(cut) + (cut.size() < subject.size() ? " [...]" : "");
}

// The metric a case's chart shows: accuracy, else a proportion with an interval, else a
// tolerance bound use; empty when the case has none (compile cases).
std::string TrendMetric(const std::vector<const Loaded*>& results) {
  std::string interval, bound;
  for (const auto* r : results)
    for (const auto& m : r->metrics) {
      if (m.name == metric_names::kAccuracy) return m.name;
      if (interval.empty() && m.n > 0 && m.low && m.high) interval = m.name;
      if (bound.empty() && m.name.ends_with(metric_names::kBoundUseSuffix)) bound = m.name;
    }
  return interval.empty() ? bound : interval;
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

class Builder {
 public:
  Builder(ReadOnlyStore& store, const ReportQuery& q) : store_(store), reads_(store.reader()) { model_.query = q; }

  Result<ReportModel> Build() {
    const ReportReads::ReadSnapshot snapshot(reads_);
    if (auto s = LoadWindow(); !s) return s.error();
    if (auto s = Summarize(); !s) return s.error();
    if (auto s = Failures(); !s) return s.error();
    Trends();
    if (auto s = Bisect(); !s) return s.error();  // its culprits are change points of the flaky ranking
    Flaky();
    if (auto s = Flips(); !s) return s.error();
    if (auto s = Regressions(); !s) return s.error();
    Night();
    if (auto s = Changes(); !s) return s.error();
    return std::move(model_);
  }

 private:
  Status LoadWindow() {
    auto runs = reads_.FinishedRuns();
    if (!runs) return runs.error();
    // A partial run (harness run --questions, a bisect step's) holds a few chosen questions:
    // no point of a trend, no rerun of the flaky ranking, no baseline of the flips, no
    // nightly. Its session is in the bisect section.
    std::erase_if(*runs, [](const RunRow& r) { return r.partial_questions.has_value(); });
    if (runs->empty()) return UsageError(fmt::format("{}: the database holds no finished run", store_.path().string()));
    std::vector<ReportCommit> all;
    std::vector<std::size_t> run_commit;
    for (const auto& r : *runs) {
      if (all.empty() || all.back().sha != r.sha) all.push_back({r.sha, CutSubject(r.subject), r.ordinal});
      run_commit.push_back(all.size() - 1);
    }
    std::size_t first = 0;
    const ReportQuery& q = model_.query;
    if (!q.since.empty()) {
      auto since = ResolveCommit(reads_, q.since, "--since");
      if (!since) return since.error();
      auto at = std::find_if(all.begin(), all.end(), [&](const ReportCommit& c) { return c.sha == since->sha; });
      if (at == all.end())
        return UsageError(fmt::format("--since {}: commit {} has no finished run", q.since, ShortSha(since->sha)));
      first = static_cast<std::size_t>(at - all.begin());
    } else if (q.last_n < 1) {
      return UsageError("--last must be at least 1");
    } else if (all.size() > static_cast<std::size_t>(q.last_n)) {
      first = all.size() - static_cast<std::size_t>(q.last_n);
    }
    model_.commits.assign(all.begin() + static_cast<std::ptrdiff_t>(first), all.end());
    for (std::size_t i = 0; i < runs->size(); ++i) {
      if (run_commit[i] < first) continue;
      const RunRow& run = (*runs)[i];
      auto cases = reads_.FinishedCases(run.id);
      if (!cases) return cases.error();
      auto metrics = reads_.MetricsOfRun(run.id);
      if (!metrics) return metrics.error();
      bool any = false;
      for (auto& c : *cases) {
        CaseId key(c.result.case_id);
        if (!q.suite.empty() && key.suite() != q.suite) continue;
        if (!q.case_glob.empty() && fnmatch(q.case_glob.c_str(), key.str().c_str(), 0) != 0) continue;
        Loaded l{std::move(c), {}, run_commit[i] - first, runs_.size(), run.config_hash, std::move(key)};
        if (auto it = metrics->find(l.stored.id); it != metrics->end()) l.metrics = std::move(it->second);
        results_.push_back(std::move(l));
        any = true;
      }
      if (any) runs_.push_back(run);
    }
    if (results_.empty())
      return UsageError(fmt::format("no stored case matches{}{} in the report's window",
                                    q.suite.empty() ? "" : " --suite " + q.suite,
                                    q.case_glob.empty() ? "" : " --case " + q.case_glob));
    model_.runs = static_cast<int64_t>(runs_.size());
    for (const auto& r : results_) by_case_[r.stored.result.case_id].push_back(&r);
    return OkStatus();
  }

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

  Status Failures() {
    std::stable_sort(failing_.begin(), failing_.end(), [](const Loaded* a, const Loaded* b) {
      return a->stored.result.case_id < b->stored.result.case_id;
    });
    std::map<std::string, std::size_t> full_per_suite;
    for (const Loaded* r : failing_) {
      std::size_t& full_in_suite = full_per_suite[r->key.suite()];
      if (full_in_suite >= kMaxFullFailuresPerSuite || model_.failures.size() >= kMaxFullFailures) {
        model_.failures_listed.push_back(
            {r->stored.result.case_id, r->stored.result.status, r->stored.run_id, r->key.suite()});
        continue;
      }
      ++full_in_suite;
      if (auto s = Failure(r); !s) return s;
    }
    return OkStatus();
  }

  // A failure in full: since when it fails, and its op table against the last passing result.
  Status Failure(const Loaded* r) {
    const auto& list = by_case_[r->stored.result.case_id];
    const RunRow& run = runs_[r->run_index];
    FailureEntry f{r->stored.result.case_id, r->stored.result.status, r->stored.run_id,
                   Sharded(run) ? run.shard : "", run.host, r->commit, r->commit, r->stored.result.message};
    f.suite = r->key.suite();
    // The streak and the passing result are this identity's: another stack or model
    // passing in between says nothing about this one.
    const Loaded* passing = nullptr;
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      const Loaded* o = *it;
      if (o->run_index > r->run_index || o->config_hash != r->config_hash) continue;
      if (o->stored.result.status == CaseStatus::kPass) {
        passing = o;
        break;
      }
      f.failing_since = o->commit;
    }
    auto after = reads_.Ops(r->stored.id);
    if (!after) return after.error();
    if (passing) {
      auto before = reads_.Ops(passing->stored.id);
      if (!before) return before.error();
      if (!before->empty() || !after->empty()) {
        f.ops = DiffOpTableRows(*before, *after);
        f.ops_against_commit = passing->commit;
        f.ops_against_run = passing->stored.run_id;
      }
    }
    model_.failures.push_back(std::move(f));
    return OkStatus();
  }

  void Trends() {
    for (const auto& [case_id, list] : by_case_) {
      const std::string metric = TrendMetric(list);
      if (metric.empty()) continue;
      Trend t{case_id, metric};
      t.suite = list.front()->key.suite();
      for (const Loaded* r : list) {
        const MetricSet metrics(r->metrics);
        const Metric* m = metrics.Find(metric);
        if (!m) continue;
        const Metric* verdict = metrics.Find(metric_names::kGateVerdict);
        t.points.push_back({r->commit, r->stored.run_id, r->stored.result.status, m->value, m->low, m->high, m->n,
                            verdict ? verdict->label : std::string(Label(r->stored.result.status))});
        if (auto g = metrics.Value(metric_names::kGate)) t.gate = *g;
      }
      if (metric.ends_with(metric_names::kBoundUseSuffix)) t.bound = 1.0;
      if (t.gate && !t.points.empty() && t.points.back().n > 0)
        if (auto band = AtRiskBand(t.points.back().n, *t.gate)) std::tie(t.band_low, t.band_high) = *band;
      if (t.points.size() > kMaxTrendPoints) {
        t.omitted = t.points.size() - kMaxTrendPoints;
        t.points.erase(t.points.begin(), t.points.begin() + static_cast<std::ptrdiff_t>(t.omitted));
      }
      model_.trends.push_back(std::move(t));
    }
  }

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

  Status Flips() {
    for (const auto& [case_id, list] : by_case_) {
      const Loaded* newest = list.back();
      auto after = reads_.Samples(newest->stored.id);
      if (!after) return after.error();
      if (after->empty()) continue;
      // Baseline: the newest passing result of the same identity at an earlier commit, else
      // the newest result there of any status.
      const Loaded* base = nullptr;
      for (auto it = list.rbegin(); it != list.rend(); ++it) {
        const Loaded* o = *it;
        if (o->commit >= newest->commit || o->config_hash != newest->config_hash) continue;
        if (o->stored.result.status == CaseStatus::kPass) {
          base = o;
          break;
        }
        if (!base) base = o;
      }
      if (!base) continue;
      auto before = reads_.Samples(base->stored.id);
      if (!before) return before.error();
      std::map<std::string, const Sample*> by_key;
      for (const auto& s : *before) by_key[s.key] = &s;
      FlipSet set{case_id, newest->stored.run_id, base->stored.run_id, newest->commit, base->commit};
      set.suite = newest->key.suite();
      std::vector<FlipEntry> flips;
      for (const auto& s : *after) {
        auto it = by_key.find(s.key);
        if (it == by_key.end()) continue;
        const Sample& b = *it->second;
        const bool answered = b.outcome != SampleOutcome::kError && s.outcome != SampleOutcome::kError;
        if (!answered || IsSuccess(b.outcome) == IsSuccess(s.outcome)) continue;
        const bool lost = IsSuccess(b.outcome);
        (lost ? set.losses : set.gains)++;
        flips.push_back({s.key, lost, s.expected.empty() ? b.expected : s.expected, b.outcome, s.outcome, b.extracted,
                         s.extracted, Cut(b.completion), Cut(s.completion)});
      }
      std::stable_sort(flips.begin(), flips.end(), [](const FlipEntry& x, const FlipEntry& y) {
        if (x.lost != y.lost) return x.lost;
        if (x.key.size() != y.key.size()) return x.key.size() < y.key.size();  // numeric keys in number order
        return x.key < y.key;
      });
      if (flips.size() > kMaxFlipsPerCase) {
        set.omitted = flips.size() - kMaxFlipsPerCase;
        flips.resize(kMaxFlipsPerCase);
      }
      set.flips = std::move(flips);
      model_.flips.push_back(std::move(set));
    }
    return OkStatus();
  }

  Status Bisect() {
    auto ids = store_.bisect_reader().BisectSessionIds();
    if (!ids) return ids.error();
    std::map<std::string, std::size_t> commit_index;
    for (std::size_t i = 0; i < model_.commits.size(); ++i) commit_index[model_.commits[i].sha] = i;
    for (int64_t id : *ids) {
      auto s = store_.bisect_reader().BisectSession(id);
      if (!s) return s.error();
      ReportSession session{std::move(*s), std::nullopt};
      if (auto status = StoredStatus(session)) session.read_status = *status;
      else model_.warnings.push_back(status.error().message + ": the report shows it as stored and names no culprit of it");
      if (session.read_status == SessionStatus::kCulprit) {
        SessionCulprits(session);
        MarkCulprits(session, commit_index);
      }
      model_.bisect.push_back(std::move(session));
    }
    return OkStatus();
  }

  // Each culprit of a culprit session in the window is a change point of the cases it bisected
  // and a marker on their trends; the cases come from its header, and one that names none (or
  // does not read) marks every trend. A session that named several marks each with its drop.
  void MarkCulprits(const BisectSessionRow& s, std::map<std::string, std::size_t>& commit_index) {
    std::set<std::string> cases;
    auto header = BisectSessionHeaderFromJson(ParseJsonOrDiscarded(s.args_json), fmt::format("bisect session {}", s.id));
    if (header && header->target) cases.insert(header->target->cases.begin(), header->target->cases.end());
    const auto several = model_.session_culprits.find(s.id);
    const std::vector<BisectChange> culprits = several != model_.session_culprits.end()
                                                   ? several->second
                                                   : std::vector<BisectChange>{{s.culprit, "", s.confidence, 0}};
    for (std::size_t i = 0; i < culprits.size(); ++i) {
      const BisectChange& c = culprits[i];
      if (!commit_index.count(c.sha)) continue;
      const std::string text =
          culprits.size() == 1
              ? fmt::format("bisect session {}: culprit of {} (confidence {:.3f})", s.id, s.target, s.confidence)
              : fmt::format("bisect session {}: culprit {} of {} of {} (moved {:+.2f} pp, confidence {:.3f})", s.id,
                            i + 1, culprits.size(), s.target, 100 * c.size, c.confidence);
      culprit_points_.push_back({commit_index[c.sha], s.id, cases});
      for (auto& t : model_.trends)
        if (cases.empty() || cases.count(t.case_id)) t.culprits.push_back({commit_index[c.sha], s.id, text});
    }
  }

  // The session's culprits when it named several; a malformed list is a warning, and the
  // session shows the first culprit its row names.
  void SessionCulprits(const BisectSessionRow& s) {
    auto culprits = ChangesFromJson(ParseJsonOrDiscarded(s.result_json), fmt::format("bisect session {}", s.id));
    if (!culprits) {
      model_.warnings.push_back(culprits.error().message + ": the report shows its first culprit only");
      return;
    }
    if (culprits->size() < 2) return;
    for (auto& c : *culprits) c.subject = CutSubject(c.subject);
    model_.session_culprits[s.id] = std::move(culprits).value();
  }

  // The regressions bisect --auto stored for the latest runs shown (the summary counts
  // them), and each failing case's note: from the newest regression of the case whose
  // nightly lies in its current failing streak, so a case still failing nights later still
  // names the culprit found the night it broke. A sharded nightly's regression names its
  // first shard's run: every shard of it counts.
  Status Regressions() {
    auto rows = store_.bisect_reader().Regressions();
    if (!rows) return rows.error();
    std::set<int64_t> latest;
    for (const auto& s : model_.summary) latest.insert(s.run_id);
    for (const auto& f : model_.failures) latest.insert(f.run_id);
    std::map<std::string, std::size_t> commit_index;
    for (std::size_t i = 0; i < model_.commits.size(); ++i) commit_index[model_.commits[i].sha] = i;
    for (const auto& g : *rows) {
      auto shards = reads_.LogicalRun(g.run_id);
      if (!shards) return shards.error();
      std::set<int64_t> ids;
      for (const auto& r : *shards) ids.insert(r.id);
      const auto at = commit_index.find(shards->front().sha);
      if (at == commit_index.end()) continue;  // its nightly is outside the window
      RegressionEntry e{g.id, g.run_id, g.suite, g.kind, g.cases, NoteOf(g, ReadConfirmation(g))};
      if (e.note.verdict == RegressionVerdict::kCulprit)
        if (auto c = reads_.MatchCommits(e.note.culprit); c && !c->empty())
          e.note.subject = CutSubject(c->front().subject);
      for (auto& f : model_.failures)
        if (std::find(g.cases.begin(), g.cases.end(), f.case_id) != g.cases.end() &&
            (ids.count(f.run_id) || (at->second >= f.failing_since && at->second <= f.commit)))
          f.culprit = e.note;  // rows are oldest first: the newest regression wins
      if (std::any_of(ids.begin(), ids.end(), [&](int64_t id) { return latest.count(id) > 0; }))
        model_.regressions.push_back(std::move(e));
    }
    return OkStatus();
  }

  void Night() {
    NightCounts counts = night_;
    for (const auto& gap : model_.incomplete_nightlies)
      counts.missing_shards += static_cast<int64_t>(gap.missing_count + gap.unfinished.size());
    model_.night = JudgeNight(counts);
  }

  // The previous nightly's result of r's case and run identity (none: the first such night).
  const Loaded* PreviousNightly(const Loaded* r) const {
    const auto& list = by_case_.at(r->stored.result.case_id);
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      const Loaded* o = *it;
      if (o->run_index < r->run_index && o->config_hash == r->config_hash && IsNightlyRun(runs_[o->run_index]))
        return o;
    }
    return nullptr;
  }

  static std::optional<ChangeKind> KindOfChange(const Loaded* r, const Loaded* before) {
    auto bad = [](CaseStatus s) { return s == CaseStatus::kFail || s == CaseStatus::kError; };
    const CaseStatus now = r->stored.result.status;
    if (IsPairedRegressionOnly(now, r->metrics) ||
        (now == CaseStatus::kPass && MetricSet(r->metrics).Paired() == BaselineVerdict::kRegressed))
      return ChangeKind::kPairedRegression;
    if (bad(now) && (!before || !bad(before->stored.result.status))) return ChangeKind::kNewFailure;
    if (now == CaseStatus::kPass && before && bad(before->stored.result.status)) return ChangeKind::kFixed;
    return std::nullopt;
  }

  Status Changes() {
    // Each failure's culprit by (case, run), built once; the last failure of a pair wins, as
    // it did when each change scanned the failures.
    std::map<std::pair<std::string_view, int64_t>, const FailureEntry*> failure_of;
    for (const auto& f : model_.failures) failure_of[{f.case_id, f.run_id}] = &f;
    for (const Loaded* r : latest_cases_) {
      const Loaded* before = PreviousNightly(r);
      const std::optional<ChangeKind> kind = KindOfChange(r, before);
      if (!kind) continue;
      ChangeEntry c{*kind, r->stored.result.case_id, r->stored.result.status, r->stored.run_id, r->commit};
      c.suite = r->key.suite();
      if (before) {
        c.before_commit = before->commit;
        c.before_run = before->stored.run_id;
        c.before_status = before->stored.result.status;
      }
      c.finding = FirstLine(r->stored.result.message);
      if (auto f = failure_of.find({c.case_id, c.run_id}); f != failure_of.end()) c.culprit = f->second->culprit;
      if (c.kind == ChangeKind::kFixed) c.no_culprit = "a fix: bisect --auto looks for the commits that break a case, not those that mend it";
      else if (!c.culprit && !before)
        c.no_culprit = "no earlier nightly of this run identity (stack config, faults, model) in the window: nothing to "
                       "bisect from";
      else if (!c.culprit)
        c.no_culprit = "bisect --auto has not looked at it (ci/nightly.sh runs it when HARNESS_STACK_REPO and "
                       "HARNESS_BISECT_COMMAND are set)";
      model_.changes.push_back(std::move(c));
    }
    // By kind in ChangeKind's order (new failures, paired regressions, fixes), then case id.
    std::stable_sort(model_.changes.begin(), model_.changes.end(), [](const ChangeEntry& a, const ChangeEntry& b) {
      if (a.kind != b.kind) return a.kind < b.kind;
      return a.case_id < b.case_id;
    });
    return OkStatus();
  }

  // The regression's stored confirmation; a word outside its table is a warning, and reads as
  // not-tried (the regression, unless bisected, is ambiguous: as the report showed it before).
  Confirmation ReadConfirmation(const RegressionRow& g) {
    auto c = StoredConfirmation(g);
    if (c) return *c;
    model_.warnings.push_back(c.error().message + ": the report reads it as not-tried");
    return Confirmation::kNotTried;
  }

  CulpritNote NoteOf(const RegressionRow& g, Confirmation confirmation) const {
    CulpritNote n;
    if (!g.session_id) {
      // A confirming rerun that could not test it records why (confirm_json's "untestable").
      const bool untestable = g.confirm_json.find("\"untestable\"") != std::string::npos;
      n.verdict = confirmation != Confirmation::kNotConfirmed ? RegressionVerdict::kAmbiguous
                  : untestable                                ? RegressionVerdict::kUntestable
                                                              : RegressionVerdict::kNotConfirmed;
      return n;
    }
    n.session = *g.session_id;
    n.verdict = RegressionVerdict::kAmbiguous;
    for (const auto& s : model_.bisect)
      if (s.id == *g.session_id) {
        n.verdict = s.read_status ? VerdictOfSession(*s.read_status) : RegressionVerdict::kAmbiguous;
        n.culprit = s.culprit;
        n.confidence = s.confidence;
        n.runs = s.runs;
        const Json result = ParseJsonOrDiscarded(s.result_json);
        if (result.is_object() && result.contains("range") && result["range"].is_array())
          for (const auto& sha : result["range"])
            if (sha.is_string()) n.range.push_back(sha.get<std::string>());
        n.timing = BisectTimingOf(result);
        if (auto c = model_.session_culprits.find(s.id); c != model_.session_culprits.end()) n.culprits = c->second;
      }
    return n;
  }

  ReadOnlyStore& store_;  // its path and bisect sessions; results are read through reads_
  ReportReads& reads_;
  ReportModel model_;
  std::vector<RunRow> runs_;
  std::vector<Loaded> results_;
  std::map<std::string, std::vector<const Loaded*>> by_case_;
  std::vector<const Loaded*> failing_;
  std::vector<const Loaded*> latest_cases_;   // the cases the summary counts
  struct CulpritPoint {
    std::size_t commit = 0;
    int64_t session = 0;
    std::set<std::string> cases;   // empty: every case
  };
  std::vector<CulpritPoint> culprit_points_;  // bisect culprits in the window
  NightCounts night_;
};

}  // namespace

Result<ReportModel> BuildReport(ReadOnlyStore& store, const ReportQuery& q) { return Builder(store, q).Build(); }

std::string CulpritEvidence(const CulpritNote& n) {
  return fmt::format("(confidence {:.3f}, {} runs, bisect session {}{})", n.confidence, n.runs, n.session,
                     n.timing ? "; " + TimingWords(*n.timing) : "");
}

std::optional<BisectTiming> SessionTiming(const BisectSessionRow& s) {
  return BisectTimingOf(ParseJsonOrDiscarded(s.result_json));
}

std::string CulpritChangeWords(const BisectChange& c) { return CulpritChangeWords(c, ShortSha(c.sha), c.subject); }

std::string CulpritChangeWords(const BisectChange& c, std::string_view sha, std::string_view subject) {
  return fmt::format("{} {}: moved {:+.4f} ({:+.2f} pp), posterior {:.3f}", sha, subject, c.size, 100 * c.size,
                     c.confidence);
}

std::string CulpritListWords(const std::vector<BisectChange>& culprits) {
  if (culprits.size() < 2) return "";
  std::string out;
  for (std::size_t i = 0; i < culprits.size(); ++i)
    out += fmt::format("{}{}. {}", i ? "; " : "", i + 1, CulpritChangeWords(culprits[i]));
  return out;
}

std::string CulpritWords(const CulpritNote& n) {
  if (n.verdict == RegressionVerdict::kCulprit)
    return fmt::format("culprit {} {} {}{}", ShortSha(n.culprit), n.subject, CulpritEvidence(n),
                       n.culprits.size() < 2
                           ? ""
                           : fmt::format("; {} culprits in the range: {}", n.culprits.size(), CulpritListWords(n.culprits)));
  if (n.verdict == RegressionVerdict::kNotConfirmed)
    return "not confirmed (flaky): a rerun of the bad commit did not show the regression; not bisected";
  if (n.verdict == RegressionVerdict::kUntestable)
    return "unconfirmed: the rerun of the bad commit could not test it (bisect --auto says why); not bisected";
  if (n.verdict == RegressionVerdict::kNoCulprit)
    return fmt::format("bisect found no culprit: the drop looks like noise (bisect session {})", n.session);
  std::vector<std::string> shas;
  for (const auto& sha : n.range) shas.push_back(ShortSha(sha));
  if (n.session == 0) return "bisect ambiguous: the budget ran out before the regression was confirmed";
  return fmt::format("bisect ambiguous: the culprit is one of {} (bisect session {})",
                     shas.empty() ? std::string("the range") : fmt::format("{}", fmt::join(shas, " ")), n.session);
}

std::size_t ReportModel::RegressionsWithCulprit() const {
  return static_cast<std::size_t>(
      std::count_if(regressions.begin(), regressions.end(), [](const RegressionEntry& e) { return e.note.verdict == RegressionVerdict::kCulprit; }));
}


std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace harness::reports
