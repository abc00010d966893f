#include "harness/store/resolve_commit.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/utf8.h"

namespace harness {

Result<CommitInfo> ResolveCommit(CommitLookup& store, std::string_view spec, std::string_view flag) {
  const std::string shown = TerminalText(Utf8Prefix(spec, 2 * kMaxShaDigits));
  const std::string named = flag.empty() ? fmt::format("'{}'", shown) : fmt::format("{} {}", flag, shown);
  std::string prefix(spec);
  std::transform(prefix.begin(), prefix.end(), prefix.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const bool hex = std::all_of(prefix.begin(), prefix.end(), [](char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
  });
  if (!hex || prefix.size() < kMinShaPrefixDigits || prefix.size() > kMaxShaDigits)
    return UsageError(fmt::format("{}: expected a commit sha or a prefix of one ({} to {} hex digits)", named,
                                  kMinShaPrefixDigits, kMaxShaDigits));
  // Sorted by sha, so a sha stored whole comes before the longer ones it begins.
  auto commits = store.MatchCommits(prefix);
  if (!commits) return commits.error();
  if (commits->empty()) return UsageError(fmt::format("no stored commit matches {}", named));
  if (commits->size() > 1 && commits->front().sha != prefix) {
    std::vector<std::string> shas;
    for (const auto& c : *commits)
      if (shas.size() < kMaxNamedCandidates) shas.push_back(c.sha);
    return UsageError(fmt::format("{} is ambiguous: it matches {}{}", named, fmt::join(shas, ", "),
                                  commits->size() > shas.size() ? ", ..." : ""));
  }
  return std::move(commits->front());
}

Result<std::string> StoredSpelling(CommitLookup& store, std::string_view given) {
  std::string sha(given);
  std::transform(sha.begin(), sha.end(), sha.begin(), [](unsigned char ch) { return std::tolower(ch); });
  auto longer = store.MatchCommits(sha);  // sha itself first when it is stored
  if (!longer) return longer.error();
  if (!longer->empty() && longer->front().sha == sha) return sha;
  auto shorter = store.CommitsPrefixOf(sha);
  if (!shorter) return shorter.error();
  std::vector<std::string> shas;
  for (const auto* list : {&*shorter, &*longer})
    for (const auto& c : *list) shas.push_back(c.sha);
  if (shas.empty()) return sha;
  if (shas.size() == 1) return shas.front();
  const bool more = shas.size() > kMaxNamedCandidates;  // "..." only for commits left unnamed
  if (more) shas.resize(kMaxNamedCandidates);
  return UsageError(fmt::format("commit {} is ambiguous in {}: it matches the stored commits {}{}; give more of its "
                                "digits, or --repo where git knows it",
                                TerminalText(Utf8Prefix(given, 2 * kMaxShaDigits)), store.path().string(),
                                fmt::join(shas, ", "), more ? ", ..." : ""));
}

}  // namespace harness
