// The compile suites' tables and goldens against the reference compiler: every case's
// parameters make a request, each fault changes only its own case, and the golden op
// tables match what the compiler emits.
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/golden/golden_ops.h"
#include "harness/run/suite_table.h"
#include "harness/stack/compile_request.h"
#include "harness/util/paths.h"
#include "runners/refstack/compiler/compile_test_util.h"
#include "runners/refstack/compiler/compiler.h"

namespace harness::compiler {
namespace {

using ::testing::HasSubstr;

using testing_util::CompileOk;
using testing_util::Env;
using testing_util::SpRequest;

TEST(CompileModelTest, FaultsChangeOnlyTheirOwnSuiteCases) {
  // Every case of the compiler's suites, from the installed tables.
  std::vector<std::pair<std::string, harness::CompileRequest>> cases;
  for (const char* suite : {"sequence_parallel", "gmm"}) {
    auto table = harness::LoadSuiteTable(harness::SuitesDir() / (std::string(suite) + ".json"));
    ASSERT_TRUE(table.ok()) << table.error().message;
    for (const auto& [test, rows] : table->tests)
      for (const auto& row : rows) {
        auto request = CompileRequestFromParams(row.Object());
        ASSERT_TRUE(request.ok()) << request.error().message;
        cases.emplace_back(row.CaseId(), *request);
      }
  }
  ASSERT_EQ(cases.size(), 7u);
  std::map<std::string, std::vector<harness::OpRow>> clean;
  for (const auto& [id, request] : cases) clean[id] = CompileOk(request).ops;
  const std::map<std::string, std::pair<CompileFaults, std::string>> faults = {
      {"sp", {{.sp_counts_bookkeeping_users = true}, "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0"}},
      {"gmm", {{.gmm_no_mxfp4_quant_fusion = true}, "gmm/test_qwen3_dynamic_quant_3"}},
      {"topo", {{.graph_topo_disorder = true}, "gmm/test_qwen3_fp_0"}},
  };
  for (const auto& [name, fault] : faults) {
    for (const auto& [id, request] : cases) {
      SCOPED_TRACE(name + " fault, " + id);
      auto compiled = CompileModel(request, Env(fault.first));
      if (id != fault.second) {
        ASSERT_TRUE(compiled.ok()) << compiled.error().message;
        EXPECT_EQ(ToCompileResult(compiled->table).ops, clean[id]);
      } else if (name == "topo") {
        ASSERT_FALSE(compiled.ok());
        EXPECT_THAT(compiled.error().message,
                    HasSubstr("node 'grouped_matmul_swiglu' (tensor_cast.grouped_matmul_swiglu.default) is defined "
                              "after its consumer 'grouped_matmul_1' (tensor_cast.grouped_matmul.default)"));
      } else {
        ASSERT_TRUE(compiled.ok()) << compiled.error().message;
        EXPECT_NE(ToCompileResult(compiled->table).ops, clean[id]);
      }
    }
  }
}

TEST(CompileModelTest, SequenceParallelGoldensMatchTheCompiledTables) {
  for (int i : {0, 1}) {
    const std::string id = "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_" + std::to_string(i);
    auto golden = LoadGoldenOpTable(harness::GoldenDir() / "ops" / (id + ".json"));
    ASSERT_TRUE(golden.ok()) << golden.error().message;
    EXPECT_EQ(golden->case_id, id);
    EXPECT_THAT(DiffOpTables(golden->ops, CompileOk(SpRequest(i == 1)).ops), ::testing::IsEmpty()) << id;
  }
}

}  // namespace
}  // namespace harness::compiler
