// The store's door for whatever writes runs: `harness run` (a run row, then its cases, each
// sample as it arrives, each case's outcome in one transaction; --resume reopens an
// interrupted run) and `harness ingest` (whole imported runs in one transaction). A writable
// Store hands it out (store.h: writer()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/store/run_row.h"
#include "harness/store/store_door.h"
#include "harness/util/error.h"
#include "harness/util/git.h"

namespace harness {

struct NewRun {
  int64_t commit_id = 0;
  std::string stack;
  std::string config_hash;           // the measured identity's hash (store/identity_rule.h)
  std::string config_json;           // the measured identity itself, canonical JSON
  std::string host;
  std::string harness_version;
  std::string shard = "0/1";
  std::string nightly;               // groups the shards of one nightly (empty: a run of its own)
  std::string context_json = "{}";   // where and how it ran (endpoint URL, cwd, faults, ...)
  // A partial run (`harness run --questions FILE`): the questions it evaluated, fewer than
  // the suite's. Bisect evidence only: never a baseline, a gate's rerun, a trend, the
  // report's flaky ranking or a nightly. Empty: a whole run.
  std::optional<int64_t> partial_questions;
};

// The file a run was ingested from (`harness ingest`): the same bytes in the same format for
// the same commit are stored once.
struct IngestedFile {
  std::string content_hash;        // Fnv1a64Hex of the file's bytes
  std::string format;              // junit | gtest-json | lm-eval | sglang-gsm8k | tensorcast-table
  std::string path;                // as the command named it
};

// What AttachIngestedSamples added to an ingested run.
struct AttachedSamples {
  int64_t run_id = 0;
  int cases = 0;                   // cases that received samples
  int64_t samples = 0;
};

struct IngestedRun {
  NewRun run;
  std::vector<FinishedCase> cases;
  IngestedFile file;
};

class RunWriter : private StoreDoor {
 public:
  using StoreDoor::StoreDoor;

  Result<int64_t> UpsertCommit(const CommitInfo& c);
  Result<int64_t> BeginRun(const NewRun& r);
  Status FinishRun(int64_t run_id, RunStatus status);
  // Runs of this commit that did not finish (status running), newest first, with their
  // identity; --resume picks the one whose identity matches.
  Result<std::vector<RunRow>> InterruptedRuns(int64_t commit_id);
  Status ReopenRun(int64_t run_id);

  // Creates the case row in status "running" (or returns the existing one on resume).
  Result<int64_t> BeginCase(int64_t run_id, const std::string& suite, const std::string& case_id,
                            const std::string& params_json);
  Status WriteSample(int64_t case_result_id, const Sample& s);
  // Status, duration, message, metrics and op rows in one transaction.
  Status FinishCase(int64_t case_result_id, const CaseResult& result);

  // Imported runs (one file's) written whole in one transaction: per run the run row
  // (finished, status from its cases), every case with metrics, op rows and samples, and
  // its ingested_files row. A run whose (content hash, format, commit) was ingested before
  // is skipped: its entry in the answer is empty. On any error nothing is written.
  Result<std::vector<std::optional<int64_t>>> WriteIngestedRuns(const std::vector<IngestedRun>& runs);
  // Samples given after their file was ingested (lm-eval --samples, sglang's raw results):
  // for each case of `in` with samples whose stored case, in the run the same file became at
  // the same commit, has none yet, the samples are added and its outcome (status, message,
  // metrics) replaced by `in`'s, which the samples informed. One transaction. Empty when
  // the file was not ingested for that commit.
  Result<std::optional<AttachedSamples>> AttachIngestedSamples(const IngestedRun& in);
};

}  // namespace harness
