// `history` and `compare` over a year of nightly runs (harness/store/nightly_db.h: 365
// commits of the 13 nightly cases with per-question samples and op tables). Goal (the compare/bisect issue): each
// answer, opening the database read-only and rendering included, in under 100 ms.
//   build-*/harness/compare/compare_bench
// The database is generated once into a temporary folder (about a minute); set
// HARNESS_BENCH_DB=FILE to keep it in FILE and reuse it on the next run.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "harness/compare/compare.h"
#include "harness/results/metric_names.h"
#include "harness/store/nightly_db.h"
#include "harness/store/store.h"
#include "harness/util/git.h"
#include "reports/compare_report.h"
#include "reports/history_report.h"

namespace {

using namespace harness;  // NOLINT: a benchmark of the project's own API

constexpr int kCommits = bench::kNightlyCommits;

template <class T>
T Check(Result<T> r) {
  if (!r) {
    std::fprintf(stderr, "compare_bench: %s\n", r.error().message.c_str());
    std::exit(3);
  }
  return std::move(*r);
}

const std::filesystem::path& Database() { return bench::NightlyDatabase(); }
std::string ShaOf(int i) { return bench::NightlySha(i); }

void BM_HistoryCase(benchmark::State& state) {
  const auto& db = Database();
  const HistoryQuery q{.case_id = "gsm8k/test_gsm8k_accuracy_1", .metric = "accuracy", .last_n = kCommits};
  size_t rows = 0;
  for (auto _ : state) {
    auto store = Check(Store::OpenReadOnly(db));
    auto history = Check(store->reader().History(q));
    rows = history.size();
    benchmark::DoNotOptimize(reports::HistoryText(q, history));
  }
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_HistoryCase)->Unit(benchmark::kMillisecond);

void BM_HistorySuiteJson(benchmark::State& state) {
  const auto& db = Database();
  const HistoryQuery q{.suite = "gmm", .metric = metric_names::kEstTotalSeconds, .last_n = kCommits};
  size_t rows = 0;
  for (auto _ : state) {
    auto store = Check(Store::OpenReadOnly(db));
    auto history = Check(store->reader().History(q));
    rows = history.size();
    benchmark::DoNotOptimize(DumpJson(reports::HistoryJson(q, history)));
  }
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_HistorySuiteJson)->Unit(benchmark::kMillisecond);

// Two commits a quarter apart, by 12-digit prefixes: every case, both GSM8K cases paired
// over 1319 questions, every op table diffed.
void BM_CompareCommits(benchmark::State& state) {
  const auto& db = Database();
  size_t cases = 0;
  for (auto _ : state) {
    auto store = Check(Store::OpenReadOnly(db));
    auto a = Check(ResolveSide(store->reader(), ShortSha(ShaOf(250))));
    auto b = Check(ResolveSide(store->reader(), ShortSha(ShaOf(357))));
    auto c = Check(CompareStored(store->reader(), a, b, {}));
    cases = c.cases.size();
    benchmark::DoNotOptimize(reports::CompareText(c));
  }
  state.counters["cases"] = static_cast<double>(cases);
}
BENCHMARK(BM_CompareCommits)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
