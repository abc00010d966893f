#include "harness/store/bisect_changes.h"

#include <fmt/format.h>

namespace harness {

Json ChangesJson(const std::vector<BisectChange>& changes) {
  Json out = Json::array();
  for (const auto& c : changes)
    out.push_back({{"commit", c.sha}, {"subject", c.subject}, {"confidence", c.confidence}, {"size", c.size},
                   {"size_pp", 100 * c.size}});
  return out;
}

Result<std::vector<BisectChange>> ChangesFromJson(const Json& result, const std::string& origin) {
  std::vector<BisectChange> out;
  if (!result.is_object() || !result.contains("changes")) return out;
  const Json& list = result["changes"];
  if (!list.is_array()) return InfraError(fmt::format("{}: changes is not a list", origin));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& c = list[i];
    const std::string at = fmt::format("{}: changes[{}]", origin, i);
    if (!c.is_object()) return InfraError(at + " is not an object");
    for (const char* key : {"commit", "subject"})
      if (!c.contains(key) || !c[key].is_string()) return InfraError(fmt::format("{}.{} is missing or not a string", at, key));
    for (const char* key : {"confidence", "size"})
      if (!c.contains(key) || !c[key].is_number()) return InfraError(fmt::format("{}.{} is missing or not a number", at, key));
    out.push_back({c["commit"].get<std::string>(), c["subject"].get<std::string>(), c["confidence"].get<double>(),
                   c["size"].get<double>()});
  }
  return out;
}

}  // namespace harness
