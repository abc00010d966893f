// The HTML report (report_html.h) from a model built by hand: what its filters match on.
#include "reports/report_html.h"

#include <gtest/gtest.h>

namespace harness::reports {
namespace {

// The status filter keeps an element whose data-status holds the chosen word, so a suite's
// summary card carries every status its cases have: one with errors and failures must stay
// in view under "fail" too, one with only passing cases says "pass".
TEST(ReportHtml, ASuiteCardCarriesEveryStatusOfItsCases) {
  ReportModel m;
  m.commits = {{"aaaa000000000000000000000000000000000001", "start", 1}};
  m.runs = 1;
  SuiteSummary mixed{"pytest", 1, 0, "ingest:junit", "host"};
  mixed.pass = 9;
  mixed.fail = 2;
  mixed.error = 1;
  SuiteSummary risky{"gsm8k", 1, 0, "refstack", "host"};
  risky.pass = 1;
  risky.at_risk = 1;
  SuiteSummary clean{"gmm", 1, 0, "refstack", "host"};
  clean.pass = 4;
  clean.skip = 1;
  m.summary = {mixed, risky, clean};
  const std::string html = ReportHtml(m, {});
  EXPECT_NE(html.find(R"(class="card error" data-suite="pytest" data-status="error fail")"), std::string::npos) << html;
  // AT-RISK annotates passes: the card is not tinted, and answers to the at-risk filter.
  EXPECT_NE(html.find(R"(class="card pass" data-suite="gsm8k" data-status="at-risk")"), std::string::npos);
  EXPECT_NE(html.find(R"(class="card pass" data-suite="gmm" data-status="pass")"), std::string::npos);
}

}  // namespace
}  // namespace harness::reports
