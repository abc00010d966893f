// For crash tests: runs a program under ptrace(2) and kills it with SIGKILL as it enters
// its N-th watched system call, before that call runs. The watched calls are the ones that
// change files (writes, syncs, renames, unlinks, truncations), so a test can stop a process
// at every step of a protocol with no hook in the program itself. A seccomp filter stops the
// program at the watched calls alone: stopping at every call (PTRACE_SYSCALL) cost a sanitized
// binary, which makes thousands of calls at start, most of a kill-at-every-step test's time.
// Linux only; header-only, for tests.
#pragma once

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace harness::testing_util {

struct TracedRun {
  bool killed = false;             // killed at the kill_at-th watched call
  int exit_code = -1;              // when it was not killed: its exit code (128 + signal when a signal ended it)
  std::vector<std::string> calls;  // the watched calls it entered, in order (for messages)
  std::string error;               // tracing itself failed (then nothing else is meaningful)
};

// The system calls that change what is on disk.
inline const std::vector<std::pair<long, const char*>>& WatchedSyscalls() {
  static const std::vector<std::pair<long, const char*>> kWatched = {
      {SYS_write, "write"},       {SYS_pwrite64, "pwrite64"},   {SYS_writev, "writev"},
      {SYS_pwritev, "pwritev"},   {SYS_pwritev2, "pwritev2"},   {SYS_fsync, "fsync"},
      {SYS_fdatasync, "fdatasync"}, {SYS_renameat, "renameat"}, {SYS_renameat2, "renameat2"},
      {SYS_unlinkat, "unlinkat"}, {SYS_ftruncate, "ftruncate"},
#ifdef SYS_rename
      {SYS_rename, "rename"},     {SYS_unlink, "unlink"},
#endif
  };
  return kWatched;
}

inline const char* WatchedSyscallName(long nr) {
  for (const auto& [n, name] : WatchedSyscalls())
    if (n == nr) return name;
  return nullptr;
}

#if defined(__x86_64__)
inline constexpr unsigned kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr unsigned kAuditArch = AUDIT_ARCH_AARCH64;
#endif

// The filter the child installs before it execs: a watched call (of this architecture's
// calling convention) stops the process for its tracer (SECCOMP_RET_TRACE), every other call
// runs untouched. Inherited by the program's threads and children; a call that stops a
// process nobody traces fails with ENOSYS, so the tracer follows children too.
inline bool InstallWatchFilter() {
  std::vector<sock_filter> prog = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
  };
  for (const auto& watched : WatchedSyscalls()) {
    prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(watched.first), 0, 1));
    prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE));
  }
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  const sock_fprog fprog{static_cast<unsigned short>(prog.size()), prog.data()};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0;
}

// The child's side of RunKilledAtSyscall: its output to out and err, env added, then
// stopped for the tracer before argv runs.
[[noreturn]] inline void ExecTraced(const std::vector<std::string>& argv,
                                    const std::vector<std::pair<std::string, std::string>>& env,
                                    const std::filesystem::path& out, const std::filesystem::path& err) {
  const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(126);
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  // LeakSanitizer stops the world with ptrace at exit, which a traced process cannot.
  const char* asan = std::getenv("ASAN_OPTIONS");
  setenv("ASAN_OPTIONS", (std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "detect_leaks=0").c_str(), 1);
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(125);
  raise(SIGSTOP);  // the parent sets its options before the filter can stop this process
  if (!InstallWatchFilter()) _exit(124);
  execv(args[0], args.data());
  _exit(127);
}

// The tracer's loop: follows pid, its threads and its child processes from its exec on,
// records each watched call the program's own threads enter (a child process's run
// uncounted) and kills the program at the kill_at-th; returns when no traced thread is left.
inline void TraceUntilExit(pid_t pid, int kill_at, TracedRun& r) {
  int status = 0;
  std::set<pid_t> program = {pid};  // pid and its threads: the calls that count
  std::set<pid_t> known = {pid};    // every traced thread that has had its first stop
  bool started = false;             // watched calls count from the program's exec on
  ptrace(PTRACE_CONT, pid, nullptr, nullptr);
  for (;;) {
    const pid_t t = waitpid(-1, &status, __WALL);
    if (t < 0) {
      if (errno == EINTR) continue;
      break;  // no traced thread left
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (t == pid && !r.killed) r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      known.erase(t);
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    int deliver = 0;
    if (sig == SIGTRAP && event == PTRACE_EVENT_SECCOMP) {
      __ptrace_syscall_info info{};
      if (started && program.count(t) && ptrace(PTRACE_GET_SYSCALL_INFO, t, sizeof info, &info) > 0 &&
          info.op == PTRACE_SYSCALL_INFO_SECCOMP) {
        if (const char* name = WatchedSyscallName(static_cast<long>(info.seccomp.nr))) {
          r.calls.push_back(name);
          if (static_cast<int>(r.calls.size()) == kill_at) {
            r.killed = true;
            kill(pid, SIGKILL);  // stopped before the call: it never runs
            continue;
          }
        }
      }
    } else if (sig == SIGTRAP && event == PTRACE_EVENT_CLONE) {
      unsigned long thread = 0;  // a thread of the one it came from (glibc's threads)
      if (program.count(t) && ptrace(PTRACE_GETEVENTMSG, t, nullptr, &thread) == 0) program.insert(static_cast<pid_t>(thread));
    } else if (sig == SIGTRAP && event != 0) {
      if (event == PTRACE_EVENT_EXEC && t == pid) started = true;
    } else if (sig == SIGSTOP && !known.count(t)) {
      known.insert(t);  // a new thread's or child's first stop
    } else {
      deliver = sig;  // a signal for the program: pass it on
    }
    ptrace(PTRACE_CONT, t, nullptr, reinterpret_cast<void*>(static_cast<long>(deliver)));
  }
}

// Runs argv (argv[0] a path) with env added to this process's environment, stdout and
// stderr to the files out and err, and kills it as it enters its kill_at-th watched call
// (0: never; then calls counts them all). The program's threads count; its child processes
// run to their end, their calls uncounted.
inline TracedRun RunKilledAtSyscall(const std::vector<std::string>& argv,
                                    const std::vector<std::pair<std::string, std::string>>& env, int kill_at,
                                    const std::filesystem::path& out, const std::filesystem::path& err) {
  TracedRun r;
  const pid_t pid = fork();
  if (pid < 0) {
    r.error = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) ExecTraced(argv, env, out, err);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
    r.error = "the child did not stop before exec (is ptrace allowed here?)";
    return r;
  }
  const long options = PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                       PTRACE_O_TRACEEXEC | PTRACE_O_TRACESECCOMP;
  if (ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(options)) != 0) {
    r.error = std::string("PTRACE_SETOPTIONS: ") + std::strerror(errno);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return r;
  }
  TraceUntilExit(pid, kill_at, r);
  return r;
}

}  // namespace harness::testing_util
