// The GoogleTest listener of `harness run`: each case goes to the store in its own
// transaction as it finishes (so a crash loses at most the running case), a progress
// line goes to stderr, and a summary row is kept for the table at the end. It only writes,
// through the store's RunWriter door: what a case reads (its prior samples, its baseline)
// the run reads for it (RunContext).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/run/case_record.h"
#include "harness/run/failure_text.h"
#include "harness/run/run_context.h"
#include "harness/store/run_writer.h"

namespace harness {

class RunListener : public testing::EmptyTestEventListener, public SampleSink {
 public:
  // record: the running RunContext's, which the case bodies fill.
  RunListener(RunWriter& store, int64_t run_id, CaseRecord& record);
  void OnTestStart(const testing::TestInfo& info) override;
  // The case the starting test runs, as its fixture names it from its parameter row
  // (RunContext::begin_case); a test that begins none (not a suite case) is not stored.
  void BeginCase(const StartingCase& c);
  void OnTestPartResult(const testing::TestPartResult& result) override;
  void OnTestEnd(const testing::TestInfo& info) override;
  void WriteSample(const Sample& s) override;

  const std::vector<CaseResult>& results() const { return results_; }
  // The first store error, if writing failed (the run then exits 3).
  const std::optional<Error>& store_error() const { return store_error_; }

 private:
  void Keep(const Status& s);
  RunWriter& store_;
  int64_t run_id_;
  CaseRecord& record_;
  std::optional<StartingCase> case_;   // the running test's case, once its fixture began it
  int64_t case_row_ = 0;
  FailureText failure_text_;
  std::chrono::steady_clock::time_point started_;
  std::vector<CaseResult> results_;
  std::optional<Error> store_error_;
};

}  // namespace harness
