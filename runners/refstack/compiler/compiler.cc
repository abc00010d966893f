#include "runners/refstack/compiler/compiler.h"

#include <fmt/format.h>

#include "runners/refstack/compiler/device.h"
#include "runners/refstack/compiler/gmm_swiglu_pass.h"
#include "runners/refstack/compiler/model_builder.h"
#include "runners/refstack/compiler/model_config.h"
#include "runners/refstack/compiler/sequence_parallel_pass.h"
#include "runners/refstack/compiler/verifier.h"

namespace harness::compiler {

using harness::Result;

CompileFaults CompileFaults::From(const harness::StackConfig& config) {
  CompileFaults f;
  f.sp_counts_bookkeeping_users = config.HasFault(kFaultSpCountsBookkeepingUsers);
  f.gmm_no_mxfp4_quant_fusion = config.HasFault(kFaultGmmNoMxfp4QuantFusion);
  f.graph_topo_disorder = config.HasFault(kFaultGraphTopoDisorder);
  return f;
}

namespace {

Result<DType> ParsePrecision(const std::string& precision) {
  if (precision == "bf16") return DType::kBFloat16;
  if (precision == "fp16") return DType::kFloat16;
  if (precision == "fp32") return DType::kFloat32;
  return harness::UsageError(fmt::format("refstack: unknown precision '{}' (known: bf16, fp16, fp32)", precision));
}

int64_t ToInt(int v) { return static_cast<int64_t>(v); }

}  // namespace

Result<CompiledModel> CompileModel(const harness::CompileRequest& request, const CompileEnvironment& env) {
  auto act = ParsePrecision(env.precision);
  if (!act) return act.error();
  auto device =
      LoadDeviceProfile(env.golden_dir / "devices", request.device.empty() ? env.default_device : request.device);
  if (!device) return device.error();
  auto path = ModelConfigPath(env.golden_dir / "models", request.model);
  if (!path) return path.error();
  auto config = LoadModelConfig(*path);
  if (!config) return config.error();
  auto quant = ParseQuantType(request.quant);
  if (!quant) return quant.error();
  auto embedding_tp = ParseWordEmbeddingTp(request.word_embedding_tp);
  if (!embedding_tp) return embedding_tp.error();

  BuildOptions options;
  options.tp_size = ToInt(request.tp_size);
  options.query_len = ToInt(request.query_len);
  options.num_queries = ToInt(request.num_queries);
  options.num_layers_override = ToInt(request.num_layers_override);
  options.quant = *quant;
  options.enable_repetition = !request.disable_repetition;
  options.word_embedding_tp = *embedding_tp;
  options.act_dtype = *act;
  auto graph = BuildModel(*config, options);
  if (!graph) return graph.error();

  auto fail = [&](const std::string& what, const std::string& message) {
    return harness::Error{harness::ExitCode::kFail, fmt::format("refstack: {} {}: {}", what, request.model, message)};
  };
  if (auto built = Verify(*graph); !built) return fail("the graph built for", built.error().message);
  if (request.enable_sequence_parallel) {
    auto sp = RunSequenceParallelPass(*graph, {.count_bookkeeping_users = env.faults.sp_counts_bookkeeping_users});
    if (!sp) return fail("compiling", sp.error().message);
  }
  auto gmm = RunGroupedMatmulSwigluPass(*graph, {.fuse_mxfp4_quant = !env.faults.gmm_no_mxfp4_quant_fusion,
                                                 .misplace_unquantized = env.faults.graph_topo_disorder});
  if (!gmm) return fail("compiling", gmm.error().message);
  if (auto compiled = Verify(*graph); !compiled) return fail("the compiled graph of", compiled.error().message);

  auto table = BuildPerfTable(*graph, *device);
  if (!table) return table.error();
  return CompiledModel{std::move(graph).value(), std::move(table).value()};
}

harness::CompileResult ToCompileResult(const PerfTable& table) {
  harness::CompileResult result;
  result.ops = table.rows;
  result.table_text = RenderPerfTableText(table);
  result.total_seconds = table.total_seconds;
  return result;
}

}  // namespace harness::compiler
