// The Markdown summary (report_markdown.h): its escaper against hostile text, and the
// summary's content from a model built by hand (every section, the bounds, the links).
#include "reports/report_markdown.h"

#include <gtest/gtest.h>

namespace harness::reports {
namespace {

TEST(MarkdownEscape, EveryAsciiPunctuationIsLiteral) {
  EXPECT_EQ(MarkdownEscape("gmm/test_qwen3_0"), "gmm\\/test\\_qwen3\\_0");
  EXPECT_EQ(MarkdownEscape("a|b*c_d`e<f>g"), "a\\|b\\*c\\_d\\`e\\<f\\>g");
  EXPECT_EQ(MarkdownEscape("[x](javascript:alert(1))"), "\\[x\\]\\(javascript\\:alert\\(1\\)\\)");
  EXPECT_EQ(MarkdownEscape("<img src=x onerror=alert(1)>"), "\\<img src\\=x onerror\\=alert\\(1\\)\\>");
  EXPECT_EQ(MarkdownEscape("@all #12 ~label !3 $4 %5 &amp;"), "\\@all \\#12 \\~label \\!3 \\$4 \\%5 \\&amp\\;");
  EXPECT_EQ(MarkdownEscape("\\*"), "\\\\\\*") << "a backslash cannot escape the escape";
  EXPECT_EQ(MarkdownEscape("plain words 42"), "plain words 42");
  // Every ASCII punctuation character, each escaped once.
  const std::string punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  std::string want;
  for (char c : punct) want += std::string("\\") + c;
  EXPECT_EQ(MarkdownEscape(punct), want);
}

TEST(MarkdownEscape, ControlsAndLineBreaksStayOnTheLine) {
  EXPECT_EQ(MarkdownEscape("row\n| x | y |\r\n# heading\tz"), "row \\| x \\| y \\|  \\# heading z");
  EXPECT_EQ(MarkdownEscape(std::string("a\0b\x1b[31m\x7f", 9)), "a b \\[31m ");
  EXPECT_EQ(MarkdownEscape("\xc2\x85" "c1"), " c1") << "C1 controls (NEL) too";
  EXPECT_EQ(MarkdownEscape("\xff\xfe"), "\xEF\xBF\xBD\xEF\xBF\xBD") << "invalid UTF-8";
  EXPECT_EQ(MarkdownEscape("abc\xE2\x80\xAE" "cba"), "abc\xEF\xBF\xBD" "cba") << "a right-to-left override";
  EXPECT_EQ(MarkdownEscape("π ≈ 3.14 ✓"), "π ≈ 3\\.14 ✓") << "other text is kept";
}

TEST(MarkdownUrl, CharactersThatEndALinkAreEncoded) {
  EXPECT_EQ(MarkdownUrl("https://ci.example/jobs/1/artifacts/out/report.html"),
            "https://ci.example/jobs/1/artifacts/out/report.html");
  EXPECT_EQ(MarkdownUrl("https://x/a b)c(<d>|e\"f'g`h\\i\n"), "https://x/a%20b%29c%28%3Cd%3E%7Ce%22f%27g%60h%5Ci%0A");
}

ReportModel Model() {
  ReportModel m;
  m.commits = {{"aaaa000000000000000000000000000000000001", "good start", 1},
               {"bbbb000000000000000000000000000000000002", "break *it* | <b>", 2}};
  m.runs = 2;
  SuiteSummary gmm{"gmm", 2, 1, "refstack", "host"};
  gmm.pass = 3;
  gmm.fail = 2;
  SuiteSummary gsm{"gsm8k", 2, 1, "refstack", "host"};
  gsm.at_risk = 1;
  gsm.pass = 1;
  m.summary = {gmm, gsm};
  m.incomplete_nightlies = {{"gitlab-77", "bbbb000000000000000000000000000000000002", "id", {"1/4", "3/4"}, 2, {}}};
  FailureEntry fresh{"gmm/evil_|*_`x`_<script>", CaseStatus::kFail, 2, "", "host", 1, 1, "op @all count\nsecond line"};
  FailureEntry old{"gmm/old_0", CaseStatus::kError, 2, "", "host", 1, 0, std::string(1000, 'x')};
  m.failures = {fresh, old};
  ChangeEntry change{ChangeKind::kNewFailure, fresh.case_id, CaseStatus::kFail, 2, 1, 0, 1, CaseStatus::kPass, "op @all count"};
  change.no_culprit = "not bisected <b>|</b>";
  m.changes = {change};
  NightCounts counts;
  counts.pass = 4;
  counts.at_risk = 1;
  counts.fail = 1;
  counts.error = 1;
  counts.missing_shards = 2;
  m.night = JudgeNight(counts);
  FlakyEntry flaky{"gsm8k/test_gsm8k_accuracy_1", "accuracy", FlakyKind::kGate, 1, 0.91, 0.91, "AT-RISK"};
  flaky.estimate.probability = 0.4;
  flaky.settle = "rerun it";
  FlakyEntry calm = flaky;
  calm.case_id = "gsm8k/calm";
  calm.estimate.probability = 0.001;
  m.flaky = {flaky, calm};
  ReportSession culprit;
  culprit.id = 5;
  culprit.good = m.commits[0].sha;
  culprit.bad = m.commits[1].sha;
  culprit.target = "gsm8k/accuracy";
  culprit.status = "culprit";
  culprit.read_status = SessionStatus::kCulprit;
  culprit.culprit = m.commits[1].sha;
  culprit.confidence = 0.991;
  culprit.runs = 4;
  ReportSession outside = culprit;
  outside.id = 6;
  outside.bad = "cccc000000000000000000000000000000000009";  // not in the window
  ReportSession ambiguous = culprit;
  ambiguous.id = 7;
  ambiguous.status = "ambiguous";
  ambiguous.read_status = SessionStatus::kAmbiguous;
  ambiguous.culprit.clear();
  m.bisect = {culprit, outside, ambiguous};
  return m;
}

TEST(ReportMarkdown, SummarisesEverySectionEscaped) {
  const std::string md = ReportMarkdown(Model(), {.html_url = "https://ci.example/report.html",
                                                  .commit_url = "https://git.example/c/{sha}"});
  EXPECT_EQ(md.rfind("## harness nightly: INCOMPLETE - 4 passed (1 AT-RISK), 1 failed, 0 regressed, 1 error, 0 "
                     "skipped, 2 shards missing\n\n",
                     0),
            0u)
      << md;
  EXPECT_NE(md.find("Latest nightly of 2 suites at [`bbbb00000000`](https://git.example/c/bbbb000000000000000000000000000000000002) "
                    "break \\*it\\* \\| \\<b\\>. [Full report](https://ci.example/report.html)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("> **Warning: incomplete nightly.** nightly gitlab\\-77 at bbbb00000000\\: shards 1\\/4\\, 3\\/4 missing"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| gmm | 3 | 0 | 2 | 0 | 0 | 0 | [`bbbb00000000`]"), std::string::npos) << md;
  EXPECT_NE(md.find("### What changed since the previous nightly (1)\n\n- **new failure** FAIL gmm\\/evil\\_\\|\\*\\_\\`x\\`"
                    "\\_\\<script\\> at [`bbbb00000000`](https://git.example/c/bbbb000000000000000000000000000000000002): op "
                    "\\@all count\n  - no culprit: not bisected \\<b\\>\\|\\<\\/b\\>\n"),
            std::string::npos)
      << md;
  // The changes come first, then what still fails, then the suites.
  EXPECT_LT(md.find("### What changed"), md.find("### Still failing"));
  EXPECT_LT(md.find("### Still failing"), md.find("| suite |"));
  EXPECT_EQ(md.find("second line"), std::string::npos) << "first line of a message only";
  EXPECT_EQ(md.find("found by bisect --auto"), std::string::npos) << "no regression found, no count of them: " << md;
  EXPECT_NE(md.find("### Still failing (1)\n\n- **ERROR** gmm\\/old\\_0 at"), std::string::npos) << md;
  EXPECT_NE(md.find(", failing since [`aaaa00000000`]"), std::string::npos) << md;
  EXPECT_NE(md.find(std::string(kMarkdownMaxTextBytes, 'x') + " …\n"), std::string::npos) << "messages are cut";
  EXPECT_EQ(md.find(std::string(kMarkdownMaxTextBytes + 1, 'x')), std::string::npos);
  EXPECT_NE(md.find("### Bisect (2)\n\n- gsm8k\\/accuracy: ambiguous between [`aaaa00000000`]"), std::string::npos)
      << "newest first, only sessions that bisected into the window: " << md;
  EXPECT_NE(md.find("- gsm8k\\/accuracy: culprit [`bbbb00000000`](https://git.example/c/bbbb000000000000000000000000000000000002) "
                    "break \\*it\\* \\| \\<b\\> (confidence 0.991, 4 runs, session 5)"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("session 6"), std::string::npos) << md;
  EXPECT_NE(md.find("- P = 0.4 gsm8k\\/test\\_gsm8k\\_accuracy\\_1 accuracy (gate, AT\\-RISK): rerun it"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("gsm8k\\/calm"), std::string::npos) << "an unlikely false verdict is left to the full report";
  // Nothing outside could open a tag, a code span or a table cell: every '<', '|' and
  // backtick in the text is one the writer put there.
  for (std::size_t i = md.find('<'); i != std::string::npos; i = md.find('<', i + 1))
    EXPECT_EQ(md[i - 1], '\\') << md.substr(i > 20 ? i - 20 : 0, 40);
}

// Each kind of change is named as what it is, in the order the model gives.
// A culprit note whose session named several: each an item under the culprit's line, in
// order, with its drop; a subject's newline, pipe and backtick stay inside its item.
TEST(ReportMarkdown, SeveralCulpritsAreItemsOfTheCulpritLine) {
  ReportModel m = Model();
  CulpritNote n{RegressionVerdict::kCulprit, m.commits[1].sha, "break", 0.99, 6, 5, {}, std::nullopt, {}};
  n.culprits = {{m.commits[0].sha, "one\n| x | `y`", 0.99, -0.006}, {m.commits[1].sha, "two", 0.97, -0.008}};
  m.changes[0].culprit = n;
  const std::string md = ReportMarkdown(m, {});
  EXPECT_NE(md.find("  - bisect --auto: culprit `bbbb00000000` break (confidence 0.990, 6 runs, bisect session 5)\n"
                    "    1. `aaaa00000000` one \\| x \\| \\`y\\`: moved -0.0060 (-0.60 pp), posterior 0.990\n"
                    "    2. `bbbb00000000` two: moved -0.0080 (-0.80 pp), posterior 0.970\n"),
            std::string::npos)
      << md;
}

TEST(ReportMarkdown, EachKindOfChangeIsNamed) {
  ReportModel m = Model();
  ChangeEntry regressed = m.changes[0];
  regressed.kind = ChangeKind::kPairedRegression;
  regressed.case_id = "gsm8k/regressed";
  ChangeEntry fixed = m.changes[0];
  fixed.kind = ChangeKind::kFixed;
  fixed.case_id = "gmm/fixed";
  fixed.status = CaseStatus::kPass;
  m.changes = {m.changes[0], regressed, fixed};
  const std::string md = ReportMarkdown(m, {});
  EXPECT_NE(md.find("- **new failure** FAIL gmm\\/evil"), std::string::npos) << md;
  EXPECT_NE(md.find("- **paired regression** FAIL gsm8k\\/regressed at"), std::string::npos) << md;
  EXPECT_NE(md.find("- **fixed** PASS gmm\\/fixed at"), std::string::npos) << md;
}

TEST(ReportMarkdown, WithoutLinksAndWithLongListsIsBounded) {
  ReportModel m = Model();
  m.incomplete_nightlies.clear();
  m.failures.clear();
  m.changes.clear();
  for (std::size_t i = 0; i < kMarkdownMaxItems + 5; ++i) {
    m.failures.push_back({"gmm/c_" + std::to_string(i), CaseStatus::kFail, 2, "", "h", 1, 1, "boom"});
    m.changes.push_back({ChangeKind::kNewFailure, "gmm/c_" + std::to_string(i), CaseStatus::kFail, 2, 1});
  }
  NightCounts counts;
  counts.fail = static_cast<int>(kMarkdownMaxItems + 5);
  m.night = JudgeNight(counts);
  const std::string md = ReportMarkdown(m, {});
  EXPECT_EQ(md.rfind("## harness nightly: FAIL - 0 passed, 25 failed, 0 regressed, 0 errors, 0 skipped\n", 0), 0u) << md;
  EXPECT_EQ(md.find("Full report"), std::string::npos);
  EXPECT_EQ(md.find("](http"), std::string::npos) << "no commit links without --commit-url";
  EXPECT_EQ(md.find("Warning"), std::string::npos);
  EXPECT_NE(md.find("### What changed since the previous nightly (25)"), std::string::npos) << md;
  EXPECT_NE(md.find("- … and 5 more changes\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("gmm\\/c\\_20 "), std::string::npos) << "the 21st is not listed";
}

// The flaky section lists the thresholds likely to flip; with none of them likely (the calm
// one alone, or no row at all) there is no heading over an empty list.
TEST(ReportMarkdown, NoLikelyFlakyThresholdIsNoFlakySection) {
  ReportModel m = Model();
  ASSERT_NE(ReportMarkdown(m, {}).find("### Flaky thresholds (1 with"), std::string::npos);
  m.flaky.erase(m.flaky.begin());
  EXPECT_EQ(ReportMarkdown(m, {}).find("Flaky"), std::string::npos) << ReportMarkdown(m, {});
  m.flaky.clear();
  EXPECT_EQ(ReportMarkdown(m, {}).find("Flaky"), std::string::npos) << ReportMarkdown(m, {});
}

}  // namespace
}  // namespace harness::reports
