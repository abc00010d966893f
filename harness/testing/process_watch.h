// Watching processes a test started through a script (their pids written to a file, one per
// line): whether each still runs, waiting for it to go, and killing what is left when the
// test ends, pass or fail.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace harness::testing_util {

inline std::vector<pid_t> PidsIn(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<pid_t> pids;
  for (pid_t p; in >> p;) pids.push_back(p);
  return pids;
}

// Present and neither a zombie nor dead (a killed process may take a moment).
inline bool Running(pid_t p) {
  std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  return text[close + 2] != 'Z' && text[close + 2] != 'X';
}

inline bool GoneWithin(pid_t p, std::chrono::milliseconds limit) {
  for (auto until = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < until;) {
    if (!Running(p)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !Running(p);
}

// Kills, when the test ends, every pid its file names.
struct KillListedOnExit {
  std::filesystem::path pid_file;
  ~KillListedOnExit() {
    for (pid_t p : PidsIn(pid_file)) kill(p, SIGKILL);
  }
};

}  // namespace harness::testing_util
