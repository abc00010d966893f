#include "harness/util/quote.h"

#include <gtest/gtest.h>

#include <string>

namespace harness {
namespace {

TEST(Quote, EscapesControlCharactersAndCutsLongData) {
  EXPECT_EQ(Quote("ok"), "'ok'");
  EXPECT_EQ(Quote(std::string("a\0b\x1b[31m\nc\xff", 11)), "'a\\x00b\\x1b[31m\\nc\xEF\xBF\xBD'");
  const std::string huge(60 << 20, 'x');
  const std::string q = Quote(huge);
  EXPECT_EQ(q, "'" + std::string(kQuotedBytes, 'x') + "'... (62914560 bytes)");
  // A cut never splits a character.
  EXPECT_EQ(Quote("\xc3\xa9\xc3\xa9", 3), "'\xc3\xa9'... (4 bytes)");
}

TEST(Quote, SafeMessageKeepsLinesAndCutsTheMiddleOfAHugeMessage) {
  EXPECT_EQ(SafeMessage("line one\n\tline two \x1b]0;title\x07"), "line one\n\tline two \\x1b]0;title\\x07");
  const std::string huge = "head " + std::string(30 << 20, '9') + " tail";
  const std::string m = SafeMessage(huge);
  EXPECT_LT(m.size(), kMessageBytes + 100);
  EXPECT_EQ(m.rfind("head ", 0), 0u);
  EXPECT_EQ(m.substr(m.size() - 5), " tail");
  EXPECT_NE(m.find("bytes dropped"), std::string::npos);
}

}  // namespace
}  // namespace harness
