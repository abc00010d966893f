#include "reports/sections/failures.h"

#include <algorithm>
#include <map>

#include "reports/report_load.h"

namespace harness::reports {

namespace {

class FailuresLoad : SectionLoad {
 public:
  using SectionLoad::SectionLoad;

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
};

}  // namespace

Status LoadFailures(ReportLoad& load) { return FailuresLoad(load).Failures(); }

}  // namespace harness::reports
