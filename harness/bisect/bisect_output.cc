#include "harness/bisect/bisect_output.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/utf8.h"
#include "harness/util/versions.h"

namespace harness::bisect {

Json BisectOutcomeJson(const BisectOutcome& o) {
  Json steps = Json::array();
  for (const auto& s : o.steps) {
    Json j{{"commit", s.sha}, {"source", s.source}, {"evidence", s.evidence}, {"probability_bad", s.probability_bad},
           {"verdict", s.verdict}};
    j["run_id"] = s.run_id ? Json(*s.run_id) : Json(nullptr);
    j["exit_code"] = s.exit_code ? Json(*s.exit_code) : Json(nullptr);
    steps.push_back(j);
  }
  return Json{{"format_version", kBisectJsonFormat},
              {"session", o.session_id},
              {"verdict", VerdictWord(o.verdict)},
              {"culprit", o.culprit.empty() ? Json(nullptr) : Json(o.culprit)},
              {"subject", o.subject},
              {"confidence", o.confidence},
              {"runs", o.runs},
              {"skipped", o.skipped},
              {"range", o.range},
              {"target", o.target},
              {"cases", o.cases},
              {"reason", o.reason},
              {"steps", steps}};
}

std::string BisectOutcomeText(const BisectOutcome& o) {
  std::string out = fmt::format("bisect session {}: {}\n", o.session_id, o.target);
  out += fmt::format("{:<5}  {:<12}  {:<8}  {:<7}  {:<8}  {}\n", "STEP", "COMMIT", "SOURCE", "P(BAD)", "VERDICT", "EVIDENCE");
  for (const auto& s : o.steps) {
    std::vector<std::string> ev;
    for (const auto& ob : s.evidence.value("observations", Json::array()))
      ev.push_back(ob.contains("failed") ? (ob["failed"].get<bool>() ? "fail" : "pass")
                                         : fmt::format("{:.4f}", ob.value("value", 0.0)));
    if (s.evidence.value("skip", false)) ev.push_back("skip");
    if (s.exit_code) ev.push_back(fmt::format("exit {}", *s.exit_code));
    out += fmt::format("{:<5}  {:<12}  {:<8}  {:<7.3f}  {:<8}  {}\n", s.index, s.sha.substr(0, 12), s.source,
                       s.probability_bad, s.verdict, fmt::join(ev, " "));
  }
  switch (o.verdict) {
    case Verdict::kCulprit:
      out += fmt::format("CULPRIT {} {}\n  posterior {:.3f} that it is the first bad commit (verified by a fresh run of "
                         "it and of its parent); {} runs\n",
                         o.culprit, o.subject, o.confidence, o.runs);
      break;
    case Verdict::kNoCulprit:
      out += fmt::format("NO CULPRIT: the bad result looks like noise (posterior {:.3f}); {} runs{}\n", o.confidence,
                         o.runs, o.reason.empty() ? "" : "; " + o.reason);
      break;
    default:
      out += fmt::format("AMBIGUOUS: {}; the first bad commit is one of:\n", o.reason);
      for (const auto& sha : o.range) out += "  " + sha + "\n";
      out += fmt::format("  {} runs\n", o.runs);
  }
  if (!o.skipped.empty()) out += fmt::format("skipped: {}\n", fmt::join(o.skipped, " "));
  return TerminalText(out);
}

}  // namespace harness::bisect
