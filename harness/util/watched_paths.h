// The paths a suite's cases watch (its "watch" list, `bisect --watch`): repository-relative
// path prefixes, and whether a commit's changed files touch one. A bisect gives the commits
// that touch none a lower prior (docs/bisect.md, "Priors from what a commit changed").
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace harness {

// Why an entry is not a watched path, or none when it is one: a non-empty
// repository-relative path in git's spelling ('/' between components), not absolute, with
// no "..", "." or empty component and no control character. A trailing '/' is allowed.
std::optional<std::string> WatchPathProblem(const std::string& entry);

// Whether a changed file (as git names it) is under a watched entry: the entry itself, or
// a path below it ("csrc/gmm" watches "csrc/gmm" and "csrc/gmm/a.cc", not
// "csrc/gmm2.cc"). Prefixes, not globs: a directory is what a suite exercises.
bool IsWatched(const std::string& changed_file, const std::vector<std::string>& watch);
bool TouchesWatched(const std::vector<std::string>& changed_files, const std::vector<std::string>& watch);

}  // namespace harness
