#include "harness/run/suite_table.h"

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;
using testing_util::WriteFile;

// --questions: the tables say which suites evaluate questions; a case of any other suite is
// named, with the suites that do.
TEST(SuiteTable, QuestionsSelectOnlyTheSuitesThatEvaluateThem) {
  TempDir dir;
  WriteFile(dir / "evals.json", R"({"format_version": 2, "suite": "evals", "evaluates_questions": true,
    "params": {}, "tests": {"test_q": [{}]}})");
  WriteFile(dir / "compiles.json", R"({"format_version": 2, "suite": "compiles",
    "params": {}, "tests": {"test_c": [{}]}})");
  auto tables = LoadSuiteTables(dir.path());
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  EXPECT_TRUE(CheckQuestionsSelectable(*tables, {"evals/test_q_0"}, "q.txt").ok());
  auto other = CheckQuestionsSelectable(*tables, {"evals/test_q_0", "compiles/test_c_0"}, "q<\"x.txt");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ExitCode::kUsage);
  EXPECT_EQ(other.error().message, "--questions q<\"x.txt: only the evals suite evaluates questions, and "
                                   "compiles/test_c_0 is selected; run it with --suite evals");
  std::vector<SuiteTable> none = {(*tables)[0]};  // compiles only
  auto refused = CheckQuestionsSelectable(none, {"compiles/test_c_0"}, "q.txt");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "--questions q.txt: no suite table says \"evaluates_questions\": true, and "
                                     "compiles/test_c_0 is selected");
  WriteFile(dir / "evals.json", R"({"format_version": 2, "suite": "evals", "evaluates_questions": "yes",
    "params": {}, "tests": {"test_q": [{}]}})");
  auto bad = LoadSuiteTables(dir.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("evaluates_questions"), std::string::npos) << bad.error().message;
}

TEST(SuiteTable, RowsMergeOverDefaultsAndGetPytestStyleIds) {
  TempDir dir;
  WriteFile(dir / "sp.json", R"({"format_version": 2, "suite": "sp", "nightly": true,
    "params": {"model": {"type": "string"}, "tp_size": {"type": "int", "min": 1, "max": 64}},
    "defaults": {"model": "Qwen/Qwen3-32B", "tp_size": 1},
    "tests": {"test_seq": [{"tp_size": 2}, {"tp_size": 4, "model": "other"}]}})");
  auto tables = LoadSuiteTables(dir.path());
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  ASSERT_EQ(tables->size(), 1u);
  const auto& rows = (*tables)[0].tests.at("test_seq");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].CaseId(), "sp/test_seq_1");
  EXPECT_EQ(rows[0].params["model"], "Qwen/Qwen3-32B");
  EXPECT_EQ(rows[1].params["model"], "other");
  EXPECT_EQ(rows[0].params["tp_size"], 2);
  InstallSuiteTables(*tables);
  EXPECT_EQ(SuiteCases("sp", "test_seq").size(), 2u);
  EXPECT_TRUE(SuiteCases("sp", "nope").empty());
}

// The rows GoogleTest registers (SuiteCases, copies of the installed tables) share their
// table's slot with the tables a run is given, so the run RunSuites binds there is the one
// each fixture finds through its own row; another table's rows have a slot of their own.
TEST(SuiteTable, EveryCopyOfATablesRowsSharesOneRunSlot) {
  TempDir dir;
  WriteFile(dir / "a.json", R"({"format_version": 2, "suite": "a", "params": {"n": {"type": "int"}},
    "tests": {"test_x": [{"n": 1}, {"n": 2}], "test_y": [{"n": 3}]}})");
  WriteFile(dir / "b.json", R"({"format_version": 2, "suite": "b", "params": {}, "tests": {"test_z": [{}]}})");
  auto tables = LoadSuiteTables(dir.path());
  ASSERT_TRUE(tables.ok()) << tables.error().message;
  const auto slots = RunSlotsOf(*tables);
  ASSERT_EQ(slots.size(), 2u);
  const auto& a = (*tables)[0];
  ASSERT_NE(a.tests.at("test_x")[0].run_slot, nullptr);
  EXPECT_EQ(a.tests.at("test_x")[0].run_slot, slots[0]);
  EXPECT_EQ(a.tests.at("test_x")[1].run_slot, slots[0]);
  EXPECT_EQ(a.tests.at("test_y")[0].run_slot, slots[0]);
  EXPECT_EQ((*tables)[1].tests.at("test_z")[0].run_slot, slots[1]);
  InstallSuiteTables(*tables);
  const std::vector<SuiteTable> request_tables = *tables;  // what RunRequest::tables holds
  RunContext run;
  const BoundRun bound(run, RunSlotsOf(request_tables));
  for (const auto& row : SuiteCases("a", "test_x")) EXPECT_EQ(row.run_slot->run(), &run);
  EXPECT_EQ(SuiteCases("b", "test_z").at(0).run_slot->run(), &run);
}

