#include "harness/store/bisect_evidence.h"

#include <climits>

#include <fmt/format.h>

#include "harness/util/progress_line.h"
#include "harness/util/versions.h"

namespace harness {
namespace {

template <class T, class U>
Status TakeLogged(Result<T> value, U& out) {
  if (!value) return value.error();
  out = std::move(*value);
  return OkStatus();
}

// A field a log may leave out: absent stays none, present must have the type get reads.
template <class T>
Status TakeIfLogged(const JsonObject& o, const std::string& key, Result<T> (JsonObject::*get)(const std::string&) const,
                    std::optional<T>& out) {
  if (!o.Has(key)) return OkStatus();
  return TakeLogged((o.*get)(key), out);
}

Result<std::vector<std::string>> LoggedStrings(const JsonObject& o, const std::string& key) {
  if (!o.Has(key)) return std::vector<std::string>{};
  return o.StringList(key);
}

Error NotAnObject(const std::string& origin, const std::string& path) {
  return UsageError(fmt::format("{}: {}: expected an object", origin, path));
}

// The objects of a list field, each named by its place (key[i]); absent: none.
Result<std::vector<JsonObject>> LoggedObjects(const JsonObject& o, const std::string& key) {
  std::vector<JsonObject> out;
  if (!o.Has(key)) return out;
  const Json& list = o.json().at(key);
  if (!list.is_array()) return o.FieldError(key, "expected a list of objects");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = fmt::format("{}[{}]", o.PathOf(key), i);
    if (!list[i].is_object()) return NotAnObject(o.origin(), path);
    out.emplace_back(list[i], o.origin(), path);
  }
  return out;
}

Result<LoggedObservation> ObservationFromJson(const JsonObject& o) {
  if (auto st = o.KnownKeys({"series", "failed", "value", "questions"}); !st) return st.error();
  LoggedObservation ob;
  int64_t series = 0;
  if (auto st = TakeLogged(o.Int("series", 0), series); !st) return st.error();
  if (series < 0 || series > INT_MAX) return o.FieldError("series", "expected a series number (0 or more)");
  ob.series = static_cast<int>(series);
  if (o.Has("failed")) {
    if (auto st = TakeLogged(o.Bool("failed"), ob.failed); !st) return st.error();
    return ob;
  }
  for (const Status& st : {TakeLogged(o.Number("value", 0.0), ob.value), TakeLogged(o.String("questions", ""), ob.questions)})
    if (!st) return st.error();
  return ob;
}

Json ObservationJson(const LoggedObservation& ob) {
  if (ob.failed) return Json{{"series", ob.series}, {"failed", *ob.failed}};
  Json j{{"series", ob.series}, {"value", ob.value}};
  if (!ob.questions.empty()) j["questions"] = ob.questions;
  return j;
}

Result<std::vector<std::vector<std::string>>> TargetQuestions(const JsonObject& o, std::size_t cases) {
  std::vector<std::vector<std::string>> out;
  if (!o.Has("questions")) return out;
  const Json& q = o.json().at("questions");
  const Error bad = o.FieldError("questions", "expected one list of sample keys per case");
  if (!q.is_array() || (!q.empty() && q.size() != cases)) return bad;
  for (const auto& keys : q) {
    if (!keys.is_array()) return bad;
    auto& list = out.emplace_back();
    for (const auto& k : keys) {
      if (!k.is_string()) return bad;
      list.push_back(k.get<std::string>());
    }
  }
  return out;
}

}  // namespace

Json ToJson(const StepEvidence& e) {
  Json observations = Json::array();
  for (const auto& ob : e.observations) observations.push_back(ObservationJson(ob));
  Json j{{"observations", std::move(observations)}, {"skip", e.skip}};
  if (e.exit_code) j["exit_code"] = *e.exit_code;
  if (!e.case_results.empty()) j["case_results"] = e.case_results;
  if (e.questions_evaluated) j["questions_evaluated"] = *e.questions_evaluated;
  if (!e.untestable.empty()) j["untestable"] = e.untestable;
  if (!e.stderr_tail.empty()) j["stderr_tail"] = e.stderr_tail;
  return j;
}

Result<StepEvidence> StepEvidenceFromJson(const Json& j, const std::string& origin, const std::string& path) {
  if (!j.is_object()) return NotAnObject(origin, path);
  const JsonObject o(j, origin, path);
  if (auto st = o.KnownKeys({"observations", "skip", "exit_code", "case_results", "questions_evaluated", "untestable",
                             "stderr_tail"});
      !st)
    return st.error();
  StepEvidence e;
  auto observations = LoggedObjects(o, "observations");
  if (!observations) return observations.error();
  for (const auto& ob : *observations) {
    auto read = ObservationFromJson(ob);
    if (!read) return read.error();
    e.observations.push_back(*read);
  }
  for (const Status& st : {TakeLogged(o.Bool("skip", false), e.skip),
                           TakeIfLogged<int64_t>(o, "exit_code", &JsonObject::Int, e.exit_code),
                           TakeIfLogged<int64_t>(o, "questions_evaluated", &JsonObject::Int, e.questions_evaluated),
                           TakeLogged(o.String("untestable", ""), e.untestable),
                           TakeLogged(o.String("stderr_tail", ""), e.stderr_tail),
                           o.Has("case_results") ? TakeLogged(o.IntList("case_results"), e.case_results) : OkStatus()})
    if (!st) return st.error();
  return e;
}

Json ToJson(const BisectTarget& t) {
  Json specs = Json::array();
  for (const auto& s : t.specs) specs.push_back({{"higher_is_better", s.higher_is_better}, {"noise_sigma", s.noise_sigma}});
  return Json{{"status", t.status}, {"metric", t.metric}, {"cases", t.cases},
              {"specs", specs},   {"words", t.words},   {"questions", t.questions}};
}

