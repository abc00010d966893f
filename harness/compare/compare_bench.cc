// `history` and `compare` over a year of nightly runs: 365 commits, each one run of the 13
// nightly cases (2 GSM8K cases with 1319 per-question samples each, 11 compile cases with
// 30 op rows each), written through the Store API. Goal (the compare/bisect issue): each
// answer, opening the database read-only and rendering included, in under 100 ms.
//   build-*/harness/compare/compare_bench
// The database is generated once into a temporary folder (about a minute); set
// HARNESS_BENCH_DB=FILE to keep it in FILE and reuse it on the next run.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "harness/compare/compare.h"
#include "harness/store/store.h"
#include "reports/compare_report.h"
#include "reports/history_report.h"

namespace {

using namespace harness;  // NOLINT: a benchmark of the project's own API

constexpr int kCommits = 365;
constexpr int kQuestions = 1319;
constexpr int kOpRows = 30;

std::string ShaOf(int i) { return fmt::format("{:08x}{:032x}", 0x5eed0000u + static_cast<unsigned>(i), i * 7919); }

// Deterministic pseudo-random numbers, so every generated database is the same.
uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

void Check(const Status& s) {
  if (!s) {
    std::fprintf(stderr, "bench database: %s\n", s.error().message.c_str());
    std::exit(3);
  }
}
template <class T>
T Check(Result<T> r) {
  if (!r) {
    std::fprintf(stderr, "bench database: %s\n", r.error().message.c_str());
    std::exit(3);
  }
  return std::move(*r);
}

void Generate(const std::filesystem::path& path) {
  auto store = Check(Store::Open(path));
  const char* compile_cases[] = {"gmm/test_qwen3_dynamic_quant_0", "gmm/test_qwen3_dynamic_quant_1",
                                 "gmm/test_qwen3_dynamic_quant_2", "gmm/test_qwen3_dynamic_quant_3",
                                 "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0",
                                 "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_1",
                                 "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_2",
                                 "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_3",
                                 "fp8_scale_layout/test_fp8_gemm_0", "fp8_scale_layout/test_fp8_gemm_1",
                                 "fp8_scale_layout/test_fp8_gemm_2"};
  for (int i = 0; i < kCommits; ++i) {
    const int64_t commit =
        Check(store->UpsertCommit({ShaOf(i), {}, i + 1, 1700000000 + 86400 * i, fmt::format("nightly {}", i)}));
    const int64_t run = Check(store->BeginRun({commit, "refstack", "cafe", "{}", "bench", "0.2.0"}));
    for (int g = 0; g < 2; ++g) {
      const std::string id = fmt::format("gsm8k/test_gsm8k_accuracy_{}", g);
      const int64_t cr = Check(store->BeginCase(run, "gsm8k", id, fmt::format(R"({{"batch":{}}})", g ? 64 : 1)));
      int64_t correct = 0;
      for (int q = 0; q < kQuestions; ++q) {
        const bool ok = Mix(static_cast<uint64_t>(i) * 1000003 + g * 7777 + q) % 100 < 90;
        correct += ok;
        Check(store->WriteSample(cr, {std::to_string(q), ok ? "correct" : "wrong", "42", ok ? "42" : "41", 1.5, 180}));
      }
      const double acc = static_cast<double>(correct) / kQuestions;
      CaseResult res{id, CaseStatus::kPass, 60, "", {}, {}};
      res.metrics = {{"accuracy", acc, kQuestions, acc - 0.016, acc + 0.016},
                     VerdictMetric("gate_verdict", acc >= 0.9 ? GateVerdict::kPass : GateVerdict::kAtRisk),
                     VerdictMetric("baseline_verdict", BaselineVerdict::kSame),
                     {"latency_p50_s", 1.5, 0, {}, {}}};
      Check(store->FinishCase(cr, res));
    }
    for (const char* id : compile_cases) {
      const std::string case_id = id;
      const int64_t cr = Check(store->BeginCase(run, case_id.substr(0, case_id.find('/')), case_id, "{}"));
      CaseResult res{case_id, i % 50 == 7 ? CaseStatus::kFail : CaseStatus::kPass, 0.2, "", {}, {}};
      for (int r = 0; r < kOpRows; ++r)
        res.ops.push_back({fmt::format("tensor_cast.op_{}.default", r), fmt::format("[1, {}, 5120], [5120]", r),
                           1 + (r + (i % 50 == 7)) % 4, 1e-5 * r});
      res.metrics = {{"est_seconds", 0.01 + 1e-5 * i, 0, {}, {}}, {"ops", kOpRows, 0, {}, {}}};
      Check(store->FinishCase(cr, res));
    }
    Check(store->FinishRun(run, RunStatus::kPass));
  }
}

const std::filesystem::path& Database() {
  static const std::filesystem::path path = [] {
    if (const char* keep = std::getenv("HARNESS_BENCH_DB"); keep && *keep) {
      if (!std::filesystem::exists(keep)) Generate(keep);
      return std::filesystem::path(keep);
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / "harness-bench-XXXXXX").string();
    std::filesystem::path dir = mkdtemp(tmpl.data());
    Generate(dir / "nightly.db");
    std::atexit([] { std::filesystem::remove_all(Database().parent_path()); });
    return dir / "nightly.db";
  }();
  return path;
}

void BM_HistoryCase(benchmark::State& state) {
  const auto& db = Database();
  const HistoryQuery q{.case_id = "gsm8k/test_gsm8k_accuracy_1", .metric = "accuracy", .last_n = kCommits};
  size_t rows = 0;
  for (auto _ : state) {
    auto store = Check(Store::OpenReadOnly(db));
    auto history = Check(store->History(q));
    rows = history.size();
    benchmark::DoNotOptimize(reports::HistoryText(q, history));
  }
  state.counters["rows"] = static_cast<double>(rows);
}
BENCHMARK(BM_HistoryCase)->Unit(benchmark::kMillisecond);

void BM_HistorySuiteJson(benchmark::State& state) {
  const auto& db = Database();
  const HistoryQuery q{.suite = "gmm", .metric = "est_seconds", .last_n = kCommits};
  size_t rows = 0;
  for (auto _ : state) {
    auto store = Check(Store::OpenReadOnly(db));
    auto history = Check(store->History(q));
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
    auto a = Check(ResolveSide(*store, ShaOf(250).substr(0, 12)));
    auto b = Check(ResolveSide(*store, ShaOf(357).substr(0, 12)));
    auto c = Check(CompareStored(*store, a, b, {}));
    cases = c.cases.size();
    benchmark::DoNotOptimize(reports::CompareText(c));
  }
  state.counters["cases"] = static_cast<double>(cases);
}
BENCHMARK(BM_CompareCommits)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
