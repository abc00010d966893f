// The openai stack launching its own server, through the real binary: the server is
// `harness serve-sim --port {port}` itself (a whole GSM8K run, and a bisect over a stack
// repository whose commits change the server's profile); a server that dies at start, one
// never ready, and a harness killed mid-run leave no process behind; bad launch configs are
// exit 2 naming the field.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::GroupGoneWithin;
using testing_util::ReadFile;
using testing_util::ReadPid;
using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

// A stack config whose openai section launches the given command.
fs::path WriteLaunchConfig(const fs::path& dir, Json launch) {
  const Json config = {{"format_version", 1},
                       {"stack", "openai"},
                       {"openai", {{"model", "refstack-sim"}, {"launch", std::move(launch)}}}};
  WriteFile(dir / "stack.json", config.dump(2));
  return dir / "stack.json";
}

std::vector<std::string> RunArgs(const fs::path& dir) {
  return {"run",  "--suite",  "gsm8k",    "--stack-config", (dir / "stack.json").string(),
          "--db", (dir / "h.db").string(), "--commit", "00000001",     "--format", "json"};
}

// The server logs beside dir/h.db.
std::vector<fs::path> ServerLogs(const fs::path& dir) {
  std::vector<fs::path> logs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("h.db.server-", 0) == 0) logs.push_back(e.path());
  return logs;
}

bool Listening(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return connected;
}

