#include "harness/util/json_file.h"

#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

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

TEST(JsonFile, ADirectoryIsNotAJsonFile) {
  testing_util::TempDir dir;
  auto r = ReadJsonFile(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, dir.path().string() + ": not a regular file (a directory)");
}

std::string Nested(int depth, const std::string& inner = "") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

// nlohmann copies and dumps recursively: 150,000 nested arrays overflowed the stack in a
// JsonObject's copy (SIGSEGV). The text is refused before it is parsed.
TEST(JsonFile, NestingDeeperThanTheBoundIsRefusedNamingTheBracket) {
  auto deep = ParseJson("{\"a\":\n  " + Nested(150'000) + "}", "deep.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().code, ExitCode::kUsage);
  // The object is level 1, so the 256th '[' (column 258 of line 2) is level 257.
  EXPECT_EQ(deep.error().message, "deep.json:2:258: arrays and objects nested deeper than 256 levels");
  auto at_bound = ParseJson(Nested(kMaxJsonDepth, "1"), "ok.json");
  ASSERT_TRUE(at_bound.ok()) << at_bound.error().message;
  EXPECT_EQ(Json(*at_bound).dump().size(), 2u * kMaxJsonDepth + 1) << "a copy and a dump at the bound are fine";
  EXPECT_FALSE(ParseJson(Nested(kMaxJsonDepth + 1), "x").ok());
  // Brackets inside strings are text, escaped quotes included.
  const std::string brackets = "\"\\\" " + std::string(1000, '[') + "\"";
  auto in_string = ParseJson("{\"s\": " + brackets + "}", "s.json");
  ASSERT_TRUE(in_string.ok()) << in_string.error().message;
  EXPECT_EQ((*in_string)["s"].get<std::string>().size(), 1002u);
  EXPECT_TRUE(ParseJsonOrDiscarded(Nested(150'000)).is_discarded());
  EXPECT_EQ(ParseJsonOrDiscarded("[1]"), Json::array({1}));
  EXPECT_TRUE(ParseJsonOrDiscarded("[1").is_discarded());
}

TEST(JsonFile, AJsonLinesErrorNamesTheFileLine) {
  auto syntax = ParseJsonLine("{\"a\": tru}", "r.jsonl", 7);
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().message.rfind("r.jsonl:7:10: syntax error", 0), 0u) << syntax.error().message;
  auto deep = ParseJsonLine("{\"a\": " + Nested(1000) + "}", "r.jsonl", 3);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().message, "r.jsonl:3:262: arrays and objects nested deeper than 256 levels");
  auto overflow = ParseJsonLine("[1e99999]", "r.jsonl", 2);
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().message.rfind("r.jsonl:2:2: number overflow", 0), 0u) << overflow.error().message;
}

// The bound is one place: every JSON text the project reads from outside goes through
// ParseJson, ParseJsonLine, ParseJsonOrDiscarded or ReadJsonFile (tests may parse their
// own texts directly).
TEST(JsonFile, NoSourceParsesJsonAroundTheBound) {
  namespace fs = std::filesystem;
  const fs::path root = testing_util::kSourceRoot;
  const std::regex direct(R"((json|Json)::(parse|accept|from_cbor|from_msgpack|from_bson|from_ubjson|sax_parse)\b)");
  int sources = 0;
  for (const char* top : {"harness", "runners", "reports", "suites", "tools"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string name = e.path().filename().string();
      if (!e.is_regular_file() || (e.path().extension() != ".cc" && e.path().extension() != ".h")) continue;
      if (name.find("_test.") != std::string::npos || name == "test_util.h" || name == "json_file.cc") continue;
      ++sources;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n)
        EXPECT_FALSE(std::regex_search(line, direct)) << e.path().string() << ":" << n << ": " << line;
    }
  }
  EXPECT_GT(sources, 100) << "the walk found the sources";
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
