// Suites are GoogleTest value-parameterized tests whose parameters come from a JSON
// table under suites/ (docs/suites.md), so a case can be added without C++.
//
//   class SpTest : public harness::SuiteTest {};
//   TEST_P(SpTest, test_sp_reduces_rms_norm_seq_dim) { auto tp = Param().Int("tp_size"); ... }
//   HARNESS_INSTANTIATE(sequence_parallel, SpTest, test_sp_reduces_rms_norm_seq_dim);
//
// gives the case ids sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0, _1, ...
#pragma once

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
// with a message that names the table file and the field), and the case's side of the
// installed run context: what the run read for it before its body started, and the record
// its outcome goes into.
class SuiteTest : public testing::TestWithParam<CaseParam> {
 protected:
  JsonObject Param() const { return GetParam().Object(); }
  // Unwraps a parameter or throws; the listener stores the message as the case's error.
  template <class T>
  static T Need(Result<T> r) { return ValueOrThrow(std::move(r)); }

  // The installed run's context (RunContext): the stack, the endpoint, the run's options.
  static const RunContext& Context() { return CurrentRun(); }
  // The running case's record: metrics, samples, op rows, notes.
  static CaseRecord& Record() { return CurrentRun().record; }
  // What this case asks the run to read for it before its body starts; nothing by default.
  virtual CaseNeeds Needs() const { return {}; }
  // What the run read for this case (Needs()) before its body started.
  const CaseInputs& Inputs() const { return inputs_; }
  // A body's outcome into the record; each failure line fails the case with exactly that
  // text (its first line is what the run's table and the catalogue show).
  static void Report(const CaseOutcome& outcome);

  void SetUp() override;

 private:
  CaseInputs inputs_;
};

}  // namespace harness

#define HARNESS_INSTANTIATE(suite, fixture, test)                                          \
  INSTANTIATE_TEST_SUITE_P(suite, fixture,                                                 \
                           ::testing::ValuesIn(::harness::SuiteCases(#suite, #test)),     \
                           ::harness::CaseParamName)
