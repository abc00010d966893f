#include "harness/store/fleet_db.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/store/identity_rule.h"
#include "harness/store/nightly_db.h"
#include "harness/store/store.h"
#include "harness/util/hash.h"

namespace harness::bench {
namespace {

// The full 64-bit finalizer (MurmurHash3 fmix64): case k of nightly i must look independent
// of case k + 1.
uint64_t MixFull(uint64_t x) {
  x = Mix(x);
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}


std::string Module(int k) { return fmt::format("tests.compiler.test_mod{:03}", k / 100); }
std::string ClassName(int k) { return fmt::format("{}.TestGroup{}", Module(k), (k / 20) % 5); }
std::string TestName(int k) { return fmt::format("test_case_{:05}", k); }

// What kind of case k is: the share of each kind is the brief's "realistic" mix.
enum class Kind { kSteady, kBroken, kFlaky, kRegressed, kErratic, kSkipped };
Kind KindOf(int k) {
  const uint64_t h = MixFull(static_cast<uint64_t>(k) * 7 + 1) % 1000;
  if (h < 10) return Kind::kBroken;      // 1 %: fails every nightly
  if (h < 20) return Kind::kFlaky;       // 1 %: fails every other nightly
  if (h < 25) return Kind::kRegressed;   // 0.5 %: fails from some nightly on
  if (h < 28) return Kind::kErratic;     // 0.3 %: errors now and then
  if (h < 60) return Kind::kSkipped;     // 3.2 %
  return Kind::kSteady;
}

CaseStatus StatusOf(int k, int n) {
  switch (KindOf(k)) {
    case Kind::kBroken: return CaseStatus::kFail;
    case Kind::kFlaky: return (n + k) % 2 ? CaseStatus::kFail : CaseStatus::kPass;
    case Kind::kRegressed: return n >= k % kFleetNightlies ? CaseStatus::kFail : CaseStatus::kPass;
    case Kind::kErratic: return MixFull(static_cast<uint64_t>(k) * 131 + n) % 4 == 0 ? CaseStatus::kError : CaseStatus::kPass;
    case Kind::kSkipped: return CaseStatus::kSkip;
    case Kind::kSteady: return CaseStatus::kPass;
  }
  return CaseStatus::kPass;
}

// The message element's attribute and its text, as pytest writes them.
std::pair<std::string, std::string> MessageOf(int k, int n, CaseStatus s) {
  const int line = 40 + static_cast<int>(MixFull(static_cast<uint64_t>(k)) % 900);
  const std::string file = fmt::format("tests/compiler/test_mod{:03}.py", k / 100);
  if (s == CaseStatus::kFail)
    return {fmt::format("AssertionError: max abs diff {:.4f} exceeds atol 0.001", 0.001 + 1e-4 * ((k + n) % 97)),
            fmt::format("    def {}(self, compiled):\n        out = compiled(x)\n>       assert torch.allclose(out, ref, "
                        "atol=1e-3)\nE       AssertionError: max abs diff {:.4f} exceeds atol 0.001\n\n{}:{}: "
                        "AssertionError",
                        TestName(k), 0.001 + 1e-4 * ((k + n) % 97), file, line)};
  if (s == CaseStatus::kError)
    return {"RuntimeError: CUDA error: out of memory",
            fmt::format("E   RuntimeError: CUDA error: out of memory (tried to allocate {} MiB)\n\n{}:{}: RuntimeError",
                        256 + k % 512, file, line)};
  if (s == CaseStatus::kSkip) return {"requires sm_90", fmt::format("{}:{}: requires sm_90", file, line)};
  return {"", ""};
}

// 2 or 3 numeric properties per case.
std::vector<Metric> MetricsOf(int k, int n) {
  const double drift = 1e-3 * static_cast<double>(MixFull(static_cast<uint64_t>(k) * 977 + n) % 100);
  std::vector<Metric> m = {{"compile_seconds", 0.2 + 0.01 * (k % 50) + drift, 0, {}, {}},
                           {"peak_memory_mb", 512.0 + (k % 300) + 10 * drift, 0, {}, {}}};
  if (k % 3 == 0) m.push_back({"graph_ops", static_cast<double>(10 + k % 90), 0, {}, {}});
  return m;
}

double DurationOf(int k, int n) { return 0.05 + 0.001 * static_cast<double>(MixFull(static_cast<uint64_t>(k) + n) % 2000); }

// The run identity `harness ingest --format junit` (no --suite, no --case) gives.
SplitIdentity JunitIdentity() {
  return SplitRunIdentity(
      Json{{"format_version", 1}, {"ingest", Json{{"format", "junit"}, {"suite", ""}, {"case", ""}}}});
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string FleetCaseId(int k) { return fmt::format("{}/{}.{}", kFleetSuite, ClassName(k), TestName(k)); }

std::string FleetSha(int n) { return NightlySha(kNightlyCommits - kFleetNightlies + n); }

std::vector<FinishedCase> FleetCases(int n) {
  std::vector<FinishedCase> cases;
  cases.reserve(kFleetCases);
  for (int k = 0; k < kFleetCases; ++k) {
    const CaseStatus s = StatusOf(k, n);
    const auto [message, text] = MessageOf(k, n, s);
    CaseResult r{FleetCaseId(k), s, DurationOf(k, n), s == CaseStatus::kPass ? "" : message + "\n" + text, {}, {}};
    r.metrics = MetricsOf(k, n);
    cases.push_back(FinishedCase{kFleetSuite, std::move(r), {}});
  }
  return cases;
}

std::string FleetJunitXml(int n) {
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites>\n";
  out += fmt::format(
      "<testsuite name=\"{}\" errors=\"0\" failures=\"0\" skipped=\"0\" tests=\"{}\" time=\"0\" "
      "timestamp=\"2024-01-01T00:00:00\" hostname=\"fleet-ci\">\n",
      kFleetSuite, kFleetCases);
  for (int k = 0; k < kFleetCases; ++k) {
    const CaseStatus s = StatusOf(k, n);
    out += fmt::format("<testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">", ClassName(k), TestName(k),
                       DurationOf(k, n));
    out += "<properties>";
    for (const auto& m : MetricsOf(k, n)) out += fmt::format("<property name=\"{}\" value=\"{}\"/>", m.name, m.value);
    out += "</properties>";
    const auto [message, text] = MessageOf(k, n, s);
    const char* element = s == CaseStatus::kFail    ? "failure"
                          : s == CaseStatus::kError ? "error"
                          : s == CaseStatus::kSkip  ? "skipped"
                                                    : nullptr;
    if (element)
      out += fmt::format("<{0} message=\"{1}\">{2}</{0}>", element, XmlEscape(message), XmlEscape(text));
    out += "</testcase>\n";
  }
  out += "</testsuite>\n</testsuites>\n";
  return out;
}

void GenerateFleetDatabase(const std::filesystem::path& path) {
  GenerateNightlyDatabase(path);
  auto store = Check(Store::Open(path));
  const SplitIdentity identity = JunitIdentity();
  for (int n = 0; n < kFleetNightlies; ++n) {
    const int64_t commit =
        Check(store->writer().UpsertCommit({FleetSha(n),
                                            {},
                                            kNightlyCommits - kFleetNightlies + n + 1,
                                            1700000000 + 86400 * (kNightlyCommits - kFleetNightlies + n),
                                            fmt::format("nightly {}", kNightlyCommits - kFleetNightlies + n)}));
    const std::string file = fmt::format("out/pytest-nightly-{}.xml", n);
    IngestedRun run{NewRun{commit, "ingest:junit", identity.hash, identity.measured.dump(), "fleet-ci", "0.2.0"},
                    FleetCases(n), IngestedFile{Fnv1a64Hex(file), "junit", file}};
    Check(store->writer().WriteIngestedRuns({run}));
  }
}

void GenerateFleetShards(const std::filesystem::path& dir, int n) {
  std::filesystem::create_directories(dir);
  const auto cases = FleetCases(n);
  const std::string nightly = fmt::format("fleet-{}", n);
  for (int i = 0; i < kFleetShards; ++i) {
    auto store = Check(Store::Open(dir / fmt::format("shard-{:02}.db", i)));
    const int64_t commit = Check(store->writer().UpsertCommit(
        {FleetSha(n), {}, kNightlyCommits - kFleetNightlies + n + 1, 1700000000, fmt::format("nightly {}", n)}));
    NewRun r{commit, "refstack", "fleetshard", "{}", fmt::format("fleet-ci-{}", i), "0.2.0",
             fmt::format("{}/{}", i, kFleetShards), nightly};
    const int64_t run = Check(store->writer().BeginRun(r));
    for (int k = i; k < kFleetCases; k += kFleetShards) {
      const auto& c = cases[static_cast<std::size_t>(k)];
      Check(
          store->writer().FinishCase(Check(store->writer().BeginCase(run, c.suite, c.result.case_id, "{}")), c.result));
    }
    Check(store->writer().FinishRun(run, RunStatus::kFail));
  }
}

}  // namespace harness::bench
