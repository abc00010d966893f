#include "reports/sections/bisect.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "reports/markdown_section.h"

namespace harness::reports {

namespace {

class BisectMarkdownSection : MarkdownSection {
 public:
  using MarkdownSection::MarkdownSection;

  // Sessions that bisected into the window (their bad commit is in it), newest first.
  void Bisect() {
    std::vector<const ReportSession*> shown;
    for (auto it = m_.bisect.rbegin(); it != m_.bisect.rend(); ++it)
      if (commit_index_.count(it->bad)) shown.push_back(&*it);
    if (shown.empty()) return;
    out_ += fmt::format("### Bisect ({})\n\n", shown.size());
    const std::size_t n = std::min(shown.size(), kMarkdownMaxItems);
    for (std::size_t i = 0; i < n; ++i) {
      const ReportSession& b = *shown[i];
      out_ += fmt::format("- {}: ", MarkdownEscape(b.target));
      if (b.read_status == SessionStatus::kCulprit) {
        auto c = commit_index_.find(b.culprit);
        out_ += fmt::format("culprit {}", c == commit_index_.end() ? Sha(b.culprit) : Commit(c->second));
      } else {
        out_ += fmt::format("{} between {} and {}", MarkdownEscape(b.status), Sha(b.good), Sha(b.bad));
      }
      const auto timing = SessionTiming(b);
      out_ += fmt::format(" (confidence {:.3f}, {} runs, session {}{})", b.confidence, b.runs, b.id,
                          timing ? "; " + MarkdownEscape(TimingWords(*timing)) : "");
      if (auto c = m_.session_culprits.find(b.id); c != m_.session_culprits.end()) out_ += CulpritList(c->second, "  ");
      out_ += "\n";
    }
    More(n, shown.size(), "sessions");
    out_ += "\n";
  }
};

}  // namespace

void BisectMarkdown(MarkdownPage& page) { BisectMarkdownSection(page).Bisect(); }

}  // namespace harness::reports
