// What the harness starts stays bounded and ends with the run, through the real binary: a
// launched server that daemonizes a grandchild (fork, setsid, fork) leaves nothing running;
// a chatty server's log stays under its bound and says how much it dropped; an exec-stack
// command that writes 200 MB to stdout does not grow the harness; and a token written in
// the launch config's env reaches no output and no stored byte.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"
#include "harness/util/bounded_log.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"

// A namespace of its own: the unity build puts this file beside launch_e2e_test.cc.
namespace harness::bounded_children_e2e {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::ReadPid;
using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

void WriteLaunchConfig(const fs::path& dir, Json launch) {
  const Json config = {{"format_version", 1},
                       {"stack", "openai"},
                       {"openai", {{"model", "refstack-sim"}, {"launch", std::move(launch)}}}};
  WriteFile(dir / "stack.json", config.dump(2));
}

std::vector<std::string> RunArgs(const fs::path& dir) {
  return {"run",  "--suite",  "gsm8k",    "--stack-config", (dir / "stack.json").string(),
          "--db", (dir / "h.db").string(), "--commit", "00000001",     "--format", "json"};
}

// A python3 wrapper that does `before` and then becomes `harness serve-sim --port PORT`.
Json WrappedServer(const fs::path& dir, const std::string& before) {
  WriteFile(dir / "wrapper.py", "import os, sys, time\n" + before +
                                    "\nos.execv(sys.argv[1], [sys.argv[1], 'serve-sim', '--port', sys.argv[2]])\n");
  return {"python3", (dir / "wrapper.py").string(), testing_util::kHarnessBinary, "{port}"};
}

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

TEST(BoundedChildrenE2E, ADaemonTheServerLeftBehindEndsWithTheRun) {
  TempDir dir;
  const fs::path pid_file = dir / "daemon.pid";
  // The classic daemon: fork, setsid (out of the server's process group), fork again, and
  // the middle process exits, so the daemon is nobody's child in the server's tree.
  const std::string daemonize = "if os.fork() == 0:\n"
                                "    os.setsid()\n"
                                "    if os.fork() == 0:\n"
                                "        open('" + pid_file.string() + ".tmp', 'w').write(str(os.getpid()) + '\\n')\n"
                                "        os.rename('" + pid_file.string() + ".tmp', '" + pid_file.string() + "')\n"
                                "        while True: time.sleep(1)\n"
                                "    os._exit(0)\n";
  WriteLaunchConfig(dir.path(), {{"command", WrappedServer(dir.path(), daemonize)},
                                 {"ready_timeout_s", 60},
                                 {"stop_timeout_s", 2}});
  auto r = RunHarness(RunArgs(dir.path()), {.cwd = dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("harness: stopped the server"), std::string::npos) << r.err;
  const pid_t daemon = ReadPid(pid_file);
  ASSERT_GT(daemon, 0) << "the daemon never started";
  bool alive = Alive(daemon);
  for (int i = 0; i < 100 && alive; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    alive = Alive(daemon);
  }
  EXPECT_FALSE(alive) << "the server's daemon (pid " << daemon << ") outlived the run";
  if (alive) kill(daemon, SIGKILL);
}

TEST(BoundedChildrenE2E, AChattyServersLogStaysUnderItsBoundAndSaysWhatItDropped) {
  TempDir dir;
  // 64 MiB of numbered lines before the server starts: far past the log's head and tail.
  const std::string chatter = "out = sys.stdout.buffer\n"
                              "n = 0\n"
                              "while n < 64 * 1024 * 1024:\n"
                              "    line = b'chatter line %08d ' % n + b'x' * 100 + b'\\n'\n"
                              "    out.write(line)\n"
                              "    n += len(line)\n"
                              "out.flush()\n";
  WriteLaunchConfig(dir.path(), {{"command", WrappedServer(dir.path(), chatter)},
                                 {"ready_timeout_s", 120},
                                 {"stop_timeout_s", 2}});
  auto r = RunHarness(RunArgs(dir.path()), {.cwd = dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = testing_util::StdoutJson(r);
  const fs::path log = j["context"]["server_log"].get<std::string>();
  const auto size = fs::file_size(log);
  EXPECT_LE(size, kLogHeadBytes + kLogTailBytes + 100) << "the log has no bound";
  const std::string text = ReadFile(log);
  EXPECT_EQ(text.rfind("chatter line 00000000 ", 0), 0u) << "the head is kept";
  const auto marker = text.find("\n[... ");
  ASSERT_NE(marker, std::string::npos) << "the log does not say what it dropped";
  const uint64_t dropped = std::stoull(text.substr(marker + 6));
  EXPECT_GE(dropped, (64u << 20) - kLogHeadBytes - kLogTailBytes);
  EXPECT_EQ(marker, kLogHeadBytes) << "the marker stands where the bytes were dropped";
  EXPECT_NE(text.find("http://127.0.0.1:", marker), std::string::npos) << "the tail holds the server's last output";
  EXPECT_NE(r.err.find(std::to_string(dropped) + " bytes dropped"), std::string::npos) << r.err;
}

// The sanitized build's allocator and shadow memory add to every RSS: its bound stays below
// the 200 MB the command writes, so a harness that held the output still fails it.
constexpr long kPeakBoundKb = testing_util::kAddressSanitizer ? 190 * 1024 : 120 * 1024;

TEST(BoundedChildrenE2E, ACommandWriting200MBDoesNotGrowTheHarnessAndTheMessageSaysWhatWasDropped) {
  TempDir dir;
  WriteFile(dir / "stack.json", R"({"format_version": 1, "stack": "exec", "exec": {"command": ["sh", "-c",
    "head -c 209715200 /dev/zero; echo compiler done >&2"]}})");
  // The harness's peak RSS, from python's getrusage of its child (the harness and the
  // commands it waited for, all small but the harness).
  const std::vector<std::string> argv = {
      "python3", "-c",
      "import resource, subprocess, sys\n"
      "r = subprocess.run(sys.argv[1:], capture_output=True)\n"
      "sys.stderr.buffer.write(r.stdout + r.stderr)\n"
      "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n",
      testing_util::kHarnessBinary, "run", "--db", (dir / "h.db").string(), "--commit", "abc1234", "--stack-config",
      (dir / "stack.json").string(), "--suite", "sequence_parallel", "--filter", "sequence_parallel/*_0",
      "--format", "json"};
  auto r = RunProcess(argv, {.env = {{"HARNESS_ROOT", testing_util::kSourceRoot}}, .timeout_s = 600});
  ASSERT_TRUE(r.ok()) << r.error().message;
  int exit_code = -1;
  long peak_kb = 0;
  ASSERT_EQ(std::sscanf(r->out.c_str(), "%d %ld", &exit_code, &peak_kb), 2) << r->out << r->err;
  EXPECT_EQ(exit_code, 3) << r->err;
  EXPECT_LT(peak_kb, kPeakBoundKb) << "the harness held the command's output: peak RSS " << peak_kb << " KiB";
  EXPECT_NE(r->err.find("its answer on stdout is over"), std::string::npos) << r->err.substr(0, 4000);
  EXPECT_NE(r->err.find("bytes dropped"), std::string::npos) << r->err.substr(0, 4000);
}

TEST(BoundedChildrenE2E, ATokenInTheLaunchEnvIsStoredAndPrintedNowhere) {
  TempDir dir;
  const std::string token = "hf_SecretTokenValue0123456789";
  WriteLaunchConfig(dir.path(), {{"command", {testing_util::kHarnessBinary, "serve-sim", "--port", "{port}"}},
                                 {"env", {{"HF_TOKEN", token}, {"CUDA_VISIBLE_DEVICES", "0"}}},
                                 {"ready_timeout_s", 60},
                                 {"stop_timeout_s", 5}});
  std::vector<std::string> args = RunArgs(dir.path());
  args.insert(args.end(), {"--junit", (dir / "junit.xml").string()});
  auto r = RunHarness(args, {.cwd = dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = testing_util::StdoutJson(r);
  // The names are kept (what was set), the value of an allow-listed variable too.
  const Json env = j["context"]["stack_config"]["openai"]["launch"]["env"];
  EXPECT_TRUE(env.contains("HF_TOKEN")) << j["context"].dump();
  EXPECT_EQ(env.value("CUDA_VISIBLE_DEVICES", ""), "0") << j["context"].dump();
  const std::string db = (dir / "h.db").string();
  std::vector<std::pair<std::string, std::string>> outputs = {{"stdout", r.out}, {"stderr", r.err}};
  for (const auto& format : {"html", "text", "json", "markdown"}) {
    auto report = RunHarness({"report", "--db", db, "--format", format, "--out", (dir / "report").string()});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    outputs.emplace_back(std::string("report ") + format, ReadFile(dir / "report") + report.out + report.err);
  }
  auto history = RunHarness({"history", "--db", db, "--case", "gsm8k/test_gsm8k_accuracy_0", "--format", "json"});
  outputs.emplace_back("history", history.out + history.err);
  outputs.emplace_back("junit", ReadFile(dir / "junit.xml"));
  // Every byte of the database and its side files (WAL included), whatever table holds it.
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path().filename().string().rfind("h.db", 0) == 0 && e.path().extension() != ".log")
      outputs.emplace_back(e.path().filename().string(), ReadFile(e.path()));
  for (const auto& [where, text] : outputs) EXPECT_EQ(text.find(token), std::string::npos) << "the token is in " << where;
}

}  // namespace
}  // namespace harness::bounded_children_e2e
