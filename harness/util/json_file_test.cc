#include "harness/util/json_file.h"

#include <gtest/gtest.h>

#include "harness/util/test_util.h"

namespace harness {
namespace {

TEST(JsonFile, SyntaxErrorNamesFileLineAndColumn) {
  testing_util::TempDir dir;
  auto path = dir / "bad.json";
  testing_util::WriteFile(path, "{\n  \"a\": 1,\n  \"b\": ]\n}\n");
  auto r = ReadJsonFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
  EXPECT_NE(r.error().message.find(path.string() + ":3:8:"), std::string::npos) << r.error().message;
}

// Found by fuzzing (tools/fuzz/regressions/exec_answer/): nlohmann throws out_of_range, not
// parse_error, for a number beyond a double; it escaped ParseJson and ended the process.
TEST(JsonFile, ANumberTooLargeForADoubleIsAnInputErrorNamingItsPlace) {
  auto j = ParseJson("{\"ops\": [],\n \"total_seconds\": 0.9e44444444}", "answer");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code, ExitCode::kUsage);
  EXPECT_NE(j.error().message.find("answer:2:19: number overflow"), std::string::npos) << j.error().message;
}

TEST(JsonFile, MissingFileIsAUsageError) {
  auto r = ReadJsonFile("/nonexistent/x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/x.json: cannot open"), std::string::npos);
}

TEST(JsonFile, LineColumnOfCountsNewlines) {
  EXPECT_EQ(LineColumnOf("ab\ncd", 0), std::make_pair(1, 1));
  EXPECT_EQ(LineColumnOf("ab\ncd", 4), std::make_pair(2, 2));
}

TEST(JsonObject, FieldErrorsNameFileAndPath) {
  JsonObject o(Json::parse(R"({"m": {"hidden": "x", "n": 3}})"), "cfg.json");
  auto m = o.Object("m");
  ASSERT_TRUE(m.ok());
  auto hidden = m->Int("hidden");
  ASSERT_FALSE(hidden.ok());
  EXPECT_EQ(hidden.error().message, "cfg.json: m.hidden: expected an integer");
  auto missing = m->Int("layers");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "cfg.json: m.layers: missing field (expected an integer)");
  EXPECT_EQ(*m->Int("n"), 3);
  EXPECT_EQ(*m->Int("absent", 7), 7);
  EXPECT_FALSE(m->String("n", "fallback").ok()) << "present but mistyped must not fall back";
}

}  // namespace
}  // namespace harness
