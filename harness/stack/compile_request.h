// A CompileRequest from a suite parameter row: the compile suites' parameters, read the
// same way whichever stack compiles them.
#pragma once

#include "harness/stack/stack.h"
#include "harness/util/json_file.h"

namespace harness {

// "model" is required; tp_size, query_len, num_queries, num_layers_override, quant,
// disable_repetition, enable_sequence_parallel, word_embedding_tp and device are
// optional. Integers are range-checked (tp_size, query_len, num_queries at least 1).
Result<CompileRequest> CompileRequestFromParams(const JsonObject& params);

}  // namespace harness
