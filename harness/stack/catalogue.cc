#include "harness/stack/catalogue.h"

#include <fmt/format.h>

#include "harness/util/suggest.h"
#include "harness/util/versions.h"

#include "harness/util/json_file.h"

namespace harness {

Result<std::vector<Regression>> LoadCatalogue(const std::filesystem::path& path) {
  auto j = ReadJsonFile(path);
  if (!j) return j.error();
  JsonObject top(*j, path.string());
  if (auto v = top.RequireVersion(kCatalogueFormat); !v) return v.error();
  if (!top.Has("regressions") || !top.json()["regressions"].is_array())
    return top.FieldError("regressions", "expected a list");
  std::vector<Regression> out;
  const auto& list = top.json()["regressions"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    JsonObject o(list[i], path.string(), fmt::format("regressions[{}]", i));
    Regression r;
    auto fault = o.String("fault");
    if (!fault) return fault.error();
    r.fault = *fault;
    auto summary = o.String("summary", "");
    if (!summary) return summary.error();
    r.summary = *summary;
    auto cases = o.StringList("cases");
    if (!cases) return cases.error();
    r.cases = *cases;
    auto message = o.String("message");
    if (!message) return message.error();
    r.message = *message;
    out.push_back(std::move(r));
  }
  return out;
}

Status ValidateFaults(const std::vector<std::string>& faults, const std::vector<Regression>& catalogue) {
  for (const auto& f : faults) {
    bool known = false;
    for (const auto& r : catalogue) known |= r.fault == f;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& r : catalogue) names.push_back(r.fault);
      return UsageError(fmt::format("unknown fault '{}'{}", f, DidYouMean(f, names)));
    }
  }
  return OkStatus();
}

}  // namespace harness
