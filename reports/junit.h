// JUnit XML (the flavour Jenkins, GitLab and GitHub test reporters read) from a run's
// case summaries: one <testsuite> per suite, failures and errors with their messages.
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"

namespace harness::reports {

std::string JunitXml(const std::vector<CaseResult>& cases);
// Escapes &, <, >, " and ', replaces invalid UTF-8 with U+FFFD and drops characters
// XML 1.0 cannot carry, so the document stays well-formed whatever bytes s holds.
std::string XmlEscape(const std::string& s);

}  // namespace harness::reports
