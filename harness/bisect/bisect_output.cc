#include "harness/bisect/bisect_output.h"

#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/git.h"
#include "harness/util/utf8.h"
#include "harness/util/versions.h"

namespace harness::bisect {
namespace {

// Questions evaluated in whole evals of one case (GSM8K: / 1319); none without a count of
// the questions of one.
std::optional<double> FullEvals(const BisectOutcome& o) {
  if (o.questions_per_eval <= 0) return std::nullopt;
  return static_cast<double>(o.questions_evaluated) / static_cast<double>(o.questions_per_eval);
}

// "12 runs, 2210 questions evaluated (1.68 full evals of 1319 questions)".
std::string CostWords(const BisectOutcome& o) {
  std::string out = fmt::format("{} runs, {} questions evaluated", o.runs, o.questions_evaluated);
  if (auto full = FullEvals(o))
    out += fmt::format(" ({:.2f} full evals of {} questions)", *full, o.questions_per_eval);
  return out;
}

// A JSON output's "time": the session's timing as stored (null for an untimed stored session).
Json TimingJson(const BisectOutcome& o) {
  if (!o.timing) return Json(nullptr);
  Json t = Json::object();
  AddTiming(t, *o.timing);
  return t;
}


// Priors from what a commit changed: none without watched paths.
Json PriorsJson(const BisectOutcome& o) {
  if (o.watch.empty()) return Json(nullptr);
  return Json{{"watch", o.watch},
              {"watched_commits", o.watched},
              {"applied", o.priors_applied},
              {"watched_prior", BisectDefaults::kWatchedPrior},
              {"unwatched_weight", o.unwatched_weight}};
}

std::string PriorsWords(const BisectOutcome& o) {
  const std::string paths = fmt::format("{}", fmt::join(o.watch, ", "));
  if (o.priors_applied)
    return fmt::format("priors: {} of {} commits touch the watched paths ({}); together they hold {} of the culprit "
                       "prior, so each other one weighs {:.3g} of one that does",
                       o.watched.size(), o.changes_read, paths, BisectDefaults::kWatchedPrior, o.unwatched_weight);
  if (o.changes_read == 0) return fmt::format("priors: flat, no --repo to read what the commits changed ({})", paths);
  return fmt::format("priors: flat, {} of the {} commits touch the watched paths ({})",
                     o.watched.empty() ? "none" : "all", o.changes_read, paths);
}

}  // namespace

std::string ChangesText(const std::vector<BisectChange>& changes, const std::string& indent) {
  if (changes.size() < 2) return "";
  std::string out = fmt::format("{}{} culprits in the range, in first-parent order:\n", indent, changes.size());
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const BisectChange& c = changes[i];
    out += fmt::format("{}  {}. {} {}: moved {:+.4f} ({:+.2f} pp), posterior {:.3f}\n", indent, i + 1, c.sha, c.subject,
                       c.size, 100 * c.size, c.confidence);
  }
  return out;
}

Json BisectOutcomeJson(const BisectOutcome& o) {
  Json steps = Json::array();
  for (const auto& s : o.steps) {
    Json j{{"commit", s.sha}, {"source", s.source}, {"evidence", ToJson(s.evidence)}, {"probability_bad", s.probability_bad},
           {"verdict", Word(s.verdict)}};
    j["run_id"] = s.run_id ? Json(*s.run_id) : Json(nullptr);
    j["exit_code"] = s.exit_code ? Json(*s.exit_code) : Json(nullptr);
    steps.push_back(j);
  }
  Json j{{"format_version", kBisectJsonFormat},
         {"session", o.session_id},
         {"verdict", VerdictWord(o.verdict)},
         {"culprit", o.culprit.empty() ? Json(nullptr) : Json(o.culprit)},
         {"subject", o.subject},
         {"confidence", o.confidence},
         {"runs", o.runs},
         {"questions_evaluated", o.questions_evaluated},
         {"questions_per_eval", o.questions_per_eval > 0 ? Json(o.questions_per_eval) : Json(nullptr)},
         {"full_eval_equivalents", FullEvals(o) ? Json(*FullEvals(o)) : Json(nullptr)},
         {"flip_history_runs", o.flip_history_runs},
         {"skipped", o.skipped},
         {"range", o.range},
         {"target", o.target},
         {"cases", o.cases},
         {"reason", o.reason},
         {"steps", steps}};
  j["changes"] = ChangesJson(o.changes);
  j["time"] = TimingJson(o);
  j["priors"] = PriorsJson(o);
  return j;
}

