#include "runners/openai/server_launch.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include <gtest/gtest.h>

#include "harness/testing/in_a_child.h"
#include "harness/testing/test_util.h"
#include "runners/openai/http_get.h"
#include "runners/openai/openai_config.h"

namespace harness::openai {
namespace {

using testing_util::ReadFile;
using testing_util::TempDir;

StackConfig OpenAiConfig(const Json& openai) {
  StackConfig c;
  c.stack = "openai";
  c.raw = Json{{"stack", "openai"}, {"openai", openai}};
  return c;
}

Json Launching(const Json& launch) { return Json{{"model", "M"}, {"launch", launch}}; }

std::string ParseError(const Json& openai) {
  auto s = ParseOpenAiSettings(OpenAiConfig(openai), "cfg.json");
  if (s.ok()) return "(parsed)";
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  return s.error().message;
}

TEST(OpenAiConfig, LaunchDefaultsAndTheBaseUrlItImplies) {
  auto s = ParseOpenAiSettings(OpenAiConfig(Launching({{"command", {"serve", "--port", "{port}"}}})), "cfg.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s->launch);
  EXPECT_EQ(s->base_url, "http://127.0.0.1:{port}");
  EXPECT_EQ(s->launch->ready_path, "/v1/models");
  EXPECT_EQ(s->launch->ready_timeout_s, 600);
  EXPECT_EQ(s->launch->stop_timeout_s, 30);
  // Without launch the base URL is where the server is, and required.
  auto plain = ParseOpenAiSettings(OpenAiConfig({{"base_url", "http://h:1"}, {"model", "M"}}), "cfg.json");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->launch);
  EXPECT_NE(ParseError({{"model", "M"}}).find("cfg.json: openai.base_url: missing"), std::string::npos);
}

TEST(OpenAiConfig, BadLaunchFieldsAreUsageErrorsNamingTheField) {
  const Json cmd = {"serve", "{port}"};
  EXPECT_EQ(ParseError(Launching({{"command", cmd}, {"ready_timeout_s", -1}})),
            "cfg.json: openai.launch.ready_timeout_s: -1: must be in (0, 86400] seconds");
  EXPECT_EQ(ParseError(Launching({{"command", cmd}, {"stop_timeout_s", 0}})),
            "cfg.json: openai.launch.stop_timeout_s: 0: must be in (0, 86400] seconds");
  EXPECT_EQ(ParseError(Launching({{"command", cmd}, {"stop_timeout_s", 1e300}})),
            "cfg.json: openai.launch.stop_timeout_s: 1e+300: must be in (0, 86400] seconds");
  EXPECT_EQ(ParseError(Launching({{"command", cmd}, {"stop_timeout_s", "30"}})),
            "cfg.json: openai.launch.stop_timeout_s: expected a number");
  EXPECT_NE(ParseError(Launching({{"command", "python3 -m sglang.launch_server"}}))
                .find("cfg.json: openai.launch.command: expected an argv array"),
            std::string::npos);
  EXPECT_EQ(ParseError(Launching({{"command", Json::array()}})), "cfg.json: openai.launch.command: must name a program");
  EXPECT_EQ(ParseError(Launching({{"command", cmd}, {"env", {{"CUDA_VISIBLE_DEVICES", 0}}}})),
            "cfg.json: openai.launch.env.CUDA_VISIBLE_DEVICES: expected a string");
  // A name is refused when it is empty, and when it holds '=' (each alone).
  EXPECT_EQ(ParseError(Launching({{"command", cmd}, {"env", {{"", "1"}}}})),
            "cfg.json: openai.launch.env.: not a variable name");
  EXPECT_EQ(ParseError(Launching({{"command", cmd}, {"env", {{"A=B", "1"}}}})),
            "cfg.json: openai.launch.env.A=B: not a variable name");
  EXPECT_NE(ParseError(Launching({{"command", cmd}, {"ready_path", "v1/models"}}))
                .find("cfg.json: openai.launch.ready_path: 'v1/models': expected a path"),
            std::string::npos);
  EXPECT_EQ(ParseError(Launching({{"command", cmd}, {"ready_pth", "/health"}})),
            "cfg.json: openai.launch.ready_pth: unknown field (did you mean 'ready_path'?)");
  EXPECT_EQ(ParseError({{"model", "M"}, {"launch", {"serve"}}}), "cfg.json: openai.launch: expected an object");
  // The section itself: a URL written where the object belongs, an array, a number, null.
  for (const Json& section : {Json("http://127.0.0.1:30000"), Json::array({"base_url"}), Json(30000), Json(nullptr)})
    EXPECT_EQ(ParseError(section), "cfg.json: openai: expected an object") << section.dump();
  EXPECT_EQ(ParseError({{"model", "M"}, {"lanuch", {{"command", cmd}}}}),
            "cfg.json: openai.lanuch: unknown field (did you mean 'launch'?)");
}

// The endpoint's own fields: each read into its setting, and each of the wrong type a usage
// error naming it (a key's variable name read as a number must never reach the client).
TEST(OpenAiConfig, EachEndpointFieldIsReadAndOneOfTheWrongTypeIsNamed) {
  auto s = ParseOpenAiSettings(
      OpenAiConfig({{"base_url", "http://h:1/v1"}, {"model", "M 1"}, {"chat", true}, {"api_key_env", "MY_KEY"}}),
      "cfg.json");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->base_url, "http://h:1/v1");
  EXPECT_EQ(s->model, "M 1");
  EXPECT_TRUE(s->chat);
  EXPECT_EQ(s->api_key_env, "MY_KEY");
  auto defaults = ParseOpenAiSettings(OpenAiConfig({{"base_url", "http://h:1"}, {"model", "M"}}), "cfg.json");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_FALSE(defaults->chat);
  EXPECT_EQ(defaults->api_key_env, "");
  const Json good = {{"base_url", "http://h:1"}, {"model", "M"}, {"chat", false}, {"api_key_env", "K"}};
  for (const auto& [field, wrong, expected] :
       {std::tuple{"base_url", Json(8080), "expected a string"}, {"model", Json::array({"M"}), "expected a string"},
        {"chat", Json("yes"), "expected true or false"}, {"api_key_env", Json(7), "expected a string"},
        {"api_key_env", Json(nullptr), "expected a string"}}) {
    Json bad = good;
    bad[field] = wrong;
    const std::string said = ParseError(bad);
    EXPECT_NE(said.find(std::string("cfg.json: openai.") + field + ": " + expected), std::string::npos)
        << field << " = " << wrong.dump() << ": " << said;
  }
}

TEST(OpenAiConfig, UnknownPlaceholdersNameTheNearestKnownOne) {
  EXPECT_EQ(ParseError(Launching({{"command", {"serve", "--port", "{prot}"}}})),
            "cfg.json: openai.launch.command[2]: unknown placeholder {prot} (did you mean 'port'?) (known: model, port, "
            "worktree)");
  EXPECT_NE(ParseError(Launching({{"command", {"serve"}}, {"cwd", "{worktre}/python"}}))
                .find("openai.launch.cwd: unknown placeholder {worktre} (did you mean 'worktree'?)"),
            std::string::npos);
  EXPECT_NE(ParseError(Launching({{"command", {"serve"}}, {"env", {{"MODEL", "{modle}"}}}}))
                .find("openai.launch.env.MODEL: unknown placeholder {modle} (did you mean 'model'?)"),
            std::string::npos);
  Json with_url = Launching({{"command", {"serve"}}});
  with_url["base_url"] = "http://127.0.0.1:{porr}/v1";
  EXPECT_NE(ParseError(with_url).find("openai.base_url: unknown placeholder {porr} (did you mean 'port'?)"),
            std::string::npos);
  // A URL with an empty host names no server, launched or not; a one-letter host is a host.
  for (const std::string url : {"http:///v1", "http://", "https:///"}) {
    const std::string said = "openai.base_url: '" + url + "' has no host after '://'";
    EXPECT_NE(ParseError({{"base_url", url}, {"model", "M"}}).find(said), std::string::npos) << url;
    with_url["base_url"] = url;
    EXPECT_NE(ParseError(with_url).find(said), std::string::npos) << url;
  }
  for (const std::string url : {"http://h/v1", "127.0.0.1:30000/v1"})
    EXPECT_TRUE(ParseOpenAiSettings(OpenAiConfig({{"base_url", url}, {"model", "M"}}), "cfg.json").ok()) << url;
}

LaunchSettings Settings(std::vector<std::string> command) {
  LaunchSettings s;
  s.command = std::move(command);
  s.ready_timeout_s = 5;
  s.stop_timeout_s = 1;
  return s;
}

// The placeholders, cwd and env reach the command; a server that exits before it is ready
// is an infrastructure error with its exit and its output's tail.
TEST(LaunchedServer, PlaceholdersCwdAndEnvReachTheCommandAndAnEarlyExitIsExit3WithItsOutput) {
  TempDir dir;
  std::filesystem::create_directories(dir / "tree" / "sub");
  LaunchSettings s = Settings({"sh", "-c", "echo \"model=$1 port=$2 worktree=$3 cwd=$(pwd) env=$X\"; exit 4", "sh",
                               "{model}", "{port}", "{worktree}"});
  s.cwd = "{worktree}/sub";
  s.env = {{"X", "{model}@{port}"}};
  setenv("HARNESS_WORKTREE", (dir / "tree").c_str(), 1);
  auto r = LaunchedServer::Launch(s, {"http://127.0.0.1:{port}", "Org/M", ""}, dir / "server.log");
  unsetenv("HARNESS_WORKTREE");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kInfra);
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("server sh exited before it was ready (exit code 4"), std::string::npos) << m;
  const std::string tree = (dir / "tree").string();
  EXPECT_NE(m.find(" worktree=" + tree + " cwd=" + tree + "/sub env=Org/M@"), std::string::npos) << m;
  EXPECT_NE(m.find("log " + (dir / "server.log").string()), std::string::npos) << m;
  EXPECT_NE(ReadFile(dir / "server.log").find("model=Org/M port="), std::string::npos);
}

