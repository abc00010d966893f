// The one bridge between `harness run` and the GoogleTest bodies of the suites: a
// RunContext that RunSuites fills and installs with a ScopedRunContext for as long as the
// cases run, removed on every path out (an error, an exception). A case body reads the
// installed context through its fixture (SuiteTest): the stack, the run's options, the
// inputs the run read for it before it started, and the record its outcome goes into.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/run/case_record.h"
#include "harness/stack/stack.h"
#include "harness/stack/stack_config.h"

namespace harness {

// What a case asks the run to read for it before its body starts.
struct CaseNeeds {
  bool baseline = false;      // the stored result it pairs with (the baseline policy)
  std::string rerun_metric;   // this metric's values at the case's earlier reruns; empty: none
};

// What the run read for a case before its body started: the body never reads the store.
struct CaseInputs {
  std::vector<Sample> prior_samples;   // stored by the interrupted run being resumed
  std::optional<Baseline> baseline;    // CaseNeeds::baseline, when there is one to pair with
  // CaseNeeds::rerun_metric at the case's earlier reruns at this commit (same measured
  // identity and parameter row, finished, oldest first): the spread a gate's flip
  // probability needs.
  std::vector<double> reruns;
};

// The case a fixture starts, named by its own parameter row (SuiteTest::SetUp): the run's
// listener begins the case's stored row from this, never from GoogleTest's test name.
struct StartingCase {
  std::string suite;
  std::string case_id;
  std::string params_json;   // the row as the store keeps it
};

struct RunContext {
  StackConfig stack_config;
  Stack* stack = nullptr;
  std::optional<EndpointTarget> endpoint;
  // Draws a stand-in's rerun noise: --seed, else the run id, so every run of one identity
  // differs from the last the way a real server's reruns do, yet a resumed run keeps its
  // seed and the database says what each run drew.
  std::optional<uint64_t> noise_seed;
  // A partial run's question indices (RunRequest::questions); empty for a whole run.
  std::optional<std::vector<int64_t>> questions;
  // Reads a case's inputs (RunSuites: from the store); empty, a case gets none.
  std::function<Result<CaseInputs>(const std::string& case_id, const CaseNeeds& needs)> inputs;
  // Begins the case a fixture is about to run (RunSuites: the run's listener); empty, no
  // case is stored.
  std::function<void(const StartingCase&)> begin_case;
  // The running case's record (one case runs at a time); the run's listener resets it when
  // a case starts and stores it when the case ends.
  CaseRecord record;
};

// Installs a context for its lifetime and puts back whatever was installed before.
class ScopedRunContext {
 public:
  explicit ScopedRunContext(RunContext& context);
  ~ScopedRunContext();
  ScopedRunContext(const ScopedRunContext&) = delete;
  ScopedRunContext& operator=(const ScopedRunContext&) = delete;

 private:
  RunContext* previous_;
};

// The installed context, or null when no run is running.
RunContext* InstalledRunContext();

// The installed context; a suite body run outside `harness run` throws FatalError.
RunContext& CurrentRun();

// Compiles with the run's stack for the running case. A stack that could not answer (an
// exec command that timed out, died or answered garbage: an infrastructure-coded error)
// makes the case an infrastructure error (stored as error, run exit 3), not a regression.
Result<CompileResult> CompileForCase(const CompileRequest& request);

}  // namespace harness
