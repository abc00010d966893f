// JUnit XML (the flavour Jenkins, GitLab and GitHub test reporters read) from a run's
// case results: one <testsuite> per suite; each <testcase> carries its metrics as
// <properties> (name = value; a verdict metric's word; name.n and name.ci95_low/high for a
// proportion), its verdict line (gate AT-RISK/PASS/FAIL, SAME/IMPROVED/REGRESSED vs baseline)
// and notes in <system-out>, and a failure's or error's first line as the message attribute
// with the whole text as the element's body. It is the report CI systems show first.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/results/night_verdict.h"
#include "harness/results/results.h"

namespace harness::reports {

// notes: a line more for a case's <system-out> (bisect --auto's culprit), by case id.
// <testsuites> carries the night's verdict as properties night_verdict (PASS, FAIL,
// REGRESSED, INCOMPLETE) and night (its line, as stdout's last line states it): night, else
// JudgeNight(cases).
std::string JunitXml(const std::vector<CaseResult>& cases, const std::map<std::string, std::string>& notes = {},
                     const NightSummary* night = nullptr);
// Escapes &, <, >, " and ', replaces invalid UTF-8 with U+FFFD and drops characters
// XML 1.0 cannot carry, so the document stays well-formed whatever bytes s holds.
std::string XmlEscape(const std::string& s);

}  // namespace harness::reports
