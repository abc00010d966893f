#include "reports/sections/bisect.h"

#include <fmt/format.h>

#include "reports/html_section.h"
#include "reports/report_json.h"
#include "reports/report_model.h"
#include "reports/report_text.h"

namespace harness::reports {

namespace {

class BisectHtmlSection : HtmlSection {
 public:
  using HtmlSection::HtmlSection;

  void Bisect() {
    out_ += fmt::format("<section id=\"bisect\"><h2>Bisect sessions <span class=\"count\">{}</span></h2>\n",
                        m_.bisect.size());
    if (m_.bisect.empty()) out_ += "<p class=\"none\">No bisect session is stored.</p>\n";
    for (auto it = m_.bisect.rbegin(); it != m_.bisect.rend(); ++it) {
      const auto& b = *it;
      out_ += fmt::format(
          R"(<article class="item" id="bisect-{}"><h3>session {}: {}</h3><div class="since">{} (good) .. {} (bad), {} → {}; )"
          R"(status <b>{}</b>{}, confidence {:.3f}, {} commands run{}</div>)",
          b.id, b.id, E(b.target), Sha(b.good), Sha(b.bad), E(b.started_at), E(b.finished_at), E(b.status),
          b.culprit.empty() ? std::string() : ", culprit " + Sha(b.culprit), b.confidence, b.runs,
          SessionTiming(b) ? "; " + E(TimingWords(*SessionTiming(b))) : "");
      if (auto c = m_.session_culprits.find(b.id); c != m_.session_culprits.end()) out_ += CulpritList(c->second);
      out_ += fmt::format("<details><summary>{} steps</summary><table><thead><tr><th>step</th><th>commit</th><th>source</th>"
                          "<th>run</th><th>exit</th><th>evidence</th><th>decision</th></tr></thead><tbody>",
                          b.steps.size());
      for (const auto& s : b.steps)
        out_ += fmt::format(R"(<tr><td class="num">{}</td><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td>)"
                            R"(<td><code>{}</code></td><td><code>{}</code></td></tr>)",
                            s.step, Sha(s.sha), E(s.source), s.run_id ? std::to_string(*s.run_id) : "",
                            s.exit_code ? std::to_string(*s.exit_code) : "", E(s.evidence_json), E(s.decision_json));
      out_ += "</tbody></table></details></article>\n";
    }
    out_ += "</section>\n";
  }
};

}  // namespace

void BisectHtml(HtmlPage& page) { BisectHtmlSection(page).Bisect(); }

std::string BisectText(const ReportModel& m) {
  std::string out = fmt::format("\nBISECT SESSIONS ({})\n", m.bisect.size());
  for (const auto& b : m.bisect) {
    const auto timing = SessionTiming(b);
    out += fmt::format("  {}: {} {}..{} -> {}{} (confidence {:.3f}, {} steps{})\n", b.id, b.target, ShortSha(b.good),
                       ShortSha(b.bad), b.status, b.culprit.empty() ? "" : " " + ShortSha(b.culprit), b.confidence,
                       b.steps.size(), timing ? "; " + TimingWords(*timing) : "");
    if (auto c = m.session_culprits.find(b.id); c != m.session_culprits.end()) {
      out += fmt::format("    {} culprits in the range, in first-parent order:\n", c->second.size());
      for (std::size_t i = 0; i < c->second.size(); ++i)
        out += fmt::format("      {}. {}\n", i + 1, CulpritChangeWords(c->second[i]));
    }
  }
  return out;
}

Json BisectJson(const ReportModel& m) {
  Json bisect = Json::array();
  for (const auto& b : m.bisect) {
    Json steps = Json::array();
    for (const auto& s : b.steps)
      steps.push_back({{"step", s.step}, {"commit", s.sha}, {"source", s.source},
                       {"run", s.run_id ? Json(*s.run_id) : Json(nullptr)},
                       {"exit_code", s.exit_code ? Json(*s.exit_code) : Json(nullptr)},
                       {"evidence", ParseJsonOrDiscarded(s.evidence_json)},
                       {"decision", ParseJsonOrDiscarded(s.decision_json)}});
    Json session{{"session", b.id}, {"good", b.good}, {"bad", b.bad}, {"target", b.target}, {"status", b.status},
                 {"culprit", b.culprit}, {"confidence", b.confidence}, {"runs", b.runs},
                 {"started_at", b.started_at}, {"finished_at", b.finished_at}, {"steps", steps},
                 {"time", TimingJson(SessionTiming(b))}};
    if (auto c = m.session_culprits.find(b.id); c != m.session_culprits.end()) session["culprits"] = ChangesJson(c->second);
    bisect.push_back(std::move(session));
  }
  return bisect;
}

}  // namespace harness::reports
