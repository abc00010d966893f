// What `harness run` hands the GoogleTest bodies of the suites: a RunContext that RunSuites
// fills and binds, for as long as the cases run, to the rows of the suite tables it runs
// (RunSlot, BoundRun); the binding is gone on every path out (an error, an exception). A
// case body reads it through its fixture (SuiteTest), which finds it through its own
// parameter row: the stack, the run's options, the inputs the run read for it before it
// started, and the record its outcome goes into.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
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

// Where the rows of one loaded suite table find the run that runs them: the one hand-over
// GoogleTest leaves. It copies each row into its own registry when InitGoogleTest registers
// the TEST_P instantiations (PrepareSuites, once per process, before any run exists) and
// builds each fixture with nothing but that copy, so a row cannot be made for a run, and a
// rerun (RerunAtRisk) runs the same copies again. Every copy of a table's rows shares its
// slot (LoadSuiteTable makes it), and RunSuites binds its context there while its cases run.
// No global reaches it: only the holder of a row (a fixture, through its parameter) or of
// the tables (RunSuites) can.
class RunSlot {
 public:
  // The run bound here, or null when none is running these rows.
  RunContext* run() const { return run_; }

 private:
  friend class BoundRun;
  RunContext* run_ = nullptr;
};

// Binds a run to slots for its lifetime and puts back whatever each held before.
class BoundRun {
 public:
  BoundRun(RunContext& run, const std::vector<std::shared_ptr<RunSlot>>& slots);
  ~BoundRun();
  BoundRun(const BoundRun&) = delete;
  BoundRun& operator=(const BoundRun&) = delete;

 private:
  std::vector<std::pair<std::shared_ptr<RunSlot>, RunContext*>> before_;  // each slot and what it held
};

// Compiles with the run's stack for its running case. A stack that could not answer (an
// exec command that timed out, died or answered garbage: an infrastructure-coded error)
// makes the case an infrastructure error (stored as error, run exit 3), not a regression.
Result<CompileResult> CompileForCase(RunContext& run, const CompileRequest& request);

}  // namespace harness
