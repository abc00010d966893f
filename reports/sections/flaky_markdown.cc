#include "reports/sections/flaky.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "reports/markdown_section.h"

namespace harness::reports {

namespace {

class FlakyMarkdownSection : MarkdownSection {
 public:
  using MarkdownSection::MarkdownSection;

  void Flaky() {
    std::vector<const FlakyEntry*> likely;
    for (const auto& f : m_.flaky)
      if (f.estimate.probability >= kMarkdownFlakyMin) likely.push_back(&f);  // ranked already
    if (likely.empty()) return;
    out_ += fmt::format("### Flaky thresholds ({} with P(false verdict) ≥ {:g})\n\n", likely.size(), kMarkdownFlakyMin);
    const std::size_t n = std::min(likely.size(), kMarkdownMaxItems);
    for (std::size_t i = 0; i < n; ++i) {
      const FlakyEntry& f = *likely[i];
      out_ += fmt::format("- P = {:.3g} {} {} ({}, {}): {}\n", f.estimate.probability, MarkdownEscape(f.case_id),
                          MarkdownEscape(f.metric), MarkdownEscape(Word(f.kind)), MarkdownEscape(f.verdict), Snippet(f.settle));
    }
    More(n, likely.size(), "thresholds");
    out_ += "\n";
  }
};

}  // namespace

void FlakyMarkdown(MarkdownPage& page) { FlakyMarkdownSection(page).Flaky(); }

}  // namespace harness::reports
