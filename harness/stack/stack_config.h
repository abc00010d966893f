// The stack config (JSON) a run is made with: which stack, device profile, precision,
// batch, and the reference stack's fault switches. Its canonical JSON is part of every
// run's identity (harness/run/run_identity.h).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "harness/util/error.h"
#include "harness/util/json_file.h"

namespace harness {

struct StackConfig {
  std::string stack = "refstack";
  std::string device = "TEST_DEVICE";
  std::string precision = "bf16";
  int batch = 1;
  std::vector<std::string> faults;   // fault switch names from golden/regressions.json
  Json raw = Json::object();         // the whole config as given (stack-specific keys too)

  bool HasFault(std::string_view name) const;
  // Canonical JSON of the effective config (raw merged with the fields above), as runs
  // store and print it: of the environment a command or server gets (exec.env,
  // openai.launch.env) the names, and the values only of EnvValuesKept(): a value may be
  // a token written in the config.
  Json ToJson() const;
};

// The variables whose values a stored or printed config keeps (which devices and threads
// ran); every other value is kEnvValueNotStored.
const std::vector<std::string>& EnvValuesKept();
inline constexpr std::string_view kEnvValueNotStored = "(value not stored)";

// Parses a stack config file. Unknown top-level keys are kept in raw for the stack.
Result<StackConfig> LoadStackConfig(const std::filesystem::path& path);
Result<StackConfig> ParseStackConfig(const Json& j, const std::string& origin);

}  // namespace harness
