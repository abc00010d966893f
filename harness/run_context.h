// What a suite may ask about the run it is part of: the stack, its config, an explicit
// eval endpoint. Set by `harness run` before the cases start.
#pragma once

#include <optional>
#include <string>

#include "harness/stack.h"
#include "harness/stack_config.h"

namespace harness {

// An OpenAI-compatible endpoint named on the command line (--endpoint/--model/--chat)
// or by the openai stack's config. The API key is read from the environment variable
// api_key_env at request time; the key itself is never stored.
struct EndpointTarget {
  std::string base_url;        // e.g. http://127.0.0.1:30000
  std::string model;
  bool chat = false;
  std::string api_key_env;     // empty: no Authorization header
};

struct RunContext {
  StackConfig stack_config;
  Stack* stack = nullptr;
  std::optional<EndpointTarget> endpoint;
  bool resume = false;
};

RunContext& CurrentRun();

}  // namespace harness
