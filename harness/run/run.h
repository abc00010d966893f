// The run orchestration as a library function: load and check the suite tables, select
// the cases, resume or begin a run in the store, run the cases through GoogleTest with
// the store listener, and finish the run. `harness run` is a thin CLI over it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/run/shard.h"
#include "harness/run/suite_table.h"
#include "harness/stack/stack.h"
#include "harness/stack/stack_config.h"
#include "harness/store/store.h"
#include "harness/util/git.h"

namespace harness {

// Loads every table in dir, makes GoogleTest register their rows and checks that every
// row has a TEST_P behind it. Call once per process, before SelectCases and RunSuites.
Result<std::vector<SuiteTable>> PrepareSuites(const std::filesystem::path& suites_dir);

// Case ids of the named suites (empty: every nightly suite) matching the glob filter
// (empty: all). An unknown suite or a filter that matches nothing is a usage error.
Result<std::vector<std::string>> SelectCases(const std::vector<SuiteTable>& tables,
                                             const std::vector<std::string>& suites, const std::string& filter);

struct RunRequest {
  std::vector<std::string> case_ids;        // from SelectCases
  std::vector<SuiteTable> tables;           // from PrepareSuites
  StackConfig stack_config;
  std::optional<EndpointTarget> endpoint;   // an explicit eval endpoint
  CommitInfo commit;
  std::filesystem::path repo = ".";         // for baseline ancestry
  std::string baseline_rev;                 // --baseline
  bool resume = false;
  Shard shard;                              // recorded on the run; case_ids are this shard's already
  std::string nightly;                      // --nightly: groups the shards of one nightly
  // --seed: the noise seed of stand-ins with rerun noise (RunContext::noise_seed); unset,
  // it comes from the run id. Never part of the run identity: reruns differing only in it
  // are reruns of one another and pair as baselines.
  std::optional<uint64_t> noise_seed;
  // Recorded in the run's context, never its identity: what the run is besides a nightly.
  // made_for: what a `harness bisect` that started it said ($HARNESS_BISECT: "session N" or
  // "confirm"); rerun_of: the run whose AT-RISK cases it reruns (--rerun-at-risk). Either
  // keeps the run from being taken for a nightly by `bisect --auto`.
  std::string made_for;
  std::optional<int64_t> rerun_of;
  // The log of the server the run launched (absolute), recorded in its context as server_log.
  std::string server_log;
  // --questions FILE naming fewer than every question (eval/question_list.h): the question
  // indices the question suites (gsm8k) evaluate, ascending. The run is stored partial
  // (Store NewRun::partial_questions): bisect evidence, never a gate, baseline or trend.
  // Empty: a whole run.
  std::optional<std::vector<int64_t>> questions;
};

struct RunResult {
  int64_t run_id = 0;
  std::string identity_hash;                // what it measured (runs.config_hash)
  Json context;                             // where and how it ran (runs.context_json)
  RunStatus status = RunStatus::kRunning;
  std::vector<CaseResult> cases;            // every case of the run (resumed ones too)
  std::optional<Error> store_error;         // the first failed write, if any
};

// Runs the cases against the stack and stores every case as it finishes.
Result<RunResult> RunSuites(const RunRequest& request, Stack& stack, Store& store);

// `harness run --rerun-at-risk N`: reruns every case of `first` whose gate verdict is
// AT-RISK, up to max_reruns times, each rerun a new run of the same commit and identity
// holding only those cases (so history, compare and the report see the spread as reruns).
// A case stops early once its reruns settle it: two or more accuracies whose mean's 95%
// interval clears the gate (RerunNoiseEstimate). With --seed S rerun k uses seed S + k,
// else its own run id. Returns the reruns in order.
Result<std::vector<RunResult>> RerunAtRisk(const RunRequest& request, const RunResult& first, int max_reruns,
                                           Stack& stack, Store& store);

}  // namespace harness
