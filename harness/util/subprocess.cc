#include "harness/util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "harness/util/quote.h"
#include "harness/util/reaper.h"

extern char** environ;

namespace harness {
namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() { CloseBoth(); }
  void Close(int i) {
    if (fd[i] >= 0) close(fd[i]);
    fd[i] = -1;
  }
  void CloseBoth() { Close(0); Close(1); }
};

// A process as /proc/PID/stat says ("pid (comm) state ppid pgrp ..."; comm may hold spaces
// and parentheses, so the fields are read after its last ')'). Nothing when it is gone.
struct ProcStat {
  char state = 0;
  pid_t parent = -1;
  pid_t group = -1;
  int64_t start_ticks = 0;  // field 22: when it started, in clock ticks since boot
};
// The text of /proc/PID/stat, empty when the process is gone. read(2), not an ifstream: a
// process that exits between the open and the read makes read fail with ESRCH, which
// libstdc++'s filebuf throws as an exception instead of ending the stream.
std::string ReadProcStatText(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buf[1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) text.clear();  // gone mid-read: say nothing rather than half a line
      break;
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  const std::string stat = ReadProcStatText(pid);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  ProcStat s;
  long parent = 0, group = 0;
  if (!(fields >> s.state >> parent >> group)) return std::nullopt;
  s.parent = static_cast<pid_t>(parent);
  s.group = static_cast<pid_t>(group);
  std::string field;
  for (int i = 6; i <= 22 && fields >> field; ++i) {}
  if (fields) s.start_ticks = std::stoll(field);
  return s;
}

// The pids of every process (Linux /proc).
template <class Visit>
void ForEachProcess(Visit visit) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    visit(static_cast<pid_t>(std::stol(name)));
  }
}

// Every live descendant of root (Linux /proc).
std::set<pid_t> Descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  ForEachProcess([&](pid_t pid) {
    if (const auto stat = ReadProcStat(pid); stat && stat->parent > 0) children.emplace(stat->parent, pid);
  });
  std::set<pid_t> found;
  std::vector<pid_t> todo = {root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (auto [it, end] = children.equal_range(p); it != end; ++it)
      if (found.insert(it->second).second) todo.push_back(it->second);
  }
  return found;
}

// A timed-out command may have started children of its own (a shell running python): the
// whole tree goes, not just the process we started. It is stopped first, from the top, so
// nothing in it forks or loses its parent (and with it its place in the tree) meanwhile;
// then everything is killed. Processes that had already left the tree (their parent
// exited) are not found here; a command in a process group of its own loses them with the
// group.
void KillTree(pid_t root) {
  kill(root, SIGSTOP);
  std::set<pid_t> stopped;
  for (bool grew = true; grew;) {
    grew = false;
    for (pid_t p : Descendants(root))
      if (stopped.insert(p).second) {
        kill(p, SIGSTOP);
        grew = true;
      }
  }
  for (pid_t p : stopped) kill(p, SIGKILL);
  kill(root, SIGKILL);
}

// The children we started ourselves (programs, guardians) until they are reaped: any other
// child of ours re-parented to us, as we are the subreaper (BecomeChildSubreaper).
std::mutex g_children_mutex;
std::set<pid_t> g_children;
std::atomic<bool> g_subreaper{false};
std::atomic<int> g_background_alive{0};  // BackgroundProcesses not stopped yet

void Forget(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_children_mutex);
  g_children.erase(pid);
}

int64_t StartTicksOf(pid_t pid) {
  const auto stat = ReadProcStat(pid);
  return stat ? stat->start_ticks : 0;
}

// Children of ours we did not start that started at or after `since` (clock ticks since
// boot): what a program we started left behind. Zombies too when asked.
std::vector<pid_t> Adopted(int64_t since, bool with_zombies) {
  std::vector<pid_t> found;
  if (!g_subreaper) return found;
  const pid_t self = getpid();
  std::lock_guard<std::mutex> lock(g_children_mutex);
  ForEachProcess([&](pid_t pid) {
    const auto stat = ReadProcStat(pid);
    if (!stat || stat->parent != self || g_children.count(pid) || stat->start_ticks < since) return;
    if (with_zombies || (stat->state != 'Z' && stat->state != 'X')) found.push_back(pid);
  });
  return found;
}

