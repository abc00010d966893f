#include "runners/refstack/compiler/device.h"

#include <fmt/format.h>

#include "harness/util/versions.h"

#include <algorithm>

namespace harness::compiler {

using harness::JsonObject;
using harness::Result;

namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;
constexpr double kTiB = 1024.0 * 1024 * 1024 * 1024;
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMicro = 1e-6;

Result<std::map<DType, double>> Peaks(const JsonObject& o, const std::string& key) {
  auto table = o.Object(key);
  if (!table) return table.error();
  std::map<DType, double> peaks;
  for (const auto& [name, value] : table->json().items()) {
    auto dtype = ParseDType(name);
    if (!dtype) return table->FieldError(name, "unknown dtype");
    auto v = table->Number(name);
    if (!v) return v.error();
    if (*v <= 0) return table->FieldError(name, "must be positive");
    peaks[*dtype] = *v * kTera;
  }
  if (peaks.empty()) return o.FieldError(key, "must list at least one dtype");
  return peaks;
}

Result<double> Positive(const JsonObject& o, const std::string& key, double scale) {
  auto v = o.Number(key);
  if (!v) return v.error();
  if (*v <= 0) return o.FieldError(key, "must be positive");
  return *v * scale;
}

Result<double> Fraction(const JsonObject& o, const std::string& key) {
  auto v = o.Number(key);
  if (!v) return v.error();
  if (*v <= 0 || *v > 1) return o.FieldError(key, "must be in (0, 1]");
  return *v;
}

Result<double> NonNegative(const JsonObject& o, const std::string& key, double scale) {
  auto v = o.Number(key);
  if (!v) return v.error();
  if (*v < 0) return o.FieldError(key, "must not be negative");
  return *v * scale;
}

}  // namespace

Result<DeviceProfile> ParseDeviceProfile(const harness::Json& json, const std::string& origin) {
  if (!json.is_object()) return harness::UsageError(origin + ": a device profile is a JSON object");
  JsonObject o(json, origin);
  if (auto v = o.RequireVersion(kDeviceProfileFormat); !v) return v.error();
  DeviceProfile d;
  d.origin = origin;
  auto name = o.String("name");
  if (!name) return name.error();
  d.name = *name;
#define REFSTACK_TRY(target, expr) \
  do {                             \
    auto r = (expr);               \
    if (!r) return r.error();      \
    target = *r;                   \
  } while (0)
  REFSTACK_TRY(d.mma_peak, Peaks(o, "mma_tflops"));
  REFSTACK_TRY(d.gp_peak, Peaks(o, "gp_tflops"));
  REFSTACK_TRY(d.memory_bytes, Positive(o, "memory_gib", kGiB));
  REFSTACK_TRY(d.memory_bandwidth, Positive(o, "memory_bandwidth_tib_per_s", kTiB));
  REFSTACK_TRY(d.compute_efficiency, Fraction(o, "compute_efficiency"));
  REFSTACK_TRY(d.memory_efficiency, Fraction(o, "memory_efficiency"));
  auto interconnect = o.Object("interconnect");
  if (!interconnect) return interconnect.error();
  REFSTACK_TRY(d.comm_efficiency, Fraction(*interconnect, "comm_efficiency"));
  const harness::Json* levels = interconnect->json().contains("levels") ? &interconnect->json()["levels"] : nullptr;
  if (!levels || !levels->is_array() || levels->empty())
    return interconnect->FieldError("levels", "expected a non-empty list of levels");
  for (size_t i = 0; i < levels->size(); ++i) {
    JsonObject level((*levels)[i], origin, fmt::format("interconnect.levels[{}]", i));
    InterconnectLevel l;
    REFSTACK_TRY(l.name, level.String("name"));
    auto size = level.Int("size");
    if (!size) return size.error();
    if (*size < 1) return level.FieldError("size", "must be at least 1");
    l.size = *size;
    std::string topology;
    REFSTACK_TRY(topology, level.String("topology"));
    if (topology != "full_mesh" && topology != "switch")
      return level.FieldError("topology", fmt::format("unknown topology '{}' (known: full_mesh, switch)", topology));
    l.full_mesh = topology == "full_mesh";
    REFSTACK_TRY(l.bandwidth, Positive(level, "bandwidth_gb_per_s", kGiga));
    REFSTACK_TRY(l.latency, NonNegative(level, "latency_us", kMicro));
    d.levels.push_back(l);
  }
  auto statics = o.Object("static_cost_us");
  if (!statics) return statics.error();
  REFSTACK_TRY(d.static_mma, NonNegative(*statics, "mma", kMicro));
  REFSTACK_TRY(d.static_gp, NonNegative(*statics, "gp", kMicro));
  REFSTACK_TRY(d.static_comm, NonNegative(*statics, "comm", kMicro));
#undef REFSTACK_TRY
  return d;
}

std::vector<std::string> KnownDevices(const std::filesystem::path& devices_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(devices_dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    if (it->path().extension() == ".json") names.push_back(it->path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Result<DeviceProfile> LoadDeviceProfile(const std::filesystem::path& devices_dir, const std::string& name) {
  const auto known = KnownDevices(devices_dir);
  if (std::find(known.begin(), known.end(), name) == known.end())
    return harness::UsageError(fmt::format("unknown device '{}' (known: {}; profiles live in {})", name,
                                           fmt::join(known, ", "), devices_dir.string()));
  auto json = harness::ReadJsonFile(devices_dir / (name + ".json"));
  if (!json) return json.error();
  auto profile = ParseDeviceProfile(*json, (devices_dir / (name + ".json")).string());
  if (profile && profile->name != name)
    return harness::UsageError(
        fmt::format("{}: name: '{}' does not match the file name", profile->origin, profile->name));
  return profile;
}

}  // namespace harness::compiler
