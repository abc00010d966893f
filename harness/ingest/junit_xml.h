// JUnit XML (pytest --junitxml, GoogleTest --gtest_output=xml, Maven Surefire and the
// like): <testsuites>/<testsuite>/<testcase>, read with libxml2 (docs/ingest.md).
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/util/error.h"

namespace harness {

// Every <testcase> under any <testsuite> (nested suites too). Case id (docs/ingest.md):
// SUITE/classname.name, or SUITE/name when there is no classname or the name holds it
// (ctest, jest, mocha); SUITE is `suite` when set, else the nearest <testsuite name> with
// '/' spelled '.' (ctest's "(empty)": ctest), else "junit". GoogleTest's report (root
// <testsuites name="AllTests">): SUITE/TestSuite.TestName with SUITE `suite` else "gtest",
// as gtest-json names them. Status: the worst of <error> (error), <failure> (fail),
// <skipped> and a disabled/not-run status or result attribute (skip); every element's
// message kept in order; a failure without text takes the captured <system-out>/<system-err>.
// Test cases named twice are merged (MergeRepeatedCases). time -> duration; numeric
// <property> values of the test case -> metrics. Errors name origin:line(:column).
Result<std::vector<FinishedCase>> ParseJunitXml(const std::string& text, const std::string& origin,
                                                const std::string& suite);

}  // namespace harness
