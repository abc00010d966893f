// Helpers for tests: temporary folders, running the built harness binary, writing files.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <stdexcept>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "harness/testing/test_paths.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"

namespace harness::testing_util {

// Whether this build runs under AddressSanitizer (the asan preset; GCC and clang spell it
// differently). Only what ASan itself changes may depend on it: measurements such as peak
// RSS, and a process left without file descriptors (the sanitizers' runtime needs its own).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "harness-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& p) const { return path_ / p; }

 private:
  std::filesystem::path path_;
};

inline void WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs the real binary (kHarnessBinary) with args; HARNESS_ROOT points at the source tree
// unless extra.env names another (a copy of suites/ and golden/ a test may change). The CI
// engines' pipeline ids (the default of `run --nightly`) are emptied unless extra.env sets
// them, so the tests run the same inside a CI job.
inline ProcessResult RunHarness(const std::vector<std::string>& args, const ProcessOptions& extra = {}) {
  std::vector<std::string> argv = {kHarnessBinary};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o = extra;
  const auto given = [&](const char* name) {
    for (const auto& [k, v] : o.env)
      if (k == name) return true;
    return false;
  };
  for (const char* ci : {"CI_PIPELINE_ID", "GITHUB_RUN_ID"})
    if (!given(ci)) o.env.emplace_back(ci, "");
  if (!given("HARNESS_ROOT")) o.env.emplace_back("HARNESS_ROOT", kSourceRoot);
  if (o.timeout_s == 0) o.timeout_s = 300;
  auto r = RunProcess(argv, o);
  return r.ok() ? *r : ProcessResult{};
}

