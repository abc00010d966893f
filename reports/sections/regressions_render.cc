#include "reports/sections/regressions.h"

#include "reports/report_model.h"

namespace harness::reports {

// A session's timing as bisect's own JSON writes it ("time"); null for an untimed one.
Json TimingJson(const std::optional<BisectTiming>& timing) {
  if (!timing) return Json(nullptr);
  Json t = Json::object();
  AddTiming(t, *timing);
  return t;
}

// A session that named several culprits adds "culprits", each with its own drop, in
// bisect's own shape (ChangesJson); a one-culprit note reads as it always did.
Json CulpritJson(const CulpritNote& n) {
  Json j{{"verdict", Word(n.verdict)},
         {"culprit", n.culprit.empty() ? Json(nullptr) : Json(n.culprit)},
         {"subject", n.subject},
         {"confidence", n.confidence},
         {"runs", n.runs},
         {"session", n.session ? Json(n.session) : Json(nullptr)},
         {"range", n.range},
         {"time", TimingJson(n.timing)},
         {"text", CulpritWords(n)}};
  if (n.culprits.size() > 1) j["culprits"] = ChangesJson(n.culprits);
  return j;
}

Json RegressionsJson(const ReportModel& m) {
  Json regressions = Json::array();
  for (const auto& g : m.regressions)
    regressions.push_back({{"id", g.id}, {"run", g.run_id}, {"suite", g.suite}, {"kind", g.kind}, {"cases", g.cases},
                           {"bisect", CulpritJson(g.note)}});
  return regressions;
}

}  // namespace harness::reports
