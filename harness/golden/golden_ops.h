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

}  // namespace harness