// Starts the real binary in the background, as a user's shell would start it: stop signals
// at their defaults (a test runner started with `&` ignores SIGINT, which the child would
// inherit), stdout and stderr to the files named (/dev/null unless given), for tests that
// kill it mid-run or read what it said. Returns the child's pid (-1 if fork failed).
inline pid_t SpawnHarness(const std::vector<std::string>& args, const std::filesystem::path& out = "/dev/null",
                          const std::filesystem::path& err = "/dev/null") {
  std::vector<std::string> argv_strings = {kHarnessBinary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  pid_t pid = fork();
  if (pid != 0) return pid;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
  setenv("HARNESS_ROOT", kSourceRoot, 1);
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
  execv(argv[0], argv.data());
  _exit(127);
}

// The pid a process wrote to file, one line (a launched server's pid is its process group's
// id), waiting up to 15 s for the line. -1 when none came.
inline pid_t ReadPid(const std::filesystem::path& file) {
  for (int i = 0; i < 1500; ++i) {
    const std::string text = ReadFile(file);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    usleep(10000);
  }
  return -1;
}

// Whether no process of the group is left within `seconds`.
inline bool GroupGoneWithin(pid_t group, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (ProcessGroupAlive(group)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    usleep(20000);
  }
  return true;
}

// The exit status (waitpid's) of pid within limit, else -1 (and pid is killed and reaped).
inline int WaitForExit(pid_t pid, std::chrono::milliseconds limit) {
  int status = 0;
  for (auto until = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < until;) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

// A background `harness serve-sim`, its stdout on a pipe so the URL (first line) can be read.
class SimProcess {
 public:
  explicit SimProcess(const std::vector<std::string>& args) {
    std::vector<std::string> argv_strings = {kHarnessBinary, "serve-sim"};
    argv_strings.insert(argv_strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Built before fork: the child only calls async-signal-safe functions.
    std::string root = std::string("HARNESS_ROOT=") + kSourceRoot;
    std::vector<char*> envp;
    for (char** e = environ; *e; ++e)
      if (std::string_view(*e).substr(0, 13) != "HARNESS_ROOT=") envp.push_back(*e);
    envp.push_back(root.data());
    envp.push_back(nullptr);
    int fd[2];
    if (pipe2(fd, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fd[1], 1);
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 2);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(fd[1]);
    out_ = fd[0];
    // The first line, or whatever came before the process gave up (15 s at most).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    std::string line;
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char buf[256];
      ssize_t n = read(out_, buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    url_ = line.substr(0, line.find('\n'));
  }
  ~SimProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) close(out_);
  }
  SimProcess(const SimProcess&) = delete;
  SimProcess& operator=(const SimProcess&) = delete;
  const std::string& url() const { return url_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then the exit code (-signal when a signal ended it, -100 when it did not stop).
  int Terminate() {
    if (pid_ <= 0) return -100;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 200; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      }
      usleep(25000);
    }
    return -100;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string url_;
};

// The cases of `harness run --format json` stdout: case id -> (status, message); empty
// when stdout is not that JSON.
inline std::map<std::string, std::pair<std::string, std::string>> RunSummaryCases(const std::string& stdout_text) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  auto j = ParseJson(stdout_text, "harness run stdout");
  if (!j.ok() || !j->contains("cases")) return out;
  for (const auto& c : (*j)["cases"]) out[c["id"]] = {c["status"], c["message"]};
  return out;
}

// The lines of text holding needle, in order.
inline std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

// A command's stdout as JSON (null when it is not JSON: the assertions on it then fail).
inline Json StdoutJson(const ProcessResult& r) {
  auto j = ParseJson(r.out, "stdout");
  return j.ok() ? *j : Json();
}

// Lines of `git worktree list`: 1 when every bisect worktree was removed.
inline size_t WorktreeCount(const std::filesystem::path& repo) {
  auto r = RunProcess({"git", "-C", repo.string(), "worktree", "list"});
  if (!r.ok()) return 0;
  size_t n = 0;
  for (char c : r->out) n += c == '\n';
  return n;
}

// A copy of the source tree's suites/ and golden/ folders (without the data sets) in dir,
// for tests that change expectations: run the binary with HARNESS_ROOT=dir.
inline void CopyDataRoot(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const fs::path src = kSourceRoot;
  fs::create_directories(dir / "suites");
  for (const auto& e : fs::directory_iterator(src / "suites"))
    if (e.path().extension() == ".json") fs::copy_file(e.path(), dir / "suites" / e.path().filename());
  fs::create_directories(dir / "golden");
  for (const auto& e : fs::directory_iterator(src / "golden")) {
    if (e.path().filename() == "gsm8k") continue;
    fs::copy(e.path(), dir / "golden" / e.path().filename(), fs::copy_options::recursive);
  }
  fs::create_directory_symlink(src / "golden" / "gsm8k", dir / "golden" / "gsm8k");
}

// A selftest suite table (suites/selftest_suite.cc) whose test_outcome rows are `rows`.
// The shipped GSM8K suite table with its default stand-in profile swapped (for example
// "sim/noisy.json"), written to dir/suites/gsm8k.json; returns that suites folder.
inline std::filesystem::path WriteGsm8kTableWithProfile(const std::filesystem::path& dir, const std::string& profile) {
  const std::filesystem::path src = std::filesystem::path(kSourceRoot) / "suites" / "gsm8k.json";
  auto table = ParseJson(ReadFile(src), src.string());
  if (!table.ok()) throw std::runtime_error(table.error().message);
  (*table)["defaults"]["sim_profile"] = profile;
  WriteFile(dir / "suites" / "gsm8k.json", table->dump(2));
  return dir / "suites";
}

inline std::string SelftestTable(const std::string& rows) {
  return R"({"format_version": 2, "suite": "selftest", "nightly": true,
 "params": {"outcome": {"type": "string"}, "metric": {"type": "number"}, "samples": {"type": "int"},
            "ops": {"type": "int"}, "sleep_ms": {"type": "int"}, "report_baseline": {"type": "bool"},
            "note": {"type": "string"}, "state_file": {"type": "string"}},
 "tests": {"test_outcome": [)" + rows + "]}}";
}

