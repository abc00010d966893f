// GoogleTest's --gtest_output=json report (1.12 field names): testsuites[].testsuite[] with
// name, status (RUN | NOTRUN), result (COMPLETED | SKIPPED | SUPPRESSED), time "0.1s",
// failures[].failure, and RecordProperty keys beside them (docs/ingest.md).
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/util/error.h"

namespace harness {

// Case id SUITE/TestSuite.TestName (SUITE: `suite`, else "gtest"). A failure -> fail; status
// NOTRUN (disabled) or result SKIPPED/SUPPRESSED -> skip; numeric RecordProperty values ->
// metrics. A syntax error names origin:line:column, a structure error origin and the path.
Result<std::vector<FinishedCase>> ParseGtestJson(const std::string& text, const std::string& origin,
                                                 const std::string& suite);

}  // namespace harness
