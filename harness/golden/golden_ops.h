// Golden expectations of a compiled case (golden/ops/<suite>/<case>.json, format_version
// 2, docs/golden.md), one format for both kinds a suite may keep:
//   whole table: the expected (op, input shapes, calls) rows, every row of the table;
//     {"format_version": 2, "case": "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0",
//      "ops": [{"op": "tensor_cast.rms_norm.default", "input_shapes": "[1, 64, 5120], [5120]",
//               "calls": 2}, ...]}
//   calls: the expected total calls (over every shape) of the ops named, 0 = absent;
//     {"format_version": 2, "case": "gmm/test_qwen3_dynamic_quant_3",
//      "calls": [{"op": "tensor_cast.grouped_matmul_mxfp4_swiglu_quant.default", "calls": 1}]}
// Estimated times are not part of the contract: a cost-model change must not invalidate
// every golden. An optional "note" says why the expectation is what it is.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "harness/util/error.h"
#include "harness/util/json_file.h"
#include "harness/results/results.h"

namespace harness {

struct ExpectedCalls {
  std::string op;
  int64_t calls = 0;  // over every input shape; 0: the op must not appear
};

struct GoldenOpTable {
  enum class Kind { kWholeTable, kCalls };
  std::string origin;
  std::string case_id;
  std::string note;
  Kind kind = Kind::kWholeTable;
  std::vector<harness::OpRow> ops;      // kWholeTable; est_seconds is 0
  std::vector<ExpectedCalls> calls;     // kCalls, in file order
};

// Where a case's expectation lives: <golden_dir>/ops/<suite>/<test_N>.json. A case id
// CaseIdProblem refuses, or a path that would leave <golden_dir>/ops once "." and ".." are
// resolved, is a usage error naming the id: the path is written by `golden accept`.
harness::Result<std::filesystem::path> GoldenOpTablePath(const std::filesystem::path& golden_dir,
                                                         const std::string& case_id);
harness::Result<GoldenOpTable> LoadGoldenOpTable(const std::filesystem::path& path);
// The file content (whole-table rows sorted by op and shapes, times dropped).
harness::Json GoldenOpTableJson(const GoldenOpTable& table);
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

// A compiled case's op table checked against its expectation: one line per difference,
// then one "expectation may be stale: from → to" line per stale hint. ok() when the
// table meets the expectation. The suites' failure messages and `harness golden diff`
// print exactly these lines.
struct GoldenCheck {
  std::vector<std::string> differences;
  std::vector<StaleHint> stale;
  bool ok() const { return differences.empty(); }
  std::vector<std::string> Lines() const;
};
GoldenCheck CheckGolden(const GoldenOpTable& expected, const std::vector<harness::OpRow>& actual);

// A failed check as a case's finding: its first line is the first difference in domain
// words with its numbers ("op table differs from its golden expectation: <op>: expected 48
// call(s), got 0 (and 2 more differences)"), then the golden file and every line.
std::string GoldenCheckMessage(const GoldenCheck& check, const std::string& golden_file);

// The expectation rewritten from an actual table, keeping its kind and note: a whole
// table becomes the actual rows; a calls list gets each named op's actual calls, and the
// op a stale hint points to is added right after the op it replaces.
GoldenOpTable AcceptActual(const GoldenOpTable& expected, const std::vector<harness::OpRow>& actual);

}  // namespace harness
