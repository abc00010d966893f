#include "harness/store/nightly_shards.h"

#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "harness/results/shard.h"
#include "harness/util/git.h"

namespace harness {
namespace {

// "I/N" -> {I, N} (ParseShardWord); {-1, 0} for anything else (never written by the harness).
std::pair<long long, long long> IndexAndCount(const std::string& shard) {
  const auto s = ParseShardWord(shard);
  if (!s) return {-1, 0};
  return {s->index, s->count};
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

std::vector<NightlyGap> NightlyGaps(const std::vector<RunRow>& runs) {
  using Key = std::tuple<std::string, std::string, std::string>;
  // logical run -> shard count -> shard index -> finished?
  std::map<Key, std::map<long long, std::map<long long, bool>>> seen;
  for (const RunRow& r : runs) {
    if (r.nightly.empty()) continue;
    const auto [i, n] = IndexAndCount(r.shard);
    if (n < 1) continue;
    bool& finished = seen[{r.nightly, r.sha, r.config_hash}][n][i];
    finished = finished || r.status != RunStatus::kRunning;
  }
  std::vector<NightlyGap> gaps;
  for (const auto& [key, counts] : seen) {
    NightlyGap gap{std::get<0>(key), std::get<1>(key), std::get<2>(key), {}, {}};
    for (const auto& [n, shards] : counts)
      for (long long i = 0; i < n; ++i) {
        auto it = shards.find(i);
        if (it == shards.end()) {
          if (gap.missing_count++ < kMaxNamedShards) gap.missing.push_back(fmt::format("{}/{}", i, n));
        }
        else if (!it->second) gap.unfinished.push_back(fmt::format("{}/{}", i, n));
      }
    if (gap.missing_count > 0 || !gap.unfinished.empty()) gaps.push_back(std::move(gap));
  }
  return gaps;
}

std::vector<std::string> ReplacedAttemptTexts(const std::vector<RunRow>& runs) {
  std::map<int64_t, const RunRow*> by_id;
  for (const RunRow& r : runs) by_id[r.id] = &r;
  std::vector<std::string> out;
  for (const RunRow& r : runs) {
    if (!r.superseded_by) continue;
    auto it = by_id.find(*r.superseded_by);
    const std::string by = it == by_id.end() ? fmt::format("run {}", *r.superseded_by)
                                             : fmt::format("attempt {} (run {})", it->second->attempt, it->first);
    out.push_back(fmt::format("nightly {} at {}: shard {}: {} replaces attempt {} (run {}{}, kept as a rerun)",
                              r.nightly, ShortSha(r.sha), r.shard, by, r.attempt, r.id,
                              r.status == RunStatus::kRunning ? ", unfinished" : ""));
  }
  return out;
}

std::string NightlyGapText(const NightlyGap& gap) {
  std::string out = fmt::format("nightly {} at {}:", gap.nightly, ShortSha(gap.sha));
  if (gap.missing_count > 0)
    out += fmt::format(" shard{} {}{} missing", gap.missing_count == 1 ? "" : "s", Join(gap.missing),
                       gap.missing_count > gap.missing.size()
                           ? fmt::format(" and {} more", gap.missing_count - gap.missing.size())
                           : "");
  if (!gap.unfinished.empty())
    out += fmt::format("{} shard{} {} did not finish", gap.missing_count == 0 ? "" : ";",
                       gap.unfinished.size() == 1 ? "" : "s", Join(gap.unfinished));
  return out;
}

}  // namespace harness
