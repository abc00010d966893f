// The openai stack's server, started by the harness: the config's "openai": {"launch": {...}}
// names an argv template (never a shell) with {model}, {port} and {worktree}; the harness
// picks a free loopback port, starts the command in a process group of its own with its
// output in a log file, polls the readiness route until it answers 200, and stops the whole
// group when the run ends, fails or is interrupted (harness/util/subprocess.h,
// BackgroundProcess). docs/gsm8k.md, "A server the harness launches".
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/util/json_file.h"
#include "harness/util/subprocess.h"

namespace harness::openai {

// The launch section, checked; its strings are templates until Launch fills them.
struct LaunchSettings {
  std::vector<std::string> command;
  std::string cwd;                                         // empty: the harness's working directory
  std::vector<std::pair<std::string, std::string>> env;    // on top of the harness's
  std::string ready_path = "/v1/models";
  double ready_timeout_s = 600;
  double stop_timeout_s = 30;
};

// {model}: the config's model; {port}: the port the harness picked; {worktree}: the bisect
// worktree ($HARNESS_WORKTREE, set by `harness bisect`), else the current directory.
std::vector<std::string> LaunchPlaceholderNames();

// The "launch" object of the openai section o. Errors are usage errors naming the field
// (an unknown placeholder with the nearest known one, a timeout outside (0, 86400] s).
Result<LaunchSettings> ParseLaunchSettings(const JsonObject& openai_section);

// Where a run's server log goes: beside the database, DB.server-<UTC time>-<pid>.log, absolute.
std::filesystem::path ServerLogPath(const std::filesystem::path& db);

// What the templates are filled from besides the port.
struct LaunchTarget {
  std::string base_url;     // a template too ("http://127.0.0.1:{port}" by default)
  std::string model;
  std::string api_key_env;  // sent with the readiness probe, when named
};

class LaunchedServer {
 public:
  // Starts the server with its output in log (created; it must not exist) and waits until
  // it is ready. A server that exits first, or is not ready within ready_timeout_s, is
  // stopped with its group and is an infrastructure error holding the last 2000 bytes of
  // its output.
  static Result<std::unique_ptr<LaunchedServer>> Launch(const LaunchSettings& settings, const LaunchTarget& target,
                                                        const std::filesystem::path& log);
  // Stops the server's process group (SIGTERM, then SIGKILL after stop_timeout_s).
  ~LaunchedServer();
  LaunchedServer(const LaunchedServer&) = delete;
  LaunchedServer& operator=(const LaunchedServer&) = delete;

  const std::string& base_url() const { return base_url_; }  // filled in
  const std::filesystem::path& log() const { return log_; }
  int port() const { return port_; }
  pid_t pid() const { return process_->pid(); }

 private:
  LaunchedServer() = default;
  std::unique_ptr<BackgroundProcess> process_;
  std::string base_url_;
  std::filesystem::path log_;
  int port_ = 0;
};

}  // namespace harness::openai
