#include "harness/store/bisect_changes.h"

#include <gtest/gtest.h>

namespace harness {
namespace bisect_changes_test {

TEST(BisectChanges, WhatTheWriterWritesTheReaderReadsBackInOrder) {
  const std::vector<BisectChange> written = {{"aaa111", "drop <b>one</b> | `x`", 0.991, -0.006},
                                             {"bbb222", "drop two", 0.987, -0.008}};
  Json result = Json::object();
  result["changes"] = ChangesJson(written);
  EXPECT_DOUBLE_EQ(result["changes"][1]["size_pp"].get<double>(), -0.8);
  auto read = ChangesFromJson(result, "bisect session 7");
  ASSERT_TRUE(read) << read.error().message;
  ASSERT_EQ(read->size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*read)[i].sha, written[i].sha);
    EXPECT_EQ((*read)[i].subject, written[i].subject);
    EXPECT_DOUBLE_EQ((*read)[i].confidence, written[i].confidence);
    EXPECT_DOUBLE_EQ((*read)[i].size, written[i].size);
  }
}

TEST(BisectChanges, AResultStoredBeforeSessionsNamedSeveralHasNone) {
  for (const Json& result : {Json::object(), Json(nullptr), Json::parse(R"({"range": ["a"]})")}) {
    auto read = ChangesFromJson(result, "bisect session 1");
    ASSERT_TRUE(read) << read.error().message;
    EXPECT_TRUE(read->empty());
  }
}

TEST(BisectChanges, AMalformedListIsAnErrorNamingTheSessionAndTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"changes": {"commit": "a"}})", "bisect session 3: changes is not a list"},
      {R"({"changes": ["a"]})", "bisect session 3: changes[0] is not an object"},
      {R"({"changes": [{"commit": "a", "subject": "s", "confidence": 0.9, "size": -0.01},
                       {"commit": "b", "subject": "s", "confidence": 0.9, "size": "big"}]})",
       "bisect session 3: changes[1].size is missing or not a number"},
      {R"({"changes": [{"commit": 5, "subject": "s", "confidence": 0.9, "size": -0.01}]})",
       "bisect session 3: changes[0].commit is missing or not a string"},
      {R"({"changes": [{"commit": "a", "confidence": 0.9, "size": -0.01}]})",
       "bisect session 3: changes[0].subject is missing or not a string"},
      {R"({"changes": [{"commit": "a", "subject": "s", "size": -0.01}]})",
       "bisect session 3: changes[0].confidence is missing or not a number"},
  };
  for (const auto& [text, message] : cases) {
    auto read = ChangesFromJson(Json::parse(text), "bisect session 3");
    ASSERT_FALSE(read) << text;
    EXPECT_EQ(read.error().message, message);
  }
}

}  // namespace bisect_changes_test
}  // namespace harness
