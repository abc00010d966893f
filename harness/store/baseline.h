// The baseline policy of paired comparisons: which stored result of a case the running
// one is compared with, question by question.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/util/error.h"
#include "harness/util/git.h"

namespace harness {

class BaselineReads;

// Finds the baseline of a case (Baseline, harness/results/results.h): the newest finished result at --baseline SHA when given,
// else the newest passing result on a first-parent ancestor of the run's commit.
using BaselineLookup = std::function<Result<std::optional<Baseline>>(const std::string& case_id)>;

// The lookup for a run of `commit` with identity hash config_hash: only results of runs
// with the same identity and of the same parameter row pair with it (run_id itself is
// left out of the search). With
// baseline_rev (--baseline) the newest finished result at that commit; else the newest
// passing result on a first-parent ancestor, read from git in repo, or from the stored
// first-parent ordinals when git does not know the commit.
// An explicit --baseline that can pair with nothing (no finished run of this identity at
// that commit) is a usage error before any case runs; names what is there instead.
Status CheckExplicitBaseline(BaselineReads& store, const std::filesystem::path& repo, const std::string& baseline_rev,
                             const std::string& config_hash);

// params_json maps each case id to its parameter row as stored (canonical JSON).
BaselineLookup MakeBaselineLookup(BaselineReads& store, const std::filesystem::path& repo, const std::string& baseline_rev,
                                  const CommitInfo& commit, const std::string& config_hash, int64_t run_id,
                                  std::map<std::string, std::string> params_json);

}  // namespace harness
