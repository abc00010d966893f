// Several culprits in one range (issue 35 §3) in the report, through the real binary: a real
// `harness bisect --max-culprits 2` over a scripted history with two drops of one metric
// (two_drops_test_util.h), then `harness report` in every format lists both culprits, in
// first-parent order, each with its own drop and confidence; their subjects carry HTML,
// Markdown (pipes, backticks, a newline) and terminal escapes, and come out as data.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/cli/culprit_list_test_util.h"
#include "harness/cli/two_drops_test_util.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness {
namespace report_culprits_e2e_test {

using testing_util::ExpectListedInOrder;
using testing_util::HtmlCulpritList;
using testing_util::LinesWith;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::TempDir;

// git joins a subject's lines (%s): the newline reaches the store as a space.
const std::string kHostile = "drop <b>bold</b> | pipe `tick` \x1b[31mred\x1b[0m\nsecond <i>line</i>";
const std::string kStoredSubject = "drop <b>bold</b> | pipe `tick` \x1b[31mred\x1b[0m second <i>line</i>";

std::string Report(const testing_util::TwoDropsHistory& h, const std::string& format) {
  auto r = RunHarness({"report", "--db", h.db, "--format", format});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

// The history bisected with --max-culprits 2: both drops found (bisect's own output says so).
testing_util::TwoDropsHistory BisectedTwice(const TempDir& dir) {
  auto h = testing_util::MakeTwoDropsHistory(dir.path(), kHostile);
  auto r = RunHarness(h.BisectArgs("json", 2));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["changes"].size(), 2u) << r.out;
  return h;
}

TEST(ReportCulpritsE2E, JsonListsEveryCulpritOfTheSessionWithItsOwnDropInOrder) {
  TempDir dir;
  const auto h = BisectedTwice(dir);
  auto parsed = ParseJson(Report(h, "json"), "report");
  ASSERT_TRUE(parsed.ok());
  const Json& bisect = (*parsed)["bisect"];
  ASSERT_EQ(bisect.size(), 1u) << bisect;
  EXPECT_EQ(bisect[0]["culprit"], h.shas[7]) << "the first culprit stays the session's culprit";
  const Json& culprits = bisect[0]["culprits"];
  ASSERT_EQ(culprits.size(), 2u) << bisect[0];
  EXPECT_EQ(culprits[0]["commit"], h.shas[7]);
  EXPECT_EQ(culprits[1]["commit"], h.shas[16]);
  EXPECT_EQ(culprits[0]["subject"], kStoredSubject + " 8");
  EXPECT_EQ(culprits[1]["subject"], kStoredSubject + " 17");
  EXPECT_NEAR(culprits[0]["size_pp"].get<double>(), -6.0, 1e-4);
  EXPECT_NEAR(culprits[1]["size_pp"].get<double>(), -8.0, 1e-4);
  for (const auto& c : culprits) EXPECT_GE(c["confidence"].get<double>(), 0.95) << c;
  // Each culprit marks the case's trend, the later drop too.
  const Json& trends = (*parsed)["trends"];
  ASSERT_EQ(trends.size(), 1u);
  ASSERT_EQ(trends[0]["culprits"].size(), 2u) << trends[0]["culprits"];
  EXPECT_EQ(trends[0]["culprits"][0]["commit"], h.shas[7]);
  EXPECT_EQ(trends[0]["culprits"][1]["commit"], h.shas[16]);
  EXPECT_NE(trends[0]["culprits"][1]["text"].get<std::string>().find("culprit 2 of 2"), std::string::npos)
      << trends[0]["culprits"][1];
}

TEST(ReportCulpritsE2E, TextListsEveryCulpritInOrderWithItsDropAndNoEscapeReachesTheTerminal) {
  TempDir dir;
  const auto h = BisectedTwice(dir);
  const std::string text = Report(h, "text");
  EXPECT_NE(text.find("2 culprits in the range, in first-parent order:"), std::string::npos) << text;
  const auto first = text.find("1. " + ShortSha(h.shas[7])), second = text.find("2. " + ShortSha(h.shas[16]));
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second);
  EXPECT_NE(text.find("moved -0.0600 (-6.00 pp), posterior"), std::string::npos) << text;
  EXPECT_NE(text.find("moved -0.0800 (-8.00 pp), posterior"), std::string::npos) << text;
  EXPECT_LT(text.find("-6.00 pp"), text.find("-8.00 pp"));
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "a subject's terminal escape reached the terminal";
}

