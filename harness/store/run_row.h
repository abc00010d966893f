// A stored run as the store's doors answer it (RunWriter::InterruptedRuns, the ResultReader's
// run queries), and whether it is a nightly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "harness/results/results.h"

namespace harness {

struct RunRow {
  int64_t id = 0;
  std::string sha;
  std::string subject;
  std::string stack;
  std::string config_hash;
  std::string config_json;
  std::string host;
  std::string started_at;
  std::string finished_at;
  RunStatus status = RunStatus::kRunning;
  std::string shard = "0/1";
  std::string nightly;
  std::string context_json = "{}";
  std::optional<int64_t> ordinal;    // the commit's first-parent ordinal (FinishedRuns only)
  std::optional<int64_t> partial_questions;  // NewRun::partial_questions
};

// Whether a run is a nightly: not made by a `harness bisect` command ("bisect" in its
// context), not an --rerun-at-risk rerun ("rerun_of") and not partial. The others are
// evidence about a commit; the report's latest runs and bisect --auto's nightlies are nightlies.
bool IsNightlyRun(const RunRow& run);

}  // namespace harness
