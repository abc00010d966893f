// A bisect step that goes through Slurm: the command's argv starts with `srun`, or with
// `sbatch` and `--wait` (docs/bisect.md, "Steps on a Slurm cluster"). The harness names the
// job itself (`--job-name=harness-bisect-<session>-<pid>-s<slot>-<sha12>`), so it can find it and
// cancel exactly what it submitted (scancel of this user's jobs of that name, never anything
// else) when the step ends, is interrupted or times out, and so it can ask the scheduler how
// the job ended: a job the scheduler cancelled, timed out, lost with its node or never ran is
// an untestable step, never a verdict on the commit, whatever exit code srun passed on.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/util/error.h"

namespace harness::bisect {

enum class SlurmLauncher { kNone, kSrun, kSbatch };

// kSrun or kSbatch when argv[0] is that program (by its base name), else kNone.
SlurmLauncher LauncherOf(const std::vector<std::string>& argv);

// A usage error for a Slurm command the harness cannot follow: sbatch without --wait (it
// would return at submission, before the step ran) or a job name of the user's own (-J,
// --job-name: the harness names the job to find and cancel it). Ok for any other command.
Status CheckSlurmCommand(const std::vector<std::string>& argv);

// "harness-bisect-<label>-<our pid>-s<slot>-<first 12 of sha>", label the session id or
// "confirm": unique per concurrent step of this harness, and per harness on this host.
std::string SlurmJobName(const std::string& label, int slot, const std::string& sha);

// argv with --job-name=NAME right after the launcher (argv unchanged for other commands).
std::vector<std::string> WithSlurmJobName(const std::vector<std::string>& argv, const std::string& name);

// A job as `scontrol show job` describes it (finished jobs stay known for MinJobAge).
struct SlurmJob {
  std::string id;
  std::string state;      // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  std::string reason;     // why it waits or ended (None, Resources, BeginTime, ...)
  std::string exit_code;  // "exit:signal", e.g. "1:0"
};

// This user's jobs of that name the controller knows, or an infrastructure error when the
// scheduler cannot be asked.
Result<std::vector<SlurmJob>> FindSlurmJobs(const std::string& name);

// FindSlurmJobs once none of them is COMPLETING any more, asked every 0.2 s for at most
// settle_s. Slurm shows a job whose steps are still being cleaned up as COMPLETING, whatever
// ended it, and on a loaded node that outlasts the srun that ran it by seconds: only then
// does the job say whether the scheduler or the command ended it. A job still COMPLETING at
// the end is returned as such (SlurmUntestableReason: unknown, so no evidence).
Result<std::vector<SlurmJob>> SettledSlurmJobs(const std::string& name, double settle_s);

// Cancels this user's jobs of that name (none is fine). An error when scancel could not run.
Status CancelSlurmJobs(const std::string& name);

// Why a step whose command ended cannot count as evidence, from the jobs of its name after
// it ended: no job at all (the submission failed), or a job the scheduler ended rather than
// the command (CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE, OUT_OF_MEMORY,
// or still PENDING), or a job still COMPLETING (how it ended is not known yet). nullopt: the
// job ran and ended by itself, so the exit code is the command's.
std::optional<std::string> SlurmUntestableReason(const std::string& name, const std::vector<SlurmJob>& jobs);

// While a step runs: cancels its jobs when none has started within start_timeout_s
// (`--step-start-timeout`), so a queue that never starts the job ends the step. Polls the
// scheduler once a second on a thread of its own; stops on destruction.
class SlurmStartWatch {
 public:
  SlurmStartWatch(std::string name, double start_timeout_s);
  ~SlurmStartWatch();
  SlurmStartWatch(const SlurmStartWatch&) = delete;
  SlurmStartWatch& operator=(const SlurmStartWatch&) = delete;
  // Set when the watch cancelled the step: "Slurm did not start job NAME within N s (Reason)".
  std::optional<std::string> cancelled() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace harness::bisect
