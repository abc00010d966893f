#include "harness/stack/stack_config.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/util/versions.h"

namespace harness {

bool StackConfig::HasFault(std::string_view name) const {
  return std::find(faults.begin(), faults.end(), name) != faults.end();
}

const std::vector<std::string>& EnvValuesKept() {
  static const std::vector<std::string> kept = {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                                "ASCEND_RT_VISIBLE_DEVICES", "OMP_NUM_THREADS"};
  return kept;
}

namespace {

// The environment object at ptr, if any, with the values EnvValuesKept does not name replaced.
void RedactEnv(Json& j, const Json::json_pointer& ptr) {
  if (!j.contains(ptr) || !j.at(ptr).is_object()) return;
  const auto& kept = EnvValuesKept();
  for (auto it = j.at(ptr).begin(); it != j.at(ptr).end(); ++it)
    if (std::find(kept.begin(), kept.end(), it.key()) == kept.end()) *it = std::string(kEnvValueNotStored);
}

}  // namespace

Json StackConfig::ToJson() const {
  Json j = raw.is_object() ? raw : Json::object();
  for (const auto& env : env_objects) RedactEnv(j, Json::json_pointer(env));
  // Words for people and the format's version change no answer: equivalent configs
  // (none, {"format_version": 1}, one with only a comment) must hash equally.
  for (const char* key : {"format_version", "comment", "description"}) j.erase(key);
  j["stack"] = stack;
  j["device"] = device;
  j["precision"] = precision;
  j["batch"] = batch;
  std::vector<std::string> sorted = faults;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  j["faults"] = sorted;
  return j;  // nlohmann's default object sorts keys, so the dump is canonical
}

Result<StackConfig> ParseStackConfig(const Json& j, const std::string& origin,
                                     const std::vector<ConfigSection>& sections) {
  if (!j.is_object()) return UsageError(origin + ": a stack config is a JSON object");
  JsonObject o(j, origin);
  StackConfig c;
  c.raw = j;
  if (o.Has("format_version"))
    if (auto v = o.RequireVersion(kStackConfigFormat); !v) return v.error();
  // A typo ("faluts") would silently run without the fault: name it instead.
  std::vector<std::string> known = {"format_version", "comment", "description", "stack", "device", "precision",
                                    "batch", "faults"};
  for (const auto& section : sections) {
    known.push_back(section.key);
    c.env_objects.insert(c.env_objects.end(), section.env_objects.begin(), section.env_objects.end());
  }
  if (auto k = o.KnownKeys(known); !k) return k.error();
  auto stack = o.String("stack", c.stack);
  if (!stack) return stack.error();
  c.stack = *stack;
  auto device = o.String("device", c.device);
  if (!device) return device.error();
  c.device = *device;
  auto precision = o.String("precision", c.precision);
  if (!precision) return precision.error();
  c.precision = *precision;
  auto batch = o.Int("batch", c.batch);
  if (!batch) return batch.error();
  if (*batch < 1 || *batch > 1 << 20) return o.FieldError("batch", fmt::format("must be in [1, {}], got {}", 1 << 20, *batch));
  c.batch = static_cast<int>(*batch);
  if (o.Has("faults")) {
    auto faults = o.StringList("faults");
    if (!faults) return faults.error();
    c.faults = *faults;
  }
  return c;
}

Result<StackConfig> LoadStackConfig(const std::filesystem::path& path, const std::vector<ConfigSection>& sections) {
  auto j = ReadJsonFile(path);
  if (!j) return j.error();
  return ParseStackConfig(*j, path.string(), sections);
}

}  // namespace harness
