#include "harness/bisect/worktree_command.h"

#include <cstdlib>

#include <fmt/format.h>

#include "harness/util/git.h"
#include "harness/util/paths.h"

namespace harness::bisect {
namespace {

// Removes the worktree, its registration and its temporary folder, then tells the lock.
void RemoveWorktreeAndFolder(const std::filesystem::path& repo, const std::filesystem::path& worktree,
                             SessionLock& lock) {
  static_cast<void>(RemoveWorktree(repo, worktree));  // best effort; the error worth reporting is the run's
  std::error_code ec;
  std::filesystem::remove_all(worktree.parent_path(), ec);
  static_cast<void>(lock.SetWorktree({}, {}));
}

}  // namespace

std::vector<std::string> SubstituteCommand(const std::vector<std::string>& command,
                                           const std::map<std::string, std::string>& vars) {
  std::vector<std::string> argv;
  for (const auto& arg : command) {
    std::string out;
    for (std::size_t i = 0; i < arg.size();) {
      bool matched = false;
      for (const auto& [key, value] : vars)
        if (arg.compare(i, key.size(), key) == 0) {
          out += value;
          i += key.size();
          matched = true;
          break;
        }
      if (!matched) out += arg[i++];
    }
    argv.push_back(std::move(out));
  }
  return argv;
}

Result<ProcessResult> RunCommandAt(const WorktreeCommandSpec& spec, const std::string& sha, SessionLock& lock) {
  if (const int sig = StopSignals::Caught()) return InfraError(fmt::format("interrupted by {}", SignalName(sig)));
  std::filesystem::path worktree;
  if (!spec.repo.empty()) {
    auto folder = MakeWorktreeFolder();
    if (!folder) return folder.error();
    worktree = *folder / ShortSha(sha);
    auto added = lock.SetWorktree(spec.repo, worktree);
    if (added) added = AddWorktree(spec.repo, worktree, sha);
    if (!added) {
      RemoveWorktreeAndFolder(spec.repo, worktree, lock);
      return added.error();
    }
  }
  const auto argv = SubstituteCommand(spec.command, {{"{sha}", sha}, {"{worktree}", worktree.string()},
                                                     {"{db}", spec.db.string()}});
  ProcessOptions po;
  po.cwd = worktree;
  // A harness the command runs finds the same database and data without {db}: relative
  // spellings would name files in the worktree, which is deleted after the run.
  po.env.emplace_back("HARNESS_DB", spec.db.string());
  if (const char* root = std::getenv("HARNESS_ROOT"); root && *root)
    po.env.emplace_back("HARNESS_ROOT", std::filesystem::absolute(DataRoot()).string());
  if (!spec.made_for.empty()) po.env.emplace_back("HARNESS_BISECT", spec.made_for);
  // The {worktree} of a server a `harness run` launches (runners/openai/server_launch.h),
  // wherever inside it the command moves.
  if (!worktree.empty()) po.env.emplace_back("HARNESS_WORKTREE", worktree.string());
  po.timeout_s = spec.timeout_s.value_or(0);
  po.forward_stop_signals = true;
  // Best effort: a lock that cannot be written loses only the cleanup after a kill -9.
  po.on_start = [&lock](pid_t pid) { static_cast<void>(lock.SetCommand(IdentifyProcess(pid))); };
  auto proc = RunProcess(argv, po);
  if (!worktree.empty()) RemoveWorktreeAndFolder(spec.repo, worktree, lock);
  if (proc && !proc->stop_signal)
    if (const int sig = StopSignals::Caught()) return InfraError(fmt::format("interrupted by {}", SignalName(sig)));
  return proc;
}

}  // namespace harness::bisect
