#include "harness/store/baseline.h"

#include <fmt/format.h>

#include "harness/store/result_reads.h"

namespace harness {
namespace {

// How far back a baseline is looked for on the first-parent chain.
constexpr int kBaselineSearchDepth = 1000;

}  // namespace

Status CheckExplicitBaseline(BaselineReads& store, const std::filesystem::path& repo, const std::string& baseline_rev,
                             const std::string& config_hash) {
  auto c = ReadCommit(repo, baseline_rev);
  const std::string sha = c ? c->sha : baseline_rev;  // without git, as given
  auto runs = store.RunsAt(sha, config_hash);
  if (!runs) return runs.error();
  if (runs->first > 0) return OkStatus();
  if (runs->second > 0)
    return UsageError(fmt::format("--baseline {}: its {} stored run(s) come from another identity (stack config, "
                                  "endpoint, model, faults); a baseline must be a run of the same identity",
                                  baseline_rev, runs->second));
  return UsageError(fmt::format("--baseline {}: no finished run stored at that commit", baseline_rev));
}

BaselineLookup MakeBaselineLookup(BaselineReads& store, const std::filesystem::path& repo, const std::string& baseline_rev,
                                  const CommitInfo& commit, const std::string& config_hash, int64_t run_id,
                                  std::map<std::string, std::string> params_json) {
  std::vector<std::string> ancestors;
  std::string baseline_sha;
  if (!baseline_rev.empty()) {
    auto c = ReadCommit(repo, baseline_rev);
    baseline_sha = c ? c->sha : baseline_rev;  // without git, as given
  } else if (commit.first_parent_ordinal) {
    auto a = FirstParentAncestors(repo, commit.sha, kBaselineSearchDepth);
    if (a) ancestors = std::move(a).value();
  }
  return [&store, baseline_sha, ancestors, config_hash, ordinal = commit.first_parent_ordinal, run_id,
          params = std::move(params_json)](const std::string& case_id) -> Result<std::optional<Baseline>> {
    auto it = params.find(case_id);
    BaselineReads::CaseMatch match{case_id, config_hash, it == params.end() ? "{}" : it->second, run_id, false};
    std::optional<CaseRef> ref;
    if (!baseline_sha.empty()) {
      auto r = store.NewestCaseAt(match, baseline_sha);
      if (!r) return r.error();
      if (!*r) {
        auto any = store.HasCaseAt(case_id, baseline_sha);
        if (!any) return any.error();
        return UsageError(*any ? fmt::format("--baseline {}: the stored results of {} there come from runs of another "
                                             "identity (stack config, endpoint, model, faults or the case's "
                                             "parameters differ)",
                                             baseline_sha, case_id)
                               : fmt::format("--baseline {}: no stored result of {} at that commit", baseline_sha, case_id));
      }
      ref = **r;
    } else if (!ancestors.empty()) {
      match.passing_only = true;
      for (const auto& sha : ancestors) {
        auto r = store.NewestCaseAt(match, sha);
        if (!r) return r.error();
        if (*r) {
          ref = **r;
          break;
        }
      }
    } else if (ordinal) {  // no git here: the stored first-parent order stands in for ancestry
      match.passing_only = true;
      auto r = store.NewestCaseBelowOrdinal(match, *ordinal);
      if (!r) return r.error();
      ref = *r;
    }
    if (!ref) return std::optional<Baseline>();
    auto samples = store.Samples(ref->case_result_id);
    if (!samples) return samples.error();
    return std::optional<Baseline>(Baseline{ref->sha, ref->run_id, ref->status, std::move(samples).value()});
  };
}

}  // namespace harness
