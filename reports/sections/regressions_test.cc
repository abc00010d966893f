// The words of bisect --auto's note on a regression, and the count of those with a culprit
// (the loader's part is tested through BuildReport, reports/report_model_test.cc).
#include "reports/sections/regressions.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "reports/report_model.h"

namespace harness::reports {
namespace {

// What bisect --auto said of a regression, in words, one per verdict: the budget that ran out
// before any session began is not "the culprit is one of the range".
TEST(ReportCulprit, EachVerdictInWords) {
  CulpritNote n;
  n.verdict = RegressionVerdict::kAmbiguous;
  EXPECT_EQ(CulpritWords(n), "bisect ambiguous: the budget ran out before the regression was confirmed");
  n.session = 4;
  n.range = {fmt::format("{:040x}", 0xabc1), fmt::format("{:040x}", 0xabc2)};
  EXPECT_EQ(CulpritWords(n), fmt::format("bisect ambiguous: the culprit is one of {} {} (bisect session 4)",
                                         n.range[0].substr(0, 12), n.range[1].substr(0, 12)));
  n.verdict = RegressionVerdict::kNoCulprit;
  EXPECT_EQ(CulpritWords(n), "bisect found no culprit: the drop looks like noise (bisect session 4)");
  n.verdict = RegressionVerdict::kUntestable;
  EXPECT_EQ(CulpritWords(n),
            "unconfirmed: the rerun of the bad commit could not test it (bisect --auto says why); not bisected");
}

// The report's count of regressions with a culprit counts those whose bisect named one and no
// other: one regression of each verdict, and the culprit twice.
TEST(ReportCulprit, OnlyARegressionWithACulpritCountsAsOne) {
  ReportModel m;
  for (RegressionVerdict v : {RegressionVerdict::kAmbiguous, RegressionVerdict::kCulprit, RegressionVerdict::kNoCulprit,
                              RegressionVerdict::kNotConfirmed, RegressionVerdict::kUntestable, RegressionVerdict::kCulprit}) {
    RegressionEntry e;
    e.note.verdict = v;
    m.regressions.push_back(e);
  }
  EXPECT_EQ(m.RegressionsWithCulprit(), 2u);
  m.regressions.pop_back();
  EXPECT_EQ(m.RegressionsWithCulprit(), 1u);
}

// A session that named several culprits: the words list each with its own drop and
// posterior, in order; one culprit reads as it always did.
TEST(ReportCulprit, SeveralCulpritsEachWithItsOwnDrop) {
  CulpritNote n;
  n.verdict = RegressionVerdict::kCulprit;
  n.culprit = fmt::format("{:040x}", 0xabc1);
  n.subject = "first";
  n.confidence = 0.99;
  n.runs = 9;
  n.session = 3;
  const std::string one = CulpritWords(n);
  EXPECT_EQ(one, "culprit 000000000000 first (confidence 0.990, 9 runs, bisect session 3)");
  n.culprits = {{n.culprit, "first", 0.99, -0.006}};
  EXPECT_EQ(CulpritWords(n), one) << "one culprit: no list";
  n.culprits.push_back({fmt::format("{:040x}", 0xabc2) + "", "second", 0.985, -0.008});
  n.culprits[1].sha[0] = 'f';
  EXPECT_EQ(CulpritWords(n), one + "; 2 culprits in the range: 1. 000000000000 first: moved -0.0060 (-0.60 pp), "
                                   "posterior 0.990; 2. f00000000000 second: moved -0.0080 (-0.80 pp), posterior 0.985");
}

}  // namespace
}  // namespace harness::reports
