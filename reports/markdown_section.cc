#include "reports/markdown_section.h"

#include <fmt/format.h>

#include "harness/util/git.h"
#include "harness/util/utf8.h"
#include "reports/html_escape.h"

namespace harness::reports {

MarkdownPage::MarkdownPage(const ReportModel& model, const MarkdownOptions& options) : m(model), o(options) {
  for (std::size_t i = 0; i < m.commits.size(); ++i) commit_index[m.commits[i].sha] = i;
}

std::string Snippet(const std::string& s) {
  const std::string line = FirstLine(s);
  const std::string_view cut = Utf8Prefix(line, kMarkdownMaxTextBytes);
  return MarkdownEscape(cut) + (cut.size() < line.size() ? " …" : "");
}

std::string MarkdownSection::Sha(const std::string& sha) const {
  const std::string text = "`" + HexOnly(ShortSha(sha)) + "`";
  const std::string url = CommitUrl(o_.commit_url, sha);
  return url.empty() ? text : fmt::format("[{}]({})", text, MarkdownUrl(url));
}

std::string MarkdownSection::HexOnly(const std::string& s) {
  std::string out;
  for (char c : s)
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) out += c;
  return out;
}

std::string MarkdownSection::Commit(std::size_t i) const {
  const auto& c = m_.commits[i];
  return c.subject.empty() ? Sha(c.sha) : Sha(c.sha) + " " + Snippet(c.subject);
}

void MarkdownSection::More(std::size_t shown, std::size_t total, const char* what) {
  if (total > shown)
    out_ += fmt::format("- … and {} more {}{}\n", total - shown, what, o_.html_url.empty() ? "" : " (full report)");
}

std::string MarkdownSection::CulpritLine(const CulpritNote& n, const std::string& indent) const {
  if (n.verdict != RegressionVerdict::kCulprit) return MarkdownEscape(CulpritWords(n));
  return fmt::format("culprit {} {} {}", Sha(n.culprit), MarkdownEscape(n.subject), CulpritEvidence(n)) +
         CulpritList(n.culprits, indent);
}

std::string MarkdownSection::CulpritList(const std::vector<BisectChange>& culprits, const std::string& indent) const {
  if (culprits.size() < 2) return "";
  std::string out;
  for (std::size_t i = 0; i < culprits.size(); ++i) {
    const BisectChange& c = culprits[i];
    out += fmt::format("\n{}{}. {}", indent, i + 1, CulpritChangeWords(c, Sha(c.sha), MarkdownEscape(c.subject)));
  }
  return out;
}

}  // namespace harness::reports
