// The performance table TensorCast prints, read by harness/stack's ParseTensorCastTable,
// as one case's op rows (docs/ingest.md).
#pragma once

#include <string>

#include "harness/results/results.h"
#include "harness/util/error.h"

namespace harness {

// One case SUITE/STEM (SUITE: `suite`, else "tensorcast"; STEM: the file name without its
// extension) with the table's rows as op rows and est_total_s (the table's total time) as
// its metric, as the compile suites store it. Errors name origin:line:column.
Result<FinishedCase> ParseTensorCastFile(const std::string& text, const std::string& origin, const std::string& suite);

}  // namespace harness
