#include "reports/report_model.h"

#include <fnmatch.h>

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "harness/results/case_id.h"
#include "harness/store/resolve_commit.h"
#include "harness/util/git.h"
#include "harness/util/utf8.h"
#include "reports/report_load.h"

namespace harness::reports {

bool IsAtRisk(const std::vector<Metric>& metrics) { return HasAtRiskGate(metrics); }

bool Sharded(const RunRow& run) { return run.shard != "0/1"; }

std::string CutSubject(const std::string& subject) {
  const std::string_view line = std::string_view(subject).substr(0, subject.find('\n'));
  const std::string_view cut = Utf8Prefix(line, kMaxSubjectBytes);
  return std::string(cut) + (cut.size() < subject.size() ? " [...]" : "");
}

namespace {

// The report's frame: the window of commits and runs every section reads, and the night's
// verdict over what the summary counted.
class FrameLoad : SectionLoad {
 public:
  using SectionLoad::SectionLoad;

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

  void Night() {
    NightCounts counts = night_;
    for (const auto& gap : model_.incomplete_nightlies)
      counts.missing_shards += static_cast<int64_t>(gap.missing_count + gap.unfinished.size());
    model_.night = JudgeNight(counts);
  }
};

// The sections' loaders, in the order each needs the one before (a section's header says
// what its loader reads).
constexpr Status (*kSectionLoaders[])(ReportLoad&) = {
    LoadSummary, LoadFailures, LoadTrends, LoadBisect, LoadFlaky, LoadFlips, LoadRegressions, LoadChanges,
};

}  // namespace

Result<ReportModel> BuildReport(ReadOnlyStore& store, const ReportQuery& q) {
  ReportLoad load(store, store.reader());
  load.model.query = q;
  const ReportReads::ReadSnapshot snapshot(load.reads);
  FrameLoad frame(load);
  if (auto s = frame.LoadWindow(); !s) return s.error();
  for (const auto& load_section : kSectionLoaders)
    if (auto s = load_section(load); !s) return s.error();
  frame.Night();
  return std::move(load.model);
}

std::size_t ReportModel::RegressionsWithCulprit() const {
  return static_cast<std::size_t>(
      std::count_if(regressions.begin(), regressions.end(), [](const RegressionEntry& e) { return e.note.verdict == RegressionVerdict::kCulprit; }));
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace harness::reports
