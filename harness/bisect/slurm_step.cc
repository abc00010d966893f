#include "harness/bisect/slurm_step.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "harness/util/subprocess.h"

namespace harness::bisect {
namespace {

// How long one scheduler query may take before the step counts as unreachable.
constexpr double kQueryTimeoutS = 30;

bool IsJobNameFlag(const std::string& arg) {
  return arg == "-J" || arg == "--job-name" || arg.rfind("--job-name=", 0) == 0 ||
         (arg.size() > 2 && arg.rfind("-J", 0) == 0);
}

// The launcher's own options: the arguments before the program it runs, which starts at the
// first argument that is neither an option nor an option's value. A short option of the
// letters below, or a long one without "=" outside kFlagsWithoutValue, takes the next
// argument as its value (srun(1), sbatch(1)); docs/bisect.md advises --opt=value.
std::vector<std::string> LauncherOptions(const std::vector<std::string>& argv, SlurmLauncher launcher) {
  static const std::vector<std::string> kFlagsWithoutValue = {
      "--wait", "--exclusive", "--overcommit", "--label", "--unbuffered", "--verbose", "--quiet", "--pty",
      "--hold", "--immediate", "--no-kill", "--kill-on-bad-exit", "--overlap", "--spread-job", "--test-only",
      "--contiguous", "--requeue", "--no-requeue", "--exact", "--parsable", "--disable-status", "--no-shell"};
  // sbatch's -W is --wait; srun's takes seconds.
  const std::string short_with_value =
      launcher == SlurmLauncher::kSrun ? "ABCDGJLMNSTWcdeimnopqrtwx" : "ABCDGJLMNSTcdeimnopqrtwx";
  std::vector<std::string> options;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--" || a.size() < 2 || a[0] != '-') break;
    options.push_back(a);
    bool takes_value = false;
    if (a[1] == '-')
      takes_value = a.find('=') == std::string::npos &&
                    std::find(kFlagsWithoutValue.begin(), kFlagsWithoutValue.end(), a) == kFlagsWithoutValue.end();
    else
      takes_value = a.size() == 2 && short_with_value.find(a[1]) != std::string::npos;
    if (takes_value && i + 1 < argv.size()) options.push_back(argv[++i]);
  }
  return options;
}

bool HasOption(const std::vector<std::string>& options, bool (*match)(const std::string&)) {
  return std::any_of(options.begin(), options.end(), match);
}

Result<ProcessResult> Ask(const std::vector<std::string>& argv) {
  ProcessOptions o;
  o.timeout_s = kQueryTimeoutS;
  auto r = RunProcess(argv, o);
  if (!r.ok()) return r.error();
  if (r->timed_out || r->signal != 0 || r->exit_code != 0)
    return InfraError(argv[0] + " failed (" +
                      (r->timed_out ? std::string("timed out") : ProcessExit{r->exit_code, r->signal}.Describe()) +
                      "): " + OutputTail(r->err, 500));
  return r;
}

// The value of KEY=value in a `scontrol --oneliner` line ("" when absent).
std::string Field(const std::string& line, const std::string& key) {
  const std::string k = key + "=";
  for (size_t at = line.find(k); at != std::string::npos; at = line.find(k, at + 1)) {
    if (at != 0 && line[at - 1] != ' ') continue;
    size_t end = line.find(' ', at);
    return line.substr(at + k.size(), end == std::string::npos ? std::string::npos : end - at - k.size());
  }
  return "";
}

// Whether the scheduler, not the command, ended the job. A FAILED job is the command's only
// when it failed with its exit code (Reason NonZeroExitCode); FAILED for BadConstraints,
// JobLaunchFailure and the like is a submission or launch the scheduler could not make.
// Slurm shows a job whose steps are still being cleaned up as COMPLETING: how it ended is not
// known yet. Read as a prefix, as EndedByScheduler reads every state.
bool IsCompleting(const SlurmJob& job) { return job.state.rfind("COMPLETING", 0) == 0; }

bool EndedByScheduler(const SlurmJob& job) {
  for (const char* s : {"CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
                        "OUT_OF_MEMORY", "REVOKED", "PENDING", "REQUEUED", "SUSPENDED"})
    if (job.state.rfind(s, 0) == 0) return true;
  return job.state == "FAILED" && job.reason != "NonZeroExitCode" && job.reason != "None" && !job.reason.empty();
}

}  // namespace

SlurmLauncher LauncherOf(const std::vector<std::string>& argv) {
  if (argv.empty()) return SlurmLauncher::kNone;
  const std::string base = std::filesystem::path(argv[0]).filename().string();
  if (base == "srun") return SlurmLauncher::kSrun;
  if (base == "sbatch") return SlurmLauncher::kSbatch;
  return SlurmLauncher::kNone;
}

