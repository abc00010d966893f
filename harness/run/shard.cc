#include "harness/run/shard.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/results/case_id.h"

namespace harness {

Result<Shard> ParseShard(const std::string& text) {
  auto shard = ParseShardWord(text);
  if (!shard) return UsageError(fmt::format("--shard '{}': expected I/N with 0 <= I < N (e.g. 0/4)", text));
  return *shard;
}

Result<std::optional<Shard>> ShardFromEnvironment() {
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  const char* index = std::getenv("GTEST_SHARD_INDEX");
  if (!total && !index) return std::optional<Shard>();
  if (!total || !index)
    return UsageError(fmt::format("{} is set but {} is not: set both or neither", total ? "GTEST_TOTAL_SHARDS" : "GTEST_SHARD_INDEX",
                                  total ? "GTEST_SHARD_INDEX" : "GTEST_TOTAL_SHARDS"));
  auto shard = ParseShard(fmt::format("{}/{}", index, total));
  if (!shard)
    return UsageError(fmt::format("GTEST_SHARD_INDEX={} GTEST_TOTAL_SHARDS={}: expected 0 <= index < total", index,
                                  total));
  return std::optional<Shard>(*shard);
}

std::string NightlyFromEnvironment() {
  if (const char* gitlab = std::getenv("CI_PIPELINE_ID"); gitlab && *gitlab) return fmt::format("gitlab-{}", gitlab);
  if (const char* github = std::getenv("GITHUB_RUN_ID"); github && *github) return fmt::format("github-{}", github);
  return "";
}

std::vector<std::string> CasesOfShard(const std::vector<std::string>& case_ids, const std::vector<SuiteTable>& tables,
                                      const Shard& shard) {
  if (shard.count <= 1) return case_ids;
  std::map<std::string, double> cost_of_suite;
  for (const auto& t : tables) cost_of_suite[t.suite] = t.shard_cost;
  // Each case with its cost, its id parsed once (not at every comparison of the sort).
  std::vector<std::pair<double, std::string>> by_cost;
  for (const auto& id : case_ids) {
    auto it = cost_of_suite.find(CaseId(id).suite());
    by_cost.emplace_back(it == cost_of_suite.end() ? 1.0 : it->second, id);
  }
  std::sort(by_cost.begin(), by_cost.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<double> load(static_cast<std::size_t>(shard.count), 0.0);
  std::set<std::string> mine;
  for (const auto& [cost, id] : by_cost) {
    auto lightest = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    load[static_cast<std::size_t>(lightest)] += cost;
    if (lightest == shard.index) mine.insert(id);
  }
  std::vector<std::string> out;
  for (const auto& id : case_ids)
    if (mine.count(id)) out.push_back(id);
  return out;
}

}  // namespace harness
