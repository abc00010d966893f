#include "reports/sections/failures.h"

#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/html_section.h"
#include "reports/report_json.h"
#include "reports/report_model.h"
#include "reports/report_text.h"

namespace harness::reports {

namespace {

class FailuresHtmlSection : HtmlSection {
 public:
  using HtmlSection::HtmlSection;

  void Failures() {
    out_ += fmt::format("<section id=\"failures\"><h2>Failures <span class=\"count\">{} in the latest runs</span></h2>\n",
                        m_.failures.size() + m_.failures_listed.size());
    if (m_.failures.empty()) out_ += "<p class=\"none\">No case failed in the latest run of any suite.</p>\n";
    for (const auto& f : m_.failures) {
      const std::string word(Word(f.status));
      out_ += fmt::format(R"(<article class="item {0}" data-suite="{1}" data-status="{0}"><h3>{2} {3}</h3>)", word,
                          E(f.suite), Badge(StatusBadgeClass(f.status), std::string(Label(f.status))),
                          E(f.case_id));
      const std::string where =
          f.shard.empty() ? "" : fmt::format(" (shard {} on {})", E(f.shard), E(f.host));
      out_ += fmt::format(R"(<div class="since">run {}{} at {}; not passing since {}</div>)", f.run_id, where,
                          CommitCell(f.commit), CommitCell(f.failing_since));
      if (f.culprit) Culprit(*f.culprit);
      out_ += "<pre>" + E(f.message) + "</pre>";
      if (f.ops_against_commit) OpDiff(f);
      out_ += "</article>\n";
    }
    ListedFailures();
    out_ += "</section>\n";
  }

  // The failing cases beyond the report's bounds, one block per suite: ids and statuses.
  void ListedFailures() {
    for (std::size_t i = 0; i < m_.failures_listed.size();) {
      const std::string& suite = m_.failures_listed[i].suite;
      std::string ids;
      std::set<std::string> statuses;
      std::size_t count = 0;
      for (; i < m_.failures_listed.size() && m_.failures_listed[i].suite == suite; ++i, ++count) {
        const ListedFailure& f = m_.failures_listed[i];
        statuses.insert(std::string(Word(f.status)));
        ids += fmt::format("{} {} (run {})\n", Label(f.status), E(f.case_id), f.run_id);
      }
      out_ += fmt::format(
          R"(<details class="item listed" data-suite="{}" data-status="{}"><summary>{} more failing cases of {}, )"
          R"(listed by id (the report shows {} per suite and {} in all in full)</summary><pre>{}</pre></details>)"
          "\n",
          E(suite), fmt::join(statuses, " "), count, E(suite), kMaxFullFailuresPerSuite, kMaxFullFailures, ids);
    }
  }

