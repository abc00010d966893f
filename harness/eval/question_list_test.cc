#include "harness/eval/question_list.h"

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;
using testing_util::WriteFile;

Result<QuestionList> Load(const TempDir& dir, const std::string& text, int64_t total = 10) {
  WriteFile(dir / "q.txt", text);
  return LoadQuestionList(dir / "q.txt", total);
}

TEST(QuestionList, KeysCommentsAndBlankLines) {
  TempDir dir;
  auto list = Load(dir, "# chosen by bisect\n7\n\n  2  # a borderline one\n0\r\n");
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(list->indices, (std::vector<int64_t>{0, 2, 7}));
  EXPECT_EQ(list->total, 10);
  EXPECT_FALSE(list->whole());
}

TEST(QuestionList, EveryQuestionByStarOrOneByOneIsAWholeRun) {
  TempDir dir;
  auto star = Load(dir, "# every question\n*\n", 3);
  ASSERT_TRUE(star.ok()) << star.error().message;
  EXPECT_EQ(star->indices, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(star->whole());
  auto listed = Load(dir, "2\n0\n1\n", 3);
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->whole());
}

TEST(QuestionList, BadFilesAreUsageErrorsNamingFileAndLine) {
  TempDir dir;
  const std::string f = (dir / "q.txt").string();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"1\n10\n", f + ":2: '10' is not a question key (keys are the questions' indices 0 to 9"},
      {"1\n# x\n007\n", f + ":3: '007' is not a question key"},
      {"-1\n", f + ":1: '-1' is not a question key"},
      {"3 4\n", f + ":1: '3 4' is not a question key"},
      {"4\n5\n4\n", f + ":3: question 4 again (first on line 1)"},
      {"\n# nothing\n", "--questions " + f + ": lists no question"},
      {"", "--questions " + f + ": lists no question"},
      {"*\n3\n", f + ":2: '3' after '*' (every question) on line 1"},
      {"3\n*\n", f + ":2: '*' (every question) must be the file's only entry"},
  };
  for (const auto& [text, message] : bad) {
    auto list = Load(dir, text);
    ASSERT_FALSE(list.ok()) << text;
    EXPECT_EQ(list.error().code, ExitCode::kUsage);
    EXPECT_EQ(list.error().message.rfind(message, 0), 0u) << list.error().message;
  }
  auto missing = LoadQuestionList(dir / "none.txt", 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kUsage);
  EXPECT_NE(missing.error().message.find((dir / "none.txt").string()), std::string::npos) << missing.error().message;
}

TEST(QuestionList, Gsm8kKeysAreTheTestSetsIndices) {
  TempDir dir;
  WriteFile(dir / "q.txt", "1318\n0\n");
  auto list = LoadGsm8kQuestionList(dir / "q.txt");
  ASSERT_TRUE(list.ok()) << list.error().message;
  EXPECT_EQ(list->total, 1319);
  WriteFile(dir / "q.txt", "1319\n");
  EXPECT_FALSE(LoadGsm8kQuestionList(dir / "q.txt").ok());
}

}  // namespace
}  // namespace harness
