#include "harness/util/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace harness {
namespace {

TEST(Utf8, InvalidSequencesBecomeTheReplacementCharacter) {
  EXPECT_EQ(ValidUtf8("ok \xc3\xa9"), "ok \xc3\xa9");
  EXPECT_EQ(ValidUtf8("a\x80" "b"), "a\xEF\xBF\xBD" "b");            // stray continuation byte
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), "\xEF\xBF\xBD\xEF\xBF\xBD");       // overlong '/'
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(ValidUtf8("\xe2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");       // truncated
}

// Every escaper rests on this walk: each code point of every length, and an invalid byte as
// U+FFFD, with the bytes that spell it.
TEST(Utf8, EscapeCodePointsHandsOverEachCodePointWithItsBytes) {
  std::vector<std::pair<char32_t, std::string>> seen;
  const std::string copied = EscapeCodePoints(
      "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff", [&](char32_t cp, std::string_view bytes, std::string& out) {
        seen.emplace_back(cp, std::string(bytes));
        out += bytes;
      });
  const std::vector<std::pair<char32_t, std::string>> want = {
      {U'a', "a"}, {0xE9, "\xc3\xa9"}, {0x20AC, "\xe2\x82\xac"}, {0x1F600, "\xf0\x9f\x98\x80"}, {0xFFFD, "\xEF\xBF\xBD"}};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(copied, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xEF\xBF\xBD");
}

TEST(Utf8, PrefixNeverSplitsACharacter) {
  EXPECT_EQ(Utf8Prefix("abc", 5), "abc");
  EXPECT_EQ(Utf8Prefix("abc", 2), "ab");
  EXPECT_EQ(Utf8Prefix("a\xc3\xa9", 2), "a") << "the cut would split the e-acute";
  EXPECT_EQ(Utf8Prefix("a\xc3\xa9", 3), "a\xc3\xa9");
  EXPECT_EQ(Utf8Prefix("\xe6\x97\xa5\xe6\x97\xa5", 5), "\xe6\x97\xa5");
  EXPECT_EQ(Utf8Prefix("\xf0\x9f\x98\x80!", 3), "");
  EXPECT_EQ(ValidUtf8(Utf8Prefix("\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 7)), "\xf0\x9f\x98\x80")
      << "valid UTF-8 stays valid";
}

TEST(Utf8, TerminalTextShowsControlCharactersAsEscapes) {
  EXPECT_EQ(TerminalText("line\n\tindented"), "line\n\tindented");
  EXPECT_EQ(TerminalText("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(TerminalText("PASS\rFAIL\x07\x7f"), "PASS\\x0dFAIL\\x07\\x7f");
  EXPECT_EQ(TerminalText("\xc2\x9b" "2J"), "\\u009b2J");               // C1 CSI
  EXPECT_EQ(TerminalText("\xc2\xa0\xc3\xa9 \xe6\x97\xa5"), "\xc2\xa0\xc3\xa9 \xe6\x97\xa5");  // kept
  EXPECT_EQ(TerminalText("bad \x80"), "bad \xEF\xBF\xBD");
  EXPECT_EQ(TerminalText(std::string("nul\0!", 5)), "nul\\x00!");
}

}  // namespace
}  // namespace harness
