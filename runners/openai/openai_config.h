// The openai stack's section of a stack config: where its server is (base_url) or how the
// harness starts it (launch, runners/openai/server_launch.h), the model, the route and the
// API key's variable:
//   "openai": {"base_url": "http://127.0.0.1:30000", "model": "M", "chat": false, "api_key_env": "KEY"}
//   "openai": {"model": "M", "launch": {"command": [..., "--port", "{port}"], ...}}
#pragma once

#include <optional>
#include <string>

#include "harness/stack/stack_config.h"
#include "runners/openai/server_launch.h"

namespace harness::openai {

struct OpenAiSettings {
  // Where the server listens. With launch a template of the launch placeholders, by
  // default http://127.0.0.1:{port}.
  std::string base_url;
  std::string model;
  bool chat = false;
  std::string api_key_env;  // empty: no Authorization header
  std::optional<LaunchSettings> launch;
};

// The openai section as the stack table declares it: key "openai", the values of the
// launched server's environment (launch.env) not stored.
ConfigSection OpenAiConfigSection();

// The config's "openai" section, checked; errors are usage errors naming origin and field.
Result<OpenAiSettings> ParseOpenAiSettings(const StackConfig& config, const std::string& origin);

}  // namespace harness::openai