std::string BisectOutcomeText(const BisectOutcome& o) {
  std::string out = fmt::format("bisect session {}: {}\n", o.session_id, o.target);
  if (o.flip_history_runs > 0)
    out += fmt::format("which questions flip: learned from {} stored runs before the range\n", o.flip_history_runs);
  if (!o.watch.empty()) out += PriorsWords(o) + "\n";
  out += fmt::format("{:<5}  {:<12}  {:<8}  {:<7}  {:<8}  {}\n", "STEP", "COMMIT", "SOURCE", "P(BAD)", "VERDICT", "EVIDENCE");
  for (const auto& s : o.steps) {
    std::vector<std::string> ev;
    for (const auto& ob : s.evidence.observations)
      ev.push_back(ob.failed ? (*ob.failed ? "fail" : "pass") : fmt::format("{:.4f}", ob.value));
    if (s.evidence.questions_evaluated) ev.push_back(fmt::format("({} questions)", *s.evidence.questions_evaluated));
    if (s.evidence.skip) ev.push_back("skip");
    if (!s.evidence.untestable.empty()) ev.push_back("(cannot test: " + s.evidence.untestable + ")");
    if (s.exit_code) ev.push_back(fmt::format("exit {}", *s.exit_code));
    out += fmt::format("{:<5}  {:<12}  {:<8}  {:<7.3f}  {:<8}  {}\n", s.index, ShortSha(s.sha), s.source,
                       s.probability_bad, Word(s.verdict), fmt::join(ev, " "));
  }
  switch (o.verdict) {
    case Verdict::kCulprit:
      out += fmt::format("CULPRIT {} {}\n  posterior {:.3f} that it is the first bad commit (verified by a fresh run of "
                         "it and of its parent); {}\n",
                         o.culprit, o.subject, o.confidence, CostWords(o));
      out += ChangesText(o.changes, "");
      if (!o.reason.empty()) out += "  " + o.reason + "\n";
      break;
    case Verdict::kNoCulprit:
      out += fmt::format("NO CULPRIT: the bad result looks like noise (posterior {:.3f}); {}{}\n", o.confidence,
                         CostWords(o), o.reason.empty() ? "" : "; " + o.reason);
      break;
    default:
      out += fmt::format("AMBIGUOUS: {}; the first bad commit is one of:\n", o.reason);
      for (const auto& sha : o.range) out += "  " + sha + "\n";
      out += fmt::format("  {}\n", CostWords(o));
  }
  if (!o.skipped.empty()) out += fmt::format("skipped: {}\n", fmt::join(o.skipped, " "));
  if (o.timing) out += "time: " + TimingWords(*o.timing) + "\n";
  return TerminalText(out);
}

RegressionVerdict AutoVerdict(const AutoRegression& g) {
  if (g.bisect) return VerdictOfSession(StatusOf(g.bisect->verdict));
  if (!g.untestable.empty()) return RegressionVerdict::kUntestable;  // the confirming rerun could not test it
  if (g.confirmation == Confirmation::kNotConfirmed) return RegressionVerdict::kNotConfirmed;
  return RegressionVerdict::kAmbiguous;  // the budget ran out before it could be confirmed
}