TEST(ReportCulpritsE2E, MarkdownListsEveryCulpritAsAnItemOfItsSessionWithTheSubjectEscaped) {
  TempDir dir;
  const auto h = BisectedTwice(dir);
  const std::string md = Report(h, "markdown");
  const auto first = LinesWith(md, "  1. `" + ShortSha(h.shas[7]) + "`");
  const auto second = LinesWith(md, "  2. `" + ShortSha(h.shas[16]) + "`");
  ASSERT_EQ(first.size(), 1u) << md;
  ASSERT_EQ(second.size(), 1u) << md;
  EXPECT_LT(md.find(first[0]), md.find(second[0]));
  EXPECT_NE(first[0].find("moved -0.0600 (-6.00 pp), posterior"), std::string::npos) << first[0];
  EXPECT_NE(second[0].find("moved -0.0800 (-8.00 pp), posterior"), std::string::npos) << second[0];
  for (const auto& line : {first[0], second[0]}) {
    // Each culprit stays one item: no raw pipe, backtick or tag of the subject acts as Markdown.
    EXPECT_NE(line.find(R"(\<b\>bold\<\/b\> \| pipe \`tick\`)"), std::string::npos) << line;
    EXPECT_NE(line.find(R"(second \<i\>line\<\/i\>)"), std::string::npos) << line;
  }
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
  // The items belong to the session's line, the bisect section's item just above.
  const auto session = LinesWith(md, "culprit `" + ShortSha(h.shas[7]) + "`");
  ASSERT_FALSE(session.empty()) << md;
  EXPECT_EQ(md.find(session[0] + "\n" + first[0] + "\n" + second[0] + "\n"), md.find(session[0])) << md;
}

TEST(ReportCulpritsE2E, HtmlListsEveryCulpritInOrderWithTheSubjectEscaped) {
  TempDir dir;
  const auto h = BisectedTwice(dir);
  auto r = RunHarness({"report", "--db", h.db, "--out", (dir / "r.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = ReadFile(dir / "r.html");
  const std::string items = HtmlCulpritList(html);
  ASSERT_FALSE(items.empty()) << "no list of culprits";
  ASSERT_NO_FATAL_FAILURE(ExpectListedInOrder(items, h.shas[7], h.shas[16]));
  EXPECT_NE(items.find("moved -0.0600 (-6.00 pp)"), std::string::npos) << items;
  EXPECT_NE(items.find("moved -0.0800 (-8.00 pp)"), std::string::npos) << items;
  EXPECT_NE(items.find("&lt;b&gt;bold&lt;/b&gt; | pipe `tick`"), std::string::npos) << items;
  EXPECT_EQ(html.find("<b>bold"), std::string::npos) << "a subject's tag reached the HTML";
  EXPECT_EQ(html.find("<i>line"), std::string::npos) << "a subject's tag reached the HTML";
  EXPECT_NE(html.find(R"(<p class="culprit">2 culprits in the range, in first-parent order:</p>)"), std::string::npos);
}

// A session that named one culprit shows no list in any format: the report reads as before
// sessions named several.
TEST(ReportCulpritsE2E, AOneCulpritSessionShowsNoListInAnyFormat) {
  TempDir dir;
  auto h = testing_util::MakeTwoDropsHistory(dir.path(), kHostile);
  auto r = RunHarness(h.BisectArgs("json", 1));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(testing_util::StdoutJson(r)["verdict"], "culprit") << r.out;
  auto parsed = ParseJson(Report(h, "json"), "report");
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ((*parsed)["bisect"].size(), 1u);
  EXPECT_FALSE((*parsed)["bisect"][0].contains("culprits")) << (*parsed)["bisect"][0];
  EXPECT_EQ(Report(h, "text").find("culprits in the range"), std::string::npos);
  EXPECT_EQ(Report(h, "markdown").find("  1. `"), std::string::npos);
  ASSERT_EQ(RunHarness({"report", "--db", h.db, "--out", (dir / "r.html").string()}).exit_code, 0);
  EXPECT_EQ(ReadFile(dir / "r.html").find("culprits in the range"), std::string::npos);
}

}  // namespace report_culprits_e2e_test
}  // namespace harness
