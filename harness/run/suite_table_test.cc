#include "harness/run/suite_table.h"

#include <gtest/gtest.h>

#include "harness/util/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;
using testing_util::WriteFile;

TEST(SuiteTable, RowsMergeOverDefaultsAndGetPytestStyleIds) {
  TempDir dir;
  WriteFile(dir / "sp.json", R"({"format_version": 1, "suite": "sp", "nightly": true,
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

TEST(SuiteTable, MalformedJsonNamesFileLineColumn) {
  TempDir dir;
  WriteFile(dir / "bad.json", "{\"format_version\": 1,\n \"suite\": \"bad\",\n \"tests\": {,}}\n");
  auto t = LoadSuiteTables(dir.path());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("bad.json:3:"), std::string::npos) << t.error().message;
}

TEST(SuiteTable, SemanticErrorsNameTheField) {
  TempDir dir;
  WriteFile(dir / "x.json", R"({"format_version": 1, "suite": "x", "tests": {"t": [1]}})");
  auto t = LoadSuiteTable(dir / "x.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("tests.t[0]: expected an object"), std::string::npos) << t.error().message;
  WriteFile(dir / "y.json", R"({"format_version": 2, "suite": "y", "tests": {}})");
  auto v = LoadSuiteTable(dir / "y.json");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("unsupported version 2"), std::string::npos);
  WriteFile(dir / "z.json", R"({"format_version": 1, "suite": "other", "tests": {}})");
  EXPECT_FALSE(LoadSuiteTable(dir / "z.json").ok()) << "suite must match the file name";
}

}  // namespace
}  // namespace harness
