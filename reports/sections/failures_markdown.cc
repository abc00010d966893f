#include "reports/sections/failures.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "reports/markdown_section.h"

namespace harness::reports {

namespace {

class FailuresMarkdownSection : MarkdownSection {
 public:
  using MarkdownSection::MarkdownSection;

  void Failures() {
    // The new failures are listed under the changes; here what fails since an earlier commit.
    std::vector<const FailureEntry*> older;
    for (const auto& f : m_.failures)
      if (f.failing_since != f.commit) older.push_back(&f);
    auto list = [&](const std::vector<const FailureEntry*>& entries, const char* title, bool since) {
      if (entries.empty()) return;
      out_ += fmt::format("### {} ({})\n\n", title, entries.size());
      const std::size_t shown = std::min(entries.size(), kMarkdownMaxItems);
      for (std::size_t i = 0; i < shown; ++i) {
        const FailureEntry& f = *entries[i];
        out_ += fmt::format("- **{}** {} at {}{}: {}\n", Label(f.status), MarkdownEscape(f.case_id), Sha(m_.commits[f.commit].sha),
                            since ? ", failing since " + Sha(m_.commits[f.failing_since].sha) : std::string(),
                            Snippet(f.message));
        if (f.culprit) out_ += "  - bisect --auto: " + CulpritLine(*f.culprit, "    ") + "\n";
      }
      More(shown, entries.size(), "failures");
      out_ += "\n";
    };
    if (!m_.regressions.empty())
      out_ += fmt::format("{} regressions found by bisect --auto, {} with a culprit.\n\n", m_.regressions.size(),
                          m_.RegressionsWithCulprit());
    list(older, "Still failing", true);
    if (!m_.failures_listed.empty())
      out_ += fmt::format("{} more failing cases past the report's bounds are listed by id in the full report.\n\n",
                          m_.failures_listed.size());
  }
};

}  // namespace

void FailuresMarkdown(MarkdownPage& page) { FailuresMarkdownSection(page).Failures(); }

}  // namespace harness::reports