Status CheckSlurmCommand(const std::vector<std::string>& argv) {
  const SlurmLauncher launcher = LauncherOf(argv);
  if (launcher == SlurmLauncher::kNone) return OkStatus();
  const std::vector<std::string> options = LauncherOptions(argv, launcher);
  if (HasOption(options, IsJobNameFlag))
    return UsageError(argv[0] + ": leave the job name out (-J/--job-name): the harness names each step's job "
                      "(harness-bisect-SESSION-PID-sSLOT-SHA) to follow and cancel exactly what it submitted");
  if (launcher == SlurmLauncher::kSbatch &&
      !HasOption(options, [](const std::string& a) { return a == "--wait" || a == "-W"; }))
    return UsageError("sbatch needs --wait in a bisect command: without it sbatch returns when the job is "
                      "queued, before the step has run");
  return OkStatus();
}

std::string SlurmJobName(const std::string& label, int slot, const std::string& sha) {
  return "harness-bisect-" + label + "-" + std::to_string(getpid()) + "-s" + std::to_string(slot) + "-" +
         sha.substr(0, 12);
}

std::vector<std::string> WithSlurmJobName(const std::vector<std::string>& argv, const std::string& name) {
  if (LauncherOf(argv) == SlurmLauncher::kNone) return argv;
  std::vector<std::string> out = argv;
  out.insert(out.begin() + 1, "--job-name=" + name);
  return out;
}

Result<std::vector<SlurmJob>> FindSlurmJobs(const std::string& name) {
  const std::string uid = std::to_string(getuid());
  auto ids = Ask({"squeue", "--noheader", "--states=all", "--user=" + uid, "--name=" + name, "--format=%i"});
  if (!ids.ok()) return ids.error();
  std::vector<SlurmJob> jobs;
  std::istringstream in(ids->out);
  for (std::string id; in >> id;) {
    auto shown = Ask({"scontrol", "--oneliner", "show", "job", id});
    if (!shown.ok()) return shown.error();
    // A job array or a het job shows one line per part; each is a job of this step.
    std::istringstream lines(shown->out);
    for (std::string line; std::getline(lines, line);) {
      if (Field(line, "JobName") != name) continue;
      jobs.push_back({Field(line, "JobId"), Field(line, "JobState"), Field(line, "Reason"), Field(line, "ExitCode")});
    }
  }
  return jobs;
}

Result<std::vector<SlurmJob>> SettledSlurmJobs(const std::string& name, double settle_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(settle_s);
  for (;;) {
    auto jobs = FindSlurmJobs(name);
    if (!jobs) return jobs.error();
    const bool completing = std::any_of(jobs->begin(), jobs->end(), IsCompleting);
    if (!completing || std::chrono::steady_clock::now() >= until) return jobs;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Status CancelSlurmJobs(const std::string& name) {
  auto r = Ask({"scancel", "--user=" + std::to_string(getuid()), "--name=" + name});
  if (!r.ok()) return r.error();
  return OkStatus();
}

std::optional<std::string> SlurmUntestableReason(const std::string& name, const std::vector<SlurmJob>& jobs) {
  if (jobs.empty()) return "no Slurm job named " + name + " was found: the submission failed or never reached the "
                           "scheduler";
  for (const auto& j : jobs)
    if (IsCompleting(j))
      return "Slurm job " + j.id + " (" + name + ") was still COMPLETING: whether the scheduler or the command "
             "ended it is not known";
  for (const auto& j : jobs)
    if (EndedByScheduler(j))
      return "Slurm job " + j.id + " (" + name + ") ended " + j.state +
             (j.reason.empty() || j.reason == "None" ? "" : " (" + j.reason + ")") +
             ": the scheduler ended it, not the command";
  return std::nullopt;
}

struct SlurmStartWatch::State {
  std::mutex mu;
  std::condition_variable wake;
  bool stop = false;
  std::optional<std::string> cancelled;
};

SlurmStartWatch::SlurmStartWatch(std::string name, double start_timeout_s) : state_(std::make_shared<State>()) {
  thread_ = std::thread([state = state_, name = std::move(name), start_timeout_s] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(start_timeout_s);
    std::unique_lock lock(state->mu);
    while (!state->stop) {
      state->wake.wait_for(lock, std::chrono::seconds(1));
      if (state->stop) return;
      lock.unlock();
      auto jobs = FindSlurmJobs(name);
      lock.lock();
      bool started = false;
      std::string reason;
      for (const auto& j : jobs.ok() ? *jobs : std::vector<SlurmJob>{}) {
        if (j.state != "PENDING") started = true;
        reason = j.reason;
      }
      if (started) return;
      if (std::chrono::steady_clock::now() < deadline) continue;
      if (!jobs.ok() || jobs->empty()) continue;  // nothing submitted yet: nothing to cancel
      std::ostringstream why;
      why << "Slurm did not start job " << name << " within " << start_timeout_s << " s"
          << (reason.empty() || reason == "None" ? "" : " (" + reason + ")");
      // Said before the cancel: the step's srun ends as soon as its job is cancelled, and
      // whoever reads cancelled() then must find the reason already there.
      state->cancelled = why.str();
      lock.unlock();
      (void)CancelSlurmJobs(name);
      return;
    }
  });
}

SlurmStartWatch::~SlurmStartWatch() {
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  state_->wake.notify_all();
  thread_.join();
}

std::optional<std::string> SlurmStartWatch::cancelled() const {
  std::lock_guard lock(state_->mu);
  return state_->cancelled;
}

}  // namespace harness::bisect
