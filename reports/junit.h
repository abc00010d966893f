// JUnit XML (the flavour Jenkins, GitLab and GitHub test reporters read) from a run's
// case summaries: one <testsuite> per suite, failures and errors with their messages.
#pragma once

#include <string>
#include <vector>

#include "harness/run_listener.h"

namespace harness::reports {

std::string JunitXml(const std::vector<CaseSummary>& cases);
// Escapes &, <, >, " and ' and drops characters XML 1.0 cannot carry.
std::string XmlEscape(const std::string& s);

}  // namespace harness::reports
