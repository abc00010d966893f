#include "harness/golden/golden_ops.h"

#include <fmt/format.h>

#include "harness/results/case_id.h"
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

harness::Result<std::filesystem::path> GoldenOpTablePath(const std::filesystem::path& golden_dir,
                                                         const std::string& case_id) {
  if (auto problem = harness::CaseIdProblem(case_id))
    return harness::UsageError(fmt::format("case id '{}' {}", harness::PrintableCaseId(case_id), *problem));
  const std::filesystem::path ops = (golden_dir / "ops").lexically_normal();
  const std::filesystem::path path = (ops / (case_id + ".json")).lexically_normal();
  // Belt and braces beside the id check: whatever the id, the file stays under ops/.
  const std::filesystem::path inside = path.lexically_relative(ops);
  if (inside.empty() || *inside.begin() == "..")
    return harness::UsageError(fmt::format("case id '{}': its expectation {} would lie outside {}",
                                           harness::PrintableCaseId(case_id), path.string(), ops.string()));
  return path;
}

harness::Result<GoldenOpTable> LoadGoldenOpTable(const std::filesystem::path& path) {
  auto json = harness::ReadJsonFile(path);
  if (!json) return json.error();
  const std::string origin = path.string();
  if (!json->is_object()) return harness::UsageError(origin + ": a golden op table is a JSON object");
  harness::JsonObject o(*json, origin);
  if (auto v = o.RequireVersion(kGoldenOpsFormat); !v) return v.error();
  if (auto k = o.KnownKeys({"format_version", "case", "note", "ops", "calls"}); !k) return k.error();
  GoldenOpTable table;
  table.origin = origin;
  auto case_id = o.String("case");
  if (!case_id) return case_id.error();
  table.case_id = *case_id;
  auto note = o.String("note", "");
  if (!note) return note.error();
  table.note = *note;
  if (o.Has("ops") == o.Has("calls"))
    return o.FieldError("ops", "give exactly one of \"ops\" (the whole table) and \"calls\" (calls of the ops named)");
  const bool whole = o.Has("ops");
  table.kind = whole ? GoldenOpTable::Kind::kWholeTable : GoldenOpTable::Kind::kCalls;
  const char* field = whole ? "ops" : "calls";
  const harness::Json& rows = (*json)[field];
  if (!rows.is_array()) return o.FieldError(field, "expected a list of rows");
  std::set<std::string> named;
  for (size_t i = 0; i < rows.size(); ++i) {
    harness::JsonObject row(rows[i], origin, fmt::format("{}[{}]", field, i));
    auto op = row.String("op");
    if (!op) return op.error();
    auto calls = row.Int("calls");
    if (!calls) return calls.error();
    if (whole) {
      auto shapes = row.String("input_shapes");
      if (!shapes) return shapes.error();
      if (*calls < 1) return row.FieldError("calls", "must be at least 1");
      table.ops.push_back({*op, *shapes, *calls, 0});
    } else {
      if (*calls < 0) return row.FieldError("calls", "must be 0 (absent) or more");
      if (!named.insert(*op).second) return row.FieldError("op", fmt::format("{} is named twice", *op));
      table.calls.push_back({*op, *calls});
    }
  }
  return table;
}

harness::Json GoldenOpTableJson(const GoldenOpTable& table) {
  harness::Json j = harness::Json::object();
  j["format_version"] = kGoldenOpsFormat;
  j["case"] = table.case_id;
  if (!table.note.empty()) j["note"] = table.note;
  if (table.kind == GoldenOpTable::Kind::kWholeTable) {
    harness::Json ops = harness::Json::array();
    for (const auto& [key, calls] : CallsByKey(table.ops))
      ops.push_back({{"op", key.first}, {"input_shapes", key.second}, {"calls", calls}});
    j["ops"] = ops;
  } else {
    harness::Json calls = harness::Json::array();
    for (const auto& c : table.calls) calls.push_back({{"op", c.op}, {"calls", c.calls}});
    j["calls"] = calls;
  }
  return j;
}

