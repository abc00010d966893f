// The pieces of the HTML report its sections' renderers share (reports/report_html.cc writes
// the page frame, reports/sections/<section>_render.cc a section each): the page written into,
// and the cells several sections show (a commit, a culprit, a badge). Internal to reports/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "harness/util/git.h"
#include "reports/html_escape.h"
#include "reports/report_html.h"
#include "reports/report_model.h"

namespace harness::reports {

// The page: the model and options it renders, and the HTML written so far.
struct HtmlPage {
  const ReportModel& m;
  const HtmlOptions& o;
  std::string out;
};

// The base of a section's HTML renderer: the page by the names every renderer uses.
class HtmlSection {
 public:
  explicit HtmlSection(HtmlPage& page) : m_(page.m), o_(page.o), out_(page.out) {}

 protected:
  static std::string E(std::string_view s) { return HtmlEscape(s); }
  std::string Sha(const std::string& sha) const {
    const std::string text = fmt::format("<code>{}</code>", E(ShortSha(sha)));
    const std::string url = CommitUrl(o_.commit_url, sha);
    return url.empty() ? text : fmt::format(R"(<a href="{}" title="{}">{}</a>)", E(url), E(sha), text);
  }

  // A session's several culprits, each with its own drop and posterior, in first-parent order
  // ("" for fewer than two: the culprit line says it all). Styled as a culprit line, so the
  // stylesheet of a one-culprit report stays as it was.
  std::string CulpritList(const std::vector<BisectChange>& culprits) const {
    if (culprits.size() < 2) return "";
    std::string out = fmt::format(R"(<p class="culprit">{} culprits in the range, in first-parent order:</p><ol class="culprit culprits">)",
                                  culprits.size());
    for (const auto& c : culprits)
      out += fmt::format("<li>{} {} · moved {:+.4f} ({:+.2f} pp) · posterior {:.3f}</li>", Sha(c.sha), E(c.subject), c.size,
                         100 * c.size, c.confidence);
    return out + "</ol>";
  }

  std::string CommitCell(std::size_t i) const {
    const auto& c = m_.commits[i];
    return Sha(c.sha) + " " + E(c.subject);
  }

  static std::string Badge(const char* cls, const std::string& text) {
    return fmt::format(R"(<span class="badge {}">{}</span>)", cls, E(text));
  }

  static const char* StatusBadgeClass(CaseStatus s) {
    switch (s) {
      case CaseStatus::kPass: return "b-pass";
      case CaseStatus::kFail: return "b-fail";
      case CaseStatus::kSkip: return "b-skip";
      default: return "b-error";
    }
  }

  // A model verdict is a gate verdict's word, else the case's status label (TrendPoint, FlakyEntry).
  static const char* VerdictClass(const std::string& v) {
    if (const auto gate = ParseGateVerdict(v)) {
      switch (*gate) {
        case GateVerdict::kAtRisk: return "b-risk";
        case GateVerdict::kPass: return "b-pass";
        case GateVerdict::kFail: return "b-fail";
      }
    }
    if (v == Label(CaseStatus::kSkip)) return "b-skip";
    return "b-error";
  }

  static bool AtRisk(const std::string& verdict) { return ParseGateVerdict(verdict) == GateVerdict::kAtRisk; }

  // What bisect --auto said of the failure's regression; the culprit's sha links to it.
  void Culprit(const CulpritNote& n) {
    if (n.verdict == RegressionVerdict::kCulprit) {
      out_ += fmt::format(R"(<p class="culprit"><strong>Culprit</strong> {} {} · confidence {:.3f} · {} runs · )"
                          R"(<a href="#bisect-{}">bisect session {}</a>{}</p>)",
                          Sha(n.culprit), E(n.subject), n.confidence, n.runs, n.session, n.session,
                          n.timing ? " · " + E(TimingWords(*n.timing)) : "");
      out_ += CulpritList(n.culprits);
      return;
    }
    out_ += fmt::format(R"(<p class="culprit {}">{}</p>)", n.verdict == RegressionVerdict::kNotConfirmed ? "flaky" : "open",
                        E(CulpritWords(n)));
  }

  const ReportModel& m_;
  const HtmlOptions& o_;
  std::string& out_;
};

}  // namespace harness::reports
