#include "harness/util/git.h"

#include <sstream>

#include <fmt/format.h>

#include "harness/util/subprocess.h"

namespace harness {

bool IsHexSha(std::string_view s) {
  if (s.size() < 7 || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}
namespace {

Result<std::string> Git(const std::filesystem::path& repo, std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-C", repo.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  // Room for the commit list of a long history (41 bytes a commit); beyond it, an error.
  constexpr std::size_t kGitOutputBytes = std::size_t{256} << 20;
  auto r = RunProcess(argv, {.timeout_s = 60, .max_output_bytes = kGitOutputBytes});
  if (!r) return r.error();
  if (r->out_dropped > 0)
    return InfraError(fmt::format("git {}: more than {} bytes of output", args.front(), kGitOutputBytes));
  if (r->exit_code != 0) {
    std::string err = r->err;
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    return UsageError(fmt::format("git {}: {}", args.front(), err.empty() ? "failed" : err));
  }
  std::string out = r->out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool LooksLikeOption(const std::string& rev) { return !rev.empty() && rev[0] == '-'; }

}  // namespace

Result<CommitInfo> ReadCommit(const std::filesystem::path& repo, const std::string& rev) {
  if (LooksLikeOption(rev)) return UsageError(fmt::format("'{}' is not a commit", rev));
  auto sha = Git(repo, {"rev-parse", "--verify", "--end-of-options", rev + "^{commit}"});
  if (!sha) return sha.error();
  auto meta = Git(repo, {"log", "-1", "--format=%P%x00%at%x00%s", *sha});
  if (!meta) return meta.error();
  auto count = Git(repo, {"rev-list", "--first-parent", "--count", *sha});
  if (!count) return count.error();
  CommitInfo c;
  c.sha = *sha;
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(*meta);
  while (std::getline(in, field, '\0')) fields.push_back(field);
  if (fields.size() < 2) return InfraError("git log: unexpected output for " + *sha);
  std::istringstream parents(fields[0]);
  for (std::string p; parents >> p;) c.parents.push_back(p);
  c.author_time = std::stoll(fields[1]);
  c.subject = fields.size() > 2 ? fields[2] : "";
  c.first_parent_ordinal = std::stoll(*count);
  return c;
}

Result<std::vector<std::string>> FirstParentAncestors(const std::filesystem::path& repo, const std::string& rev,
                                                      int max_count) {
  if (LooksLikeOption(rev)) return UsageError(fmt::format("'{}' is not a commit", rev));
  auto out = Git(repo, {"rev-list", "--first-parent", "--skip=1", fmt::format("--max-count={}", max_count),
                        "--end-of-options", rev});
  if (!out) return out.error();
  std::vector<std::string> shas;
  std::istringstream in(*out);
  for (std::string s; in >> s;) shas.push_back(s);
  return shas;
}

Result<std::vector<std::string>> ChangedFiles(const std::filesystem::path& repo, const std::string& sha) {
  if (LooksLikeOption(sha)) return UsageError(fmt::format("'{}' is not a commit", sha));
  // -z: names as they are (no quoting of odd bytes); the output is bounded by Git().
  auto out = Git(repo, {"diff", "--no-ext-diff", "--no-renames", "--name-only", "-z", "--end-of-options", sha + "^1", sha});
  if (!out) return out.error();
  std::vector<std::string> files;
  std::size_t start = 0;
  while (start < out->size()) {
    const std::size_t end = out->find('\0', start);
    files.push_back(out->substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return files;
}

Result<std::vector<CommitInfo>> FirstParentRange(const std::filesystem::path& repo, const std::string& good,
                                                 const std::string& bad) {
  if (LooksLikeOption(good) || LooksLikeOption(bad)) return UsageError("a commit cannot start with '-'");
  // One line per commit, its sha and subject (a subject is one line) apart by a NUL.
  auto out = Git(repo, {"log", "--first-parent", "--reverse", "--no-show-signature", "--format=%H%x00%s",
                        "--end-of-options", bad, "^" + good});
  if (!out) return out.error();
  std::vector<CommitInfo> commits;
  std::istringstream in(*out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const std::size_t nul = line.find('\0');
    CommitInfo c;
    c.sha = line.substr(0, nul);
    if (nul != std::string::npos) c.subject = line.substr(nul + 1);
    commits.push_back(std::move(c));
  }
  auto good_sha = Git(repo, {"rev-parse", "--verify", "--end-of-options", good + "^{commit}"});
  if (!good_sha) return good_sha.error();
  // good must sit on bad's first-parent chain: the first commit's first parent is good.
  if (commits.empty()) return UsageError(fmt::format("no commits between {} and {}", good, bad));
  auto parent = Git(repo, {"rev-parse", "--verify", "--end-of-options", commits.front().sha + "^1"});
  if (!parent || *parent != *good_sha)
    return UsageError(fmt::format("{} is not a first-parent ancestor of {}", good, bad));
  return commits;
}

Status AddWorktree(const std::filesystem::path& repo, const std::filesystem::path& path, const std::string& sha) {
  if (LooksLikeOption(sha)) return UsageError(fmt::format("'{}' is not a commit", sha));
  auto r = Git(repo, {"worktree", "add", "--detach", "--force", "--quiet", path.string(), sha});
  if (!r) return r.error();
  return OkStatus();
}

Status RemoveWorktree(const std::filesystem::path& repo, const std::filesystem::path& path) {
  auto r = Git(repo, {"worktree", "remove", "--force", path.string()});
  std::error_code ec;
  std::filesystem::remove_all(path, ec);  // whatever git left (a half-made worktree)
  auto prune = Git(repo, {"worktree", "prune"});
  if (!r) return r.error();
  if (!prune) return prune.error();
  return OkStatus();
}

Result<std::vector<std::filesystem::path>> ListWorktrees(const std::filesystem::path& repo) {
  // NUL-separated (-z): a path with a newline in it stays one path.
  auto listed = Git(repo, {"worktree", "list", "--porcelain", "-z"});
  if (!listed) return listed.error();
  std::vector<std::filesystem::path> out;
  const std::string_view text = *listed;
  constexpr std::string_view kKey = "worktree ";
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\0', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view field = text.substr(at, end - at);
    if (field.substr(0, kKey.size()) == kKey) out.emplace_back(std::string(field.substr(kKey.size())));
    at = end + 1;
  }
  return out;
}

}  // namespace harness
