#include "reports/junit.h"

#include <gtest/gtest.h>

namespace harness::reports {
namespace {

TEST(Junit, GroupsBySuiteAndEscapesMessages) {
  std::vector<CaseSummary> cases = {
      {"gmm/test_q_0", "pass", 0.5, "", {}},
      {"gmm/test_q_1", "fail", 0.25, "expected <a & \"b\">\nmore", {}},
      {"sp/test_s_0", "error", 1, "endpoint down", {}},
      {"sp/test_s_1", "skip", 0, "not on this stack", {}},
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

}  // namespace
}  // namespace harness::reports
