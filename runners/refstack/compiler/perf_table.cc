#include "runners/refstack/compiler/perf_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "runners/refstack/compiler/perf_model.h"
#include "runners/refstack/compiler/region_replay.h"
#include "harness/util/versions.h"

namespace harness::compiler {

std::string InputShapes(const Node& node) {
  std::vector<std::string> parts;
  for (const auto& a : node.args()) {
    const auto* n = std::get_if<Node*>(&a);
    if (n && (*n)->has_tensor()) parts.push_back(ShapeString((*n)->shape()));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

harness::Result<PerfTable> BuildPerfTable(const Graph& graph, const DeviceProfile& device, bool group_by_input_shapes) {
  auto events = ReplayEvents(graph);
  if (!events) return events.error();
  PerfTable table;
  table.device = device.name;
  table.grouped_by_input_shapes = group_by_input_shapes;
  std::map<std::pair<std::string, std::string>, size_t> row_of;
  for (const OpEvent& e : *events) {
    auto seconds = EstimateSeconds(*e.node, device);
    if (!seconds) return seconds.error();
    const double total = *seconds * static_cast<double>(e.calls);
    std::pair<std::string, std::string> key{std::string(e.node->op()),
                                            group_by_input_shapes ? InputShapes(*e.node) : ""};
    auto [it, inserted] = row_of.emplace(key, table.rows.size());
    if (inserted) table.rows.push_back({key.first, key.second, 0, 0});
    harness::OpRow& row = table.rows[it->second];
    row.calls += e.calls;
    row.est_seconds += total;
    table.total_seconds += total;
  }
  std::stable_sort(table.rows.begin(), table.rows.end(),
                   [](const harness::OpRow& a, const harness::OpRow& b) { return a.est_seconds > b.est_seconds; });
  return table;
}

std::string FormatTime(double seconds) {
  if (seconds >= 1) return fmt::format("{:.3f}s", seconds);
  if (seconds >= 1e-3) return fmt::format("{:.3f}ms", seconds * 1e3);
  if (seconds >= 1e-6) return fmt::format("{:.3f}us", seconds * 1e6);
  return fmt::format("{:.3f}ns", seconds * 1e9);
}

namespace {

// Python's str.center: an odd margin puts the extra space on the left when width is odd.
std::string Center(const std::string& s, size_t width) {
  if (s.size() >= width) return s;
  const size_t margin = width - s.size();
  const size_t left = margin / 2 + (margin & width & 1);
  return std::string(left, ' ') + s + std::string(margin - left, ' ');
}

std::string Pad(const std::string& s, size_t width, bool right_align) {
  if (s.size() >= width) return s;
  return right_align ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::string RenderPerfTableText(const PerfTable& table) {
  std::vector<std::string> headers{"Name"};
  std::vector<bool> right{false};
  if (table.grouped_by_input_shapes) {
    headers.push_back("Input Shapes");
    right.push_back(false);
  }
  headers.push_back(table.perf_model + " total");
  headers.push_back(table.perf_model + " avg");
  headers.push_back("# of Calls");
  right.insert(right.end(), {true, true, true});
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : table.rows) {
    std::vector<std::string> row{r.op};
    if (table.grouped_by_input_shapes) row.push_back(r.input_shapes);
    row.push_back(FormatTime(r.est_seconds));
    row.push_back(FormatTime(r.calls > 0 ? r.est_seconds / static_cast<double>(r.calls) : 0));
    row.push_back(std::to_string(r.calls));
    cells.push_back(std::move(row));
  }
  std::vector<size_t> width(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) {
    width[c] = headers[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  auto join = [&](const std::vector<std::string>& parts) {
    std::string line = fmt::format("{}", fmt::join(parts, "  "));
    return line + "\n";
  };
  std::vector<std::string> dashes, centered;
  for (size_t c = 0; c < headers.size(); ++c) {
    dashes.emplace_back(width[c], '-');
    centered.push_back(Center(headers[c], width[c]));
  }
  const std::string separator = join(dashes);
  std::string out = separator + join(centered) + separator;
  for (const auto& row : cells) {
    std::vector<std::string> padded;
    for (size_t c = 0; c < row.size(); ++c) padded.push_back(Pad(row[c], width[c], right[c]));
    out += join(padded);
  }
  out += separator;
  out += fmt::format("Total time for {}: {}\n", table.perf_model, FormatTime(table.total_seconds));
  return out;
}

harness::Json RenderPerfTableJson(const PerfTable& table) {
  harness::Json rows = harness::Json::array();
  for (const auto& r : table.rows) {
    rows.push_back({{"op", r.op},
                    {"input_shapes", r.input_shapes},
                    {"calls", r.calls},
                    {"total_seconds", r.est_seconds},
                    {"avg_seconds", r.calls > 0 ? r.est_seconds / static_cast<double>(r.calls) : 0.0}});
  }
  return {{"format_version", harness::kPerfTableFormat},
          {"perf_model", table.perf_model},
          {"device", table.device},
          {"grouped_by_input_shapes", table.grouped_by_input_shapes},
          {"total_seconds", table.total_seconds},
          {"rows", rows}};
}

}  // namespace harness::compiler
