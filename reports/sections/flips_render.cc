#include "reports/sections/flips.h"

#include <fmt/format.h>

#include "reports/html_section.h"
#include "reports/report_json.h"
#include "reports/report_model.h"
#include "reports/report_text.h"

namespace harness::reports {

namespace {

class FlipsHtmlSection : HtmlSection {
 public:
  using HtmlSection::HtmlSection;

  void Flips() {
    out_ += "<section id=\"flips\"><h2>Per-question flips <span class=\"count\">newest run against its baseline</span></h2>\n";
    if (m_.flips.empty()) out_ += "<p class=\"none\">No case with per-question samples has a baseline in the window.</p>\n";
    for (const auto& s : m_.flips) {
      out_ += fmt::format(
          R"(<article class="item" data-suite="{}" data-status="flip"><h3>{}</h3><div class="since">run {} at {} against )"
          R"(baseline run {} at {}: <span class="flip-lost">{} right → wrong</span>, <span class="flip-gain">{} wrong → right</span>{}</div>)",
          E(s.suite), E(s.case_id), s.run_id, CommitCell(s.commit), s.baseline_run,
          CommitCell(s.baseline_commit), s.losses, s.gains,
          s.omitted ? fmt::format(" ({} more not shown)", s.omitted) : std::string());
      if (s.flips.empty()) {
        out_ += "<p class=\"none\">Every paired question agrees.</p></article>\n";
        continue;
      }
      out_ += "<table><thead><tr><th>question</th><th>flip</th><th>expected</th><th>baseline answer</th>"
              "<th>newest answer</th><th>completions</th></tr></thead><tbody>";
      for (const auto& f : s.flips) {
        out_ += fmt::format(
            R"(<tr><td class="num">{}</td><td class="{}">{}</td><td><code>{}</code></td><td><code>{}</code> ({})</td>)"
            R"(<td><code>{}</code> ({})</td><td><details><summary>both completions</summary><div class="cols">)"
            R"(<div><h4>baseline</h4><pre>{}</pre></div><div><h4>newest</h4><pre>{}</pre></div></div></details></td></tr>)",
            E(f.key), f.lost ? "flip-lost" : "flip-gain", f.lost ? "right → wrong" : "wrong → right", E(f.expected),
            E(f.before_extracted), E(Word(f.before_outcome)), E(f.after_extracted), E(Word(f.after_outcome)),
            E(f.before_completion), E(f.after_completion));
      }
      out_ += "</tbody></table></article>\n";
    }
    out_ += "</section>\n";
  }
};

}  // namespace

void FlipsHtml(HtmlPage& page) { FlipsHtmlSection(page).Flips(); }

std::string FlipsText(const ReportModel& m) {
  std::string out = "\nPER-QUESTION FLIPS (newest run against its baseline)\n";
  if (m.flips.empty()) out += "  none\n";
  for (const auto& s : m.flips) {
    out += fmt::format("  {}: {} right->wrong, {} wrong->right at {} against {}\n", s.case_id, s.losses, s.gains,
                       ShortCommit(m, s.commit), ShortCommit(m, s.baseline_commit));
    for (const auto& f : s.flips)
      out += fmt::format("    q{} {}: expected {}, baseline {}, newest {}\n", f.key,
                         f.lost ? "right->wrong" : "wrong->right", f.expected, f.before_extracted, f.after_extracted);
    if (s.omitted) out += fmt::format("    ... {} more\n", s.omitted);
  }
  return out;
}

Json FlipsJson(const ReportModel& m) {
  Json flips = Json::array();
  for (const auto& s : m.flips) {
    Json list = Json::array();
    for (const auto& f : s.flips)
      list.push_back({{"question", f.key}, {"flip", f.lost ? "right-to-wrong" : "wrong-to-right"},
                      {"expected", f.expected}, {"baseline_outcome", std::string(Word(f.before_outcome))},
                      {"baseline_extracted", f.before_extracted}, {"baseline_completion", f.before_completion},
                      {"outcome", std::string(Word(f.after_outcome))}, {"extracted", f.after_extracted},
                      {"completion", f.after_completion}});
    flips.push_back({{"case", s.case_id}, {"run", s.run_id}, {"commit", CommitSha(m, s.commit)}, {"baseline_run", s.baseline_run},
                     {"baseline_commit", CommitSha(m, s.baseline_commit)}, {"right_to_wrong", s.losses},
                     {"wrong_to_right", s.gains}, {"flips", list}, {"omitted", s.omitted}});
  }
  return flips;
}

}  // namespace harness::reports
