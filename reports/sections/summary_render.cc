#include "reports/sections/summary.h"

#include <fmt/format.h>

#include "reports/html_section.h"
#include "reports/report_json.h"
#include "reports/report_model.h"
#include "reports/report_text.h"

namespace harness::reports {

namespace {

class SummaryHtmlSection : HtmlSection {
 public:
  using HtmlSection::HtmlSection;

  void Summary() {
    out_ += "<section id=\"summary\"><h2>Suites <span class=\"count\">latest nightly per suite</span></h2>\n";
    // A lost shard job: the counts below are of part of the nightly's cases.
    for (const auto& gap : m_.incomplete_nightlies)
      out_ += fmt::format(R"(<p class="hint incomplete" role="alert"><strong>Incomplete nightly:</strong> {} — their )"
                          R"(cases are not in this report.</p>)"
                          "\n",
                          E(NightlyGapText(gap)));
    if (!m_.regressions.empty())
      out_ += fmt::format("<p class=\"regressions\">{} regressions found by bisect --auto, {} with a culprit</p>\n",
                          m_.regressions.size(), m_.RegressionsWithCulprit());
    out_ += "<div class=\"cards\">\n";
    for (const auto& s : m_.summary) {
      // AT-RISK annotates passes: it tints no card.
      const char* cls = s.error ? "error" : s.fail ? "fail" : "pass";
      // Every status the suite's cases have (but pass beside others), so the status filter
      // keeps a suite's card when any of its cases is shown: a suite with errors and
      // failures stays in view under "fail" too.
      std::string status;
      for (auto [n, word] : {std::pair{s.error, "error"}, {s.fail, "fail"}, {s.at_risk, "at-risk"}})
        if (n > 0) status += status.empty() ? word : std::string(" ") + word;
      if (status.empty()) status = "pass";
      // A zero count is neutral grey: only what happened has a status colour.
      auto count = [](const char* badge, int n, const char* word) {
        return fmt::format(R"(<span class="badge {}">{} {}</span>)", n ? badge : "b-zero", n, word);
      };
      std::string shards;
      if (!s.shards.empty()) {
        shards = fmt::format(R"(<div class="meta shards">nightly {} · {} shards:)", E(s.nightly), s.shards.size());
        for (std::size_t i = 0; i < s.shards.size(); ++i)
          shards += fmt::format(R"({} <span title="run {}">{} on {}</span>)", i ? "," : "", s.shards[i].run_id,
                                E(s.shards[i].shard), E(s.shards[i].host));
        shards += "</div>";
      }
      for (const auto& r : s.reruns)
        shards += fmt::format(R"(<div class="meta reruns">shard {} attempt {} (run {} on {}): replaced by a re-run )"
                              R"((run {}), kept as a rerun, not counted</div>)",
                              E(r.shard), r.attempt, r.run_id, E(r.host), r.superseded_by);
      out_ += fmt::format(
          R"(<div class="card {}" data-suite="{}" data-status="{}"><h3>{}</h3><div class="counts">{}{}{}{}{}{}</div>)"
          R"(<div class="meta">run {} at {}<br>stack {} · host {} · case time {:.1f} s<br>{} → {}</div>{}</div>)"
          "\n",
          cls, E(s.suite), status, E(s.suite), count("b-pass", s.pass, "pass"), count("b-risk", s.at_risk, "at-risk (of the passes)"),
          count("b-fail", s.fail - s.regressed, "fail"), count("b-fail", s.regressed, "regressed"), count("b-error", s.error, "error"), count("b-skip", s.skip, "skip"),
          s.run_id, CommitCell(s.commit), E(s.stack), E(s.host), s.case_seconds, E(s.started_at), E(s.finished_at),
          shards);
    }
    out_ += "</div></section>\n";
  }
};

}  // namespace

void SummaryHtml(HtmlPage& page) { SummaryHtmlSection(page).Summary(); }

std::string SummaryText(const ReportModel& m) {
  std::string out = "\nSUMMARY (latest nightly per suite; at-risk counts passes, regressed counts failures)\n";
  for (const auto& gap : m.incomplete_nightlies)
    out += "  WARNING: incomplete " + NightlyGapText(gap) + ": their cases are not in this report\n";
  out += fmt::format("  {:<24} {:>5} {:>7} {:>5} {:>9} {:>5} {:>5}  {:<12}  {}\n", "suite", "pass", "at-risk", "fail",
                     "regressed", "error", "skip", "commit", "run");
  for (const auto& s : m.summary) {
    out += fmt::format("  {:<24} {:>5} {:>7} {:>5} {:>9} {:>5} {:>5}  {:<12}  {} ({}, {:.1f} s)\n", s.suite, s.pass,
                       s.at_risk, s.fail, s.regressed, s.error, s.skip, ShortCommit(m, s.commit), s.run_id, s.stack,
                       s.case_seconds);
    if (!s.shards.empty()) {
      out += fmt::format("    nightly {}, {} shards:", s.nightly, s.shards.size());
      for (std::size_t i = 0; i < s.shards.size(); ++i)
        out += fmt::format("{} {} (run {}, {})", i ? "," : "", s.shards[i].shard, s.shards[i].run_id, s.shards[i].host);
      out += "\n";
    }
    for (const auto& r : s.reruns)
      out += fmt::format("    shard {} attempt {} (run {}, {}): replaced by a re-run (run {}), kept as a rerun, not counted\n",
                         r.shard, r.attempt, r.run_id, r.host, r.superseded_by);
  }
  return out;
}

Json SummaryJson(const ReportModel& m) {
  Json summary = Json::array();
  for (const auto& s : m.summary) {
    Json shards = Json::array();
    for (const auto& sh : s.shards)
      shards.push_back({{"shard", sh.shard}, {"run", sh.run_id}, {"host", sh.host}, {"attempt", sh.attempt}});
    Json reruns = Json::array();
    for (const auto& r : s.reruns)
      reruns.push_back({{"shard", r.shard}, {"run", r.run_id}, {"host", r.host}, {"attempt", r.attempt},
                        {"replaced_by_run", r.superseded_by}});
    summary.push_back({{"suite", s.suite}, {"run", s.run_id}, {"commit", CommitSha(m, s.commit)}, {"stack", s.stack},
                       {"host", s.host}, {"started_at", s.started_at}, {"finished_at", s.finished_at},
                       {"pass", s.pass}, {"at_risk", s.at_risk}, {"fail", s.fail}, {"regressed", s.regressed}, {"error", s.error},
                       {"skip", s.skip}, {"case_seconds", s.case_seconds}, {"nightly", s.nightly},
                       {"shards", shards}, {"reruns", reruns}});
  }
  return summary;
}

Json IncompleteNightliesJson(const ReportModel& m) {
  Json incomplete = Json::array();
  for (const auto& g : m.incomplete_nightlies)
    incomplete.push_back({{"nightly", g.nightly}, {"commit", g.sha}, {"identity", g.config_hash},
                          {"missing", g.missing}, {"missing_count", g.missing_count}, {"unfinished", g.unfinished},
                          {"text", NightlyGapText(g)}});
  return incomplete;
}

}  // namespace harness::reports