// Kills what re-parented to us since `since`, each with its tree, and reaps it. Rounds,
// because each kill may hand us the zombies of the killed process's children.
void EndAdopted(int64_t since) {
  for (int round = 0; round < 20; ++round) {
    const auto adopted = Adopted(since, /*with_zombies=*/true);
    if (adopted.empty()) return;
    for (pid_t p : adopted) KillTree(p);
    for (pid_t p : adopted)
      while (waitpid(p, nullptr, 0) < 0 && errno == EINTR) {}
  }
}

constexpr int kStopSignalList[3] = {SIGINT, SIGTERM, SIGHUP};
// Written by the handler, read by RunProcess and the callers: lock-free atomics only.
std::atomic<int> g_stop_first{0};
std::atomic<int> g_stop_last{0};
std::atomic<int> g_stop_count{0};

void OnStopSignal(int sig) {
  int none = 0;
  g_stop_first.compare_exchange_strong(none, sig);
  g_stop_last.store(sig);
  g_stop_count.fetch_add(1);
}

using Clock = std::chrono::steady_clock;

int MillisUntil(Clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return ms <= 0 ? 0 : static_cast<int>(std::min<int64_t>(ms, 1 << 30));
}

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The guardian of a background program's group, in the child of a fork: the parent may have
// threads, so only async-signal-safe calls from here on. It waits for a byte from the parent
// (it stopped the group itself) or the pipe's end (the parent died), then stops the group.
[[noreturn]] void GuardGroup(int pipe_fd, pid_t group, timespec grace) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaction(s, &ignore, nullptr);
  setpgid(0, 0);  // a kill of the parent's group does not reach us
  prctl(PR_SET_NAME, "harness-guard", 0, 0, 0);
  // Hold nothing of the parent's: its output pipes (a reader waits for their end), locks, sockets.
  const int null = open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
  if (pipe_fd != 3) dup2(pipe_fd, 3);
  syscall(SYS_close_range, 4u, ~0u, 0u);
  char byte = 0;
  ssize_t n = 0;
  while ((n = read(3, &byte, 1)) < 0 && errno == EINTR) {}
  if (n == 1) _exit(0);
  if (kill(-group, SIGTERM) != 0) _exit(0);
  timespec now {}, deadline {};
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += grace.tv_sec;
  deadline.tv_nsec += grace.tv_nsec;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000L;
  }
  const timespec step{0, 20 * 1000000L};
  for (;;) {
    // Gone once every member was reaped (by init: the dead parent no longer can).
    if (kill(-group, 0) != 0 && errno == ESRCH) _exit(0);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec)) break;
    nanosleep(&step, nullptr);
  }
  kill(-group, SIGKILL);
  _exit(0);
}

// Starts argv (looked up in $PATH) with the file actions given, in cwd (empty: ours), with
// env set on top of our environment, in a process group of its own when asked.
// Named before starting: posix_spawn would say only "No such file or directory", as if the
// program were missing.
Status CheckWorkingDirectory(const std::string& program, const std::filesystem::path& cwd) {
  if (cwd.empty()) return OkStatus();
  std::error_code ec;
  const auto status = std::filesystem::status(cwd, ec);
  if (!std::filesystem::exists(status))
    return InfraError(fmt::format("cannot run {}: its working directory {} does not exist", Quote(program),
                                  Quote(cwd.string())));
  if (!std::filesystem::is_directory(status))
    return InfraError(fmt::format("cannot run {}: its working directory {} is not a directory", Quote(program),
                                  Quote(cwd.string())));
  return OkStatus();
}

// Our environment with env set on top, as "K=V" strings.
std::vector<std::string> EnvironmentWith(const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool overridden = false;
    for (const auto& [k, v] : env)
      if (kv.compare(0, k.size() + 1, k + "=") == 0) overridden = true;
    if (!overridden) env_strings.push_back(std::move(kv));
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  return env_strings;
}

// Pointers into strings, null-terminated, as execve takes them.
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

