// The command of `harness bisect`, run at one commit: argv with {sha}, {worktree} and {db}
// filled in, in a detached git worktree of the commit (with a repository) that is removed
// afterwards whatever happened, never through a shell. The session lock names the
// worktree and the command while they exist, so the next bisect can clean up after a
// process that died.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/session_lock.h"
#include "harness/util/error.h"
#include "harness/util/subprocess.h"

namespace harness::bisect {

struct WorktreeCommandSpec {
  std::vector<std::string> command;         // argv with {sha}, {worktree}, {db}
  std::filesystem::path repo;               // absolute; empty: no worktree, the command runs here
  std::filesystem::path db;                 // absolute
  std::optional<double> timeout_s;          // none: no timeout
  // Recorded by a `harness run` the command starts (in its run's context, as "bisect"), so
  // the runs a bisect made are never taken for a nightly: "session N" or "confirm".
  std::string made_for;
};

// Fills {sha}, {worktree} and {db} inside each argument.
std::vector<std::string> SubstituteCommand(const std::vector<std::string>& command,
                                           const std::map<std::string, std::string>& vars);

// Runs the command at sha. The process result as RunProcess gives it; errors are those of
// making the worktree, or an interrupt caught before the command started or after it ended.
Result<ProcessResult> RunCommandAt(const WorktreeCommandSpec& spec, const std::string& sha, SessionLock& lock);

}  // namespace harness::bisect
