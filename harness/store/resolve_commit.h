// A stored commit named on the command line by its sha or a prefix of it: compare's A and
// B, bisect's --good and --bad without --repo, report's --since. One rule for all of them
// (docs/cli.md, "Naming a stored commit"):
//   - 4 to 64 hex digits, either case (read in lowercase, as git prints a sha);
//   - it names the one stored commit whose sha starts with it; a sha stored whole names its
//     commit even when it also begins a longer one (a SHA-1 that starts a SHA-256);
//   - no such commit, or more than one, is a usage error (exit 2); an ambiguous prefix names
//     up to kMaxNamedCandidates of the commits it matches.
// A revision for git (`run --commit`, `ingest --commit`, bisect's --repo) is git's to resolve;
// the sha a run or an import then stores goes through StoredSpelling, so one commit is never
// stored under two spellings (docs/cli.md, "Naming a stored commit").
#pragma once

#include <cstddef>
#include <string_view>

#include "harness/store/result_reads.h"
#include "harness/util/error.h"
#include "harness/util/git.h"

namespace harness {

inline constexpr std::size_t kMinShaPrefixDigits = 4;
inline constexpr std::size_t kMaxShaDigits = 64;
inline constexpr std::size_t kMaxNamedCandidates = 10;

// The commit spec names. Messages name it as flag and spec ("--since abc1") or, with no
// flag, as the quoted spec ("'abc1'").
Result<CommitInfo> ResolveCommit(CommitLookup& store, std::string_view spec, std::string_view flag = "");

// The sha under which a run or an import of commit sha (git's full sha, or a hex sha given
// without a repository that knows it) is stored, in lowercase:
//   - sha itself when it is stored, or when no stored commit begins with it or is begun by it;
//   - else the one stored commit whose sha begins with sha (a short sha given after its full
//     sha was stored) or with which sha begins (a full sha given after a short one was stored
//     as given: the first spelling stays, it is the one the earlier runs are filed under);
//   - two or more such commits: a usage error naming them (a short sha two commits share).
Result<std::string> StoredSpelling(CommitLookup& store, std::string_view sha);

}  // namespace harness
