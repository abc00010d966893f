// Suites are GoogleTest value-parameterized tests whose parameters come from a JSON
// table under suites/ (docs/suites.md), so a case can be added without C++.
//
//   class SpTest : public harness::SuiteTest {};
//   TEST_P(SpTest, test_sp_reduces_rms_norm_seq_dim) { auto tp = Param().Int("tp_size"); ... }
//   HARNESS_INSTANTIATE(sequence_parallel, SpTest, test_sp_reduces_rms_norm_seq_dim);
//
// gives the case ids sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0, _1, ...
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/results/case_id.h"
#include "harness/results/results.h"
#include "harness/run/run_context.h"
#include "harness/util/json_file.h"

namespace harness {

struct CaseParam {
  std::string suite;     // sequence_parallel
  std::string test;      // test_sp_reduces_rms_norm_seq_dim
  int index = 0;         // position in the table: the _N suffix
  Json params;           // the table row merged over the table's defaults
  std::string origin;    // the table file, for error messages
  // Its table's slot, where the run that runs the row is bound (RunSlot, run_context.h).
  std::shared_ptr<RunSlot> run_slot;
  std::string CaseId() const { return harness::CaseId::Native(suite, test, static_cast<std::size_t>(index)).str(); }
  JsonObject Object() const {
    return JsonObject(params, origin, "tests." + test + "[" + std::to_string(index) + "]");
  }
};

void PrintTo(const CaseParam& p, std::ostream* os);

// The rows of one test in the installed suite tables (empty when none are installed).
std::vector<CaseParam> SuiteCases(const std::string& suite, const std::string& test);
std::string CaseParamName(const testing::TestParamInfo<CaseParam>& info);

// Base fixture: typed access to the case's parameters (a malformed field fails the case
// with a message that names the table file and the field), and the case's side of the run
// its parameter row is bound to: what the run read for it before its body started, the
// stack it asks, and the record its outcome goes into.
class SuiteTest : public testing::TestWithParam<CaseParam> {
 protected:
  JsonObject Param() const { return GetParam().Object(); }
  // Unwraps a parameter or throws; the listener stores the message as the case's error.
  template <class T>
  static T Need(Result<T> r) { return ValueOrThrow(std::move(r)); }

  // The run's context (RunContext): the stack, the endpoint, the run's options.
  const RunContext& Context() const { return *run_; }
  // The running case's record: metrics, samples, op rows, notes.
  CaseRecord& Record() const { return run_->record; }
  // What this case asks the run to read for it before its body starts; nothing by default.
  virtual CaseNeeds Needs() const { return {}; }
  // What the run read for this case (Needs()) before its body started.
  const CaseInputs& Inputs() const { return inputs_; }
  // Compiles with the run's stack (CompileForCase: a stack that could not answer makes the
  // case an infrastructure error). A stack that answers with an error (a graph its verifier
  // rejects) fails the case with that message, reported at the caller's line, and gives
  // nothing: the body returns.
  std::optional<CompileResult> Compile(const CompileRequest& request, const char* file = __builtin_FILE(),
                                       int line = __builtin_LINE());
  // A body's outcome into the record; each failure line fails the case with exactly that
  // text (its first line is what the run's table and the catalogue show), at the caller's
  // file and line.
  void Report(const CaseOutcome& outcome, const char* file = __builtin_FILE(), int line = __builtin_LINE());

  // Finds the run the row is bound to, begins the case and reads its inputs.
  void SetUp() override;

 private:
  RunContext* run_ = nullptr;
  CaseInputs inputs_;
};

}  // namespace harness

#define HARNESS_INSTANTIATE(suite, fixture, test)                                          \
  INSTANTIATE_TEST_SUITE_P(suite, fixture,                                                 \
                           ::testing::ValuesIn(::harness::SuiteCases(#suite, #test)),     \
                           ::harness::CaseParamName)