harness::Json GoldenOpTableJson(const std::string& case_id, const std::vector<harness::OpRow>& rows) {
  GoldenOpTable table;
  table.case_id = case_id;
  table.ops = rows;
  return GoldenOpTableJson(table);
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

namespace {

int64_t CallsOf(const std::vector<harness::OpRow>& rows, const std::string& op) {
  int64_t n = 0;
  for (const auto& r : rows)
    if (r.op == op) n += r.calls;
  return n;
}

// The actual table with shapes dropped (rows merged per op), for hints over calls lists.
std::vector<harness::OpRow> PerOp(const std::vector<harness::OpRow>& rows) {
  std::map<std::string, int64_t> calls;
  for (const auto& r : rows) calls[r.op] += r.calls;
  std::vector<harness::OpRow> out;
  for (const auto& [op, n] : calls) out.push_back({op, "", n, 0});
  return out;
}

// The stale hints of a calls list: ops expected to be called that vanished, paired with
// new ops of the actual table (ops the list names are not new).
std::vector<StaleHint> CallsStaleHints(const GoldenOpTable& expected, const std::vector<harness::OpRow>& actual) {
  std::vector<harness::OpRow> before;
  for (const auto& c : expected.calls) before.push_back({c.op, "", c.calls, 0});
  std::vector<harness::OpRow> after = PerOp(actual);
  // An op the list expects absent (0) is "in before" for the hint's purpose: it is not new.
  std::vector<StaleHint> hints;
  for (const auto& h : DiffOpTableRows(before, after).stale) {
    bool named = false;
    for (const auto& c : expected.calls) named = named || c.op == h.to;
    if (!named) hints.push_back(h);
  }
  return hints;
}

}  // namespace

std::vector<std::string> GoldenCheck::Lines() const {
  std::vector<std::string> lines = differences;
  for (const auto& h : stale) lines.push_back(StaleHintText(h));
  return lines;
}

std::string GoldenCheckMessage(const GoldenCheck& check, const std::string& golden_file) {
  const std::vector<std::string> lines = check.Lines();
  if (lines.empty()) return "op table meets " + golden_file;
  std::string out = "op table differs from its golden expectation: " + lines.front();
  if (check.differences.size() > 1)
    out += fmt::format(" (and {} more difference{})", check.differences.size() - 1, check.differences.size() == 2 ? "" : "s");
  out += "\nexpected by " + golden_file + ":";
  for (const auto& l : lines) out += "\n" + l;
  return out;
}

GoldenCheck CheckGolden(const GoldenOpTable& expected, const std::vector<harness::OpRow>& actual) {
  GoldenCheck check;
  if (expected.kind == GoldenOpTable::Kind::kWholeTable) {
    check.differences = DiffOpTables(expected.ops, actual);
    if (!check.ok()) check.stale = DiffOpTableRows(expected.ops, actual).stale;
    return check;
  }
  for (const auto& c : expected.calls) {
    const int64_t got = CallsOf(actual, c.op);
    if (got != c.calls) check.differences.push_back(fmt::format("{}: expected {} call(s), got {}", c.op, c.calls, got));
  }
  if (!check.ok()) check.stale = CallsStaleHints(expected, actual);
  return check;
}

GoldenOpTable AcceptActual(const GoldenOpTable& expected, const std::vector<harness::OpRow>& actual) {
  GoldenOpTable accepted = expected;
  if (expected.kind == GoldenOpTable::Kind::kWholeTable) {
    accepted.ops.clear();
    for (const auto& r : actual)
      if (r.calls > 0) accepted.ops.push_back({r.op, r.input_shapes, r.calls, 0});  // a 0-call row is no call
    return accepted;
  }
  const auto hints = CallsStaleHints(expected, actual);
  accepted.calls.clear();
  std::set<std::string> named;
  for (const auto& c : expected.calls) named.insert(c.op);
  for (const auto& c : expected.calls) {
    accepted.calls.push_back({c.op, CallsOf(actual, c.op)});
    for (const auto& h : hints)
      if (h.from == c.op && named.insert(h.to).second) accepted.calls.push_back({h.to, CallsOf(actual, h.to)});
  }
  return accepted;
}

}  // namespace harness
