// refstack_compile: compiles one model with the reference compiler and prints its
// performance table (text or JSON), its golden op table, or its graph. For debugging
// and for writing golden/ops files:
//   refstack_compile --case sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0 --format golden
#include <CLI/CLI.hpp>
#include <iostream>

#include "harness/results/case_id.h"
#include "harness/util/paths.h"
#include "harness/run/suite_table.h"
#include "harness/stack/compile_request.h"
#include "runners/refstack/compiler/compiler.h"
#include "harness/golden/golden_ops.h"

namespace {

using harness::CompileRequestFromParams;

// The request of a suite case "suite/test_N" from its parameter table.
harness::Result<harness::CompileRequest> RequestOfCase(const std::string& case_id) {
  const harness::CaseId id(case_id);
  const auto row = id.row();
  if (!row) return harness::UsageError("--case: expected suite/test_N, got '" + case_id + "'");
  auto table = harness::LoadSuiteTable(harness::SuitesDir() / (id.suite() + ".json"));
  if (!table) return table.error();
  auto rows = table->tests.find(row->test);
  const size_t index = row->index;
  if (rows == table->tests.end() || index >= rows->second.size())
    return harness::UsageError("--case: no case " + case_id + " in " + table->path);
  return CompileRequestFromParams(rows->second[index].Object());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compile a model with the reference compiler and print its performance table."};
  std::string case_id, format = "text", precision = "bf16";
  std::vector<std::string> faults;
  harness::CompileRequest request;
  request.device = "TEST_DEVICE";
  app.add_option("--case", case_id, "take the request from a suite case, e.g. gmm/test_qwen3_dynamic_quant_3");
  app.add_option("--model", request.model, "model id under golden/models, e.g. Qwen/Qwen3-32B");
  app.add_option("--tp", request.tp_size, "tensor-parallel size");
  app.add_option("--query-len", request.query_len, "tokens per query");
  app.add_option("--num-queries", request.num_queries, "queries (batch)");
  app.add_option("--layers", request.num_layers_override, "number of layers (0: the config's)");
  app.add_option("--quant", request.quant, "none | w8a8 | w4a8 | fp8 | mxfp4");
  app.add_flag("--disable-repetition", request.disable_repetition, "expand every layer");
  app.add_flag("--sp", request.enable_sequence_parallel, "run the sequence-parallel pass");
  app.add_option("--word-embedding-tp", request.word_embedding_tp, "row | col");
  app.add_option("--device", request.device, "device profile under golden/devices");
  app.add_option("--precision", precision, "bf16 | fp16 | fp32");
  app.add_option("--fault", faults, "fault switch from golden/regressions.json (repeatable)");
  app.add_option("--format", format, "text | json | golden | graph")
      ->check(CLI::IsMember({"text", "json", "golden", "graph"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!case_id.empty()) {
    auto from_case = RequestOfCase(case_id);
    if (!from_case) {
      std::cerr << "refstack_compile: error: " << from_case.error().message << "\n";
      return 2;
    }
    request = *from_case;
  }
  harness::StackConfig config;
  config.faults = faults;
  harness::compiler::CompileEnvironment env;
  env.golden_dir = harness::GoldenDir();
  env.precision = precision;
  env.faults = harness::compiler::CompileFaults::From(config);
  auto compiled = harness::compiler::CompileModel(request, env);
  if (!compiled) {
    std::cerr << "refstack_compile: error: " << compiled.error().message << "\n";
    return static_cast<int>(compiled.error().code);
  }
  if (format == "text") std::cout << harness::compiler::RenderPerfTableText(compiled->table);
  if (format == "json") std::cout << harness::compiler::RenderPerfTableJson(compiled->table).dump(2) << "\n";
  if (format == "golden")
    std::cout << harness::GoldenOpTableJson(case_id, compiled->table.rows).dump(2) << "\n";
  if (format == "graph") std::cout << compiled->graph.Print();
  return 0;
}
