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
  std::string uid;
  // A CI re-run of one shard job stores another run of the same shard of the same nightly
  // (nightly id, commit, identity, shard): attempt numbers them by start (1 for any other
  // run), and the latest finished attempt is the nightly's; superseded_by names it on
  // every other attempt, which stays stored as a rerun (docs/store.md, "Sharded nightlies").
  int64_t attempt = 1;
  std::optional<int64_t> superseded_by;
};

// Whether a run is a nightly: not made by a `harness bisect` command ("bisect" in its
// context), not an --rerun-at-risk rerun ("rerun_of"), not partial and not an attempt of a
// shard a later finished attempt replaced (superseded_by). The others are
// evidence about a commit; the report's latest runs and bisect --auto's nightlies are nightlies.
bool IsNightlyRun(const RunRow& run);

}  // namespace harness