Json AutoBisectJson(const AutoBisectOutcome& o) {
  Json regressions = Json::array();
  for (const auto& g : o.regressions) {
    Json cases = Json::array();
    for (const auto& c : g.target.cases) cases.push_back({{"case", c.case_id}, {"kind", Word(c.kind)}});
    Json j{{"suite", g.target.suite}, {"cases", cases}, {"kind", Word(g.target.kind)},
           {"metric", g.target.metric.empty() ? Json(nullptr) : Json(g.target.metric)},
           {"confirmed", g.confirmation == Confirmation::kConfirmed}, {"confirmation", Word(g.confirmation)},
           {"regression", g.regression_id}, {"verdict", Word(AutoVerdict(g))}};
    j["session"] = g.bisect ? Json(g.bisect->session_id) : Json(nullptr);
    j["culprit"] = g.bisect && !g.bisect->culprit.empty() ? Json(g.bisect->culprit) : Json(nullptr);
    j["changes"] = ChangesJson(g.bisect ? g.bisect->changes : std::vector<BisectChange>{});
    j["subject"] = g.bisect ? g.bisect->subject : "";
    j["confidence"] = g.bisect ? Json(g.bisect->confidence) : Json(nullptr);
    j["runs"] = g.bisect ? g.bisect->runs : 0;
    j["range"] = g.bisect ? g.bisect->range : std::vector<std::string>{};
    j["reason"] = g.bisect                             ? g.bisect->reason
                  : !g.untestable.empty()                ? "unconfirmed: the rerun could not test (" + g.untestable + ")"
                  : g.confirmation == Confirmation::kNotConfirmed
                      ? "the confirming rerun did not show it: not confirmed (flaky)"
                      : "--max-runs spent before it was confirmed";
    j["untestable"] = g.untestable.empty() ? Json(nullptr) : Json(g.untestable);
    j["time"] = g.bisect ? TimingJson(*g.bisect) : Json(nullptr);
    regressions.push_back(std::move(j));
  }
  Json confirming = Json::array();
  for (const auto& c : o.confirming) confirming.push_back({{"exit_code", c.exit_code}});
  Json j{{"format_version", kBisectJsonFormat},
         {"run", o.nightly.first().id},
         {"commit", o.nightly.first().sha},
         {"previous_run", o.previous ? Json(o.previous->first().id) : Json(nullptr)},
         {"previous_commit", o.previous ? Json(o.previous->first().sha) : Json(nullptr)},
         {"confirming_runs", confirming},
         {"regressions", regressions},
         {"runs_total", o.runs_total},
         {"stored", o.stored}};
  return j;
}

std::string AutoBisectText(const AutoBisectOutcome& o) {
  const RunRow& run = o.nightly.first();
  std::string out = fmt::format("nightly run {} at {}", run.id, ShortSha(run.sha));
  if (!o.previous) return TerminalText(out + ": no earlier nightly of this identity to compare with; nothing to bisect\n");
  out += fmt::format(" against run {} at {}: ", o.previous->first().id, ShortSha(o.previous->first().sha));
  if (o.regressions.empty()) return TerminalText(out + "no regression\n");
  std::size_t confirmed = 0, culprits = 0;
  for (const auto& g : o.regressions) {
    confirmed += g.confirmation == Confirmation::kConfirmed;
    culprits += g.bisect && g.bisect->verdict == Verdict::kCulprit;
  }
  out += fmt::format("{} regression(s), {} confirmed, {} with a culprit; {} commands run\n", o.regressions.size(),
                     confirmed, culprits, o.runs_total);
  if (o.stored)
    out += "(the stored answer: bisect --auto answered this nightly before and ran nothing now; --again answers it "
           "anew)\n";
  for (const auto& g : o.regressions) {
    std::vector<std::string> cases;
    for (const auto& c : g.target.cases) cases.push_back(fmt::format("{} ({})", c.case_id, Word(c.kind)));
    out += fmt::format("\n{} {}: {}\n", g.target.suite, g.target.metric.empty() ? "status" : g.target.metric,
                       fmt::join(cases, ", "));
    if (!g.bisect && !g.untestable.empty()) {
      out += fmt::format("  UNCONFIRMED: the rerun could not test ({}); not bisected\n", g.untestable);
      continue;
    }
    if (!g.bisect) {
      out += g.confirmation == Confirmation::kNotConfirmed
                 ? "  NOT CONFIRMED (flaky): the rerun of the bad commit did not show it; not bisected\n"
                 : "  AMBIGUOUS: --max-runs spent before it was confirmed\n";
      continue;
    }
    const BisectOutcome& b = *g.bisect;
    if (b.verdict == Verdict::kCulprit)
      out += fmt::format("  CULPRIT {} {} (confidence {:.3f}, {} runs, bisect session {})\n", b.culprit, b.subject,
                         b.confidence, b.runs, b.session_id) + ChangesText(b.changes, "  ");
    else if (b.verdict == Verdict::kNoCulprit)
      out += fmt::format("  NO CULPRIT (posterior {:.3f}, {} runs, bisect session {}){}\n", b.confidence, b.runs,
                         b.session_id, b.reason.empty() ? "" : ": " + b.reason);
    else
      out += fmt::format("  AMBIGUOUS: {} (bisect session {}, {} runs); the first bad commit is one of: {}\n", b.reason,
                         b.session_id, b.runs, fmt::join(b.range, " "));
    if (b.timing) out += "  time: " + TimingWords(*b.timing) + "\n";
  }
  return TerminalText(out);
}

}  // namespace harness::bisect
