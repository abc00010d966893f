#include "harness/store/nightly_db.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "harness/results/case_id.h"
#include "harness/results/metric_names.h"
#include "harness/store/store.h"

namespace harness::bench {

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

namespace {


// About the length of a real GSM8K chain-of-thought answer (300-500 bytes).
std::string Completion(int q, int answer) {
  return fmt::format(
      "Question {0} asks for the total. First, the store sold 3 boxes of 12 pencils each, which is 3 * 12 = 36 "
      "pencils. Then it sold 6 more pencils in the afternoon, so 36 + 6 = 42 pencils in all. Each pencil costs "
      "$0.50, so the money earned is 42 * 0.5 = 21 dollars, and twice that over two days is 42. Checking the units "
      "once more: pencils times dollars per pencil gives dollars.\nThe answer is {1}.",
      q, answer);
}

}  // namespace

void Check(const Status& s) {
  if (!s) {
    std::fprintf(stderr, "bench database: %s\n", s.error().message.c_str());
    std::exit(3);
  }
}

std::string NightlySha(int i) { return fmt::format("{:08x}{:032x}", 0x5eed0000u + static_cast<unsigned>(i), i * 7919); }

void GenerateNightlyDatabase(const std::filesystem::path& path) {
  auto store = Check(Store::Open(path));
  // The nightly compile and kernel cases the suites have (suites/*.json).
  const std::vector<CaseId> compile_cases = {
      CaseId("gmm/test_qwen3_fp_0"),
      CaseId("gmm/test_qwen3_dynamic_quant_0"),
      CaseId("gmm/test_qwen3_dynamic_quant_1"),
      CaseId("gmm/test_qwen3_dynamic_quant_2"),
      CaseId("gmm/test_qwen3_dynamic_quant_3"),
      CaseId("sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0"),
      CaseId("sequence_parallel/test_sp_reduces_rms_norm_seq_dim_1"),
      CaseId("fp8_scale_layout/test_transposed_scale_matches_bpreshuffle_layout_contract_0"),
      CaseId("fp8_scale_layout/test_transposed_scale_matches_bpreshuffle_layout_contract_1"),
      CaseId("fp8_scale_layout/test_transposed_scale_matches_bpreshuffle_layout_contract_2"),
      CaseId("fp8_scale_layout/test_transposed_scale_matches_bpreshuffle_layout_contract_3"),
  };
  for (int i = 0; i < kNightlyCommits; ++i) {
    const int64_t commit = Check(
        store->writer().UpsertCommit({NightlySha(i), {}, i + 1, 1700000000 + 86400 * i, fmt::format("nightly {}", i)}));
    const int64_t run = Check(store->writer().BeginRun({commit, "refstack", "cafe", "{}", "bench", "0.2.0"}));
    for (int g = 0; g < 2; ++g) {
      const std::string id = fmt::format("gsm8k/test_gsm8k_accuracy_{}", g);
      const int64_t cr =
          Check(store->writer().BeginCase(run, "gsm8k", id, fmt::format(R"({{"batch":{}}})", g ? 64 : 1)));
      int64_t correct = 0;
      for (int q = 0; q < kNightlyQuestions; ++q) {
        const bool ok = Mix(static_cast<uint64_t>(i) * 1000003 + g * 7777 + q) % 100 < 90;
        correct += ok;
        Check(store->writer().WriteSample(cr, {std::to_string(q), ok ? SampleOutcome::kCorrect : SampleOutcome::kWrong,
                                               "42", ok ? "42" : "41", 1.5, 180, Completion(q, ok ? 42 : 41)}));
      }
      const double acc = static_cast<double>(correct) / kNightlyQuestions;
      CaseResult res{id, CaseStatus::kPass, 60, "", {}, {}};
      res.metrics = {{metric_names::kAccuracy, acc, kNightlyQuestions, acc - 0.016, acc + 0.016},
                     {metric_names::kGate, 0.9, 0, {}, {}},
                     VerdictMetric(metric_names::kGateVerdict, acc >= 0.9 ? GateVerdict::kPass : GateVerdict::kAtRisk),
                     VerdictMetric(metric_names::kBaselineVerdict, BaselineVerdict::kSame),
                     {metric_names::kLatencyP50Seconds, 1.5, 0, {}, {}}};
      Check(store->writer().FinishCase(cr, res));
    }
    for (const CaseId& case_id : compile_cases) {
      const int64_t cr = Check(store->writer().BeginCase(run, case_id.suite(), case_id.str(), "{}"));
      CaseResult res{case_id.str(), i % 50 == 7 ? CaseStatus::kFail : CaseStatus::kPass, 0.2, "", {}, {}};
      for (int r = 0; r < kNightlyOpRows; ++r)
        res.ops.push_back({fmt::format("tensor_cast.op_{}.default", r), fmt::format("[1, {}, 5120], [5120]", r),
                           1 + (r + (i % 50 == 7)) % 4, 1e-5 * r});
      // The metrics each suite writes: the compile suites the table's total time, the kernel
      // suite its GEMM's errors and the share of their bound used.
      if (case_id.suite() == "fp8_scale_layout")
        res.metrics = {{metric_names::kGemmMaxAbsError, 1e-3 + 1e-6 * i, 0, {}, {}},
                       {metric_names::kGemmMaxRelError, 1e-2 + 1e-5 * i, 0, {}, {}},
                       {metric_names::kGemmMaxBoundUse, 0.55 + 0.001 * static_cast<double>(Mix(i * 31 + 5) % 100), 0,
                        {}, {}}};
      else
        res.metrics = {{metric_names::kEstTotalSeconds, 0.01 + 1e-5 * i, 0, {}, {}}};
      Check(store->writer().FinishCase(cr, res));
    }
    Check(store->writer().FinishRun(run, RunStatus::kPass));
  }
}

namespace {

// The temporary folders of the databases made in this process, removed at exit.
std::vector<std::filesystem::path>& TemporaryFolders() {
  static std::vector<std::filesystem::path> folders;
  return folders;
}

}  // namespace

std::filesystem::path GeneratedDatabase(const char* keep_env, const std::string& file,
                                        void (*generate)(const std::filesystem::path&)) {
  if (const char* keep = std::getenv(keep_env); keep && *keep) {
    if (!std::filesystem::exists(keep)) generate(keep);
    return keep;
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "harness-bench-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) Check(Status(InfraError("bench database: cannot make a temporary folder")));
  const std::filesystem::path dir = tmpl;
  generate(dir / file);
  // Registered after the list was constructed, so it runs before the list is destroyed.
  if (TemporaryFolders().empty())
    std::atexit([] {
      std::error_code ec;
      for (const auto& f : TemporaryFolders()) std::filesystem::remove_all(f, ec);
    });
  TemporaryFolders().push_back(dir);
  return dir / file;
}

const std::filesystem::path& NightlyDatabase() {
  static const std::filesystem::path path = GeneratedDatabase("HARNESS_BENCH_DB", "nightly.db", GenerateNightlyDatabase);
  return path;
}

}  // namespace harness::bench
