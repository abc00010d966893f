// The gmm suite's decision (regression 2 in golden/regressions.json; docs/compiler.md), as a
// pure function of values: the compiled table of one Qwen3-MoE layer must have the calls the
// case's golden expectation names (golden/ops/gmm/<case>.json, docs/golden.md), and a table
// that does not is shown by its grouped matmuls. The suite body (suites/gmm.cc) asks the
// stack for the table and reports this outcome.
#pragma once

#include <string>

#include "harness/golden/golden_ops.h"
#include "harness/results/results.h"
#include "harness/stack/stack.h"

namespace harness {

// One failure line when the table differs from its golden expectation: the difference,
// then every grouped-matmul call of the table; none, the case passes. No metrics: the body
// records the table and its time.
CaseOutcome CheckGmm(const CompileResult& compiled, const GoldenOpTable& golden, const std::string& golden_file);

}  // namespace harness
