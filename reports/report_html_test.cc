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

// A failure's culprit note from a session that named several culprits: the list under it,
// in order, each with its drop and confidence, its subject escaped.
TEST(ReportHtml, AFailuresCulpritNoteListsEveryCulpritOfItsSession) {
  ReportModel m;
  m.commits = {{"aaaa000000000000000000000000000000000001", "start", 1},
               {"bbbb000000000000000000000000000000000002", "two", 2}};
  m.runs = 1;
  FailureEntry f{"gsm8k/acc_0", CaseStatus::kFail, 1, "", "host", 1, 1, "dropped"};
  CulpritNote n{RegressionVerdict::kCulprit, m.commits[0].sha, "first", 0.99, 6, 4, {}, std::nullopt, {}};
  n.culprits = {{m.commits[0].sha, "<script>x</script> | `y`", 0.99, -0.006}, {m.commits[1].sha, "two", 0.97, -0.008}};
  f.culprit = n;
  m.failures = {f};
  const std::string html = ReportHtml(m, {});
  EXPECT_NE(html.find(R"(<p class="culprit">2 culprits in the range, in first-parent order:</p><ol class="culprit culprits">)"
                      "<li><code>aaaa00000000</code> &lt;script&gt;x&lt;/script&gt; | `y` · moved -0.0060 (-0.60 pp) · "
                      "posterior 0.990</li><li><code>bbbb00000000</code> two · moved -0.0080 (-0.80 pp) · posterior "
                      "0.970</li></ol>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<script>x"), std::string::npos);
}

}  // namespace
}  // namespace harness::reports
