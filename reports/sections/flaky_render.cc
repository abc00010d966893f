#include "reports/sections/flaky.h"

#include <fmt/format.h>

#include "reports/html_section.h"
#include "reports/report_json.h"
#include "reports/report_model.h"
#include "reports/report_text.h"

namespace harness::reports {

namespace {

class FlakyHtmlSection : HtmlSection {
 public:
  using HtmlSection::HtmlSection;

  void Flaky() {
    out_ += fmt::format("<section id=\"flaky\"><h2>Flaky thresholds <span class=\"count\">{}, most likely false "
                        "verdict first</span></h2>\n",
                        E(FlakyCount(m_.flaky)));
    if (m_.flaky.empty()) {
      out_ += "<p class=\"none\">No gate, tolerance near its bound or flipping status in the window.</p>\n</section>\n";
      return;
    }
    out_ += "<p class=\"legend\">Three kinds of row: a <b>gate</b> (a case's accuracy against its gate), a "
            "<b>tolerance</b> (a metric using half its bound or more) and a <b>status</b> (a case whose status "
            "disagreed between runs or went back and forth between commits). Each answers one of four questions and "
            "says which: <b>rerun-noise</b> — will a rerun of the same commit flip the verdict? (from the spread of "
            "stored reruns); <b>true-rate</b> — is the true rate on the verdict's side of the gate? (binomial, only "
            "where no reruns are stored); <b>commit-spread</b> — a tolerance without reruns, spread over recent "
            "commits since the newest known change (a bisect culprit, a paired REGRESSED or IMPROVED); "
            "<b>status-flips</b> — the share of runs whose status disagreed, since that change too. Runs with fault "
            "switches (<code>--fault</code>) are never read here.</p>\n";
    out_ += "<table class=\"flaky\"><thead><tr><th class=\"w-p\">P(false verdict)</th><th class=\"w-case\">case</th>"
            "<th class=\"w-th\">threshold</th><th class=\"w-v\">value</th><th class=\"w-verdict\">verdict</th>"
            "<th>evidence, and what would settle it</th></tr></thead><tbody>\n";
    for (const auto& f : m_.flaky) {
      std::string value = f.kind == FlakyKind::kStatus ? fmt::format("{:.0f} % disagree", 100 * f.value)
                                             : fmt::format("{:.4f} vs {:.4g}", f.value, f.threshold);
      out_ += fmt::format(
          R"(<tr data-suite="{}" data-status="flaky {}"><td class="num"><span class="prob">{}</span><span class="q">{}</span></td>)"
          R"(<td>{}<br><span class="since">{}</span></td><td>{}<br><code>{}</code></td><td class="num">{}</td><td>{}</td>)"
          R"(<td>{}<div class="settle">settle: {}</div></td></tr>)"
          "\n",
          E(f.suite), AtRisk(f.verdict) ? "at-risk" : "", Probability(f.estimate.probability),
          Word(f.estimate.question), E(f.case_id), CommitCell(f.commit), E(Word(f.kind)), E(f.metric), E(value),
          Badge(VerdictClass(f.verdict), f.verdict), E(f.detail), E(f.settle));
    }
    out_ += "</tbody></table></section>\n";
  }

  static std::string Probability(double p) {
    if (p == 0) return "0";
    if (p < 0.001) return fmt::format("{:.1e}", p);
    return fmt::format("{:.3f}", p);
  }
};

}  // namespace

void FlakyHtml(HtmlPage& page) { FlakyHtmlSection(page).Flaky(); }

std::string FlakyText(const ReportModel& m) {
  std::string out = fmt::format("\nFLAKY THRESHOLDS ({}, most likely false verdict first)\n", FlakyCount(m.flaky));
  if (m.flaky.empty()) out += "  none\n";
  for (const auto& f : m.flaky) {
    out += fmt::format("  P={:<9.3g} [{}] {} {} ({}) {}\n", f.estimate.probability, Word(f.estimate.question),
                       f.case_id, f.metric, Word(f.kind), f.verdict);
    out += "    " + f.detail + "\n    settle: " + f.settle + "\n";
  }
  return out;
}

Json FlakyJson(const ReportModel& m) {
  Json flaky = Json::array();
  for (const auto& f : m.flaky) {
    const auto& e = f.estimate;
    flaky.push_back({{"case", f.case_id}, {"metric", f.metric}, {"kind", Word(f.kind)}, {"commit", CommitSha(m, f.commit)},
                     {"value", f.value}, {"threshold", f.threshold}, {"verdict", f.verdict},
                     {"false_verdict_probability", e.probability}, {"question", Word(e.question)},
                     {"center", e.center}, {"sigma", e.sigma}, {"observations", e.observations},
                     {"needed", e.needed}, {"detail", f.detail}, {"settle", f.settle}});
  }
  return flaky;
}

}  // namespace harness::reports
