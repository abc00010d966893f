#include "harness/run/suite.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/results/case_id.h"
#include "harness/util/suggest.h"
#include "harness/util/quote.h"
#include "harness/util/versions.h"
#include "harness/util/watched_paths.h"

#include "harness/run/suite_table.h"

namespace harness {
namespace {

std::map<std::string, std::vector<CaseParam>>& Registry() {
  static std::map<std::string, std::vector<CaseParam>> registry;  // "suite/test" -> rows
  return registry;
}

}  // namespace

void PrintTo(const CaseParam& p, std::ostream* os) { *os << p.CaseId() << " " << p.params.dump(); }

std::vector<CaseParam> SuiteCases(const std::string& suite, const std::string& test) {
  auto it = Registry().find(suite + "/" + test);
  return it == Registry().end() ? std::vector<CaseParam>{} : it->second;
}

std::string CaseParamName(const testing::TestParamInfo<CaseParam>& info) {
  return std::to_string(info.param.index);
}

void SuiteTest::SetUp() {
  const CaseParam& p = GetParam();
  run_ = p.run_slot ? p.run_slot->run() : nullptr;
  if (run_ == nullptr) throw FatalError(UsageError("no run context: suite cases run inside `harness run`"));
  const std::string case_id = p.CaseId();
  // The case is begun before its inputs are read, so a failure to read them is stored too.
  if (run_->begin_case) run_->begin_case({p.suite, case_id, p.params.dump()});
  if (run_->inputs) inputs_ = ValueOrThrow(run_->inputs(case_id, Needs()));
}

std::optional<CompileResult> SuiteTest::Compile(const CompileRequest& request, const char* file, int line) {
  auto result = CompileForCase(*run_, request);
  if (result.ok()) return std::move(result).value();
  Report({.failures = {result.error().message}}, file, line);
  return std::nullopt;
}

void SuiteTest::Report(const CaseOutcome& outcome, const char* file, int line) {
  CaseRecord& record = run_->record;
  for (const auto& m : outcome.metrics) record.AddMetric(m);
  if (outcome.infra_error) record.SetInfraError(*outcome.infra_error);
  // Not ADD_FAILURE_AT: it would put "Failed" first. The first line names where the outcome
  // was reported (the message's detail line, after every finding); the others, reported at
  // the same place, would only repeat it.
  const char* where = file;
  for (const auto& text : outcome.failures) {
    GTEST_MESSAGE_AT_(where, where != nullptr ? line : -1, text.c_str(), testing::TestPartResult::kNonFatalFailure);
    where = nullptr;
  }
  for (const auto& note : outcome.notes) record.AddNote(note);
}

std::vector<std::shared_ptr<RunSlot>> RunSlotsOf(const std::vector<SuiteTable>& tables) {
  std::vector<std::shared_ptr<RunSlot>> slots;
  for (const auto& t : tables)
    for (const auto& [test, rows] : t.tests)
      for (const auto& row : rows)
        if (row.run_slot && std::find(slots.begin(), slots.end(), row.run_slot) == slots.end())
          slots.push_back(row.run_slot);
  return slots;
}

void InstallSuiteTables(const std::vector<SuiteTable>& tables) {
  Registry().clear();
  for (const auto& t : tables)
    for (const auto& [test, rows] : t.tests) Registry()[t.suite + "/" + test] = rows;
}

namespace {

// One declared parameter: its JSON type and, for numbers, its range.
struct ParamSpec {
  std::string type;  // int | number | string | bool | string_list | object | object_list
  double min = 0, max = 0;
};

const std::vector<std::string> kParamTypes = {"int", "number", "string", "bool", "string_list", "object", "object_list"};

Result<std::map<std::string, ParamSpec>> ReadParamSpecs(const JsonObject& table) {
  auto params = table.Object("params");
  if (!params) return params.error();
  std::map<std::string, ParamSpec> specs;
  for (const auto& [name, decl] : params->json().items()) {
    JsonObject d(decl, table.origin(), params->PathOf(name));
    if (!decl.is_object()) return params->FieldError(name, "expected {\"type\": ...}");
    if (auto k = d.KnownKeys({"type", "min", "max", "doc"}); !k) return k.error();
    ParamSpec spec;
    auto type = d.String("type");
    if (!type) return type.error();
    if (std::find(kParamTypes.begin(), kParamTypes.end(), *type) == kParamTypes.end())
      return d.FieldError("type", fmt::format("unknown type '{}'{}", *type, DidYouMean(*type, kParamTypes)));
    spec.type = *type;
    // Integers default to the 32-bit range the suites read them into.
    const bool is_int = spec.type == "int";
    auto min = d.Number("min", is_int ? -2147483648.0 : -1e308);
    auto max = d.Number("max", is_int ? 2147483647.0 : 1e308);
    if (!min) return min.error();
    if (!max) return max.error();
    spec.min = *min;
    spec.max = *max;
    specs[name] = spec;
  }
  return specs;
}

// Checks every key of a row (or the defaults) against the declared parameters.
Status CheckParams(const Json& row, const std::map<std::string, ParamSpec>& specs, const JsonObject& where) {
  std::vector<std::string> names;
  for (const auto& [name, spec] : specs) names.push_back(name);
  for (const auto& [key, v] : row.items()) {
    auto it = specs.find(key);
    if (it == specs.end()) return where.FieldError(key, "unknown parameter" + DidYouMean(key, names));
    const ParamSpec& spec = it->second;
    bool ok = false;
    if (spec.type == "int") ok = v.is_number_integer();
    else if (spec.type == "number") ok = v.is_number();
    else if (spec.type == "string") ok = v.is_string();
    else if (spec.type == "bool") ok = v.is_boolean();
    else if (spec.type == "object") ok = v.is_object();
    else if (spec.type == "string_list" || spec.type == "object_list") {
      ok = v.is_array();
      for (const auto& e : v) ok = ok && (spec.type == "string_list" ? e.is_string() : e.is_object());
    }
    if (!ok) return where.FieldError(key, fmt::format("expected {}", spec.type == "int" ? "an integer" : spec.type));
    if (v.is_number()) {
      const double x = v.get<double>();
      if (x < spec.min || x > spec.max)
        return where.FieldError(key, fmt::format("must be in [{}, {}], got {}", spec.min, spec.max, v.dump()));
    }
  }
  return OkStatus();
}

}  // namespace

static bool IsIdentifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

namespace {

// The table's suite (which must name its file), description, nightly flag and shard cost;
// its top-level keys must all be known.
Status ReadSuiteFields(const JsonObject& o, const std::filesystem::path& file, SuiteTable& t) {
  auto suite = o.String("suite");
  if (!suite) return suite.error();
  if (!IsIdentifier(*suite)) return o.FieldError("suite", "must be letters, digits and _");
  t.suite = *suite;
  if (file.stem().string() != t.suite)
    return o.FieldError("suite", fmt::format("'{}' does not match the file name '{}'", t.suite, file.filename().string()));
  auto description = o.String("description", "");
  if (!description) return description.error();
  t.description = *description;
  auto nightly = o.Bool("nightly", false);
  if (!nightly) return nightly.error();
  t.nightly = *nightly;
  if (auto k = o.KnownKeys({"format_version", "suite", "description", "nightly", "headline_metric", "shard_cost",
                            "evaluates_questions", "watch", "params", "defaults", "tests"});
      !k)
    return k.error();
  auto evaluates_questions = o.Bool("evaluates_questions", false);
  if (!evaluates_questions) return evaluates_questions.error();
  t.evaluates_questions = *evaluates_questions;
  auto shard_cost = o.Number("shard_cost", 1.0);
  if (!shard_cost) return shard_cost.error();
  if (!(*shard_cost > 0 && *shard_cost <= 1e6)) return o.FieldError("shard_cost", "must be in (0, 1e6]");
  t.shard_cost = *shard_cost;
  return OkStatus();
}

// "watch": a list of path prefixes inside the repository (watched_paths.h).
Status ReadWatch(const JsonObject& o, SuiteTable& t) {
  if (!o.Has("watch")) return OkStatus();
  const Json& list = o.json()["watch"];
  if (!list.is_array()) return o.FieldError("watch", "expected a list of path prefixes");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("watch[{}]", i);
    if (!list[i].is_string())
      return UsageError(fmt::format("{}: {}: expected a string (a path prefix), got {}", o.origin(), at, list[i].dump()));
    const std::string entry = list[i].get<std::string>();
    if (auto problem = WatchPathProblem(entry))
      return UsageError(fmt::format("{}: {}: {} {}", o.origin(), at, Quote(entry), *problem));
    t.watch.push_back(entry);
  }
  return OkStatus();
}

Status ReadHeadlineMetric(const JsonObject& o, SuiteTable& t) {
  if (!o.Has("headline_metric")) return OkStatus();
  auto h = o.Object("headline_metric");
  if (!h) return h.error();
  if (auto k = h->KnownKeys({"name", "better"}); !k) return k.error();
  auto name = h->String("name");
  if (!name) return name.error();
  auto better = h->String("better", "higher");
  if (!better) return better.error();
  if (*better != "higher" && *better != "lower") return h->FieldError("better", "is \"higher\" or \"lower\"");
  t.headline_metric = *name;
  t.headline_higher_is_better = *better == "higher";
  return OkStatus();
}

// The parameters every row starts from (an empty object when the table has none).
Result<Json> ReadDefaults(const JsonObject& o, const std::map<std::string, ParamSpec>& specs) {
  if (!o.Has("defaults")) return Json::object();
  auto d = o.Object("defaults");
  if (!d) return d.error();
  if (auto c = CheckParams(d->json(), specs, *d); !c) return c.error();
  return d->json();
}

// The cases of one test: each row of its list checked and merged over the defaults.
Result<std::vector<CaseParam>> ReadTestRows(const std::string& suite, const std::string& name, const Json& rows,
                                            const std::map<std::string, ParamSpec>& specs, const Json& defaults,
                                            const std::string& origin, const std::shared_ptr<RunSlot>& slot) {
  const std::string path = "tests." + name;
  if (!IsIdentifier(name)) return UsageError(fmt::format("{}: {}: a test name is letters, digits and _", origin, path));
  if (!rows.is_array() || rows.empty())
    return UsageError(fmt::format("{}: {}: expected a non-empty list of parameter objects", origin, path));
  std::vector<CaseParam> params;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].is_object())
      return UsageError(fmt::format("{}: {}[{}]: expected an object of parameters", origin, path, i));
    if (auto c = CheckParams(rows[i], specs, JsonObject(rows[i], origin, fmt::format("{}[{}]", path, i))); !c)
      return c.error();
    Json merged = defaults;
    merged.update(rows[i]);
    params.push_back(CaseParam{suite, name, static_cast<int>(i), merged, origin, slot});
  }
  return params;
}

}  // namespace

