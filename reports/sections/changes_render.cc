#include "reports/sections/changes.h"

#include <algorithm>
#include <map>
#include <string_view>

#include <fmt/format.h>

#include "reports/html_section.h"
#include "reports/report_json.h"
#include "reports/report_model.h"
#include "reports/report_text.h"

namespace harness::reports {

namespace {

class ChangesHtmlSection : HtmlSection {
 public:
  using HtmlSection::HtmlSection;

  void Changes() {
    out_ += fmt::format("<section id=\"changes\"><h2>What changed since the previous nightly <span class=\"count\">{} "
                        "{}</span></h2>\n",
                        m_.changes.size(), m_.changes.size() == 1 ? "case" : "cases");
    if (m_.changes.empty())
      out_ += "<p class=\"none\">No case changed: no new failure, no paired regression, no fix since the previous "
              "nightly.</p>\n";
    const std::pair<ChangeKind, const char*> groups[] = {{ChangeKind::kNewFailure, "New failures"},
                                                         {ChangeKind::kPairedRegression, "Paired regressions"},
                                                         {ChangeKind::kFixed, "Fixed"}};
    for (const auto& group : groups) {
      const ChangeKind kind = group.first;
      const auto n = std::count_if(m_.changes.begin(), m_.changes.end(), [&](const ChangeEntry& c) { return c.kind == kind; });
      if (n == 0) continue;
      out_ += fmt::format("<h3 class=\"group\">{} ({})</h3>\n", group.second, n);
      std::size_t shown = 0;
      std::string more;
      for (const auto& c : m_.changes) {
        if (c.kind != kind) continue;
        if (shown++ < kMaxFullChangesPerKind) Change(c);
        else more += (more.empty() ? "" : ", ") + E(c.case_id);
      }
      if (shown > kMaxFullChangesPerKind)
        out_ += fmt::format("<p class=\"more\">{} more, by id: {}</p>\n", shown - kMaxFullChangesPerKind, more);
    }
    out_ += "</section>\n";
  }

  // One change: its status now, the finding, against the previous nightly, and its culprit
  // or why it has none. A paired regression answers to "fail" in the filter whatever its
  // status, so #status=fail shows it.
  void Change(const ChangeEntry& c) {
    std::string kind, status;
    switch (c.kind) {
      case ChangeKind::kNewFailure:
        kind = "fail";
        status = std::string(Word(c.status)) + " new";
        break;
      case ChangeKind::kPairedRegression:
        kind = "regressed";
        status = "fail regressed";
        break;
      case ChangeKind::kFixed:
        kind = "fixed";
        status = "pass fixed";
        break;
    }
    out_ += fmt::format(R"(<article class="item {}" data-suite="{}" data-status="{}"><h3>{} {}</h3>)", kind,
                        E(c.suite), status, Badge(StatusBadgeClass(c.status), std::string(Label(c.status))),
                        E(c.case_id));
    if (!c.finding.empty()) out_ += "<p class=\"finding\">" + E(c.finding) + "</p>";
    std::string before = "no earlier nightly of its run identity";
    if (c.before_commit)
      before = fmt::format("previous nightly: {} in run {} at {}", Label(c.before_status), c.before_run,
                           CommitCell(*c.before_commit));
    out_ += fmt::format(R"(<div class="since">run {} at {}; {}</div>)", c.run_id, CommitCell(c.commit), before);
    if (c.culprit) Culprit(*c.culprit);
    else out_ += "<p class=\"culprit open\">No culprit: " + E(c.no_culprit) + "</p>";
    out_ += "</article>\n";
  }
};

}  // namespace

void ChangesHtml(HtmlPage& page) { ChangesHtmlSection(page).Changes(); }

// What changed since the previous nightly: each case with its finding and culprit, or why none.
std::string ChangesText(const ReportModel& m) {
  std::string out = fmt::format("\nCHANGES SINCE THE PREVIOUS NIGHTLY ({})\n", m.changes.size());
  if (m.changes.empty()) out += "  none: no new failure, no paired regression, no fix\n";
  // Per kind, by its word: the listed-by-id lines come in the words' order.
  std::map<std::string_view, std::size_t> shown;
  std::map<std::string_view, std::string> more;
  for (const auto& c : m.changes) {
    const std::string_view kind = Word(c.kind);
    if (shown[kind]++ >= kMaxFullChangesPerKind) {
      more[kind] += (more[kind].empty() ? "" : ", ") + c.case_id;
      continue;
    }
    out += fmt::format("  {} {} {} at {} (run {})", kind, Label(c.status), c.case_id, ShortCommit(m, c.commit), c.run_id);
    if (c.before_commit)
      out += fmt::format("; previous nightly {} at {} (run {})", Label(c.before_status), ShortCommit(m, *c.before_commit),
                         c.before_run);
    out += "\n";
    if (!c.finding.empty()) out += "    " + c.finding + "\n";
    out += "    " + (c.culprit ? CulpritWords(*c.culprit) : "no culprit: " + c.no_culprit) + "\n";
  }
  for (const auto& [kind, ids] : more)
    out += fmt::format("  {} more {}, by id: {}\n", shown[kind] - kMaxFullChangesPerKind, kind, ids);
  return out;
}

Json ChangesJson(const ReportModel& m) {
  Json changes = Json::array();
  for (const auto& c : m.changes) {
    Json j{{"kind", Word(c.kind)}, {"case", c.case_id}, {"status", Word(c.status)}, {"run", c.run_id},
           {"commit", CommitSha(m, c.commit)}, {"finding", c.finding}, {"no_culprit", c.no_culprit}};
    j["before"] = c.before_commit ? Json{{"commit", CommitSha(m, *c.before_commit)}, {"run", c.before_run},
                                         {"status", Word(c.before_status)}}
                                  : Json(nullptr);
    j["culprit"] = c.culprit ? CulpritJson(*c.culprit) : Json(nullptr);
    changes.push_back(std::move(j));
  }
  return changes;
}

}  // namespace harness::reports
