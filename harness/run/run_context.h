// What a suite may ask about the run it is part of: the stack, its config, an explicit
// eval endpoint. Set by `harness run` before the cases start.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/stack/stack.h"
#include "harness/stack/stack_config.h"
#include "harness/store/baseline.h"

namespace harness {

struct RunContext {
  StackConfig stack_config;
  Stack* stack = nullptr;
  std::optional<EndpointTarget> endpoint;
  BaselineLookup baseline;  // empty outside `harness run`
};

RunContext& CurrentRun();

}  // namespace harness
