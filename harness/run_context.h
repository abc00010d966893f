// What a suite may ask about the run it is part of: the stack, its config, an explicit
// eval endpoint. Set by `harness run` before the cases start.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/case_record.h"

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

// A stored earlier result of the running case to compare against (paired tests).
struct Baseline {
  std::string sha;
  int64_t run_id = 0;
  std::string status;
  std::vector<Sample> samples;
};

// Finds the baseline of a case: the newest finished result at --baseline SHA when given,
// else the newest passing result on a first-parent ancestor of the run's commit.
using BaselineLookup = std::function<Result<std::optional<Baseline>>(const std::string& case_id)>;

struct RunContext {
  StackConfig stack_config;
  Stack* stack = nullptr;
  std::optional<EndpointTarget> endpoint;
  BaselineLookup baseline;  // empty outside `harness run`
};

RunContext& CurrentRun();

}  // namespace harness
