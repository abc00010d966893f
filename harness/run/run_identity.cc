#include "harness/run/run_identity.h"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/store/identity_rule.h"
#include "harness/util/hash.h"
#include "harness/util/paths.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

// Path -> leaf value, for describing differences.
void Flatten(const Json& j, const std::string& path, std::map<std::string, std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (const auto& [k, v] : j.items()) Flatten(v, path.empty() ? k : path + "." + k, out);
    return;
  }
  out[path] = j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

Result<RunIdentity> MakeRunIdentity(const StackConfig& config, const std::optional<EndpointTarget>& endpoint,
                                    const std::vector<SuiteTable>& tables) {
  Json j = Json::object();
  j["format_version"] = kRunIdentityFormat;
  j["stack_config"] = config.ToJson();
  if (endpoint) {
    j["endpoint"] = Json{{"base_url", endpoint->base_url}, {"model", endpoint->model}, {"chat", endpoint->chat}};
    if (!endpoint->served_models.empty()) j["endpoint"]["served_models"] = endpoint->served_models;
  } else {
    j["endpoint"] = nullptr;
  }
  Json profiles = Json::object();
  for (const auto& t : tables) {
    for (const auto& [test, rows] : t.tests) {
      for (const auto& row : rows) {
        if (auto it = row.params.find("sim_profile"); it != row.params.end() && it->is_string()) {
          const std::string name = it->get<std::string>();
          if (profiles.contains(name)) continue;
          auto profile = ReadJsonFile(GoldenDir() / name);
          if (!profile) return profile.error();
          profiles[name] = Fnv1a64Hex(profile->dump());
        }
      }
    }
  }
  j["sim_profiles"] = std::move(profiles);
  SplitIdentity split = SplitRunIdentity(j);
  return RunIdentity{std::move(split.measured), std::move(split.context), std::move(split.hash)};
}

std::string DescribeIdentityDifference(const std::string& stored_json, const Json& current) {
  Json stored = ParseJsonOrDiscarded(stored_json);
  if (stored.is_discarded()) stored = Json::object();
  std::map<std::string, std::string> a, b;
  Flatten(stored, "", a);
  Flatten(current, "", b);
  std::vector<std::string> diffs;
  for (const auto& [k, v] : b) {
    auto it = a.find(k);
    std::string before = it == a.end() ? "(absent)" : it->second;
    if (before != v) diffs.push_back(fmt::format("{}: {} -> {}", k, before, v));
  }
  for (const auto& [k, v] : a)
    if (!b.count(k)) diffs.push_back(fmt::format("{}: {} -> (absent)", k, v));
  if (diffs.empty()) return "no visible difference";
  if (diffs.size() > 4) {
    const auto more = diffs.size() - 4;
    diffs.resize(4);
    diffs.push_back(fmt::format("{} more", more));
  }
  return fmt::format("{}", fmt::join(diffs, "; "));
}

}  // namespace harness
