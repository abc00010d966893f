#include "harness/stack_config.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

namespace harness {

bool StackConfig::HasFault(std::string_view name) const {
  return std::find(faults.begin(), faults.end(), name) != faults.end();
}

Json StackConfig::ToJson() const {
  Json j = raw.is_object() ? raw : Json::object();
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

std::string StackConfig::Hash() const {
  // FNV-1a 64: a stable identity for "the same config", not a security digest.
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : ToJson().dump()) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

Result<StackConfig> ParseStackConfig(const Json& j, const std::string& origin) {
  if (!j.is_object()) return UsageError(origin + ": a stack config is a JSON object");
  JsonObject o(j, origin);
  StackConfig c;
  c.raw = j;
  auto version = o.Int("format_version", 1);
  if (!version) return version.error();
  if (*version != 1) return o.FieldError("format_version", fmt::format("unsupported version {} (this binary reads 1)", *version));
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
  if (*batch < 1) return o.FieldError("batch", "must be at least 1");
  c.batch = static_cast<int>(*batch);
  if (o.Has("faults")) {
    auto faults = o.StringList("faults");
    if (!faults) return faults.error();
    c.faults = *faults;
  }
  return c;
}

Result<StackConfig> LoadStackConfig(const std::filesystem::path& path) {
  auto j = ReadJsonFile(path);
  if (!j) return j.error();
  return ParseStackConfig(*j, path.string());
}

}  // namespace harness