Error CannotRun(const std::string& program, int error) {
  if (error == ENOENT)
    return InfraError(fmt::format("cannot run {}: no such program{}", Quote(program),
                                  program.find('/') == std::string::npos ? " in $PATH" : ""));
  return InfraError(fmt::format("cannot run {}: {}", Quote(program), std::strerror(error)));
}

Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                    const std::vector<std::pair<std::string, std::string>>& env, bool own_group,
                    posix_spawn_file_actions_t& actions) {
  if (auto s = CheckWorkingDirectory(argv[0], cwd); !s) return s.error();
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (own_group) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);  // a group of its own, led by the program
  }
  std::vector<std::string> env_strings = EnvironmentWith(env);
  std::vector<std::string> argv_copy = argv;
  std::vector<char*> envp = CStrings(env_strings), args = CStrings(argv_copy);
  pid_t pid = 0;
  int rc = 0;
  {
    // Registered before anyone can look for adopted children: it is ours.
    std::lock_guard<std::mutex> lock(g_children_mutex);
    rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
    if (rc == 0) g_children.insert(pid);
  }
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return CannotRun(argv[0], rc);
  return pid;
}

// The file execve should run for program: as given when it has a '/', else the first
// executable file of that name in our $PATH (as posix_spawnp looks); empty when none.
std::string ResolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env && *path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t at = 0; at <= path.size();) {
    std::size_t end = path.find(':', at);
    if (end == std::string::npos) end = path.size();
    const std::string dir = end > at ? path.substr(at, end - at) : ".";
    const std::string candidate = dir + "/" + program;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate;
    at = end + 1;
  }
  return "";
}

// Starts argv under a reaper of its own (reaper.h) on the given fds, in cwd, with env on
// top of ours, the reaper leading a process group of its own when asked. The reaper's pid,
// once the program is started (an execve that failed is this error, the reaper reaped).
Result<pid_t> SpawnUnderReaper(const std::vector<std::string>& argv, const ProcessOptions& options, int in, int out,
                               int err) {
  if (auto s = CheckWorkingDirectory(argv[0], options.cwd); !s) return s.error();
  const std::string path = ResolveProgram(argv[0]);
  if (path.empty()) return CannotRun(argv[0], ENOENT);
  std::vector<std::string> env_strings = EnvironmentWith(options.env), argv_copy = argv;
  std::vector<char*> envp = CStrings(env_strings), args = CStrings(argv_copy);
  const std::string cwd = options.cwd.string();
  Pipe exec_error, go;
  if (pipe2(exec_error.fd, O_CLOEXEC) != 0 || pipe2(go.fd, O_CLOEXEC) != 0)
    return InfraError(fmt::format("cannot create pipes: {}", std::strerror(errno)));
  const ReaperPlan plan{path.c_str(), args.data(), envp.data(), cwd.empty() ? nullptr : cwd.c_str(), in, out, err,
                        exec_error.fd[1], go.fd[0], options.forward_stop_signals};
  pid_t pid = -1;
  {
    std::lock_guard<std::mutex> lock(g_children_mutex);  // registered before anyone looks for adopted children
    pid = fork();
    if (pid == 0) RunReaper(plan);
    if (pid > 0) g_children.insert(pid);
  }
  if (pid < 0) return InfraError(fmt::format("cannot start a reaper for {}: {}", Quote(argv[0]), std::strerror(errno)));
  if (options.forward_stop_signals) setpgid(pid, pid);  // as the reaper does itself: whichever comes first
  // Recorded (on_start) before the program may start: a kill -9 of ours from here on leaves
  // a reaper the session lock names, or one that starts nothing.
  if (options.on_start) options.on_start(pid);
  go.Close(0);
  signal(SIGPIPE, SIG_IGN);  // a reaper that died already is found below, not by a signal
  static_cast<void>(write(go.fd[1], "g", 1));
  go.Close(1);
  exec_error.Close(1);
  int error = 0;
  ssize_t n = 0;
  while ((n = read(exec_error.fd[0], &error, sizeof error)) < 0 && errno == EINTR) {}
  if (n != static_cast<ssize_t>(sizeof error)) return pid;  // closed on execve: the program runs
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
  Forget(pid);
  return CannotRun(argv[0], error);
}

}  // namespace

void BecomeChildSubreaper() {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0) g_subreaper = true;
}

bool IsValidTimeout(double t) { return t == 0 || (t > 0 && t <= kMaxTimeoutS); }

std::string SignalName(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGKILL: return "SIGKILL";
    default: return fmt::format("signal {}", sig);
  }
}

StopSignals::StopSignals() {
  g_stop_first = 0;
  g_stop_last = 0;
  g_stop_count = 0;
  for (int i = 0; i < 3; ++i) {
    struct sigaction current {};
    sigaction(kStopSignalList[i], nullptr, &current);
    if (current.sa_handler == SIG_IGN) continue;  // nohup: the caller asked for it to be ignored
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(kStopSignalList[i], &sa, &old_[i]);
    installed_[i] = true;
  }
}

