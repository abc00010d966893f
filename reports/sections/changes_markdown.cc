#include "reports/sections/changes.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "reports/markdown_section.h"

namespace harness::reports {

namespace {

class ChangesMarkdownSection : MarkdownSection {
 public:
  using MarkdownSection::MarkdownSection;

  // What changed since the previous nightly, first: each case with its culprit or why none.
  void Changes() {
    out_ += fmt::format("### What changed since the previous nightly ({})\n\n", m_.changes.size());
    if (m_.changes.empty()) out_ += "No new failure, no paired regression, no fix.\n\n";
    const std::size_t shown = std::min(m_.changes.size(), kMarkdownMaxItems);
    for (std::size_t i = 0; i < shown; ++i) {
      const ChangeEntry& c = m_.changes[i];
      const char* kind = c.kind == ChangeKind::kNewFailure ? "new failure"
                         : c.kind == ChangeKind::kFixed    ? "fixed"
                                                           : "paired regression";
      out_ += fmt::format("- **{}** {} {} at {}: {}\n", kind, Label(c.status), MarkdownEscape(c.case_id),
                          Sha(m_.commits[c.commit].sha), Snippet(c.finding));
      out_ += "  - " + (c.culprit ? "bisect --auto: " + CulpritLine(*c.culprit, "    ") : "no culprit: " + MarkdownEscape(c.no_culprit)) +
              "\n";
    }
    More(shown, m_.changes.size(), "changes");
    if (!m_.changes.empty()) out_ += "\n";
  }
};

}  // namespace

void ChangesMarkdown(MarkdownPage& page) { ChangesMarkdownSection(page).Changes(); }

}  // namespace harness::reports
