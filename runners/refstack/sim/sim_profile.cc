#include "runners/refstack/sim/sim_profile.h"

#include <optional>
#include <set>

#include <fmt/format.h>

#include "harness/util/versions.h"

namespace harness::sim {
namespace {

Status ReadNumber(const JsonObject& o, const std::string& key, double low, double high, double& out) {
  auto v = o.Number(key, out);
  if (!v) return v.error();
  if (*v < low || *v > high) return o.FieldError(key, fmt::format("must be in [{}, {}], got {}", low, high, *v));
  out = *v;
  return OkStatus();
}

Status ReadInt(const JsonObject& o, const std::string& key, int low, int high, int& out) {
  auto v = o.Int(key, out);
  if (!v) return v.error();
  if (*v < low || *v > high) return o.FieldError(key, fmt::format("must be in [{}, {}], got {}", low, high, *v));
  out = static_cast<int>(*v);
  return OkStatus();
}

}  // namespace

Result<SimProfile> ParseSimProfile(const Json& j, const std::string& origin) {
  if (!j.is_object()) return UsageError(origin + ": a sim profile is a JSON object");
  JsonObject o(j, origin);
  if (auto s = o.KnownKeys({"format_version", "description", "model", "seed", "base_accuracy", "batch_rows",
                                 "gemm", "no_number_share", "rerun_flip_rate", "rerun_rank_sd", "latency", "faults"});
      !s)
    return s.error();
  if (auto v = o.RequireVersion(kSimProfileFormat); !v) return v.error();
  SimProfile p;
  p.origin = origin;
  auto model = o.String("model", p.model);
  if (!model) return model.error();
  p.model = *model;
  auto seed = o.Int("seed");
  if (!seed) return seed.error();
  p.seed = static_cast<uint64_t>(*seed);
  std::optional<Error> error;
  auto check = [&](Status s) {
    if (!s && !error) error = s.error();
  };
  check(ReadNumber(o, "base_accuracy", 0, 1, p.base_accuracy));
  check(ReadInt(o, "batch_rows", 1, 4096, p.batch_rows));
  check(ReadNumber(o, "no_number_share", 0, 1, p.no_number_share));
  check(ReadNumber(o, "rerun_flip_rate", 0, 1, p.rerun_flip_rate));
  check(ReadNumber(o, "rerun_rank_sd", 0, 0.5, p.rerun_rank_sd));
  if (error) return *error;
  if (o.Has("gemm")) {
    auto gemm = o.Object("gemm");
    if (!gemm) return gemm.error();
    check(gemm->KnownKeys({"k", "n"}));
    check(ReadInt(*gemm, "k", 1, 1 << 16, p.gemm_k));
    check(ReadInt(*gemm, "n", 1, 1 << 16, p.gemm_n));
  }
  if (o.Has("latency")) {
    auto latency = o.Object("latency");
    if (!latency) return latency.error();
    check(latency->KnownKeys({"first_token_s", "per_token_s"}));
    check(ReadNumber(*latency, "first_token_s", 0, 600, p.first_token_s));
    check(ReadNumber(*latency, "per_token_s", 0, 10, p.per_token_s));
  }
  if (o.Has("faults")) {
    auto faults = o.Object("faults");
    if (!faults) return faults.error();
    auto& f = p.faults;
    check(faults->KnownKeys({"http_5xx", "http_429", "slow", "malformed_json", "dropped_connection",
                                  "retry_after_s", "slow_s"}));
    check(ReadNumber(*faults, "http_5xx", 0, 1, f.http_5xx));
    check(ReadNumber(*faults, "http_429", 0, 1, f.http_429));
    check(ReadNumber(*faults, "slow", 0, 1, f.slow));
    check(ReadNumber(*faults, "malformed_json", 0, 1, f.malformed_json));
    check(ReadNumber(*faults, "dropped_connection", 0, 1, f.dropped_connection));
    check(ReadNumber(*faults, "retry_after_s", 0, 3600, f.retry_after_s));
    check(ReadNumber(*faults, "slow_s", 0, 3600, f.slow_s));
    if (!error && f.http_5xx + f.http_429 + f.slow + f.malformed_json + f.dropped_connection > 1)
      error = UsageError(origin + ": faults: the rates add up to more than 1");
  }
  if (error) return *error;
  return p;
}

Result<SimProfile> LoadSimProfile(const std::filesystem::path& path) {
  auto j = ReadJsonFile(path);
  if (!j) return j.error();
  return ParseSimProfile(*j, path.string());
}

}  // namespace harness::sim
