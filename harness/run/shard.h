// Sharded runs: which of the selected cases shard I of N runs. CI systems spread a nightly
// over N machines (`harness run --shard I/N`, or GoogleTest's GTEST_TOTAL_SHARDS and
// GTEST_SHARD_INDEX as CI engines set them); `harness merge` joins their databases.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/results/shard.h"
#include "harness/run/suite_table.h"
#include "harness/util/error.h"

namespace harness {

// "I/N" with 0 <= I < N (ParseShardWord, results/shard.h); anything else is a usage error
// naming what was given.
Result<Shard> ParseShard(const std::string& text);

// The shard GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX name, when both are set; one without
// the other, or values out of range, are usage errors (GoogleTest treats them so too).
Result<std::optional<Shard>> ShardFromEnvironment();

// The nightly id of the CI pipeline this runs in, the default of `--nightly`:
// "gitlab-$CI_PIPELINE_ID" (GitLab), else "github-$GITHUB_RUN_ID" (GitHub Actions); empty
// when neither is set to a value. GITHUB_RUN_ATTEMPT is left out on purpose: a re-run of a
// failed shard job is another attempt of the same workflow run, and its shard must join the
// shards the first attempt stored (the same nightly), not start a nightly of one shard.
std::string NightlyFromEnvironment();

// The cases of `shard` among `case_ids` (SelectCases' answer), in selection order. Every
// shard computes the same split from the same selection: cases are dealt heaviest first
// (a suite's shard_cost; ties by case id) to the shard with the least expected cost so far
// (ties to the lowest index), so the shards are even by cost and together hold every case
// exactly once.
std::vector<std::string> CasesOfShard(const std::vector<std::string>& case_ids, const std::vector<SuiteTable>& tables,
                                      const Shard& shard);

}  // namespace harness