TEST(LaunchedServer, TheLogIsNewAndOnlyTheTailOfTheOutputIsQuoted) {
  TempDir dir;
  testing_util::WriteFile(dir / "taken.log", "someone's file\n");
  auto taken = LaunchedServer::Launch(Settings({"true"}), {"http://127.0.0.1:{port}", "M", ""}, dir / "taken.log");
  ASSERT_FALSE(taken.ok());
  EXPECT_NE(taken.error().message.find("cannot create the server log"), std::string::npos);
  EXPECT_EQ(ReadFile(dir / "taken.log"), "someone's file\n");
  // 5000 bytes of output: the message quotes the last 2000, the log keeps everything.
  auto noisy = LaunchedServer::Launch(Settings({"sh", "-c", "head -c 5000 /dev/zero | tr '\\0' a; echo END; exit 1"}),
                                      {"http://127.0.0.1:{port}", "M", ""}, dir / "noisy.log");
  ASSERT_FALSE(noisy.ok());
  const std::string& m = noisy.error().message;
  EXPECT_NE(m.find("its last output:\n..." + std::string(1996, 'a') + "END"), std::string::npos) << m.size();
  EXPECT_EQ(m.find(std::string(1997, 'a')), std::string::npos);
  EXPECT_EQ(ReadFile(dir / "noisy.log").size(), 5004u);
}

