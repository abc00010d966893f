// Commit identity from git, by argv (never a shell): sha, parents, author time, subject
// and the first-parent ordinal that orders history without a checkout; first-parent
// ancestors and ranges (baselines, bisect) and detached worktrees (bisect).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/util/error.h"

namespace harness {

struct CommitInfo {
  std::string sha;
  std::vector<std::string> parents;
  std::optional<int64_t> first_parent_ordinal;  // commits on the first-parent chain before it
  std::optional<int64_t> author_time;           // unix seconds
  std::string subject;
};

// A sha as every output shows it: its first 12 hex digits (git's own abbreviations grow
// with the repository; a fixed width keeps columns aligned and names stable across runs).
inline std::string ShortSha(std::string_view sha) { return std::string(sha.substr(0, 12)); }

// 7 to 64 hex digits: what a commit id looks like when no repository can vouch for it.
bool IsHexSha(std::string_view s);

// Resolves rev (HEAD, a sha, a branch) in repo and reads its metadata.
Result<CommitInfo> ReadCommit(const std::filesystem::path& repo, const std::string& rev);
// The first-parent ancestors of rev (itself excluded), newest first, at most max_count.
Result<std::vector<std::string>> FirstParentAncestors(const std::filesystem::path& repo, const std::string& rev,
                                                      int max_count);

// The first-parent commits after good up to and including bad, oldest first, each with its
// sha and subject (the other fields unread). A usage error when good is not a first-parent
// ancestor of bad.
Result<std::vector<CommitInfo>> FirstParentRange(const std::filesystem::path& repo, const std::string& good,
                                                 const std::string& bad);
// The files sha changed against its first parent (a merge: what it brought to the first-parent
// line), as git names them, renames as the old and the new path (--no-renames).
Result<std::vector<std::string>> ChangedFiles(const std::filesystem::path& repo, const std::string& sha);
// A detached worktree of sha at path (git worktree add --detach), and its removal (also of
// a half-made one); both by argv.
Status AddWorktree(const std::filesystem::path& repo, const std::filesystem::path& path, const std::string& sha);
Status RemoveWorktree(const std::filesystem::path& repo, const std::filesystem::path& path);
// The worktrees repo has registered (`git worktree list --porcelain`), the main one first.
Result<std::vector<std::filesystem::path>> ListWorktrees(const std::filesystem::path& repo);

}  // namespace harness