StopSignals::~StopSignals() {
  for (int i = 0; i < 3; ++i)
    if (installed_[i]) sigaction(kStopSignalList[i], &old_[i], nullptr);
  // Nothing caught is left over for a forwarding run after this one.
  g_stop_first = 0;
  g_stop_last = 0;
  g_stop_count = 0;
}

int StopSignals::Caught() { return g_stop_first.load(); }

std::optional<ProcessIdentity> IdentifyProcess(pid_t pid) {
  const std::string stat = ReadProcStatText(pid);
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  // After "(comm)": state is field 3, starttime field 22, so the 20th field after ')'.
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {}
  if (!fields) return std::nullopt;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(boot, boot_id);
  return ProcessIdentity{pid, std::stoll(field), boot_id};
}

bool KillProcessGroupOf(const ProcessIdentity& leader) {
  if (leader.pid <= 1 || leader.pid == getpid()) return false;
  const auto now = IdentifyProcess(static_cast<pid_t>(leader.pid));
  if (!now || now->start_ticks != leader.start_ticks || now->boot_id != leader.boot_id) return false;
  KillTree(static_cast<pid_t>(leader.pid));
  kill(-static_cast<pid_t>(leader.pid), SIGKILL);
  return true;
}

namespace {

Clock::duration SecondsFrom(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// One child of RunProcess from its start to its reaping: its pipes and exit fd, the
// deadlines (timeout, grace after a forwarded stop signal, drain after the exit), its stdin
// being fed and its output collected.
class Supervision {
 public:
  Supervision(pid_t pid, int exit_fd, Pipe& out, Pipe& err, Pipe& in, const ProcessOptions& options,
              const sigset_t* wait_mask)
      : pid_(pid), exit_fd_(exit_fd), out_(out), err_(err), in_(in), options_(options), wait_mask_(wait_mask),
        input_(options.stdin_data.value_or("")), deadline_(Clock::now() + SecondsFrom(options.timeout_s)),
        start_ticks_(StartTicksOf(pid)),
        out_text_(options.max_output_bytes / 4, options.max_output_bytes - options.max_output_bytes / 4),
        err_text_(options.max_output_bytes / 4, options.max_output_bytes - options.max_output_bytes / 4) {
    if (input_.empty()) in_.Close(1);
    else fcntl(in_.fd[1], F_SETFL, O_NONBLOCK);
  }

  // Until the child exited and its output is drained (or ppoll failed); then reaped.
  ProcessResult Run() {
    for (;;) {
      if (!exited_) {
        ForwardStopSignals();
        EnforceDeadlines();
      }
      if (exited_ && (out_.fd[0] < 0 && err_.fd[0] < 0)) break;
      if (exited_ && Clock::now() >= *drain_until_) break;
      if (!PollOnce()) break;
      if (exited_) in_.Close(1);  // nobody reads it any more
    }
    close(exit_fd_);
    if (!exited_) {  // ppoll failed: do not leave it running unseen
      KillAll();
      while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {}
      Forget(pid_);
    }
    if (WIFEXITED(status_)) result_.exit_code = WEXITSTATUS(status_);
    if (WIFSIGNALED(status_)) result_.signal = WTERMSIG(status_);
    result_.out = out_text_.Text();
    result_.err = err_text_.Text();
    result_.out_dropped = out_text_.dropped();
    result_.err_dropped = err_text_.dropped();
    return std::move(result_);
  }

 private:
  // What each polled fd is, so one closed earlier in a round is never read.
  enum Source { kOut, kErr, kIn, kExit };

  bool forwarding() const { return options_.forward_stop_signals; }

  void KillAll() {
    KillTree(pid_);
    if (forwarding()) kill(-pid_, SIGKILL);
    killed_ = true;
  }

  // A stop signal caught since the last round goes on to the child's group, which then has
  // kStopGraceS to end.
  void ForwardStopSignals() {
    if (forwarding() && options_.stop && options_.stop->load() && !asked_to_stop_) {
      asked_to_stop_ = true;
      kill(-pid_, SIGTERM);
      if (!stop_until_) stop_until_ = Clock::now() + SecondsFrom(kStopGraceS);
    }
    if (!forwarding() || g_stop_count.load() <= forwarded_) return;
    forwarded_ = g_stop_count.load();
    kill(-pid_, g_stop_last.load());
    if (!result_.stop_signal) result_.stop_signal = g_stop_first.load();
    if (!stop_until_) stop_until_ = Clock::now() + SecondsFrom(kStopGraceS);
  }

  void EnforceDeadlines() {
    if (killed_) return;
    if (options_.timeout_s > 0 && Clock::now() >= deadline_) {
      result_.timed_out = true;
      KillAll();
    } else if (stop_until_ && Clock::now() >= *stop_until_) {
      KillAll();
    }
  }

  // One ppoll over what is still open, bounded by the nearest deadline; false when it failed.
  bool PollOnce() {
    std::vector<pollfd> fds;
    std::vector<Source> sources;
    auto watch = [&](int fd, short events, Source source) {
      fds.push_back({fd, events, 0});
      sources.push_back(source);
    };
    if (out_.fd[0] >= 0) watch(out_.fd[0], POLLIN, kOut);
    if (err_.fd[0] >= 0) watch(err_.fd[0], POLLIN, kErr);
    if (in_.fd[1] >= 0) watch(in_.fd[1], POLLOUT, kIn);
    if (!exited_) watch(exit_fd_, POLLIN, kExit);
    int wait_ms = -1;
    auto bound = [&](Clock::time_point t) { wait_ms = wait_ms < 0 ? MillisUntil(t) : std::min(wait_ms, MillisUntil(t)); };
    if (exited_) bound(*drain_until_);
    else if (!killed_) {
      if (options_.timeout_s > 0) bound(deadline_);
      if (stop_until_) bound(*stop_until_);
      // A stop signal wakes the ppoll of one thread only: programs supervised side by side
      // (bisect --jobs) each look for it this often.
      if (forwarding()) bound(Clock::now() + std::chrono::milliseconds(100));
    }
    timespec ts{wait_ms / 1000, (wait_ms % 1000) * 1000000L};
    const int n = ppoll(fds.data(), fds.size(), wait_ms < 0 ? nullptr : &ts, forwarding() ? wait_mask_ : nullptr);
    if (n < 0) return errno == EINTR;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (sources[i] == kExit) OnExit();
      else if (sources[i] == kIn) FeedInput();
      else ReadOutput(sources[i] == kOut ? out_ : err_, sources[i] == kOut ? out_text_ : err_text_);
    }
    return true;
  }

  void OnExit() {
    while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {}
    Forget(pid_);
    exited_ = true;
    drain_until_ = Clock::now() + SecondsFrom(kDrainAfterExitS);
    // Stopped or killed: what is left of its group goes too.
    if (forwarding() && (result_.stop_signal || killed_ || asked_to_stop_)) kill(-pid_, SIGKILL);
    // Whatever it left running (its children re-parented to us at its exit, daemons that
    // left its group) ends with it, unless a background program runs beside it whose
    // leftovers could not be told from its own (BackgroundProcess::Stop ends those).
    // Under a reaper of its own, the reaper has ended them, and what re-parented to us is
    // someone else's.
    if (g_background_alive.load() == 0 && !options_.own_reaper) EndAdopted(start_ticks_);
  }

  void FeedInput() {
    if (in_.fd[1] < 0) return;
    const ssize_t w = write(in_.fd[1], input_.data() + written_, input_.size() - written_);
    if (w > 0) written_ += static_cast<std::size_t>(w);
    if (w < 0 && errno != EAGAIN) written_ = input_.size();
    if (written_ >= input_.size()) in_.Close(1);
  }

  void ReadOutput(Pipe& pipe, BoundedText& into) {
    const ssize_t r = read(pipe.fd[0], buf_, sizeof buf_);
    if (r > 0) into.Append(std::string_view(buf_, static_cast<std::size_t>(r)));
    else if (r == 0 || errno != EINTR) pipe.Close(0);
  }

  const pid_t pid_;
  const int exit_fd_;
  Pipe &out_, &err_, &in_;
  const ProcessOptions& options_;
  const sigset_t* wait_mask_;
  const std::string input_;
  std::size_t written_ = 0;
  const Clock::time_point deadline_;
  std::optional<Clock::time_point> drain_until_, stop_until_;
  int forwarded_ = 0;
  bool exited_ = false, killed_ = false, asked_to_stop_ = false;
  int status_ = 0;
  const int64_t start_ticks_;
  BoundedText out_text_, err_text_;
  ProcessResult result_;
  char buf_[65536];
};

// The child's stdin, stdout and stderr as pipes, and the child started on them.
Result<pid_t> SpawnOnPipes(const std::vector<std::string>& argv, const ProcessOptions& options, Pipe& out, Pipe& err,
                           Pipe& in) {
  if (pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0 || pipe2(in.fd, O_CLOEXEC) != 0)
    return InfraError(fmt::format("cannot create pipes: {}", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  auto spawned = options.own_reaper ? SpawnUnderReaper(argv, options, in.fd[0], out.fd[1], err.fd[1])
                                    : Spawn(argv, options.cwd, options.env, options.forward_stop_signals, actions);
  posix_spawn_file_actions_destroy(&actions);
  if (!spawned) return spawned.error();
  in.Close(0);
  out.Close(1);
  err.Close(1);
  return spawned;
}

}  // namespace

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) return UsageError("RunProcess: empty argv");
  if (!IsValidTimeout(options.timeout_s))
    return UsageError(fmt::format("timeout {} s: expected a number of seconds in (0, {}]", options.timeout_s,
                                  kMaxTimeoutS));
  Pipe out, err, in;
  auto spawned = SpawnOnPipes(argv, options, out, err, in);
  if (!spawned) return spawned.error();
  const pid_t pid = *spawned;
  // The exit is what we wait for, not the end of the output: a child the program left in
  // the background may hold its stdout for as long as it likes.
  // By syscall: glibc 2.36's <sys/pidfd.h> declares pidfd_open without C linkage.
  const int exit_fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (exit_fd < 0) {
    const int e = errno;
    KillTree(pid);
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
    Forget(pid);
    return InfraError(fmt::format("cannot watch {} (pidfd_open needs Linux 5.3): {}", argv[0], std::strerror(e)));
  }
  if (options.on_start && !options.own_reaper) options.on_start(pid);  // under a reaper: before it started the program

