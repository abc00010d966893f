// Whether a sharded nightly is whole: every run records its shard "I/N" and nightly id
// (`harness run --shard I/N --nightly ID`), so after `harness merge` the shards of one
// nightly, commit and measured identity can be counted. A lost CI job leaves a gap that
// `merge` (exit 1) and `report` (a warning in the summary) name, instead of a green report
// over part of the cases (docs/store.md, "Sharded nightlies").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "harness/store/run_row.h"

namespace harness {

// Missing shards named one by one; a count beyond (a stored "0/999999" names no more).
inline constexpr std::size_t kMaxNamedShards = 64;

// One logical run (nightly id, commit, measured identity) that lacks shards.
struct NightlyGap {
  std::string nightly;
  std::string sha;
  std::string config_hash;
  std::vector<std::string> missing;     // "I/N" with no run at all, by index (the first kMaxNamedShards)
  std::size_t missing_count = 0;        // all of them
  std::vector<std::string> unfinished;  // "I/N" whose runs never finished (status running), by index
};

// The gaps of the logical runs among `runs` (any status; runs without a nightly id are
// skipped), ordered by nightly, commit, identity. A shard counts as present when it has a
// finished run. Shards that disagree on N are judged per N: each count's set must be whole.
std::vector<NightlyGap> NightlyGaps(const std::vector<RunRow>& runs);

// One line per attempt of a shard that a later finished attempt replaced (RunRow::superseded_by,
// a CI re-run of the shard's job) among `runs` (NightlyRuns of one nightly): "nightly 1234 at
// abc1234def56: shard 2/3: attempt 2 replaces attempt 1 (kept as a rerun)", with run ids.
std::vector<std::string> ReplacedAttemptTexts(const std::vector<RunRow>& runs);

// "nightly 1234 at abc1234def56: shards 1/4, 3/4 missing" (and "; 2/4 did not finish"; "and
// K more" past kMaxNamedShards).
std::string NightlyGapText(const NightlyGap& gap);

}  // namespace harness
