#include "reports/report_markdown.h"

#include <fmt/format.h>

#include "harness/util/utf8.h"
#include "reports/markdown_section.h"

namespace harness::reports {
namespace {

// The summary's frame: the night's headline, then the sections it picks, in order
// (reports/sections/).
class Writer : MarkdownSection {
 public:
  explicit Writer(MarkdownPage& page) : MarkdownSection(page), page_(page) {}

  std::string Render() {
    Headline();
    IncompleteMarkdown(page_);
    ChangesMarkdown(page_);
    FailuresMarkdown(page_);
    SuitesMarkdown(page_);
    BisectMarkdown(page_);
    FlakyMarkdown(page_);
    return std::move(out_);
  }

 private:
  // The night's line, word for word as harness run's stdout and JUnit state it.
  void Headline() {
    out_ += "## " + m_.night.Line() + "\n\n";
    out_ += fmt::format("Latest nightly of {} suites at {}.", m_.summary.size(), Commit(m_.commits.size() - 1));
    if (!o_.html_url.empty()) out_ += fmt::format(" [Full report]({})", MarkdownUrl(o_.html_url));
    out_ += "\n\n";
  }

  MarkdownPage& page_;
};

bool Bidi(char32_t c) { return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069); }

}  // namespace

std::string MarkdownEscape(std::string_view text) {
  return EscapeCodePoints(text, [](char32_t cp, std::string_view bytes, std::string& out) {
    const bool punct = (cp >= '!' && cp <= '/') || (cp >= ':' && cp <= '@') || (cp >= '[' && cp <= '`') ||
                       (cp >= '{' && cp <= '~');
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) out += ' ';  // C0, DEL and C1 controls
    else if (Bidi(cp)) out += kReplacementCharacter;
    else out.append(punct ? "\\" : "").append(bytes);
  });
}

std::string MarkdownUrl(std::string_view url) {
  std::string out;
  for (unsigned char c : url) {
    if (c <= 0x20 || c >= 0x7f || c == '(' || c == ')' || c == '<' || c == '>' || c == '|' || c == '\\' || c == '`' ||
        c == '"' || c == '\'')
      out += fmt::format("%{:02X}", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

std::string ReportMarkdown(const ReportModel& m, const MarkdownOptions& o) {
  MarkdownPage page(m, o);
  return Writer(page).Render();
}

}  // namespace harness::reports
