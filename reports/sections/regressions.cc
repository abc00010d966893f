#include "reports/sections/regressions.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/git.h"
#include "harness/util/json_file.h"
#include "reports/report_load.h"

namespace harness::reports {

namespace {

class RegressionsLoad : SectionLoad {
 public:
  using SectionLoad::SectionLoad;

  // The regressions bisect --auto stored for the latest runs shown (the summary counts
  // them), and each failing case's note: from the newest regression of the case whose
  // nightly lies in its current failing streak, so a case still failing nights later still
  // names the culprit found the night it broke. A sharded nightly's regression names its
  // first shard's run: every shard of it counts.
  Status Regressions() {
    auto rows = store_.bisect_reader().Regressions();
    if (!rows) return rows.error();
    std::set<int64_t> latest;
    for (const auto& s : model_.summary) latest.insert(s.run_id);
    for (const auto& f : model_.failures) latest.insert(f.run_id);
    std::map<std::string, std::size_t> commit_index;
    for (std::size_t i = 0; i < model_.commits.size(); ++i) commit_index[model_.commits[i].sha] = i;
    for (const auto& g : *rows) {
      auto shards = reads_.LogicalRun(g.run_id);
      if (!shards) return shards.error();
      std::set<int64_t> ids;
      for (const auto& r : *shards) ids.insert(r.id);
      const auto at = commit_index.find(shards->front().sha);
      if (at == commit_index.end()) continue;  // its nightly is outside the window
      RegressionEntry e{g.id, g.run_id, g.suite, g.kind, g.cases, NoteOf(g, ReadConfirmation(g))};
      if (e.note.verdict == RegressionVerdict::kCulprit) {
        auto c = reads_.MatchCommits(e.note.culprit);
        if (!c) return c.error();  // a read that failed is no commit without a subject
        if (!c->empty()) e.note.subject = CutSubject(c->front().subject);
      }
      for (auto& f : model_.failures)
        if (std::find(g.cases.begin(), g.cases.end(), f.case_id) != g.cases.end() &&
            (ids.count(f.run_id) || (at->second >= f.failing_since && at->second <= f.commit)))
          f.culprit = e.note;  // rows are oldest first: the newest regression wins
      if (std::any_of(ids.begin(), ids.end(), [&](int64_t id) { return latest.count(id) > 0; }))
        model_.regressions.push_back(std::move(e));
    }
    return OkStatus();
  }

  // The regression's stored confirmation; a word outside its table is a warning, and reads as
  // not-tried (the regression, unless bisected, is ambiguous: as the report showed it before).
  Confirmation ReadConfirmation(const RegressionRow& g) {
    auto c = StoredConfirmation(g);
    if (c) return *c;
    model_.warnings.push_back(c.error().message + ": the report reads it as not-tried");
    return Confirmation::kNotTried;
  }

  CulpritNote NoteOf(const RegressionRow& g, Confirmation confirmation) const {
    CulpritNote n;
    if (!g.session_id) {
      // A confirming rerun that could not test it records why (confirm_json's "untestable").
      const bool untestable = g.confirm_json.find("\"untestable\"") != std::string::npos;
      n.verdict = confirmation != Confirmation::kNotConfirmed ? RegressionVerdict::kAmbiguous
                  : untestable                                ? RegressionVerdict::kUntestable
                                                              : RegressionVerdict::kNotConfirmed;
      return n;
    }
    n.session = *g.session_id;
    n.verdict = RegressionVerdict::kAmbiguous;
    for (const auto& s : model_.bisect)
      if (s.id == *g.session_id) {
        n.verdict = s.read_status ? VerdictOfSession(*s.read_status) : RegressionVerdict::kAmbiguous;
        n.culprit = s.culprit;
        n.confidence = s.confidence;
        n.runs = s.runs;
        const Json result = ParseJsonOrDiscarded(s.result_json);
        if (result.is_object() && result.contains("range") && result["range"].is_array())
          for (const auto& sha : result["range"])
            if (sha.is_string()) n.range.push_back(sha.get<std::string>());
        n.timing = BisectTimingOf(result);
        if (auto c = model_.session_culprits.find(s.id); c != model_.session_culprits.end()) n.culprits = c->second;
      }
    return n;
  }
};

}  // namespace

Status LoadRegressions(ReportLoad& load) { return RegressionsLoad(load).Regressions(); }

std::string CulpritEvidence(const CulpritNote& n) {
  return fmt::format("(confidence {:.3f}, {} runs, bisect session {}{})", n.confidence, n.runs, n.session,
                     n.timing ? "; " + TimingWords(*n.timing) : "");
}

std::string CulpritChangeWords(const BisectChange& c) { return CulpritChangeWords(c, ShortSha(c.sha), c.subject); }

std::string CulpritChangeWords(const BisectChange& c, std::string_view sha, std::string_view subject) {
  return fmt::format("{} {}: moved {:+.4f} ({:+.2f} pp), posterior {:.3f}", sha, subject, c.size, 100 * c.size,
                     c.confidence);
}

std::string CulpritListWords(const std::vector<BisectChange>& culprits) {
  if (culprits.size() < 2) return "";
  std::string out;
  for (std::size_t i = 0; i < culprits.size(); ++i)
    out += fmt::format("{}{}. {}", i ? "; " : "", i + 1, CulpritChangeWords(culprits[i]));
  return out;
}

std::string CulpritWords(const CulpritNote& n) {
  if (n.verdict == RegressionVerdict::kCulprit)
    return fmt::format("culprit {} {} {}{}", ShortSha(n.culprit), n.subject, CulpritEvidence(n),
                       n.culprits.size() < 2
                           ? ""
                           : fmt::format("; {} culprits in the range: {}", n.culprits.size(), CulpritListWords(n.culprits)));
  if (n.verdict == RegressionVerdict::kNotConfirmed)
    return "not confirmed (flaky): a rerun of the bad commit did not show the regression; not bisected";
  if (n.verdict == RegressionVerdict::kUntestable)
    return "unconfirmed: the rerun of the bad commit could not test it (bisect --auto says why); not bisected";
  if (n.verdict == RegressionVerdict::kNoCulprit)
    return fmt::format("bisect found no culprit: the drop looks like noise (bisect session {})", n.session);
  std::vector<std::string> shas;
  for (const auto& sha : n.range) shas.push_back(ShortSha(sha));
  if (n.session == 0) return "bisect ambiguous: the budget ran out before the regression was confirmed";
  return fmt::format("bisect ambiguous: the culprit is one of {} (bisect session {})",
                     shas.empty() ? std::string("the range") : fmt::format("{}", fmt::join(shas, " ")), n.session);
}

}  // namespace harness::reports
