// The performance table msmodeling prints (Runtime.table_averages): one row per op name
// (and per input shapes when grouped by them) with the total and average estimated time
// and the number of calls after region replay, sorted by total time, descending.
#pragma once

#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/util/json_file.h"
#include "harness/stack/stack.h"
#include "runners/refstack/compiler/device.h"
#include "runners/refstack/compiler/graph.h"

namespace harness::compiler {

struct PerfTable {
  std::string perf_model = "analytic";
  std::string device;
  bool grouped_by_input_shapes = true;
  std::vector<harness::OpRow> rows;  // est_seconds: total over the row's calls
  double total_seconds = 0;
};

// For each top-level positional argument that is a single tensor, str(list(shape)),
// joined by ", " (tensor lists and scalars are left out): "[1, 64, 5120], [5120]".
std::string InputShapes(const Node& node);

harness::Result<PerfTable> BuildPerfTable(const Graph& graph, const DeviceProfile& device,
                                          bool group_by_input_shapes = true);

// "1.234ms": three decimals in s, ms, us or ns.
std::string FormatTime(double seconds);

// The text layout: columns Name, [Input Shapes], analytic total, analytic avg, # of Calls,
// each as wide as its widest cell, joined by two spaces; centered headers between dashed
// separators; names and shapes left-aligned, numbers right-aligned; then
// "Total time for analytic: <time>".
std::string RenderPerfTableText(const PerfTable& table);

// {"format_version": 1, "perf_model", "device", "grouped_by_input_shapes",
//  "total_seconds", "rows": [{"op", "input_shapes", "calls", "total_seconds",
//  "avg_seconds"}]}
harness::Json RenderPerfTableJson(const PerfTable& table);

}  // namespace harness::compiler