// No socket for picking the port (the process is out of file descriptors): an error saying
// so with the system's reason, before anything is started. In a child, whose limit ends with
// it: descriptors 0-2 open, and no other may be made. Not under the sanitizers: their own
// checks open a pipe, and without one they report the process instead (CI's plain build
// runs it).
TEST(LaunchedServer, NoSocketForThePortIsAnErrorWithTheSystemsReason) {
  if (testing_util::kAddressSanitizer) GTEST_SKIP() << "the sanitizers need descriptors of their own";
  TempDir dir;
  EXPECT_TRUE(testing_util::TrueInAChild([&] {
    for (int fd = 0; fd < 3; ++fd)
      if (fcntl(fd, F_GETFD) == -1) open("/dev/null", O_RDWR);
    rlimit limit{};
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = 3;
    setrlimit(RLIMIT_NOFILE, &limit);
    auto r = LaunchedServer::Launch(Settings({"true"}), {"http://127.0.0.1:{port}", "M", ""}, dir / "server.log");
    const std::string want = std::string("cannot pick a port for the server: ") + std::strerror(EMFILE);
    return !r.ok() && r.error().code == ExitCode::kInfra && r.error().message.find(want) != std::string::npos;
  })) << "the launch must fail naming the socket's reason";
  EXPECT_FALSE(std::filesystem::exists(dir / "server.log")) << "nothing started";
}

// Ready once the readiness path answers 200 on the port the harness picked; stopped with
// its group when the server object goes.
TEST(LaunchedServer, ReadyWhenThePathAnswersAndStoppedWhenDestroyed) {
  TempDir dir;
  testing_util::WriteFile(dir / "www" / "health", "ok");
  LaunchSettings s = Settings({"python3", "-m", "http.server", "{port}", "--bind", "127.0.0.1"});
  s.cwd = (dir / "www").string();
  s.ready_path = "/health";
  s.ready_timeout_s = 30;
  auto r = LaunchedServer::Launch(s, {"http://127.0.0.1:{port}/v1", "M", ""}, dir / "server.log");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string url = (*r)->base_url();
  EXPECT_EQ(url, "http://127.0.0.1:" + std::to_string((*r)->port()) + "/v1");
  const pid_t group = (*r)->pid();
  const std::string health = "http://127.0.0.1:" + std::to_string((*r)->port()) + "/health";
  auto answer = HttpGet(health, "", 5, 1024);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->body, "ok");
  r->reset();
  EXPECT_FALSE(ProcessGroupAlive(group));
  EXPECT_FALSE(HttpGet(health, "", 1, 1024)) << "still answering after it was stopped";
}

}  // namespace
}  // namespace harness::openai
