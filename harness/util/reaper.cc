#include "harness/util/reaper.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace harness {
namespace {

constexpr int kStopSignals[3] = {SIGINT, SIGTERM, SIGHUP};

// A decimal number at s (no sign), or -1 when s does not start with a digit.
long ParseNumber(const char* s, const char** end) {
  long v = -1;
  for (; *s >= '0' && *s <= '9'; ++s) v = (v < 0 ? 0 : v * 10) + (*s - '0');
  if (end) *end = s;
  return v;
}

// The parent pid in /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold spaces and
// parentheses, so the fields are read after its last ')'); -1 when the process is gone.
long ParentOf(const char* pid_text) {
  char path[64] = "/proc/";
  int n = 6;
  for (const char* p = pid_text; *p && n < 50; ++p) path[n++] = *p;
  const char tail[] = "/stat";
  for (const char* p = tail; *p; ++p) path[n++] = *p;
  path[n] = 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[1024];
  const ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got <= 0) return -1;
  buf[got] = 0;
  const char* close_paren = nullptr;
  for (const char* p = buf; *p; ++p)
    if (*p == ')') close_paren = p;
  if (!close_paren || close_paren[1] != ' ' || !close_paren[2] || close_paren[3] != ' ') return -1;
  return ParseNumber(close_paren + 4, nullptr);  // after ") S "
}

// Sends SIGKILL to every child of ours (Linux /proc, read with getdents64: no allocation).
void KillChildren() {
  const int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  const long self = getpid();
  alignas(8) char buf[8192];
  for (;;) {
    const long got = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
      uint16_t reclen = 0;
      __builtin_memcpy(&reclen, buf + at + 16, sizeof reclen);
      const char* name = buf + at + 19;
      at += reclen;
      const char* end = nullptr;
      const long pid = ParseNumber(name, &end);
      if (pid <= 0 || *end != 0) continue;
      if (ParentOf(name) == self) kill(static_cast<pid_t>(pid), SIGKILL);
    }
  }
  close(dir);
}

// Kills and reaps every child until none is left. Each kill hands us the killed process's
// children (we are their subreaper), so its whole tree goes, one generation a round.
void EndLeftovers() {
  for (;;) {
    KillChildren();
    const pid_t r = waitpid(-1, nullptr, 0);
    if (r < 0 && errno == ECHILD) return;
  }
}

// Exits as the program did: its exit code, or the signal that killed it (raised at
// ourselves with its default action, no core file).
[[noreturn]] void ExitAs(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  const struct rlimit no_core {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  kill(getpid(), sig);
  _exit(128 + sig);
}

// In the program's process, before execve: the stop signals as the caller had them (an
// ignored one stays ignored, as nohup asks), and the program started.
[[noreturn]] void StartProgram(const ReaperPlan& plan, const bool ignored[3]) {
  for (int i = 0; i < 3; ++i) {
    struct sigaction sa {};
    sa.sa_handler = ignored[i] ? SIG_IGN : SIG_DFL;
    sigaction(kStopSignals[i], &sa, nullptr);
  }
  int err = 0;
  if (plan.cwd && chdir(plan.cwd) != 0) err = errno;
  if (!err) {
    execve(plan.path, plan.argv, plan.envp);
    err = errno;
  }
  static_cast<void>(write(3, &err, sizeof err));
  _exit(127);
}

}  // namespace

void RunReaper(const ReaperPlan& plan) {
  if (plan.own_group) setpgid(0, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  prctl(PR_SET_NAME, "harness-reaper", 0, 0, 0);
  // The stop signals forwarded to the group are the program's to act on: the reaper stays
  // to end what the program leaves behind (a timeout kills it with its tree).
  bool ignored[3] = {false, false, false};
  for (int i = 0; i < 3; ++i) {
    struct sigaction old {}, ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(kStopSignals[i], &ignore, &old);
    ignored[i] = old.sa_handler == SIG_IGN;
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, nullptr);  // waitpid must see the program's end
  // 0, 1, 2 the program's; 3 the exec error pipe; 4 the go pipe; nothing else of the caller's.
  const int fds[5] = {plan.stdin_fd, plan.stdout_fd, plan.stderr_fd, plan.exec_error_fd, plan.go_fd};
  int moved[5];
  for (int i = 0; i < 5; ++i) moved[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
  for (int i = 0; i < 5; ++i) dup2(moved[i], i);
  fcntl(3, F_SETFD, FD_CLOEXEC);
  syscall(SYS_close_range, 5u, ~0u, 0u);
  char go = 0;
  ssize_t got = 0;
  while ((got = read(4, &go, 1)) < 0 && errno == EINTR) {}
  close(4);
  if (got != 1) _exit(127);  // the caller is gone before it recorded us: start nothing
  const pid_t program = fork();
  if (program == 0) StartProgram(plan, ignored);
  close(3);
  if (program < 0) _exit(127);
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(-1, &status, 0);
    if (r == program) break;
    if (r < 0 && errno != EINTR) _exit(127);
  }
  EndLeftovers();
  ExitAs(status);
}

}  // namespace harness
