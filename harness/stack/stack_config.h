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
  // Where the parsed config's sections hold an environment object (JSON pointers, from
  // each ConfigSection's env_objects): ToJson stores those values only when kept.
  std::vector<std::string> env_objects;

  bool HasFault(std::string_view name) const;
  // Canonical JSON of the effective config (raw merged with the fields above), as runs
  // store and print it: of the environment a command or server gets (env_objects:
  // exec.env, openai.launch.env) the names, and the values only of EnvValuesKept(): a
  // value may be a token written in the config.
  Json ToJson() const;
};

// The variables whose values a stored or printed config keeps (which devices and threads
// ran); every other value is kEnvValueNotStored.
const std::vector<std::string>& EnvValuesKept();
inline constexpr std::string_view kEnvValueNotStored = "(value not stored)";

// A backend's own section of the stack config ("exec", "openai"), declared by the stack
// table (runners/stacks.cc, StackConfigSections()): the top-level key it may have, and
// the environment objects inside it whose values may be secrets ("/exec/env"). The
// backend parses and checks the section's contents itself when it is made or asked.
struct ConfigSection {
  std::string key;
  std::vector<std::string> env_objects;  // JSON pointers from the config's root
};

// Parses a stack config file. A top-level key is a common field or one of sections' keys
// (anything else is an unknown field, with the nearest known name); a section's contents
// are kept in raw for its stack.
Result<StackConfig> LoadStackConfig(const std::filesystem::path& path, const std::vector<ConfigSection>& sections);
Result<StackConfig> ParseStackConfig(const Json& j, const std::string& origin,
                                     const std::vector<ConfigSection>& sections);

}  // namespace harness