Result<BisectTarget> BisectTargetFromJson(const Json& j, const std::string& origin, const std::string& path) {
  if (!j.is_object()) return NotAnObject(origin, path);
  const JsonObject o(j, origin, path);
  BisectTarget t;
  for (const Status& st : {TakeLogged(o.Bool("status", false), t.status), TakeLogged(o.String("metric", ""), t.metric),
                           TakeLogged(LoggedStrings(o, "cases"), t.cases), TakeLogged(o.String("words", ""), t.words)})
    if (!st) return st.error();
  auto specs = LoggedObjects(o, "specs");
  if (!specs) return specs.error();
  for (const auto& s : *specs) {
    LoggedSeries series;
    for (const Status& st : {TakeLogged(s.Bool("higher_is_better", true), series.higher_is_better),
                             TakeLogged(s.Number("noise_sigma", 0.0), series.noise_sigma)})
      if (!st) return st.error();
    t.specs.push_back(series);
  }
  auto questions = TargetQuestions(o, t.cases.size());
  if (!questions) return questions.error();
  t.questions = std::move(*questions);
  return t;
}

Json ToJson(const BisectSessionHeader& h) {
  Json j{{"format_version", kBisectLogFormat}, {"good", h.good}, {"bad", h.bad}, {"metric", h.metric},
         {"cases", h.cases}, {"repo", h.repo}, {"command", h.command},
         {"command_timeout_s", h.command_timeout_s.value_or(0)}, {"full_evals", h.full_evals}};
  if (h.max_runs) j["max_runs"] = *h.max_runs;
  if (h.max_culprits && *h.max_culprits > 1) j["max_culprits"] = *h.max_culprits;
  if (h.confidence) j["confidence"] = *h.confidence;
  if (h.flake_rate) j["flake_rate"] = *h.flake_rate;
  if (h.noise_sigma) j["noise_sigma"] = *h.noise_sigma;
  if (h.target) j["target"] = ToJson(*h.target);
  if (!h.watch.empty()) j["watch"] = h.watch;
  return j;
}

Result<BisectSessionHeader> BisectSessionHeaderFromJson(const Json& j, const std::string& origin) {
  const JsonObject o(j, origin);
  // Format 1 named one case as "case"; 2 names a list, "cases".
  auto version = o.Int("format_version", 0);
  if (!version) return version.error();
  if (*version != 1)
    if (auto v = o.RequireVersion(kBisectLogFormat); !v) return v.error();
  BisectSessionHeader h;
  std::string one_case;
  for (const Status& st : {TakeLogged(o.String("good", ""), h.good), TakeLogged(o.String("bad", ""), h.bad),
                           TakeLogged(o.String("metric", ""), h.metric), TakeLogged(o.String("repo", ""), h.repo),
                           TakeLogged(o.String("case", ""), one_case), TakeLogged(LoggedStrings(o, "cases"), h.cases),
                           TakeLogged(LoggedStrings(o, "command"), h.command),
                           TakeLogged(LoggedStrings(o, "watch"), h.watch),
                           TakeIfLogged<int64_t>(o, "max_runs", &JsonObject::Int, h.max_runs),
                           TakeIfLogged<int64_t>(o, "max_culprits", &JsonObject::Int, h.max_culprits),
                           TakeIfLogged<double>(o, "confidence", &JsonObject::Number, h.confidence),
                           TakeIfLogged<double>(o, "flake_rate", &JsonObject::Number, h.flake_rate),
                           TakeIfLogged<double>(o, "noise_sigma", &JsonObject::Number, h.noise_sigma),
                           TakeIfLogged<double>(o, "command_timeout_s", &JsonObject::Number, h.command_timeout_s),
                           TakeLogged(o.Bool("full_evals", false), h.full_evals)})
    if (!st) return st.error();
  if (!o.Has("cases") && !one_case.empty()) h.cases = {one_case};
  if (h.command_timeout_s == 0.0) h.command_timeout_s.reset();  // how a log says "no timeout"
  if (o.Has("target")) {
    auto target = BisectTargetFromJson(j.at("target"), origin);
    if (!target) return target.error();
    h.target = std::move(*target);
  }
  return h;
}

void AddTiming(Json& result, const BisectTiming& t) {
  result["wall_seconds"] = t.wall_seconds;
  result["steps"] = t.steps;
  result["rounds"] = t.rounds;
  result["seconds_after_nightly"] = t.seconds_after_nightly ? Json(*t.seconds_after_nightly) : Json(nullptr);
}

std::optional<BisectTiming> BisectTimingOf(const Json& result) {
  auto number = [&](const char* key) { return result.is_object() && result.contains(key) && result[key].is_number(); };
  if (!number("wall_seconds") || !number("steps") || !number("rounds")) return std::nullopt;
  BisectTiming t;
  t.wall_seconds = result["wall_seconds"].get<double>();
  t.steps = result["steps"].get<int64_t>();
  t.rounds = result["rounds"].get<int64_t>();
  if (number("seconds_after_nightly")) t.seconds_after_nightly = result["seconds_after_nightly"].get<double>();
  return t;
}

std::string TimingWords(const BisectTiming& t) {
  std::string out;
  if (t.seconds_after_nightly)
    out = fmt::format("answered {} after the nightly ended; ", DurationWords(*t.seconds_after_nightly));
  return out + fmt::format("the bisect took {}, {} steps in {} rounds", DurationWords(t.wall_seconds), t.steps, t.rounds);
}

}  // namespace harness
