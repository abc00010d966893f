// Running a program by argv (never through a shell): captured output, optional stdin,
// working directory, extra environment, and a timeout after which it is killed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/util/error.h"

namespace harness {

struct ProcessOptions {
  std::filesystem::path cwd;                                  // empty: inherit
  std::vector<std::pair<std::string, std::string>> env;       // set on top of ours
  std::optional<std::string> stdin_data;                      // empty: /dev/null
  double timeout_s = 0;                                       // 0: none
};

struct ProcessResult {
  int exit_code = -1;     // valid when signal == 0
  int signal = 0;         // the signal that ended it, if any
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Fails (exit-3 error) only when the program could not be started at all.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace harness
