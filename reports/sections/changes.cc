#include "reports/sections/changes.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "harness/results/metric_set.h"
#include "harness/results/night_verdict.h"
#include "harness/results/word_table.h"
#include "reports/report_load.h"

namespace harness::reports {

namespace {

constexpr WordTable<ChangeKind, 3> kChangeKindWords{{
    {ChangeKind::kNewFailure, "new-failure"},
    {ChangeKind::kPairedRegression, "paired-regression"},
    {ChangeKind::kFixed, "fixed"},
}};
static_assert(IsOneWordPerValue(kChangeKindWords));

class ChangesLoad : SectionLoad {
 public:
  using SectionLoad::SectionLoad;

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
};

}  // namespace

Status LoadChanges(ReportLoad& load) { return ChangesLoad(load).Changes(); }

std::string_view Word(ChangeKind k) { return WordIn(kChangeKindWords, k); }

}  // namespace harness::reports
