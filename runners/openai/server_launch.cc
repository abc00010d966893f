#include "runners/openai/server_launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/placeholders.h"
#include "harness/util/quote.h"
#include "runners/openai/http_get.h"

namespace harness::openai {
namespace {

constexpr std::size_t kOutputTailBytes = 2000;
// The readiness probe: one GET at most this long, then this long before the next one.
constexpr double kProbeTimeoutS = 2;
constexpr double kProbeIntervalS = 0.2;
constexpr std::size_t kProbeBodyBytes = 1 << 20;

using Clock = std::chrono::steady_clock;

// A free TCP port on 127.0.0.1: bind port 0, read the port the kernel chose, close. Another
// process may take it before the server binds it; the server then fails to start, and
// the launch with it (exit 3, with the server's output).
Result<int> PickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return InfraError(fmt::format("cannot pick a port for the server: {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int e = errno;
    close(fd);
    return InfraError(fmt::format("cannot pick a port for the server on 127.0.0.1: {}", std::strerror(e)));
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

// scheme://host:port of a URL: the readiness path is a path on the server, whatever path
// the base URL has.
std::string OriginOf(const std::string& url) {
  const auto scheme = url.find("://");
  const auto path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return path == std::string::npos ? url : url.substr(0, path);
}

// The last bytes of the log, where a server's error usually is.
std::string LogTail(const std::filesystem::path& log) {
  std::ifstream in(log, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const auto size = static_cast<std::size_t>(std::max<std::streamoff>(0, in.tellg()));
  const std::size_t from = size > kOutputTailBytes ? size - kOutputTailBytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  return OutputTail(from > 0 ? "..." + text : text, kOutputTailBytes + 3);
}

std::string WithOutput(const std::string& message, const std::filesystem::path& log) {
  const std::string tail = LogTail(log);
  return fmt::format("{} (log {}); {}", message, log.string(),
                     tail.empty() ? "it wrote nothing" : "its last output:\n" + tail);
}

std::filesystem::path Worktree() {
  if (const char* w = std::getenv("HARNESS_WORKTREE"); w && *w) return std::filesystem::absolute(w).lexically_normal();
  return std::filesystem::current_path();
}

double SecondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Named as what it is: posix_spawn would blame the program ("No such file or directory").
Status CheckLaunchCwd(const std::filesystem::path& cwd) {
  std::error_code ec;
  if (std::filesystem::is_directory(cwd, ec)) return OkStatus();
  return UsageError(fmt::format("launch cwd {} {}", Quote(cwd.string()),
                                std::filesystem::exists(cwd, ec) ? "is not a directory" : "does not exist"));
}

}  // namespace

std::vector<std::string> LaunchPlaceholderNames() { return {"model", "port", "worktree"}; }

Result<LaunchSettings> ParseLaunchSettings(const JsonObject& openai_section) {
  auto launch = openai_section.Object("launch");
  if (!launch) return launch.error();
  const JsonObject& l = *launch;
  if (auto k = l.KnownKeys({"command", "cwd", "env", "ready_path", "ready_timeout_s", "stop_timeout_s"}); !k)
    return k.error();
  const auto known = LaunchPlaceholderNames();
  LaunchSettings s;
  auto command = l.StringList("command");
  if (!command)
    return l.FieldError("command", "expected an argv array of strings, e.g. [\"python3\", \"-m\", "
                                   "\"sglang.launch_server\", \"--port\", \"{port}\"]");
  if (command->empty() || command->front().empty()) return l.FieldError("command", "must name a program");
  for (size_t i = 0; i < command->size(); ++i)
    if (auto checked = CheckPlaceholders((*command)[i], known); !checked)
      return l.FieldError(fmt::format("command[{}]", i), checked.error().message);
  s.command = std::move(command).value();
  auto cwd = l.String("cwd", "");
  if (!cwd) return cwd.error();
  if (auto checked = CheckPlaceholders(*cwd, known); !checked) return l.FieldError("cwd", checked.error().message);
  s.cwd = *cwd;
  if (l.Has("env")) {
    const Json& env = l.json()["env"];
    if (!env.is_object()) return l.FieldError("env", "expected an object of NAME: \"value\"");
    for (const auto& [k, v] : env.items()) {
      if (!v.is_string()) return l.FieldError("env." + k, "expected a string");
      if (k.empty() || k.find('=') != std::string::npos) return l.FieldError("env." + k, "not a variable name");
      if (auto checked = CheckPlaceholders(v.get<std::string>(), known); !checked)
        return l.FieldError("env." + k, checked.error().message);
      s.env.emplace_back(k, v.get<std::string>());
    }
  }
  auto ready_path = l.String("ready_path", s.ready_path);
  if (!ready_path) return ready_path.error();
  if (ready_path->empty() || ready_path->front() != '/' ||
      std::any_of(ready_path->begin(), ready_path->end(), [](unsigned char c) { return c <= ' ' || c == 0x7f; }))
    return l.FieldError("ready_path", fmt::format("'{}': expected a path on the server such as /v1/models", *ready_path));
  s.ready_path = *ready_path;
  for (auto [key, value] : {std::pair{"ready_timeout_s", &s.ready_timeout_s}, std::pair{"stop_timeout_s", &s.stop_timeout_s}}) {
    auto t = l.Number(key, *value);
    if (!t) return t.error();
    if (!(*t > 0) || !IsValidTimeout(*t))
      return l.FieldError(key, fmt::format("{}: must be in (0, {}] seconds", *t, kMaxTimeoutS));
    *value = *t;
  }
  return s;
}

std::filesystem::path ServerLogPath(const std::filesystem::path& db) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  std::filesystem::path path = std::filesystem::absolute(db).lexically_normal();
  path += fmt::format(".server-{}-{}.log", stamp, getpid());
  return path;
}

Result<std::unique_ptr<LaunchedServer>> LaunchedServer::Launch(const LaunchSettings& settings,
                                                               const LaunchTarget& target,
                                                               const std::filesystem::path& log) {
  auto port = PickFreePort();
  if (!port) return port.error();
  const std::map<std::string, std::string> values = {
      {"model", target.model}, {"port", std::to_string(*port)}, {"worktree", Worktree().string()}};
  std::vector<std::string> argv;
  for (const auto& arg : settings.command) argv.push_back(FillTemplate(arg, values));
  const std::string cwd = FillTemplate(settings.cwd, values);
  BackgroundOptions options;
  // Absolute, so the server's own messages about it name it wherever they are read.
  options.cwd = cwd.empty() ? std::filesystem::current_path() : std::filesystem::absolute(cwd).lexically_normal();
  for (const auto& [k, v] : settings.env) options.env.emplace_back(k, FillTemplate(v, values));
  options.output = log;
  options.stop_grace_s = settings.stop_timeout_s;
  if (auto checked = CheckLaunchCwd(options.cwd); !checked) return checked.error();
  // The log is new: a launch never writes into a file that was there.
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return InfraError(fmt::format("cannot create the server log {}: {}", log.string(), std::strerror(errno)));
  close(fd);

  std::unique_ptr<LaunchedServer> server(new LaunchedServer());
  server->base_url_ = FillTemplate(target.base_url, values);
  server->log_ = log;
  server->port_ = *port;
  auto process = BackgroundProcess::Start(argv, options);
  if (!process) return Error{process.error().code, WithOutput("server: " + process.error().message, log)};
  server->process_ = std::move(process).value();
  std::fprintf(stderr, "harness: launched the server (pid %d, port %d) in %s: %s; its output goes to %s\n",
               static_cast<int>(server->process_->pid()), *port, options.cwd.c_str(),
               SafeMessage(fmt::format("{}", fmt::join(argv, " "))).c_str(), log.c_str());

  const std::string ready_url = OriginOf(server->base_url_) + settings.ready_path;
  const auto started = Clock::now();
  std::string last = "got no answer";
  // Stops what is left of its group first, so the log holds all it wrote.
  const auto fail = [&](const std::string& message) -> Error {
    server->process_.reset();
    return InfraError(WithOutput(message, log));
  };
  for (;;) {
    if (const auto end = server->process_->WaitForExit(0))
      return fail(fmt::format("server {} exited before it was ready ({}, after {:.1f} s)", argv[0], end->Describe(),
                              SecondsSince(started)));
    const double left = settings.ready_timeout_s - SecondsSince(started);
    if (left <= 0)
      return fail(fmt::format("server {} not ready within {} s: GET {} {}; stopped it", argv[0],
                              settings.ready_timeout_s, ready_url, last));
    const auto answer = HttpGet(ready_url, target.api_key_env, std::min(kProbeTimeoutS, left), kProbeBodyBytes);
    if (answer && answer->status == 200) break;
    if (answer) last = fmt::format("answered HTTP {}", answer->status);
    // Sleeps until the next probe, unless the server exits first.
    static_cast<void>(server->process_->WaitForExit(std::min(kProbeIntervalS, std::max(0.0, left))));
  }
  std::fprintf(stderr, "harness: the server is ready at %s after %.1f s\n", server->base_url_.c_str(),
               SecondsSince(started));
  return server;
}

LaunchedServer::~LaunchedServer() {
  if (!process_) return;
  const auto died = process_->WaitForExit(0);
  process_->Stop();
  if (died)
    std::fprintf(stderr, "harness: the server had exited during the run (%s); its output: %s\n",
                 died->Describe().c_str(), log_.c_str());
  else
    std::fprintf(stderr, "harness: stopped the server (pid %d)\n", static_cast<int>(process_->pid()));
  if (const uint64_t dropped = process_->log_dropped())
    std::fprintf(stderr, "harness: the server wrote more than its log keeps: %llu bytes dropped from the middle of %s\n",
                 static_cast<unsigned long long>(dropped), log_.c_str());
}

}  // namespace harness::openai