  // With forwarding, the stop signals are blocked except inside ppoll: one that arrives at
  // any other moment interrupts the next ppoll instead of being missed until the program ends.
  sigset_t stop_set, wait_mask;
  sigemptyset(&stop_set);
  for (int s : kStopSignalList) sigaddset(&stop_set, s);
  if (options.forward_stop_signals) pthread_sigmask(SIG_BLOCK, &stop_set, &wait_mask);
  signal(SIGPIPE, SIG_IGN);  // a child that exits before reading its stdin must not kill us
  ProcessResult result = Supervision(pid, exit_fd, out, err, in, options, &wait_mask).Run();
  if (options.forward_stop_signals) pthread_sigmask(SIG_SETMASK, &wait_mask, nullptr);
  return result;
}

}  // namespace harness

namespace harness {

std::string OutputTail(const std::string& output, std::size_t max_bytes) {
  std::string tail = output.size() > max_bytes ? "..." + output.substr(output.size() - max_bytes) : output;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  return tail;
}

std::string ProcessExit::Describe() const {
  return signal ? "killed by " + SignalName(signal) : fmt::format("exit code {}", exit_code);
}

bool ProcessGroupAlive(pid_t pgid) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto stat = ReadProcStat(static_cast<pid_t>(std::stol(name)));
    if (stat && stat->group == pgid && stat->state != 'Z' && stat->state != 'X') return true;
  }
  return false;
}