  void OpDiff(const FailureEntry& f) {
    for (const auto& h : f.ops.stale) out_ += "<div class=\"hint\">" + E(StaleHintText(h)) + "</div>";
    if (f.ops.empty()) {
      out_ += fmt::format("<p class=\"since\">op table unchanged against the last passing run {} at {}</p>",
                          f.ops_against_run, CommitCell(*f.ops_against_commit));
      return;
    }
    out_ += fmt::format(
        "<table class=\"ops\"><caption class=\"since\">op table against the last passing run {} at {}: {} added, {} "
        "removed, {} calls changed</caption><thead><tr><th>change</th><th>op</th><th>input shapes</th><th>calls "
        "before</th><th>calls now</th></tr></thead><tbody>",
        f.ops_against_run, CommitCell(*f.ops_against_commit), f.ops.added.size(), f.ops.removed.size(),
        f.ops.changed.size());
    for (auto [rows, cls] : {std::pair{&f.ops.removed, "removed"}, std::pair{&f.ops.added, "added"},
                             std::pair{&f.ops.changed, "changed"}})
      for (const auto& r : *rows)
        out_ += fmt::format(R"(<tr class="{}"><td>{}</td><td><code>{}</code></td><td><code>{}</code></td>)"
                            R"(<td class="num">{}</td><td class="num">{}</td></tr>)",
                            cls, cls, E(r.op), E(r.input_shapes), r.calls_before, r.calls_after);
    out_ += "</tbody></table>";
  }
};

}  // namespace

void FailuresHtml(HtmlPage& page) { FailuresHtmlSection(page).Failures(); }

namespace {

std::string FailureText(const ReportModel& m, const FailureEntry& f) {
  std::string out = fmt::format("  {} {} at {} (run {}{}), not passing since {}\n", Label(f.status), f.case_id,
                                ShortCommit(m, f.commit), f.run_id,
                                f.shard.empty() ? "" : fmt::format(", shard {} on {}", f.shard, f.host),
                                ShortCommit(m, f.failing_since));
  if (f.culprit) out += "    " + CulpritWords(*f.culprit) + "\n";
  out += "    " + FirstLine(f.message) + "\n";
  if (f.ops_against_commit) {
    for (const auto& r : f.ops.removed) out += fmt::format("    - {} {} calls {}\n", r.op, r.input_shapes, r.calls_before);
    for (const auto& r : f.ops.added) out += fmt::format("    + {} {} calls {}\n", r.op, r.input_shapes, r.calls_after);
    for (const auto& r : f.ops.changed)
      out += fmt::format("    ~ {} {} calls {} -> {}\n", r.op, r.input_shapes, r.calls_before, r.calls_after);
    for (const auto& h : f.ops.stale) out += "    hint: " + StaleHintText(h) + "\n";
    if (!f.ops.empty())
      out += fmt::format("    (op table against the last passing run at {})\n", ShortCommit(m, *f.ops_against_commit));
  }
  return out;
}

Json Changes(const std::vector<OpRowChange>& rows) {
  Json out = Json::array();
  for (const auto& r : rows)
    out.push_back({{"op", r.op}, {"input_shapes", r.input_shapes}, {"calls_before", r.calls_before},
                   {"calls_after", r.calls_after}});
  return out;
}

}  // namespace

std::string FailuresText(const ReportModel& m) {
  std::string out;
  if (!m.regressions.empty())
    out += fmt::format("\n{} regressions found by bisect --auto, {} with a culprit\n", m.regressions.size(),
                       m.RegressionsWithCulprit());
  out += fmt::format("\nFAILURES ({})\n", m.failures.size() + m.failures_listed.size());
  if (m.failures.empty()) out += "  none in the latest runs\n";
  for (const auto& f : m.failures) out += FailureText(m, f);
  if (!m.failures_listed.empty())
    out += fmt::format("  {} more, listed by id (the report shows {} per suite and {} in all in full):\n",
                       m.failures_listed.size(), kMaxFullFailuresPerSuite, kMaxFullFailures);
  for (const auto& f : m.failures_listed) out += fmt::format("    {} {} (run {})\n", Label(f.status), f.case_id, f.run_id);
  return out;
}

Json FailuresJson(const ReportModel& m) {
  Json failures = Json::array();
  for (const auto& f : m.failures) {
    Json e{{"case", f.case_id}, {"status", Word(f.status)}, {"run", f.run_id}, {"shard", f.shard}, {"host", f.host},
           {"commit", CommitSha(m, f.commit)}, {"failing_since", CommitSha(m, f.failing_since)}, {"message", f.message}};
    if (f.ops_against_commit) {
      Json stale = Json::array();
      for (const auto& h : f.ops.stale) stale.push_back({{"from", h.from}, {"to", h.to}, {"calls", h.calls}, {"text", StaleHintText(h)}});
      e["ops"] = {{"against_commit", CommitSha(m, *f.ops_against_commit)}, {"against_run", f.ops_against_run},
                  {"added", Changes(f.ops.added)}, {"removed", Changes(f.ops.removed)},
                  {"changed", Changes(f.ops.changed)}, {"stale", stale}};
    }
    if (f.culprit) e["culprit"] = CulpritJson(*f.culprit);
    failures.push_back(e);
  }
  return failures;
}

// The listed cases by suite, run and status, ids only: 50 000 of them stay a few MB.
Json FailuresListedJson(const ReportModel& m) {
  std::map<std::tuple<std::string, int64_t, std::string>, Json> groups;
  for (const auto& f : m.failures_listed) {
    Json& ids = groups[{f.suite, f.run_id, std::string(Word(f.status))}];
    if (ids.is_null()) ids = Json::array();
    ids.push_back(f.case_id);
  }
  Json listed = Json::array();
  for (auto& [key, ids] : groups)
    listed.push_back({{"suite", std::get<0>(key)}, {"run", std::get<1>(key)}, {"status", std::get<2>(key)},
                      {"cases", std::move(ids)}});
  return listed;
}

}  // namespace harness::reports
