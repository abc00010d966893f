#include "harness/bisect/worktree_command.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

#include "harness/bisect/slurm_step.h"
#include "harness/util/git.h"
#include "harness/util/number_range.h"
#include "harness/util/paths.h"

namespace harness::bisect {
namespace {

// Where one command runs: the temporary folder holding the worktree (with a repository)
// and the {questions} file (when the command uses it); empty paths when it needs neither.
struct CommandPlace {
  std::filesystem::path folder, worktree, questions;
};

// Removes the worktree, its registration and its temporary folder, then tells the lock.
// Steps side by side add and remove worktrees of one repository: one git worktree command at
// a time, so a prune of one cannot meet another's half-made registration.
std::mutex g_git_worktrees;

void RemovePlace(const std::filesystem::path& repo, const CommandPlace& place, int slot, SessionLock& lock) {
  // Best effort: the error worth reporting is the run's.
  if (!place.worktree.empty()) {
    std::lock_guard<std::mutex> one_at_a_time(g_git_worktrees);
    static_cast<void>(RemoveWorktree(repo, place.worktree));
  }
  std::error_code ec;
  if (!place.folder.empty()) std::filesystem::remove_all(place.folder, ec);
  static_cast<void>(lock.SetWorktree(slot, {}, {}));
}

// Makes the folder, writes the questions file and adds the worktree. The lock names a path
// inside the folder first, so the cleanup after a dead session removes the folder whole.
Result<CommandPlace> MakePlace(const WorktreeCommandSpec& spec, const std::string& sha, SessionLock& lock) {
  CommandPlace place;
  if (spec.repo.empty() && !spec.questions) return place;
  auto folder = MakeWorktreeFolder();
  if (!folder) return folder.error();
  place.folder = *folder;
  if (!spec.repo.empty()) place.worktree = place.folder / ShortSha(sha);
  auto made =
      lock.SetWorktree(spec.slot, spec.repo, spec.repo.empty() ? place.folder / kQuestionsFileName : place.worktree);
  if (made && spec.questions) {
    place.questions = place.folder / kQuestionsFileName;
    std::ofstream out(place.questions, std::ios::binary);
    out << *spec.questions;
    if (!out.flush())
      made = InfraError(fmt::format("{}: cannot write the questions file", place.questions.string()));
  }
  if (made && !spec.repo.empty()) {
    std::lock_guard<std::mutex> one_at_a_time(g_git_worktrees);
    made = AddWorktree(spec.repo, place.worktree, sha);
  }
  if (!made) {
    RemovePlace(spec.repo, place, spec.slot, lock);
    return made.error();
  }
  return place;
}

// The name of the step's Slurm job, empty when the command is not a Slurm step.
std::string StepJobName(const WorktreeCommandSpec& spec, const std::string& sha, const std::vector<std::string>& argv) {
  if (LauncherOf(argv) == SlurmLauncher::kNone) return "";
  // "session N step S": the session's id (the slot tells the steps of one harness apart).
  std::string label = spec.made_for.rfind("session ", 0) == 0 ? spec.made_for.substr(8) : spec.made_for;
  label = label.substr(0, label.find(" step "));
  std::replace(label.begin(), label.end(), ' ', '-');
  return SlurmJobName(label.empty() ? "step" : label, spec.slot, sha);
}

// How long a Slurm job may stay COMPLETING after its step ended before the step is
// untestable (Slurm's own KillWait, the wait for a job's processes to end, defaults to 30 s).
constexpr double kSlurmSettleSeconds = 30;

// After a Slurm step: its job is cancelled (nothing left queued or running, whatever ended
// the step), then the scheduler says whether the job ran and ended by itself. Why it says
// nothing of the commit, or nullopt.
std::optional<std::string> FinishSlurmJob(const std::string& job, const std::optional<std::string>& not_started) {
  const Status cancelled = CancelSlurmJobs(job);
  if (not_started) return not_started;
  auto jobs = SettledSlurmJobs(job, kSlurmSettleSeconds);
  if (!jobs) return "could not ask Slurm how job " + job + " ended: " + jobs.error().message;
  if (auto why = SlurmUntestableReason(job, *jobs)) return why;
  if (!cancelled) return "could not cancel Slurm job " + job + ": " + cancelled.error().message;
  return std::nullopt;
}

}  // namespace

Status CheckStepCommand(const std::vector<std::string>& command, const std::filesystem::path& repo,
                        std::optional<double> timeout_s, std::optional<double> step_start_timeout_s) {
  if (timeout_s)
    if (auto c = CheckNumberIn(*timeout_s, kTimeoutRange, "--timeout"); !c) return c.error();
  if (step_start_timeout_s)
    if (auto c = CheckNumberIn(*step_start_timeout_s, kTimeoutRange, "--step-start-timeout"); !c) return c.error();
  for (const auto& arg : command)
    if (arg.find("{worktree}") != std::string::npos && repo.empty())
      return UsageError("{worktree} in the command needs --repo");
  return CheckSlurmCommand(command);
}

bool UsesQuestions(const std::vector<std::string>& command) {
  return std::any_of(command.begin(), command.end(),
                     [](const std::string& arg) { return arg.find("{questions}") != std::string::npos; });
}

std::string EveryQuestionFile(const std::string& why) { return fmt::format("# harness bisect: {}\n*\n", why); }

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

Result<StepProcess> RunCommandAt(const WorktreeCommandSpec& spec, const std::string& sha, SessionLock& lock) {
  if (const int sig = StopSignals::Caught()) return InfraError(fmt::format("interrupted by {}", SignalName(sig)));
  if (spec.cancel && spec.cancel->load()) return InfraError("stopped: another step of the session failed");
  auto place = MakePlace(spec, sha, lock);
  if (!place) return place.error();
  const std::filesystem::path& worktree = place->worktree;
  const auto argv = SubstituteCommand(spec.command, {{"{sha}", sha}, {"{worktree}", worktree.string()},
                                                     {"{db}", spec.db.string()},
                                                     {"{questions}", place->questions.string()},
                                                     {"{slot}", std::to_string(spec.slot)}});
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
  // Steps may run side by side (--jobs): each step's leftovers end with its own command.
  po.own_reaper = true;
  po.stop = spec.cancel;
  // Best effort: a lock that cannot be written loses only the cleanup after a kill -9.
  po.on_start = [&lock, slot = spec.slot](pid_t pid) {
    static_cast<void>(lock.SetCommand(slot, IdentifyProcess(pid)));
  };
  const std::string job = StepJobName(spec, sha, argv);
  std::optional<SlurmStartWatch> watch;
  if (!job.empty() && spec.step_start_timeout_s) watch.emplace(job, *spec.step_start_timeout_s);
  auto proc = RunProcess(job.empty() ? argv : WithSlurmJobName(argv, job), po);
  const std::optional<std::string> not_started = watch ? watch->cancelled() : std::nullopt;
  watch.reset();
  std::optional<std::string> scheduler_ended;
  if (!job.empty()) scheduler_ended = FinishSlurmJob(job, not_started);
  RemovePlace(spec.repo, *place, spec.slot, lock);
  if (!proc) return proc.error();
  if (!proc->stop_signal)
    if (const int sig = StopSignals::Caught()) return InfraError(fmt::format("interrupted by {}", SignalName(sig)));
  StepProcess out{*proc, scheduler_ended};
  return out;
}

}  // namespace harness::bisect