TEST(SuiteTable, AWatchListIsPathPrefixesInsideTheRepository) {
  TempDir dir;
  auto table = [&](const std::string& watch) {
    WriteFile(dir / "w.json", R"({"format_version": 2, "suite": "w", "params": {}, "tests": {"t": [{}]}, "watch": )" +
                                  watch + "}");
    return LoadSuiteTable(dir / "w.json");
  };
  auto ok = table(R"(["kernels/gmm/", "quant"])");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->watch, (std::vector<std::string>{"kernels/gmm/", "quant"}));
  WriteFile(dir / "n.json", R"({"format_version": 2, "suite": "n", "params": {}, "tests": {"t": [{}]}})");
  EXPECT_TRUE(LoadSuiteTable(dir / "n.json")->watch.empty()) << "optional";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"("kernels")", "watch: expected a list"},
      {R"(["kernels", 7])", "watch[1]: expected a string"},
      {R"(["/abs/kernels"])", "watch[0]: '/abs/kernels' is absolute"},
      {R"(["kernels/../../etc"])", "holds '..'"},
      {R"(["a\nb"])", "control character"}};
  for (const auto& [watch, message] : bad) {
    auto t = table(watch);
    ASSERT_FALSE(t.ok()) << watch;
    EXPECT_EQ(t.error().code, ExitCode::kUsage);
    EXPECT_NE(t.error().message.find(message), std::string::npos) << t.error().message;
    EXPECT_NE(t.error().message.find("w.json"), std::string::npos) << t.error().message;
  }
}

TEST(SuiteTable, MalformedJsonNamesFileLineColumn) {
  TempDir dir;
  WriteFile(dir / "bad.json", "{\"format_version\": 1,\n \"suite\": \"bad\",\n \"tests\": {,}}\n");
  auto t = LoadSuiteTables(dir.path());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("bad.json:3:"), std::string::npos) << t.error().message;
}

TEST(SuiteTable, SemanticErrorsNameTheField) {
  TempDir dir;
  WriteFile(dir / "x.json", R"({"format_version": 2, "suite": "x", "params": {}, "tests": {"t": [1]}})");
  auto t = LoadSuiteTable(dir / "x.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("tests.t[0]: expected an object"), std::string::npos) << t.error().message;
  WriteFile(dir / "y.json", R"({"format_version": 3, "suite": "y", "params": {}, "tests": {}})");
  auto v = LoadSuiteTable(dir / "y.json");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("unsupported version 3"), std::string::npos);
  WriteFile(dir / "old.json", R"({"format_version": 1, "suite": "old", "tests": {}})");
  auto old = LoadSuiteTable(dir / "old.json");
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("declare"), std::string::npos) << old.error().message;
  WriteFile(dir / "z.json", R"({"format_version": 2, "suite": "other", "params": {}, "tests": {}})");
  EXPECT_FALSE(LoadSuiteTable(dir / "z.json").ok()) << "suite must match the file name";
}

// Parameters are declared with types: a typo, a wrong type or an out-of-range integer is
// an input error naming file and field before any case runs (never a silent default).
TEST(SuiteTable, UndeclaredMistypedAndOutOfRangeParametersAreErrors) {
  TempDir dir;
  auto load = [&](const std::string& row) {
    WriteFile(dir / "sp.json", R"({"format_version": 2, "suite": "sp",
      "params": {"disable_repetition": {"type": "bool"}, "quant": {"type": "string"},
                 "query_len": {"type": "int", "min": 1, "max": 4096}, "batch": {"type": "int"},
                 "stop": {"type": "string_list"}},
      "tests": {"t": [{}, )" + row + "]}}");
    return LoadSuiteTable(dir / "sp.json");
  };
  ASSERT_TRUE(load(R"({"quant": "fp8", "query_len": 64, "stop": ["Q:"]})").ok());
  auto typo = load(R"({"disable_repetiton": true})");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().message,
            (dir / "sp.json").string() +
                ": tests.t[1].disable_repetiton: unknown parameter (did you mean 'disable_repetition'?)");
  auto list = load(R"({"quant": [1, 2]})");
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message.find("tests.t[1].quant: expected string"), std::string::npos) << list.error().message;
  auto text = load(R"({"query_len": "abc"})");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("tests.t[1].query_len: expected an integer"), std::string::npos);
  auto big = load(R"({"batch": 99999999999999})");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("tests.t[1].batch: must be in [-2147483648, 2147483647], got 99999999999999"),
            std::string::npos)
      << big.error().message;
  auto low = load(R"({"query_len": 0})");
  ASSERT_FALSE(low.ok());
  EXPECT_NE(low.error().message.find("must be in [1, 4096], got 0"), std::string::npos) << low.error().message;
  EXPECT_FALSE(load(R"({"stop": ["a", 1]})").ok());
}

}  // namespace
}  // namespace harness
