#include "harness/golden/golden_ops.h"

#include <fmt/format.h>

#include "harness/util/versions.h"

#include <algorithm>
#include <map>
#include <set>

namespace harness {

using Key = std::pair<std::string, std::string>;

namespace {

std::map<Key, int64_t> CallsByKey(const std::vector<harness::OpRow>& rows) {
  std::map<Key, int64_t> calls;
  for (const auto& r : rows) calls[{r.op, r.input_shapes}] += r.calls;
  return calls;
}

std::string Describe(const Key& k) { return k.second.empty() ? k.first : fmt::format("{} {}", k.first, k.second); }

}  // namespace

harness::Result<GoldenOpTable> LoadGoldenOpTable(const std::filesystem::path& path) {
  auto json = harness::ReadJsonFile(path);
  if (!json) return json.error();
  const std::string origin = path.string();
  if (!json->is_object()) return harness::UsageError(origin + ": a golden op table is a JSON object");
  harness::JsonObject o(*json, origin);
  if (auto v = o.RequireVersion(kGoldenOpsFormat); !v) return v.error();
  GoldenOpTable table;
  table.origin = origin;
  auto case_id = o.String("case");
  if (!case_id) return case_id.error();
  table.case_id = *case_id;
  const harness::Json& ops = (*json)["ops"];
  if (!ops.is_array()) return o.FieldError("ops", "expected a list of rows");
  for (size_t i = 0; i < ops.size(); ++i) {
    harness::JsonObject row(ops[i], origin, fmt::format("ops[{}]", i));
    auto op = row.String("op");
    if (!op) return op.error();
    auto shapes = row.String("input_shapes");
    if (!shapes) return shapes.error();
    auto calls = row.Int("calls");
    if (!calls) return calls.error();
    if (*calls < 1) return row.FieldError("calls", "must be at least 1");
    table.ops.push_back({*op, *shapes, *calls, 0});
  }
  return table;
}

harness::Json GoldenOpTableJson(const std::string& case_id, const std::vector<harness::OpRow>& rows) {
  harness::Json ops = harness::Json::array();
  for (const auto& [key, calls] : CallsByKey(rows))
    ops.push_back({{"op", key.first}, {"input_shapes", key.second}, {"calls", calls}});
  harness::Json j = harness::Json::object();
  j["format_version"] = kGoldenOpsFormat;
  j["case"] = case_id;
  j["ops"] = ops;
  return j;
}

std::vector<std::string> DiffOpTables(const std::vector<harness::OpRow>& expected,
                                      const std::vector<harness::OpRow>& actual) {
  const auto want = CallsByKey(expected);
  const auto got = CallsByKey(actual);
  std::vector<std::string> diff;
  for (const auto& [key, calls] : want) {
    auto it = got.find(key);
    if (it == got.end()) {
      diff.push_back(fmt::format("missing: {} x{}", Describe(key), calls));
    } else if (it->second != calls) {
      diff.push_back(fmt::format("calls differ: {}: expected {}, got {}", Describe(key), calls, it->second));
    }
  }
  for (const auto& [key, calls] : got)
    if (!want.count(key)) diff.push_back(fmt::format("unexpected: {} x{}", Describe(key), calls));
  return diff;
}

std::string StaleHintText(const StaleHint& h) { return fmt::format("expectation may be stale: {} → {}", h.from, h.to); }

OpTableDiff DiffOpTableRows(const std::vector<harness::OpRow>& before, const std::vector<harness::OpRow>& after) {
  const auto was = CallsByKey(before);
  const auto now = CallsByKey(after);
  OpTableDiff d;
  for (const auto& [key, calls] : was) {
    auto it = now.find(key);
    if (it == now.end()) {
      d.removed.push_back({key.first, key.second, calls, 0});
    } else if (it->second != calls) {
      d.changed.push_back({key.first, key.second, calls, it->second});
    }
  }
  for (const auto& [key, calls] : now)
    if (!was.count(key)) d.added.push_back({key.first, key.second, 0, calls});
  // Hints pair ops that vanished entirely (under any shapes) with ops that are new
  // entirely: an op that merely changed shapes is not a rename.
  std::set<std::string> ops_before, ops_after;
  for (const auto& [key, calls] : was) ops_before.insert(key.first);
  for (const auto& [key, calls] : now) ops_after.insert(key.first);
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& gone : d.removed) {
    if (ops_after.count(gone.op)) continue;
    const auto dot = gone.op.rfind('.');
    const std::string stem = dot == std::string::npos ? gone.op : gone.op.substr(0, dot);
    for (const auto& fresh : d.added) {
      if (ops_before.count(fresh.op) || fresh.op.rfind(stem, 0) != 0 || fresh.calls_after != gone.calls_before)
        continue;
      if (seen.insert({gone.op, fresh.op}).second) d.stale.push_back({gone.op, fresh.op, gone.calls_before});
    }
  }
  return d;
}

}  // namespace harness
