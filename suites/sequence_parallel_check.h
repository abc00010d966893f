// The sequence_parallel suite's decision (regression 1 in golden/regressions.json;
// docs/compiler.md), as a pure function of values: with TP > 1 every all_reduce that feeds
// an RMSNorm must have become reduce_scatter + a norm on the local tokens + all_gather, and
// the table must meet the case's golden expectation. The suite body
// (suites/sequence_parallel.cc) asks the stack for the table and reports this outcome.
#pragma once

#include <cstdint>
#include <string>

#include "harness/golden/golden_ops.h"
#include "harness/results/results.h"
#include "harness/stack/stack.h"

namespace harness {

// The shape the norm takes on the local shard: [num_queries, local_seq, hidden], [hidden].
struct LocalNormShape {
  int64_t local_seq = 0;  // the row's expected_local_seq: the tokens one rank keeps
  int64_t hidden = 0;     // the row's hidden_size
};

// Each failure line names what is wrong in the compiled table (the leftover all_reduce
// rows, or the table itself for what is missing), the golden difference last; no failure
// line: the case passes. No metrics: the body records the table and its time.
CaseOutcome CheckSequenceParallel(const CompileRequest& request, const LocalNormShape& local,
                                  const CompileResult& compiled, const GoldenOpTable& golden,
                                  const std::string& golden_file);

}  // namespace harness
