// A year of nightly results for the benchmarks (compare_bench, report_bench): 365 commits,
// each one run of the 13 nightly cases of the suites (their case ids and metric names): 2
// GSM8K cases with 1319 per-question samples each (outcome, answers and a completion text),
// 11 compile and kernel cases with 30 op rows each (gmm and sequence_parallel with their
// est_total_s, fp8_scale_layout with its GEMM errors and gemm_max_bound_use), written
// through the Store API. Deterministic: every generated database is the same.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "harness/util/error.h"

namespace harness::bench {

inline constexpr int kNightlyCommits = 365;
inline constexpr int kNightlyQuestions = 1319;
inline constexpr int kNightlyOpRows = 30;

// Deterministic pseudo-random bits (the first half of MurmurHash3's fmix64), so every
// generated database is the same.
uint64_t Mix(uint64_t x);

// The generators stop at the first store error (exit 3 with its message): a benchmark over
// a partial database would measure nothing.
void Check(const Status& s);
template <class T>
T Check(Result<T> r) {
  Check(r ? OkStatus() : Status(r.error()));
  return std::move(*r);
}

// The database generate writes, made once into a temporary folder removed at exit; with
// $keep_env set, kept in that file instead (made only when it is missing) and reused.
std::filesystem::path GeneratedDatabase(const char* keep_env, const std::string& file,
                                        void (*generate)(const std::filesystem::path&));

// The sha of nightly i (0-based).
std::string NightlySha(int i);
// Writes the database at path (exits 3 with a message when the store fails).
void GenerateNightlyDatabase(const std::filesystem::path& path);
// The database, generated once per process into a temporary folder removed at exit (about
// a minute); HARNESS_BENCH_DB=FILE keeps it in FILE and reuses it on the next run.
const std::filesystem::path& NightlyDatabase();

}  // namespace harness::bench
