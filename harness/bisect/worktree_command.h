// The command of `harness bisect`, run at one commit: argv with {sha}, {worktree}, {db},
// {questions} and {slot} filled in, in a detached git worktree of the commit (with a repository) that
// is removed afterwards whatever happened, never through a shell. {questions} is a file of
// the question keys the search chose (eval/question_list.h), written beside the worktree in
// the same temporary folder. The session lock names the folder and the command while they
// exist, so the next bisect can clean up after a process that died.
#pragma once

#include <atomic>
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
  std::vector<std::string> command;         // argv with {sha}, {worktree}, {db}, {questions}
  std::filesystem::path repo;               // absolute; empty: no worktree, the command runs here
  std::filesystem::path db;                 // absolute
  std::optional<double> timeout_s;          // none: no timeout
  // Recorded by a `harness run` the command starts (in its run's context, as "bisect"), so
  // the runs a bisect made are never taken for a nightly: "session N" or "confirm".
  std::string made_for;
  // The text of the file {questions} names (absolute path); none: the command does not use it.
  std::optional<std::string> questions;
  // A Slurm step (slurm_step.h): cancel its job when it has not started within this long.
  std::optional<double> step_start_timeout_s;
  int slot = 0;                             // which of the concurrent steps: {slot}, Slurm job names, the lock
  // Set true by the session to stop the command early (another step failed): StepPool::stop_flag.
  const std::atomic<bool>* cancel = nullptr;
};

// The command's process result, and for a Slurm step whose job the scheduler ended (or
// never ran), why: then the exit code is srun's, not the command's, and says nothing.
struct StepProcess : ProcessResult {
  std::optional<std::string> scheduler_ended;
};

// The name of the file {questions} names, in the run's temporary folder.
inline constexpr const char* kQuestionsFileName = "questions.txt";

// The checks a step command and its timeouts get before any step, alike for `bisect` and
// `bisect --auto`: each timeout in kTimeoutRange, {worktree} only with a repository, and a
// Slurm command the harness can follow (CheckSlurmCommand). A usage error (exit 2) otherwise.
Status CheckStepCommand(const std::vector<std::string>& command, const std::filesystem::path& repo,
                        std::optional<double> timeout_s, std::optional<double> step_start_timeout_s);

// Whether the command has {questions}: then each run evaluates the questions the search chose.
bool UsesQuestions(const std::vector<std::string>& command);

// The text of a {questions} file that asks for a whole eval (every question).
std::string EveryQuestionFile(const std::string& why);

// Fills {sha}, {worktree}, {db}, {questions} and {slot} inside each argument.
std::vector<std::string> SubstituteCommand(const std::vector<std::string>& command,
                                           const std::map<std::string, std::string>& vars);

// Runs the command at sha. The process result as RunProcess gives it; errors are those of
// making the worktree, or an interrupt caught before the command started or after it ended.
// A Slurm step's job is named, cancelled when the step ends whatever happened, and asked how
// it ended (slurm_step.h).
Result<StepProcess> RunCommandAt(const WorktreeCommandSpec& spec, const std::string& sha, SessionLock& lock);

}  // namespace harness::bisect
