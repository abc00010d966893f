// Golden op tables (golden/ops/<suite>/<case>.json, format_version 1): the expected
// (op, input shapes, calls) rows of a compiled case. Estimated times are not part of
// the contract: a cost-model change must not invalidate every golden.
//
//   {"format_version": 1, "case": "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0",
//    "ops": [{"op": "tensor_cast.rms_norm.default", "input_shapes": "[1, 64, 5120], [5120]",
//             "calls": 2}, ...]}
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/util/json_file.h"
#include "harness/results/results.h"

namespace harness {

struct GoldenOpTable {
  std::string origin;
  std::string case_id;
  std::vector<harness::OpRow> ops;  // est_seconds is 0
};

harness::Result<GoldenOpTable> LoadGoldenOpTable(const std::filesystem::path& path);
// The file content for rows (sorted by op and shapes, times dropped).
harness::Json GoldenOpTableJson(const std::string& case_id, const std::vector<harness::OpRow>& rows);
// One line per difference: a row missing from actual, an unexpected row, or a row whose
// calls differ. Empty when the tables agree on every (op, input shapes, calls).
std::vector<std::string> DiffOpTables(const std::vector<harness::OpRow>& expected,
                                      const std::vector<harness::OpRow>& actual);

// One (op, input shapes) row that differs between two op tables: calls on each side, 0
// where the row is absent.
struct OpRowChange {
  std::string op;
  std::string input_shapes;
  int64_t calls_before = 0;
  int64_t calls_after = 0;
};

// "expectation may be stale: from -> to": an op of the old table vanished and an op whose
// name starts with the old op's name without its .overload suffix appeared with the same
// calls (a renamed or newly fused kernel, e.g. ..._swiglu.default -> ..._swiglu_quant.default),
// so the expectation is likely out of date rather than the stack broken.
struct StaleHint {
  std::string from;
  std::string to;
  int64_t calls = 0;
};
std::string StaleHintText(const StaleHint& h);

// The structured difference of two op tables (rows merged by op and input shapes, times
// ignored), each list sorted by op and shapes. Reused by compare and golden diff.
struct OpTableDiff {
  std::vector<OpRowChange> added;    // only in after
  std::vector<OpRowChange> removed;  // only in before
  std::vector<OpRowChange> changed;  // in both, calls differ
  std::vector<StaleHint> stale;
  bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
};
OpTableDiff DiffOpTableRows(const std::vector<harness::OpRow>& before, const std::vector<harness::OpRow>& after);

}  // namespace harness
