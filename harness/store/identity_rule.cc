#include "harness/store/identity_rule.h"

#include "harness/util/hash.h"
#include "harness/util/versions.h"

namespace harness {

const std::vector<std::string>& ContextPaths() {
  static const std::vector<std::string> paths = {
      // the fault switches stand in for code changes: the baseline must see across them
      "/stack_config/faults",
      // where an exec stack ran and how long it may take
      "/stack_config/exec/cwd",
      "/stack_config/exec/env",
      "/stack_config/exec/timeout_s",
      // where a server listens and how it is reached
      "/stack_config/openai/base_url",
      "/stack_config/openai/api_key_env",
      "/stack_config/openai/launch",
      "/endpoint/base_url",
      "/endpoint/api_key_env",
  };
  return paths;
}

SplitIdentity SplitRunIdentity(const Json& whole) {
  SplitIdentity s;
  s.measured = whole.is_object() ? whole : Json::object();
  s.context = Json::object();
  for (const auto& path : ContextPaths()) {
    const Json::json_pointer ptr(path);
    if (!s.measured.contains(ptr)) continue;
    s.context[ptr] = s.measured.at(ptr);
    s.measured.at(ptr.parent_pointer()).erase(ptr.back());
  }
  s.measured["format_version"] = kRunIdentityFormat;
  s.context["format_version"] = kRunIdentityFormat;
  s.hash = Fnv1a64Hex(s.measured.dump());
  return s;
}

RekeyedIdentity RekeyStoredIdentity(std::string_view config_json) {
  Json j = ParseJsonOrDiscarded(std::string(config_json));
  // value() would throw on a format_version that is no number ("1"): such text is kept too.
  const bool format_1 = j.is_object() && j.contains("format_version") && j["format_version"].is_number() &&
                        j["format_version"].get<double>() == 1;
  if (!format_1) return {std::string(config_json), "{}", ""};
  SplitIdentity s = SplitRunIdentity(j);
  return {s.measured.dump(), s.context.dump(), s.hash};
}

}  // namespace harness
