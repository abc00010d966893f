// Commit identity from git, by argv (never a shell): sha, parents, author time, subject
// and the first-parent ordinal that orders history without a checkout.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/error.h"
#include "harness/store.h"

namespace harness {

// Resolves rev (HEAD, a sha, a branch) in repo and reads its metadata.
Result<CommitInfo> ReadCommit(const std::filesystem::path& repo, const std::string& rev);
// The first-parent ancestors of rev (itself excluded), newest first, at most max_count.
Result<std::vector<std::string>> FirstParentAncestors(const std::filesystem::path& repo, const std::string& rev,
                                                      int max_count);

}  // namespace harness