// A git repository with `n` commits (subjects "commit 1".."commit n"); returns shas oldest
// first. files(i), when given, names more files (path -> content) commit i writes. One
// `git fast-import` writes every commit (three git processes a commit cost a 64-commit
// history about a second); the work tree then holds the last commit.
// subject(i), when given, is commit i's subject instead.
inline std::vector<std::string> MakeGitRepo(
    const std::filesystem::path& dir, int n,
    const std::function<std::map<std::string, std::string>(int)>& files = nullptr,
    const std::function<std::string(int)>& subject = nullptr) {
  ProcessOptions o{.cwd = dir};
  std::filesystem::create_directories(dir);
  (void)RunProcess({"git", "init", "-q", "-b", "main"}, o);
  std::string stream;
  auto data = [&](const std::string& bytes) { stream += "data " + std::to_string(bytes.size()) + "\n" + bytes + "\n"; };
  for (int i = 1; i <= n; ++i) {
    stream += "commit refs/heads/main\n"
              "author t <t@example.invalid> 1767225600 +0000\n"
              "committer t <t@example.invalid> 1767225600 +0000\n";
    data((subject ? subject(i) : "commit " + std::to_string(i)) + "\n");
    std::map<std::string, std::string> changed = {{"file.txt", std::to_string(i)}};
    if (files)
      for (auto& [path, content] : files(i)) changed[path] = std::move(content);
    for (const auto& [path, content] : changed) {
      stream += "M 100644 inline " + path + "\n";
      data(content);
    }
  }
  o.stdin_data = stream;
  (void)RunProcess({"git", "fast-import", "--quiet"}, o);
  o.stdin_data.reset();
  (void)RunProcess({"git", "reset", "-q", "--hard", "main"}, o);
  auto r = RunProcess({"git", "rev-list", "--reverse", "main"}, o);
  std::vector<std::string> shas;
  std::istringstream lines(r.ok() ? r->out : "");
  for (std::string sha; std::getline(lines, sha);) shas.push_back(sha);
  return shas;
}

// A repository whose history is not linear: main "commit 1", "commit 2"; a branch from
// commit 1 with "side 1", "side 2"; main merges it ("merge side", first parent commit 2)
// and goes on with "commit 3". Returns the shas in that order: c1, c2, s1, s2, merge, c3.
// files(name), when given, names more files the commit with that subject writes.
inline std::vector<std::string> MakeGitRepoWithMerge(
    const std::filesystem::path& dir,
    const std::function<std::map<std::string, std::string>(const std::string&)>& files = nullptr) {
  ProcessOptions o{.cwd = dir,
                   .env = {{"GIT_AUTHOR_NAME", "t"}, {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
                           {"GIT_COMMITTER_NAME", "t"}, {"GIT_COMMITTER_EMAIL", "t@example.invalid"},
                           {"GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z"}, {"GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z"}}};
  std::filesystem::create_directories(dir);
  auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "git");
    auto r = RunProcess(args, o);
    std::string out = r.ok() ? r->out : "";
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  };
  auto commit = [&](const std::string& subject, const std::string& file) {
    WriteFile(dir / file, subject);
    if (files)
      for (const auto& [path, content] : files(subject)) WriteFile(dir / path, content);
    git({"add", "-A"});
    git({"commit", "-q", "-m", subject});
    return git({"rev-parse", "HEAD"});
  };
  git({"init", "-q", "-b", "main"});
  std::vector<std::string> shas;
  shas.push_back(commit("commit 1", "main.txt"));
  shas.push_back(commit("commit 2", "main.txt"));
  git({"checkout", "-q", "-b", "side", shas[0]});
  shas.push_back(commit("side 1", "side.txt"));
  shas.push_back(commit("side 2", "side.txt"));
  git({"checkout", "-q", "main"});
  git({"merge", "-q", "--no-ff", "--no-edit", "-m", "merge side", "side"});
  if (files)
    for (const auto& [path, content] : files("merge side")) {
      WriteFile(dir / path, content);
      git({"add", "-A"});
      git({"commit", "-q", "--amend", "--no-edit"});
    }
  shas.push_back(git({"rev-parse", "HEAD"}));
  shas.push_back(commit("commit 3", "main.txt"));
  return shas;
}

}  // namespace harness::testing_util
