#include "reports/report_markdown.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "harness/util/utf8.h"
#include "reports/html_escape.h"

namespace harness::reports {
namespace {

// The first line of an outside text, cut and escaped.
std::string Snippet(const std::string& s) {
  const std::string line = FirstLine(s);
  const std::string_view cut = Utf8Prefix(line, kMarkdownMaxTextBytes);
  return MarkdownEscape(cut) + (cut.size() < line.size() ? " …" : "");
}

class Writer {
 public:
  Writer(const ReportModel& m, const MarkdownOptions& o) : m_(m), o_(o) {
    for (std::size_t i = 0; i < m_.commits.size(); ++i) commit_index_[m_.commits[i].sha] = i;
  }

  std::string Render() {
    Headline();
    Incomplete();
    Changes();
    Failures();
    Suites();
    Bisect();
    Flaky();
    return std::move(out_);
  }

 private:
  std::string Sha(const std::string& sha) const {
    const std::string text = "`" + HexOnly(ShortSha(sha)) + "`";
    const std::string url = CommitUrl(o_.commit_url, sha);
    return url.empty() ? text : fmt::format("[{}]({})", text, MarkdownUrl(url));
  }
  // A stored sha is hex, but a damaged or hostile database may hold anything: inside a code
  // span only a backtick could end it, so anything but [0-9a-z] is dropped.
  static std::string HexOnly(const std::string& s) {
    std::string out;
    for (char c : s)
      if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')) out += c;
    return out;
  }
  std::string Commit(std::size_t i) const {
    const auto& c = m_.commits[i];
    return c.subject.empty() ? Sha(c.sha) : Sha(c.sha) + " " + Snippet(c.subject);
  }
  void More(std::size_t shown, std::size_t total, const char* what) {
    if (total > shown)
      out_ += fmt::format("- … and {} more {}{}\n", total - shown, what, o_.html_url.empty() ? "" : " (full report)");
  }

  // The night's line, word for word as harness run's stdout and JUnit state it.
  void Headline() {
    out_ += "## " + m_.night.Line() + "\n\n";
    out_ += fmt::format("Latest nightly of {} suites at {}.", m_.summary.size(), Commit(m_.commits.size() - 1));
    if (!o_.html_url.empty()) out_ += fmt::format(" [Full report]({})", MarkdownUrl(o_.html_url));
    out_ += "\n\n";
  }

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

  // The culprit linked (with --commit-url), else the words every rendering shows; a session
  // that named several lists them below, as items indented by indent.
  std::string CulpritLine(const CulpritNote& n, const std::string& indent) const {
    if (n.verdict != RegressionVerdict::kCulprit) return MarkdownEscape(CulpritWords(n));
    return fmt::format("culprit {} {} {}", Sha(n.culprit), MarkdownEscape(n.subject), CulpritEvidence(n)) +
           CulpritList(n.culprits, indent);
  }

  // "\n  1. `abc123def456` subject: moved -0.0060 (-0.60 pp), posterior 0.990" per culprit,
  // for two or more; each sha linked like every other.
  std::string CulpritList(const std::vector<BisectChange>& culprits, const std::string& indent) const {
    if (culprits.size() < 2) return "";
    std::string out;
    for (std::size_t i = 0; i < culprits.size(); ++i) {
      const BisectChange& c = culprits[i];
      out += fmt::format("\n{}{}. {}", indent, i + 1, CulpritChangeWords(c, Sha(c.sha), MarkdownEscape(c.subject)));
    }
    return out;
  }

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

  const ReportModel& m_;
  const MarkdownOptions& o_;
  std::map<std::string, std::size_t> commit_index_;
  std::string out_;
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

std::string ReportMarkdown(const ReportModel& m, const MarkdownOptions& o) { return Writer(m, o).Render(); }

}  // namespace harness::reports
