// What a suite may ask about the run it is part of: the stack, its config, an explicit
// eval endpoint. Set by `harness run` before the cases start.
#pragma once

#include <cstdint>
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
  // A metric of the case's earlier reruns at this commit (same measured identity and
  // parameter row, finished, oldest first): the rerun spread a gate's flip probability
  // needs. Empty outside `harness run`.
  std::function<Result<std::vector<double>>(const std::string& case_id, const std::string& metric)> reruns;
  // Draws a stand-in's rerun noise: --seed, else the run id, so every run of one identity
  // differs from the last the way a real server's reruns do, yet a resumed run keeps its
  // seed and the database says what each run drew. Empty outside `harness run`.
  std::optional<uint64_t> noise_seed;
  // A partial run's question indices (RunRequest::questions); empty for a whole run.
  std::optional<std::vector<int64_t>> questions;
};

RunContext& CurrentRun();

// Compiles with the run's stack for the running case. A stack that could not answer (an
// exec command that timed out, died or answered garbage: an infrastructure-coded error)
// makes the case an infrastructure error (stored as error, run exit 3), not a regression.
Result<CompileResult> CompileForCase(const CompileRequest& request);

}  // namespace harness