Result<std::unique_ptr<BackgroundProcess>> BackgroundProcess::Start(const std::vector<std::string>& argv,
                                                                    const BackgroundOptions& options) {
  if (argv.empty()) return UsageError("BackgroundProcess: empty argv");
  if (!(options.stop_grace_s > 0) || !IsValidTimeout(options.stop_grace_s))
    return UsageError(fmt::format("stop grace {} s: expected a number of seconds in (0, {}]", options.stop_grace_s,
                                  kMaxTimeoutS));
  auto log = BoundedLog::Open(options.output, options.log_head_bytes, options.log_tail_bytes);
  if (!log) return log.error();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, (*log)->write_fd(), 1);
  posix_spawn_file_actions_adddup2(&actions, (*log)->write_fd(), 2);
  auto spawned = Spawn(argv, options.cwd, options.env, /*own_group=*/true, actions);
  posix_spawn_file_actions_destroy(&actions);
  (*log)->CloseWriteEnd();  // the program holds it now: the log ends when its last writer does
  if (!spawned) return spawned.error();
  std::unique_ptr<BackgroundProcess> p(new BackgroundProcess());
  p->pid_ = *spawned;
  p->log_ = std::move(log).value();
  p->start_ticks_ = StartTicksOf(p->pid_);
  ++g_background_alive;
  p->stop_grace_s_ = options.stop_grace_s;
  // Not reaped until Stop: its pid, and so its group's id, cannot pass to another process.
  p->exit_fd_ = static_cast<int>(syscall(SYS_pidfd_open, p->pid_, 0));
  int guard_pipe[2] = {-1, -1};
  if (p->exit_fd_ < 0 || pipe2(guard_pipe, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    p->Stop();
    return InfraError(fmt::format("cannot watch {}: {}", argv[0], why));
  }
  const double whole = std::floor(options.stop_grace_s);
  const timespec grace{static_cast<time_t>(whole), static_cast<long>((options.stop_grace_s - whole) * 1e9)};
  {
    std::lock_guard<std::mutex> lock(g_children_mutex);
    p->guardian_pid_ = fork();
    if (p->guardian_pid_ == 0) GuardGroup(guard_pipe[0], p->pid_, grace);
    if (p->guardian_pid_ > 0) g_children.insert(p->guardian_pid_);
  }
  close(guard_pipe[0]);
  p->guardian_fd_ = guard_pipe[1];
  if (p->guardian_pid_ < 0) {
    const std::string why = std::strerror(errno);
    p->Stop();
    return InfraError(fmt::format("cannot start the guardian of {}: {}", argv[0], why));
  }
  return p;
}

