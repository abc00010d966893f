// JUnit XML (pytest --junitxml, GoogleTest --gtest_output=xml, Maven Surefire and the
// like): <testsuites>/<testsuite>/<testcase>, read with libxml2 (docs/ingest.md).
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/util/error.h"

namespace harness {

// Every <testcase> under any <testsuite> (nested suites too). Case id: SUITE/classname.name
// (SUITE/name without a classname); SUITE is `suite` when set, else the nearest
// <testsuite name>, else "junit". <failure> -> fail, <error> -> error, <skipped> -> skip;
// time -> duration; numeric <property> values of the test case -> metrics. Errors name
// origin:line(:column).
Result<std::vector<FinishedCase>> ParseJunitXml(const std::string& text, const std::string& origin,
                                                const std::string& suite);

}  // namespace harness
