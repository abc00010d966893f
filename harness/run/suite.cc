#include "harness/run/suite.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "harness/util/versions.h"

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

void InstallSuiteTables(const std::vector<SuiteTable>& tables) {
  Registry().clear();
  for (const auto& t : tables)
    for (const auto& [test, rows] : t.tests) Registry()[t.suite + "/" + test] = rows;
}

static bool IsIdentifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

Result<SuiteTable> LoadSuiteTable(const std::filesystem::path& file) {
  auto j = ReadJsonFile(file);
  if (!j) return j.error();
  const std::string origin = file.string();
  if (!j->is_object()) return UsageError(origin + ": a suite table is a JSON object");
  JsonObject o(*j, origin);
  if (auto v = o.RequireVersion(kSuiteTableFormat); !v) return v.error();
  SuiteTable t;
  t.path = origin;
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
  Json defaults = Json::object();
  if (o.Has("defaults")) {
    auto d = o.Object("defaults");
    if (!d) return d.error();
    defaults = d->json();
  }
  auto tests = o.Object("tests");
  if (!tests) return tests.error();
  for (const auto& [name, rows] : tests->json().items()) {
    const std::string path = "tests." + name;
    if (!IsIdentifier(name)) return UsageError(fmt::format("{}: {}: a test name is letters, digits and _", origin, path));
    if (!rows.is_array() || rows.empty())
      return UsageError(fmt::format("{}: {}: expected a non-empty list of parameter objects", origin, path));
    std::vector<CaseParam> params;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!rows[i].is_object())
        return UsageError(fmt::format("{}: {}[{}]: expected an object of parameters", origin, path, i));
      Json merged = defaults;
      merged.update(rows[i]);
      params.push_back(CaseParam{t.suite, name, static_cast<int>(i), merged, origin});
    }
    t.tests[name] = std::move(params);
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

}  // namespace harness
