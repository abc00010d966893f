// The store at fleet scale, two figures:
//  1. rows written per second by one and by eight writer processes on one database, each
//     writing as a run does (a case row, its samples one commit each as they stream, then
//     metrics and op rows in the case's transaction);
//  2. the time `Store::MergeFrom` (what `harness merge` runs) takes for the 30 shard
//     databases of one nightly.
//   build/harness/store/store_bench [--cases N] [--samples N]
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "harness/store/store.h"

namespace {

using namespace harness;  // NOLINT: a benchmark of the project's own API
using Clock = std::chrono::steady_clock;

struct Workload {
  int cases = 40;
  int samples = 50;
  int metrics = 3;
  int ops = 10;
  int64_t RowsPerWriter() const { return 1 + static_cast<int64_t>(cases) * (1 + samples + metrics + ops); }
};

// One writer: a run of w.cases cases at commit `sha`. Returns false on any failed write.
bool WriteRun(const std::filesystem::path& db, const std::string& sha, const Workload& w, const std::string& shard,
              const std::string& nightly) {
  auto store = Store::Open(db);
  if (!store) {
    std::fprintf(stderr, "%s\n", store.error().message.c_str());
    return false;
  }
  auto& s = (*store)->writer();
  auto commit = s.UpsertCommit({sha, {}, std::nullopt, std::nullopt, "bench"});
  if (!commit) return false;
  auto run = s.BeginRun({*commit, "refstack", "hash", "{}", "bench", "0", shard, nightly});
  if (!run) return false;
  for (int c = 0; c < w.cases; ++c) {
    const std::string id = fmt::format("suite/test_case_{}", c);
    auto cr = s.BeginCase(*run, "suite", id, "{}");
    if (!cr) return false;
    for (int i = 0; i < w.samples; ++i)
      if (!s.WriteSample(*cr, {std::to_string(i), i % 7 ? SampleOutcome::kCorrect : SampleOutcome::kWrong, "42", "42",
                               0.01, 100, "The answer is 42.\n#### 42"}))
        return false;
    CaseResult r{id, CaseStatus::kPass, 0.1, "", {}, {}};
    for (int m = 0; m < w.metrics; ++m) r.metrics.push_back({fmt::format("m{}", m), 0.5, w.samples, 0.4, 0.6});
    for (int o = 0; o < w.ops; ++o) r.ops.push_back({fmt::format("aten.op{}.default", o), "[1, 64, 5120]", 1, 1e-5});
    if (!s.FinishCase(*cr, r)) {
      std::fprintf(stderr, "finish case failed\n");
      return false;
    }
  }
  return s.FinishRun(*run, RunStatus::kPass).ok();
}

// Rows per second by `writers` processes writing at once into a fresh database.
double RowsPerSecond(const std::filesystem::path& dir, int writers, const Workload& w) {
  const auto db = dir / fmt::format("writers{}.db", writers);
  if (auto s = Store::Open(db); !s) return 0;  // created and migrated before the clock starts
  const auto start = Clock::now();
  std::vector<pid_t> kids;
  for (int i = 0; i < writers; ++i) {
    pid_t pid = fork();
    if (pid == 0) _exit(WriteRun(db, fmt::format("{:040x}", i + 1), w, "0/1", "") ? 0 : 1);
    kids.push_back(pid);
  }
  bool ok = true;
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  if (!ok) std::fprintf(stderr, "a writer failed\n");
  return ok ? static_cast<double>(w.RowsPerWriter() * writers) / s : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Workload w;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--cases")) w.cases = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--samples")) w.samples = std::atoi(argv[i + 1]);
  }
  char tmpl[] = "/tmp/harness-store-bench-XXXXXX";
  const std::filesystem::path dir = mkdtemp(tmpl);
  std::printf("writers: each a run of %d cases x (1 case row + %d samples + %d metrics + %d op rows) = %lld rows\n",
              w.cases, w.samples, w.metrics, w.ops, static_cast<long long>(w.RowsPerWriter()));
  for (int writers : {1, 8})
    std::printf("  %d writer%s: %.0f rows/s\n", writers, writers == 1 ? " " : "s", RowsPerSecond(dir, writers, w));

  // 30 shards of one nightly: each a run of 10 compile cases (30 op rows each) and one
  // GSM8K case (1319 samples): about 47 000 rows in all.
  Workload shard{.cases = 0, .samples = 0, .metrics = 3, .ops = 30};
  constexpr int kShards = 30;
  std::vector<std::filesystem::path> shards;
  for (int i = 0; i < kShards; ++i) {
    shards.push_back(dir / fmt::format("shard{}.db", i));
    Workload compile = shard;
    compile.cases = 10;
    Workload eval{.cases = 1, .samples = 1319, .metrics = 4, .ops = 0};
    if (!WriteRun(shards.back(), std::string(40, 'a'), compile, fmt::format("{}/{}", i, kShards), "nightly-1") ||
        !WriteRun(shards.back(), std::string(40, 'a'), eval, fmt::format("{}/{}", i, kShards), "nightly-1"))
      return 1;
  }
  double best = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    const auto out = dir / fmt::format("merged{}.db", rep);
    const auto start = Clock::now();
    auto store = Store::Open(out);
    if (!store) return 1;
    for (const auto& in : shards)
      if (auto m = (*store)->MergeFrom(in); !m) {
        std::fprintf(stderr, "%s\n", m.error().message.c_str());
        return 1;
      }
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::printf("merge: %d shard databases of one nightly (%d runs, %d cases, %d samples): %.3f s (best of 3)\n",
              kShards, 2 * kShards, 11 * kShards, 1319 * kShards, best);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return 0;
}
