#include "reports/sections/flips.h"

#include <algorithm>
#include <map>

#include "reports/report_load.h"

namespace harness::reports {

namespace {

std::string Cut(const std::string& s) {
  return s.size() <= kMaxCompletionBytes ? s : s.substr(0, kMaxCompletionBytes) + " [...]";
}

class FlipsLoad : SectionLoad {
 public:
  using SectionLoad::SectionLoad;

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
};

}  // namespace

Status LoadFlips(ReportLoad& load) { return FlipsLoad(load).Flips(); }

}  // namespace harness::reports
