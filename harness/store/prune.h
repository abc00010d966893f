// `harness prune`: keeps the store small. Every run keeps its statuses, messages, metrics
// and op rows; the per-question samples (with their completion text) of runs outside the
// retention window are dropped, except those a bisect session, a golden change or a
// baseline of a run in the window refers to; then the file is compacted. docs/store.md
// ("Pruning") has the policy and the crash and concurrency guarantees.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "harness/store/store.h"
#include "harness/util/error.h"

namespace harness {

// The documented ranges of the window's bounds (docs/cli.md "harness prune", docs/store.md "Pruning"). Days: ten
// thousand years, past which started_at's text form ends anyway; any D in range keeps at
// least what a smaller D keeps.
inline constexpr int64_t kMaxKeepNightlies = 1000000000;
inline constexpr int64_t kMaxKeepSamplesDays = 3650000;

struct PruneRequest {
  std::filesystem::path db;
  PruneWindow window;
  bool dry_run = false;
  // Takes, until Prune returns, the lock a live `harness run` holds on an unfinished run
  // (harness/run/run_lock.h), or fails (exit 2) naming who holds it. The store layer cannot
  // see that lock itself; the command passes it in.
  std::function<Status(int64_t run_id)> claim_unfinished_run;
};

struct PruneResult {
  PrunePlan plan;
  int64_t bytes_before = 0;  // the database file plus its WAL, before anything is done
  int64_t bytes_after = 0;   // the same after the compaction (dry run: unchanged)
};

// Refuses (exit 2) a window with neither bound or one outside its range, a missing database, a
// prune already working on the same file, and a run another process is still writing (the
// unfinished runs' locks are held throughout). Then deletes in one transaction
// (Store::PruneSamples) and compacts (Store::Compact). Exit 3 on database errors.
// dry_run: the plan from a read-only open; no lock taken, nothing written.
Result<PruneResult> Prune(const PruneRequest& request);

// What a prune did (or, with dry_run, would do), for the terminal: the window, the runs
// whose samples go (or went) and the runs kept by a reference, and the bytes.
std::string PruneSummary(const PruneRequest& request, const PruneResult& result);

}  // namespace harness
