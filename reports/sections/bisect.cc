#include "reports/sections/bisect.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/store/bisect_changes.h"
#include "harness/util/json_file.h"
#include "reports/report_load.h"

namespace harness::reports {

namespace {

class BisectLoad : SectionLoad {
 public:
  using SectionLoad::SectionLoad;

  Status Bisect() {
    auto ids = store_.bisect_reader().BisectSessionIds();
    if (!ids) return ids.error();
    std::map<std::string, std::size_t> commit_index;
    for (std::size_t i = 0; i < model_.commits.size(); ++i) commit_index[model_.commits[i].sha] = i;
    for (int64_t id : *ids) {
      auto s = store_.bisect_reader().BisectSession(id);
      if (!s) return s.error();
      ReportSession session{std::move(*s), std::nullopt};
      if (auto status = StoredStatus(session)) session.read_status = *status;
      else model_.warnings.push_back(status.error().message + ": the report shows it as stored and names no culprit of it");
      if (session.read_status == SessionStatus::kCulprit) {
        SessionCulprits(session);
        MarkCulprits(session, commit_index);
      }
      model_.bisect.push_back(std::move(session));
    }
    return OkStatus();
  }

  // Each culprit of a culprit session in the window is a change point of the cases it bisected
  // and a marker on their trends; the cases come from its header, and one that names none (or
  // does not read) marks every trend. A session that named several marks each with its drop.
  void MarkCulprits(const BisectSessionRow& s, std::map<std::string, std::size_t>& commit_index) {
    std::set<std::string> cases;
    auto header = BisectSessionHeaderFromJson(ParseJsonOrDiscarded(s.args_json), fmt::format("bisect session {}", s.id));
    if (header && header->target) cases.insert(header->target->cases.begin(), header->target->cases.end());
    const auto several = model_.session_culprits.find(s.id);
    const std::vector<BisectChange> culprits = several != model_.session_culprits.end()
                                                   ? several->second
                                                   : std::vector<BisectChange>{{s.culprit, "", s.confidence, 0}};
    for (std::size_t i = 0; i < culprits.size(); ++i) {
      const BisectChange& c = culprits[i];
      if (!commit_index.count(c.sha)) continue;
      const std::string text =
          culprits.size() == 1
              ? fmt::format("bisect session {}: culprit of {} (confidence {:.3f})", s.id, s.target, s.confidence)
              : fmt::format("bisect session {}: culprit {} of {} of {} (moved {:+.2f} pp, confidence {:.3f})", s.id,
                            i + 1, culprits.size(), s.target, 100 * c.size, c.confidence);
      culprit_points_.push_back({commit_index[c.sha], s.id, cases});
      for (auto& t : model_.trends)
        if (cases.empty() || cases.count(t.case_id)) t.culprits.push_back({commit_index[c.sha], s.id, text});
    }
  }

  // The session's culprits when it named several; a malformed list is a warning, and the
  // session shows the first culprit its row names.
  void SessionCulprits(const BisectSessionRow& s) {
    auto culprits = ChangesFromJson(ParseJsonOrDiscarded(s.result_json), fmt::format("bisect session {}", s.id));
    if (!culprits) {
      model_.warnings.push_back(culprits.error().message + ": the report shows its first culprit only");
      return;
    }
    if (culprits->size() < 2) return;
    for (auto& c : *culprits) c.subject = CutSubject(c.subject);
    model_.session_culprits[s.id] = std::move(culprits).value();
  }
};

}  // namespace

Status LoadBisect(ReportLoad& load) { return BisectLoad(load).Bisect(); }

std::optional<BisectTiming> SessionTiming(const BisectSessionRow& s) {
  return BisectTimingOf(ParseJsonOrDiscarded(s.result_json));
}

}  // namespace harness::reports
