#include "reports/html_escape.h"

#include <gtest/gtest.h>

namespace harness::reports {
namespace {

TEST(HtmlEscape, EscapesMarkupAndQuotesForContentAndAttributes) {
  EXPECT_EQ(HtmlEscape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape(R"("><img src=x onerror=alert(2)>)"), "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;");
  EXPECT_EQ(HtmlEscape("a & b 'c'"), "a &amp; b &#39;c&#39;");
  EXPECT_EQ(HtmlEscape("&amp;"), "&amp;amp;") << "already escaped text is shown as written";
  EXPECT_EQ(HtmlEscape("line\n\ttab"), "line\n\ttab");
}

TEST(HtmlEscape, InvalidUtf8AndControlsBecomeReplacementCharacters) {
  EXPECT_EQ(HtmlEscape(std::string("ok \xC3\xA9 \xFF<", 8)), "ok \xC3\xA9 \xEF\xBF\xBD&lt;");
  EXPECT_EQ(HtmlEscape(std::string("a\0b\x1b", 4)), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  EXPECT_EQ(HtmlEscape("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD") << "a truncated sequence";
}

TEST(HtmlEscape, UrlEscapeKeepsOnlyUnreservedBytes) {
  EXPECT_EQ(UrlEscape("abc-1.2_~"), "abc-1.2_~");
  EXPECT_EQ(UrlEscape("a b/\"<>&?#"), "a%20b%2F%22%3C%3E%26%3F%23");
}

TEST(HtmlEscape, CommitUrlSubstitutesEverySlot) {
  EXPECT_EQ(CommitUrl("https://host/repo/commit/{sha}", "0a1b"), "https://host/repo/commit/0a1b");
  EXPECT_EQ(CommitUrl("https://h/{sha}?c={sha}", "\"x"), "https://h/%22x?c=%22x");
  EXPECT_EQ(CommitUrl("", "abc"), "");
  EXPECT_EQ(CommitUrl("https://h/", "abc"), "https://h/");
}

}  // namespace
}  // namespace harness::reports
