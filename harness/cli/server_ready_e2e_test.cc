// Servers that are not ready yet (issue 33), through the real binary: a launched server that
// answers 404 and then 503 on its readiness path before it serves (the harness waits, then
// runs); one that answers 503 until ready_timeout_s (exit 3 naming the last answer, its group
// killed although it ignores SIGTERM); one that ignores SIGTERM when the run ends, with
// ready_timeout_s far above stop_timeout_s (killed after stop_timeout_s). The server is a
// small Python HTTP server on the port the harness picked, which then runs the harness's own
// `serve-sim` on that port.
#include <signal.h>

#include <chrono>

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"

namespace harness {
namespace server_ready_e2e {

namespace fs = std::filesystem;
using testing_util::GroupGoneWithin;
using testing_util::ReadFile;
using testing_util::ReadPid;
using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

// argv: port, harness binary, pid file, record file, plan. The plan is the statuses to answer,
// one request each, then "serve" (close the port and become `harness serve-sim` on it),
// "serve-deaf" (serve-sim as a child, this process ignoring SIGTERM until killed) or
// "forever" (answer the last status to every later request). Every answer is appended to the
// record file as "STATUS PATH". Its first line of output holds a terminal escape.
constexpr char kServer[] = R"(import http.server, os, signal, subprocess, sys, time
port, harness, pid_file, record, plan = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].split(",")
if os.environ.get("DEAF_TO_SIGTERM"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(pid_file, "w") as f:
    f.write(f"{os.getpid()}\n")
statuses, last = [int(s) for s in plan[:-1]], plan[-1]
answered = []
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        status = statuses[len(answered)] if len(answered) < len(statuses) else statuses[-1]
        answered.append(status)
        with open(record, "a") as f:
            f.write(f"{status} {self.path}\n")
        body = b'{"error": "loading <b>model</b> | `weights` \x1b[31m"}'
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", port), Handler)
print("loading weights \x1b]0;pwned\x07 <b>x</b>", flush=True)
while last == "forever" or len(answered) < len(statuses):
    server.handle_request()
server.server_close()
sim = [harness, "serve-sim", "--port", str(port)]
if last == "serve":
    os.execv(harness, sim)
subprocess.Popen(sim)
while True:
    time.sleep(1)
)";

struct ServerReadyE2E : ::testing::Test {
  TempDir dir;
  std::string pid_file = (dir / "server.pid").string();
  std::string record = (dir / "answers.txt").string();

  // A stack config launching kServer with the plan and timeouts; the run evaluates five
  // questions (a partial run: readiness, not accuracy, is what is tested).
  std::vector<std::string> RunArgs(const std::string& plan, double ready_timeout_s, double stop_timeout_s,
                                   bool deaf_to_sigterm) {
    WriteFile(dir / "server.py", kServer);
    WriteFile(dir / "questions.txt", "0\n1\n2\n3\n4\n");
    Json launch = {{"command", {"python3", (dir / "server.py").string(), "{port}", testing_util::kHarnessBinary, pid_file, record, plan}},
                   {"ready_timeout_s", ready_timeout_s},
                   {"stop_timeout_s", stop_timeout_s}};
    if (deaf_to_sigterm) launch["env"] = {{"DEAF_TO_SIGTERM", "1"}};
    const Json config = {{"format_version", 1}, {"stack", "openai"}, {"openai", {{"model", "refstack-sim"}, {"launch", launch}}}};
    WriteFile(dir / "stack.json", config.dump(2));
    return {"run",      "--suite",  "gsm8k", "--stack-config", (dir / "stack.json").string(), "--questions",
            (dir / "questions.txt").string(), "--db",  (dir / "h.db").string(), "--commit", "00000001",
            "--format", "json"};
  }
};

// The number of questions the run's gsm8k accuracy case answered (-1 when absent).
int64_t Answered(const ProcessResult& r) {
  const Json j = testing_util::StdoutJson(r);
  if (!j.is_object() || !j.contains("cases")) return -1;
  for (const auto& c : j["cases"])
    if (c["id"] == "gsm8k/test_gsm8k_accuracy_0")
      for (const auto& m : c["metrics"])
        if (m["name"] == "accuracy") return m["n"].get<int64_t>();
  return -1;
}

TEST_F(ServerReadyE2E, A404ThenA503AreWaitedForAndTheRunGoesOnOnce200) {
  auto args = RunArgs("404,404,503,503,serve", 60, 5, false);
  auto r = RunHarness(args, {.cwd = dir.path(), .timeout_s = 60});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(ReadFile(record), "404 /v1/models\n404 /v1/models\n503 /v1/models\n503 /v1/models\n")
      << "each answer before 200 was a probe of the readiness path, and the harness probed again";
  EXPECT_EQ(Answered(r), 5) << r.out;
  EXPECT_NE(r.err.find("harness: the server is ready at http://127.0.0.1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("harness: stopped the server"), std::string::npos) << r.err;
  const pid_t group = ReadPid(pid_file);
  ASSERT_GT(group, 0);
  EXPECT_TRUE(GroupGoneWithin(group, 2)) << "the server outlived the run";
  if (ProcessGroupAlive(group)) kill(-group, SIGKILL);
}

// 503 until ready_timeout_s (6 s: a loaded machine may take seconds to start Python), deaf to
// SIGTERM: exit 3 naming the readiness URL, the last answer and the server's output with its
// escape made visible, and nothing of its group is left when the harness exits.
TEST_F(ServerReadyE2E, AServerAnswering503UntilTheTimeoutIsExit3AndKilled) {
  auto args = RunArgs("503,forever", 6, 0.5, true);
  const auto started = std::chrono::steady_clock::now();
  auto r = RunHarness(args, {.cwd = dir.path(), .timeout_s = 60});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(15));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("server python3 not ready within 6 s: GET http://127.0.0.1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/v1/models answered HTTP 503; stopped it"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("its last output:\nloading weights \\x1b]0;pwned\\x07 <b>x</b>"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "the server's control characters reach the terminal";
  EXPECT_EQ(ReadFile(record).rfind("503 /v1/models\n", 0), 0u) << ReadFile(record);
  EXPECT_EQ(r.out.find("test_gsm8k"), std::string::npos) << "no case ran: " << r.out;
  const pid_t group = ReadPid(pid_file);
  ASSERT_GT(group, 0);
  const bool alive = ProcessGroupAlive(group);
  EXPECT_FALSE(alive) << "the server's group outlived the harness";
  if (alive) kill(-group, SIGKILL);
}

// Ready at once, then deaf to SIGTERM when the run ends: with ready_timeout_s at 600 s and
// stop_timeout_s at 1 s the harness kills it after about a second, not ten minutes.
TEST_F(ServerReadyE2E, AServerDeafToSigtermIsKilledAfterStopTimeoutNotReadyTimeout) {
  auto args = RunArgs("serve-deaf", 600, 1, true);
  const auto started = std::chrono::steady_clock::now();
  auto r = RunHarness(args, {.cwd = dir.path(), .timeout_s = 40});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(Answered(r), 5) << r.out;
  EXPECT_LT(seconds, 20) << "the stop waited for more than stop_timeout_s";
  EXPECT_NE(r.err.find("harness: stopped the server"), std::string::npos) << r.err;
  const pid_t group = ReadPid(pid_file);
  ASSERT_GT(group, 0);
  const bool alive = ProcessGroupAlive(group);
  EXPECT_FALSE(alive) << "the server's group outlived the harness";
  if (alive) kill(-group, SIGKILL);
}

}  // namespace server_ready_e2e
}  // namespace harness
