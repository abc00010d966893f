// Build + compile at full depth, as the suites' cases would at production size.
// Goals (docs/compiler.md): with repetition on under 20 ms, off under 200 ms.
//   build-*/runners/refstack/compiler/compiler_bench
#include <benchmark/benchmark.h>

#include "harness/util/paths.h"
#include "runners/refstack/compiler/compiler.h"

namespace {

using harness::compiler::CompileEnvironment;
using harness::compiler::CompileModel;

void Run(benchmark::State& state, harness::CompileRequest request) {
  request.disable_repetition = state.range(0) == 0;
  CompileEnvironment env;
  env.golden_dir = harness::GoldenDir();
  size_t nodes = 0;
  for (auto _ : state) {
    auto compiled = CompileModel(request, env);
    if (!compiled) {
      state.SkipWithError(compiled.error().message.c_str());
      return;
    }
    nodes = compiled->graph.size();
    benchmark::DoNotOptimize(compiled->table.total_seconds);
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.SetLabel(request.disable_repetition ? "repetition off" : "repetition on");
}

// The gmm suite's request at all 94 layers: MXFP4 exercises the quant-tail fusion.
void BM_Qwen3Moe235B_94Layers(benchmark::State& state) {
  harness::CompileRequest r;
  r.model = "Qwen/Qwen3-235B-A22B";
  r.query_len = 100;
  r.quant = "mxfp4";
  Run(state, r);
}

// The sequence_parallel suite's request at all 64 layers: TP 2 with the SP pass.
void BM_Qwen3Dense32B_64Layers(benchmark::State& state) {
  harness::CompileRequest r;
  r.model = "Qwen/Qwen3-32B";
  r.tp_size = 2;
  r.query_len = 128;
  r.enable_sequence_parallel = true;
  Run(state, r);
}

BENCHMARK(BM_Qwen3Moe235B_94Layers)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Qwen3Dense32B_64Layers)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
