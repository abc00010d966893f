// Roofline device profiles (golden/devices/<NAME>.json, format_version 1): peak MMA and
// general-purpose (GP) throughput per dtype, memory bandwidth, efficiencies, per-op
// static costs and the interconnect grid the collective model uses.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/util/json_file.h"
#include "runners/refstack/compiler/dtype.h"

namespace harness::compiler {

struct InterconnectLevel {
  std::string name;
  int64_t size = 1;        // units of the level below (devices for the innermost)
  bool full_mesh = false;  // full mesh: a group of g uses (g-1)/(size-1) of the links
  double bandwidth = 0;    // bytes/s per link
  double latency = 0;      // seconds
};

struct DeviceProfile {
  std::string name;
  std::string origin;
  std::map<DType, double> mma_peak;  // ops/s
  std::map<DType, double> gp_peak;   // ops/s
  double memory_bytes = 0;
  double memory_bandwidth = 0;  // bytes/s
  double compute_efficiency = 1;
  double memory_efficiency = 1;
  double comm_efficiency = 1;
  std::vector<InterconnectLevel> levels;  // innermost first
  double static_mma = 0;                  // seconds added to an op with MMA work
  double static_gp = 0;                   // ... to any other non-view op
  double static_comm = 0;                 // ... to a collective
};

harness::Result<DeviceProfile> ParseDeviceProfile(const harness::Json& json, const std::string& origin);
// devices_dir/<name>.json; an unknown name lists the known devices.
harness::Result<DeviceProfile> LoadDeviceProfile(const std::filesystem::path& devices_dir, const std::string& name);
std::vector<std::string> KnownDevices(const std::filesystem::path& devices_dir);

}  // namespace harness::compiler
