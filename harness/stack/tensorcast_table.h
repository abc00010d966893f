// Reading the performance table TensorCast (msmodeling) prints: the text of
// Runtime.table_averages, the stdout an exec stack may answer with and the file
// `harness ingest --format tensorcast-table` reads (docs/exec-protocol.md, docs/ingest.md).
//
//   -----------------------------  --------------  ...  ----------
//                Name               Input Shapes   ...  # of Calls
//   -----------------------------  --------------  ...  ----------
//   tensor_cast.rms_norm.default   [1, 64, 5120]   ...           2
//   -----------------------------  --------------  ...  ----------
//   Total time for analytic: 1.744s
//
// Columns are found from the dashed separator (runs of dashes joined by two spaces); a row's
// cells are its texts split by two or more spaces, so a cell may hold single spaces
// ("[1, 64], [64]") and may be wider than its dashes. A row with a blank cell places each
// text under the column whose dashes it overlaps, and one under two columns is refused
// naming it. Required columns: Name, "<model> total" (the first perf model's) and
// "# of Calls"; Input Shapes, Bound and the other perf-model columns are optional.
// Positions count code points, as Python's str.ljust does.
#pragma once

#include <string>

#include "harness/stack/stack.h"
#include "harness/util/error.h"

namespace harness {

// Parses the first table in text (lines before it, such as logs, are skipped). Errors
// name origin:line:column, and for a row its number in the table and its column's header.
// An elision row ("...") is skipped; a table without its closing separator ends at the
// end of the file, a blank line or a "Total time for" line, and its last row is dropped
// when it does not read (cut off). Both are said in notes. ops keep the table's order; est_seconds is the row's total
// under the first perf model; total_seconds is the first "Total time for" line (the sum
// of the rows when there is none); table_text is the table as printed.
Result<CompileResult> ParseTensorCastTable(const std::string& text, const std::string& origin);

// "1.234ms" -> 0.001234; s, ms, us and ns; empty on anything else.
std::optional<double> ParseTensorCastTime(std::string_view text);

// Whether stdout looks like a TensorCast table rather than the JSON protocol: its first
// non-blank character is not '{'.
bool LooksLikeTensorCastTable(const std::string& text);

}  // namespace harness