Result<SuiteTable> LoadSuiteTable(const std::filesystem::path& file) {
  auto j = ReadJsonFile(file);
  if (!j) return j.error();
  const std::string origin = file.string();
  if (!j->is_object()) return UsageError(origin + ": a suite table is a JSON object");
  JsonObject o(*j, origin);
  if (o.Int("format_version", 0).ok() && *o.Int("format_version", 0) == 1)
    return o.FieldError("format_version", "format 1 tables declare no parameter types; add a \"params\" section and "
                                          "set format_version 2 (docs/suites.md)");
  if (auto v = o.RequireVersion(kSuiteTableFormat); !v) return v.error();
  SuiteTable t;
  t.path = origin;
  if (auto s = ReadSuiteFields(o, file, t); !s) return s.error();
  if (auto s = ReadHeadlineMetric(o, t); !s) return s.error();
  if (auto s = ReadWatch(o, t); !s) return s.error();
  // Every parameter is declared with its type, so a typo or a wrongly typed value is an
  // input error naming file and field before any case runs, never a silent default.
  auto specs = ReadParamSpecs(o);
  if (!specs) return specs.error();
  auto defaults = ReadDefaults(o, *specs);
  if (!defaults) return defaults.error();
  auto tests = o.Object("tests");
  if (!tests) return tests.error();
  // One slot for the table's rows and every copy of them (GoogleTest's, the run request's).
  const auto slot = std::make_shared<RunSlot>();
  for (const auto& [name, rows] : tests->json().items()) {
    auto params = ReadTestRows(t.suite, name, rows, *specs, *defaults, origin, slot);
    if (!params) return params.error();
    t.tests[name] = std::move(*params);
  }
  return t;
}

Result<std::vector<SuiteTable>> LoadSuiteTables(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return UsageError(dir.string() + ": suites directory not found");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<SuiteTable> tables;
  for (const auto& f : files) {
    auto t = LoadSuiteTable(f);
    if (!t) return t.error();
    tables.push_back(std::move(t).value());
  }
  return tables;
}

Status CheckQuestionsSelectable(const std::vector<SuiteTable>& tables, const std::vector<std::string>& case_ids,
                                const std::string& questions_file) {
  std::vector<std::string> evaluating;
  for (const auto& t : tables)
    if (t.evaluates_questions) evaluating.push_back(t.suite);
  for (const auto& id : case_ids) {
    if (std::find(evaluating.begin(), evaluating.end(), CaseId(id).suite()) != evaluating.end()) continue;
    if (evaluating.empty())
      return UsageError(fmt::format("--questions {}: no suite table says \"evaluates_questions\": true, and {} is "
                                    "selected",
                                    questions_file, id));
    return UsageError(fmt::format("--questions {}: only the {} suite evaluates questions, and {} is selected; run it "
                                  "with --suite {}",
                                  questions_file, fmt::join(evaluating, " or "), id, evaluating.front()));
  }
  return OkStatus();
}

}  // namespace harness
