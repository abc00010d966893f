#include "harness/util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

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

// The parent of a process, from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold
// spaces and parentheses, so the fields are read after its last ')'). -1 when gone.
pid_t ParentOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return -1;
  return static_cast<pid_t>(std::strtol(stat.c_str() + close + 4, nullptr, 10));
}

// Every live descendant of root (Linux /proc).
std::set<pid_t> Descendants(pid_t root) {
  std::multimap<pid_t, pid_t> children;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto pid = static_cast<pid_t>(std::stol(name));
    if (const pid_t parent = ParentOf(pid); parent > 0) children.emplace(parent, pid);
  }
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
// then everything is killed. The command stays in our process group, so Ctrl-C still
// reaches it; processes that had already left the tree (their parent exited) are not found.
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

}  // namespace

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) return UsageError("RunProcess: empty argv");
  Pipe out, err, in;
  if (pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0 || pipe2(in.fd, O_CLOEXEC) != 0)
    return InfraError(fmt::format("cannot create pipes: {}", std::strerror(errno)));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());

  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool overridden = false;
    for (const auto& [k, v] : options.env)
      if (kv.compare(0, k.size() + 1, k + "=") == 0) overridden = true;
    if (!overridden) env_strings.push_back(std::move(kv));
  }
  for (const auto& [k, v] : options.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return InfraError(fmt::format("cannot run {}: {}", argv[0], std::strerror(rc)));
  in.Close(0);
  out.Close(1);
  err.Close(1);

  ProcessResult result;
  std::string input = options.stdin_data.value_or("");
  std::size_t written = 0;
  if (input.empty()) in.Close(1);
  else fcntl(in.fd[1], F_SETFL, O_NONBLOCK);
  signal(SIGPIPE, SIG_IGN);  // a child that exits before reading its stdin must not kill us

  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.timeout_s);
  char buf[65536];
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    std::vector<pollfd> fds;
    if (out.fd[0] >= 0) fds.push_back({out.fd[0], POLLIN, 0});
    if (err.fd[0] >= 0) fds.push_back({err.fd[0], POLLIN, 0});
    if (in.fd[1] >= 0) fds.push_back({in.fd[1], POLLOUT, 0});
    int wait_ms = -1;
    if (options.timeout_s > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        result.timed_out = true;
        KillTree(pid);
        break;
      }
      wait_ms = static_cast<int>(left);
    }
    int n = poll(fds.data(), fds.size(), wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (auto& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in.fd[1]) {
        ssize_t w = write(p.fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN) written = input.size();
        if (written >= input.size()) in.Close(1);
        continue;
      }
      ssize_t r = read(p.fd, buf, sizeof buf);
      if (r > 0) {
        (p.fd == out.fd[0] ? result.out : result.err).append(buf, static_cast<std::size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        if (p.fd == out.fd[0]) out.Close(0); else err.Close(0);
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace harness
