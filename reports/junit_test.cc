#include "reports/junit.h"

#include <gtest/gtest.h>

namespace harness::reports {
namespace {

TEST(Junit, GroupsBySuiteAndEscapesMessages) {
  std::vector<CaseResult> cases = {
      {"gmm/test_q_0", CaseStatus::kPass, 0.5, "", {}, {}},
      {"gmm/test_q_1", CaseStatus::kFail, 0.25, "expected <a & \"b\">\nmore", {}, {}},
      {"sp/test_s_0", CaseStatus::kError, 1, "endpoint down", {}, {}},
      {"sp/test_s_1", CaseStatus::kSkip, 0, "not on this stack", {}, {}},
  };
  std::string xml = JunitXml(cases);
  EXPECT_NE(xml.find("<testsuites name=\"harness\" tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"gmm\" tests=\"2\" failures=\"1\""), std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"expected &lt;a &amp; &quot;b&quot;&gt;\">"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"endpoint down\">"), std::string::npos);
  EXPECT_NE(xml.find("<skipped message=\"not on this stack\">"), std::string::npos);
  EXPECT_EQ(xml.find("<a &"), std::string::npos) << "nothing raw";
}

TEST(Junit, DropsControlCharactersXmlCannotCarry) {
  EXPECT_EQ(XmlEscape(std::string("a\x01" "b\tc")), "ab\tc");
}

TEST(Junit, InvalidUtf8BecomesReplacementCharacters) {
  // A command's stderr may hold any bytes; the document must stay well-formed UTF-8.
  EXPECT_EQ(XmlEscape(std::string("ok \xff\xfe \xc3\xa9 \xe2\x82")), "ok \xEF\xBF\xBD\xEF\xBF\xBD \xC3\xA9 \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(XmlEscape(std::string("\xef\xbf\xbe")), "\xEF\xBF\xBD");  // U+FFFE is no XML character
}

}  // namespace
}  // namespace harness::reports