TEST(LaunchE2E, AWholeGsm8kRunAgainstTheServerItLaunched) {
  TempDir dir;
  WriteLaunchConfig(dir.path(), {{"command", {testing_util::kHarnessBinary, "serve-sim", "--port", "{port}"}},
                                 {"ready_timeout_s", 60},
                                 {"stop_timeout_s", 5}});
  auto r = RunHarness(RunArgs(dir.path()), {.cwd = dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = testing_util::StdoutJson(r);
  const auto cases = testing_util::RunSummaryCases(r.out);
  ASSERT_EQ(cases.count("gsm8k/test_gsm8k_accuracy_0"), 1u) << r.out;
  EXPECT_EQ(cases.at("gsm8k/test_gsm8k_accuracy_0").first, "pass");
  double answered = 0;
  for (const auto& c : j["cases"])
    for (const auto& m : c["metrics"])
      if (c["id"] == "gsm8k/test_gsm8k_accuracy_0" && m["name"] == "accuracy") answered = m["n"].get<double>();
  EXPECT_EQ(answered, 1319) << "every question answered by the launched server";

  // The server listened on the port the harness picked, and its output is in the log the
  // run's JSON names, beside the database.
  const std::string url = j["context"]["endpoint"]["base_url"];
  ASSERT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << url;
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  const fs::path log = j["context"]["server_log"].get<std::string>();
  EXPECT_TRUE(log.is_absolute());
  EXPECT_EQ(log.parent_path(), dir.path());
  EXPECT_EQ(ServerLogs(dir.path()), (std::vector<fs::path>{log}));
  EXPECT_EQ(ReadFile(log).substr(0, url.size() + 1), url + "\n") << "serve-sim prints its URL first";
  EXPECT_NE(r.err.find("harness: stopped the server"), std::string::npos) << r.err;
  EXPECT_FALSE(Listening(port)) << "the server outlived the run";
}

TEST(LaunchE2E, AServerThatExitsAtStartIsExit3WithItsOutput) {
  TempDir dir;
  WriteLaunchConfig(dir.path(),
                    {{"command", {"sh", "-c", "echo loading {model}; echo 'RuntimeError: no CUDA device' >&2; exit 1"}},
                     {"ready_timeout_s", 10}});
  const auto started = std::chrono::steady_clock::now();
  auto r = RunHarness(RunArgs(dir.path()), {.cwd = dir.path()});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("server sh exited before it was ready (exit code 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("its last output:\nloading refstack-sim\nRuntimeError: no CUDA device"), std::string::npos)
      << r.err;
  const auto logs = ServerLogs(dir.path());
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(r.err.find("(log " + logs[0].string() + ")"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(logs[0]), "loading refstack-sim\nRuntimeError: no CUDA device\n");
}

// Never ready, and deaf to SIGTERM with a child of its own: after ready_timeout_s it is
// stopped, killed once stop_timeout_s is over, and nothing of its group is left when the
// harness exits.
TEST(LaunchE2E, AServerNeverReadyIsExit3AndNothingOfItsGroupIsLeft) {
  TempDir dir;
  const std::string pid_file = (dir / "server.pid").string();
  WriteLaunchConfig(dir.path(), {{"command", {"sh", "-c",
                                              "echo $$ > " + pid_file +
                                                  "; trap '' TERM; sleep 60 & echo still loading; wait"}},
                                 {"ready_timeout_s", 1},
                                 {"stop_timeout_s", 0.5}});
  const auto started = std::chrono::steady_clock::now();
  auto r = RunHarness(RunArgs(dir.path()), {.cwd = dir.path()});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("server sh not ready within 1 s: GET http://127.0.0.1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/v1/models got no answer; stopped it"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("its last output:\nstill loading"), std::string::npos) << r.err;
  const pid_t group = ReadPid(pid_file);
  ASSERT_GT(group, 0);
  const bool alive = ProcessGroupAlive(group);
  EXPECT_FALSE(alive) << "the server's group outlived the harness";
  if (alive) kill(-group, SIGKILL);
}

// Samples stored so far in the newest run.
std::size_t StoredSamples(const fs::path& db) {
  auto store = Store::Open(db.string());
  if (!store) return 0;
  auto run = (*store)->reader().Run(0);
  if (!run) return 0;
  auto cases = (*store)->reader().Cases(run->id);
  if (!cases) return 0;
  std::size_t n = 0;
  for (const auto& c : *cases)
    if (auto samples = (*store)->reader().Samples(c.id)) n += samples->size();
  return n;
}

// A harness ended mid-run by Ctrl-C, SIGTERM or kill -9 cannot stop its server itself; the
// guardian it forked at launch does, within stop_timeout_s.
class LaunchKilledE2E : public ::testing::TestWithParam<int> {};

TEST_P(LaunchKilledE2E, AHarnessKilledMidRunLeavesNoServerRunning) {
  const int sig = GetParam();
  TempDir dir;
  auto profile = ParseJson(ReadFile(fs::path(testing_util::kSourceRoot) / "golden/sim/default.json"), "default.json");
  ASSERT_TRUE(profile.ok());
  (*profile)["latency"]["first_token_s"] = 0.2;  // 1319 questions / 64 in flight: about 4 s
  WriteFile(dir / "slow.json", profile->dump());
  const std::string pid_file = (dir / "server.pid").string();
  WriteLaunchConfig(dir.path(), {{"command", {"sh", "-c", "echo $$ > " + pid_file + "; exec \"$0\" serve-sim --port \"$1\" --profile \"$2\"",
                                              testing_util::kHarnessBinary, "{port}", (dir / "slow.json").string()}},
                                 {"ready_timeout_s", 60},
                                 {"stop_timeout_s", 3}});
  std::vector<std::string> args = RunArgs(dir.path());
  const pid_t harness = testing_util::SpawnHarness(args);
  ASSERT_GT(harness, 0);
  const pid_t group = ReadPid(pid_file);
  ASSERT_GT(group, 0);
  std::size_t streamed = 0;
  for (int i = 0; i < 600 && streamed < 64; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    streamed = StoredSamples(dir / "h.db");
  }
  ASSERT_TRUE(ProcessGroupAlive(group));
  kill(harness, sig);
  int status = 0;
  waitpid(harness, &status, 0);
  ASSERT_GE(streamed, 64u) << "the run never got under way";
  ASSERT_LT(streamed, 1319u) << "the run finished before it could be killed";
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), sig);
  const bool gone = GroupGoneWithin(group, 3 + 3);
  EXPECT_TRUE(gone) << "the server outlived the harness killed by " << SignalName(sig);
  if (!gone) kill(-group, SIGKILL);
}

INSTANTIATE_TEST_SUITE_P(Signals, LaunchKilledE2E, ::testing::Values(SIGTERM, SIGINT, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& p) { return SignalName(p.param).substr(3); });

TEST(LaunchE2E, BadLaunchConfigsAreExit2NamingTheFieldBeforeAnythingStarts) {
  TempDir dir;
  const Json command = {testing_util::kHarnessBinary, "serve-sim", "--port", "{port}"};
  const std::vector<std::pair<Json, std::string>> bad = {
      {{{"command", {testing_util::kHarnessBinary, "serve-sim", "--port", "{prot}"}}},
       "openai.launch.command[3]: unknown placeholder {prot} (did you mean 'port'?)"},
      {{{"command", command}, {"cwd", "{worktre}"}}, "openai.launch.cwd: unknown placeholder {worktre} (did you mean 'worktree'?)"},
      {{{"command", "harness serve-sim"}}, "openai.launch.command: expected an argv array"},
      {{{"command", command}, {"ready_timeout_s", -5}}, "openai.launch.ready_timeout_s: -5: must be in (0, 86400] seconds"},
      {{{"command", command}, {"stop_timeout_s", "soon"}}, "openai.launch.stop_timeout_s: expected a number"},
      {{{"command", command}, {"env", {{"CUDA_VISIBLE_DEVICES", 0}}}}, "openai.launch.env.CUDA_VISIBLE_DEVICES: expected a string"},
      {{{"command", command}, {"ready_path", "health"}}, "openai.launch.ready_path: 'health': expected a path"},
      {{{"command", command}, {"stop_timeout", 5}}, "openai.launch.stop_timeout: unknown field (did you mean 'stop_timeout_s'?)"},
  };
  for (const auto& [launch, message] : bad) {
    WriteLaunchConfig(dir.path(), launch);
    auto r = RunHarness(RunArgs(dir.path()), {.cwd = dir.path()});
    EXPECT_EQ(r.exit_code, 2) << launch.dump() << "\n" << r.err;
    EXPECT_NE(r.err.find((dir / "stack.json").string() + ": " + message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("launched the server"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(ServerLogs(dir.path()).empty());
}

// The docs' bisect one-liner over a stack repository: each commit holds the server's
// profile, the launch runs `serve-sim` in {worktree} (the bisect's worktree of the commit),
// and from commit 5 on the profile answers far worse. Outside bisect {worktree} is the
// current directory: the two nightlies that bracket the drop run in checkouts of their own.
TEST(LaunchE2E, BisectOverAStackRepositoryLaunchesEachCommitsServer) {
  TempDir dir;
  auto profile = ParseJson(ReadFile(fs::path(testing_util::kSourceRoot) / "golden/sim/default.json"), "default.json");
  ASSERT_TRUE(profile.ok());
  auto profile_at = [&](int i) {
    Json p = *profile;
    p["base_accuracy"] = i >= 5 ? 0.80 : 0.925;
    return p.dump();
  };
  const auto shas = testing_util::MakeGitRepo(dir / "repo", 8, [&](int i) {
    return std::map<std::string, std::string>{{"sim.json", profile_at(i)}};
  });
  WriteLaunchConfig(dir.path(), {{"command", {testing_util::kHarnessBinary, "serve-sim", "--port", "{port}", "--profile", "sim.json"}},
                                 {"cwd", "{worktree}"},
                                 {"ready_timeout_s", 60},
                                 {"stop_timeout_s", 5}});
  const std::string db = (dir / "h.db").string(), config = (dir / "stack.json").string();
  // The good nightly passes; the bad one fails its gate and is REGRESSED against the good one.
  for (auto [index, folder, exit_code] : {std::tuple{0, "good", 0}, {7, "bad", 1}}) {
    WriteFile(dir / folder / "sim.json", profile_at(index + 1));
    auto nightly = RunHarness({"run", "--suite", "gsm8k", "--stack-config", config, "--db", db, "--repo",
                               (dir / "repo").string(), "--commit", shas[index]},
                              {.cwd = dir / folder});
    ASSERT_EQ(nightly.exit_code, exit_code) << nightly.err;
  }
  // The command leaves the worktree before it runs the harness: {worktree} still names it
  // ($HARNESS_WORKTREE), not the folder the run happens to be in.
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[7], "--metric", "gsm8k", "--repo",
                       (dir / "repo").string(), "--db", db, "--format", "json", "--", "sh", "-c",
                       "cd / && exec \"$0\" \"$@\"", testing_util::kHarnessBinary, "run", "--suite", "gsm8k", "--db", "{db}",
                       "--commit", "{sha}", "--repo", "{worktree}", "--stack-config", config});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "culprit") << r.out;
  EXPECT_EQ(j["culprit"], shas[4]) << r.out;
  EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 1u);
}

}  // namespace
}  // namespace harness