BackgroundProcess::~BackgroundProcess() { Stop(); }

std::optional<ProcessExit> BackgroundProcess::WaitForExit(double timeout_s) {
  if (stopped_) return stopped_;
  if (exited_ || exit_fd_ < 0) return exited_;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(std::max(0.0, timeout_s)));
  for (;;) {
    pollfd p{exit_fd_, POLLIN, 0};
    const int n = poll(&p, 1, MillisUntil(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    siginfo_t info{};
    // WNOWAIT: read how it ended, leave it unreaped.
    if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid_)
      return std::nullopt;
    ProcessExit end;
    if (info.si_code == CLD_EXITED) end.exit_code = info.si_status;
    else end.signal = info.si_status;
    exited_ = end;
    return exited_;
  }
}

ProcessExit BackgroundProcess::Stop() {
  if (stopped_) return *stopped_;
  if (pid_ <= 0) return *(stopped_ = ProcessExit{});
  const auto begun = Clock::now();
  kill(-pid_, SIGTERM);
  // What left the group (a daemon: fork, setsid, fork) and re-parented to us is asked too.
  for (pid_t a : Adopted(start_ticks_, /*with_zombies=*/false)) kill(a, SIGTERM);
  const auto alive = [&] { return ProcessGroupAlive(pid_) || !Adopted(start_ticks_, false).empty(); };
  // Until the group is empty or the grace is over; the program's exit wakes the wait at once.
  while (alive() && SecondsSince(begun) < stop_grace_s_) {
    const double step = std::min(0.05, stop_grace_s_ - SecondsSince(begun));
    if (exited_ || exit_fd_ < 0) std::this_thread::sleep_for(std::chrono::duration<double>(step));
    else static_cast<void>(WaitForExit(step));
  }
  if (ProcessGroupAlive(pid_)) {
    if (!WaitForExit(0)) KillTree(pid_);  // its descendants too, those that left the group included
    kill(-pid_, SIGKILL);
    const auto killed = Clock::now();
    while (ProcessGroupAlive(pid_) && SecondsSince(killed) < kStopGraceS)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  Forget(pid_);
  EndAdopted(start_ticks_);  // killed with their trees, and reaped
  --g_background_alive;
  if (log_) log_dropped_ = log_->Finish(kDrainAfterExitS);
  ProcessExit end;
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  if (exit_fd_ >= 0) close(exit_fd_);
  exit_fd_ = -1;
  if (guardian_fd_ >= 0) {
    const char done = 'd';
    static_cast<void>(write(guardian_fd_, &done, 1));
    close(guardian_fd_);
    guardian_fd_ = -1;
  }
  if (guardian_pid_ > 0) {
    while (waitpid(guardian_pid_, nullptr, 0) < 0 && errno == EINTR) {}
    Forget(guardian_pid_);
  }
  guardian_pid_ = -1;
  stopped_ = end;
  return end;
}

}  // namespace harness
