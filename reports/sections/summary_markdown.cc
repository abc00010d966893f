#include "reports/sections/summary.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "reports/markdown_section.h"

namespace harness::reports {

namespace {

class SummaryMarkdownSection : MarkdownSection {
 public:
  using MarkdownSection::MarkdownSection;

  void Incomplete() {
    for (const auto& gap : m_.incomplete_nightlies)
      out_ += "> **Warning: incomplete nightly.** " + MarkdownEscape(NightlyGapText(gap)) +
              ": their cases are not in this report.\n\n";
  }

  void Suites() {
    out_ += "| suite | pass | of them at-risk | fail | of them regressed | error | skip | commit |\n"
            "| --- | --: | --: | --: | --: | --: | --: | --- |\n";
    for (const auto& s : m_.summary)
      out_ += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", MarkdownEscape(s.suite), s.pass, s.at_risk, s.fail,
                          s.regressed, s.error, s.skip, Sha(m_.commits[s.commit].sha));
    out_ += "\n";
  }
};

}  // namespace

void IncompleteMarkdown(MarkdownPage& page) { SummaryMarkdownSection(page).Incomplete(); }
void SuitesMarkdown(MarkdownPage& page) { SummaryMarkdownSection(page).Suites(); }

}  // namespace harness::reports
