// The reference compiler's pipeline: load the model config and device profile from
// golden/, build the graph, run the sequence-parallel pass (when asked) and the
// grouped-matmul SwiGLU fusion, verify, and estimate the performance table.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "harness/util/error.h"
#include "harness/util/json_file.h"
#include "harness/stack/stack.h"
#include "harness/stack/stack_config.h"
#include "runners/refstack/compiler/graph.h"
#include "runners/refstack/compiler/perf_table.h"

namespace harness::compiler {

// Fault switches of golden/regressions.json that live in the compiler.
inline constexpr std::string_view kFaultSpCountsBookkeepingUsers = "sp-counts-bookkeeping-users";
inline constexpr std::string_view kFaultGmmNoMxfp4QuantFusion = "gmm-no-mxfp4-quant-fusion";
inline constexpr std::string_view kFaultGraphTopoDisorder = "graph-topo-disorder";

struct CompileFaults {
  bool sp_counts_bookkeeping_users = false;
  bool gmm_no_mxfp4_quant_fusion = false;
  bool graph_topo_disorder = false;
  static CompileFaults From(const harness::StackConfig& config);
};

struct CompileEnvironment {
  std::filesystem::path golden_dir;  // models/ and devices/ live below it
  std::string default_device = "TEST_DEVICE";
  std::string precision = "bf16";  // activation dtype: bf16 | fp16 | fp32
  CompileFaults faults;
};

struct CompiledModel {
  Graph graph;
  PerfTable table;
};

// Usage errors (unknown model, device, quant type or precision; a config the request
// cannot shard) name what is wrong and list the known values; a graph that fails
// verification is a test failure (ExitCode::kFail) carrying the verifier's message.
harness::Result<CompiledModel> CompileModel(const harness::CompileRequest& request, const CompileEnvironment& env);

harness::CompileResult ToCompileResult(const PerfTable& table);

}  // namespace harness::compiler
