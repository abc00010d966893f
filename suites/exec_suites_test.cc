// The exec stack through the real binary (suites/ may use the reference compiler, which
// renders the tables the script prints): both compile suites (sequence_parallel and gmm)
// run unchanged against a small script that prints TensorCast performance tables, picked
// by the argv template's filled-in request. One set of tables carries the seed's leftover
// all_reduce (case A), which sequence_parallel/..._0 must catch.
#include <fmt/format.h>

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/run/suite_table.h"
#include "harness/stack/compile_request.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"
#include "runners/refstack/compiler/compiler.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

// The table file of one request, as the script names it from its arguments.
std::string TableName(const CompileRequest& r) {
  std::string model = r.model;
  for (char& c : model)
    if (c == '/') c = '_';
  return fmt::format("{}-tp{}-q{}-{}-{}.txt", model, r.tp_size, r.query_len, r.quant,
                     r.disable_repetition ? "true" : "false");
}

// Renders, with the reference compiler, the TensorCast table of every case of both
// compile suites into dir (with the SP fault on: the pass that leaves the all_reduce).
void WriteTables(const std::filesystem::path& dir, bool sp_fault) {
  compiler::CompileEnvironment env;
  env.golden_dir = std::filesystem::path(testing_util::kSourceRoot) / "golden";
  env.faults.sp_counts_bookkeeping_users = sp_fault;
  for (const char* suite : {"sequence_parallel", "gmm"}) {
    auto table = LoadSuiteTable(std::filesystem::path(testing_util::kSourceRoot) / "suites" / (std::string(suite) + ".json"));
    ASSERT_TRUE(table.ok()) << table.error().message;
    for (const auto& [test, rows] : table->tests) {
      for (const auto& row : rows) {
        auto request = CompileRequestFromParams(row.Object());
        ASSERT_TRUE(request.ok()) << request.error().message;
        auto compiled = compiler::CompileModel(*request, env);
        ASSERT_TRUE(compiled.ok()) << compiled.error().message;
        WriteFile(dir / TableName(*request), compiler::RenderPerfTableText(compiled->table));
      }
    }
  }
}

// Prints the table its arguments name, between log lines, as a compiler's CLI would.
constexpr const char* kScript = R"(#!/bin/sh
# print_table.sh MODEL TP QUERY_LEN QUANT DISABLE_REPETITION
cat >/dev/null
f="$TABLES/$(printf %s "$1" | tr / _)-tp$2-q$3-$4-$5.txt"
if [ ! -f "$f" ]; then echo "no table for: $*" >&2; exit 2; fi
echo "INFO tensor_cast: compiling $1 with tp $2"
cat "$f"
echo "[analytic] Execution time: 0.001 s"
)";

struct Fixture {
  TempDir dir;
  Fixture() {
    WriteFile(dir / "print_table.sh", kScript);
    WriteTables(dir / "clean", false);
    WriteTables(dir / "leftover", true);
  }
  std::filesystem::path Config(const std::string& tables, const std::string& tp_arg = "{tp_size}") {
    const auto path = dir / ("exec-" + tables + ".json");
    Json c{{"format_version", 1},
           {"stack", "exec"},
           {"exec",
            {{"command", {"sh", "print_table.sh", "{model}", tp_arg, "{query_len}", "{quant}", "{disable_repetition}"}},
             {"cwd", dir.path().string()},
             {"env", {{"TABLES", (dir / tables).string()}}},
             {"timeout_s", 30},
             {"output", "auto"}}}};
    WriteFile(path, c.dump(2));
    return path;
  }
  ProcessResult Run(const std::filesystem::path& config, const std::string& commit) {
    return RunHarness({"run", "--suite", "sequence_parallel", "--suite", "gmm", "--stack-config", config.string(),
                       "--db", (dir / "h.db").string(), "--commit", commit, "--format", "json"});
  }
};

std::map<std::string, std::pair<std::string, std::string>> Cases(const ProcessResult& r) {
  auto cases = testing_util::RunSummaryCases(r.out);
  EXPECT_FALSE(cases.empty()) << r.out << r.err;
  return cases;
}

TEST(ExecE2E, BothCompileSuitesPassOnTensorCastTablesAndTheLeftoverAllReduceIsCaught) {
  Fixture f;
  auto clean = f.Run(f.Config("clean"), "cccc000000000000000000000000000000000001");
  EXPECT_EQ(clean.exit_code, 0) << clean.out << clean.err;
  auto cases = Cases(clean);
  EXPECT_EQ(cases.size(), 7u);
  for (const auto& [id, sm] : cases) EXPECT_EQ(sm.first, "pass") << id << ": " << sm.second;

  auto leftover = f.Run(f.Config("leftover"), "cccc000000000000000000000000000000000002");
  EXPECT_EQ(leftover.exit_code, 1) << leftover.err;
  cases = Cases(leftover);
  EXPECT_EQ(cases.size(), 7u);
  for (const auto& [id, sm] : cases) {
    if (id == "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0") {
      EXPECT_EQ(sm.first, "fail");
      EXPECT_THAT(sm.second, ::testing::HasSubstr("tensor_cast.all_reduce.default is left in the table"));
    } else {
      EXPECT_EQ(sm.first, "pass") << id << ": " << sm.second << " (_1 runs with repetition off)";
    }
  }
}

TEST(ExecE2E, UnknownPlaceholderIsExit2AndAFailingCommandIsACaseErrorWithItsStderr) {
  Fixture f;
  auto typo = f.Run(f.Config("clean", "{tp_sz}"), "dddd000000000000000000000000000000000001");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_THAT(typo.err, ::testing::HasSubstr("exec.command[3]: unknown placeholder {tp_sz}"));
  // A table folder without the tables: the script exits 2 with a message on stderr.
  auto missing = f.Run(f.Config("nothing-here"), "dddd000000000000000000000000000000000002");
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  auto cases = Cases(missing);
  ASSERT_FALSE(cases.empty());
  for (const auto& [id, sm] : cases) {
    EXPECT_EQ(sm.first, "error") << id;
    EXPECT_THAT(sm.second, ::testing::HasSubstr("sh: exit code 2; stderr: no table for: Qwen/Qwen3-"));
  }
}

}  // namespace
}  // namespace harness
