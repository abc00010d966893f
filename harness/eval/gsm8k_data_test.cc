#include "harness/eval/gsm8k_data.h"

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/eval/gsm8k_prompt.h"

namespace harness {
namespace {

using ::testing::HasSubstr;

std::filesystem::path WriteTemp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(Gsm8kData, LoadsTheShippedSplits) {
  auto test = LoadGsm8k(Gsm8kTestFile());
  ASSERT_TRUE(test) << test.error().message;
  EXPECT_EQ(test->size(), 1319u);
  EXPECT_EQ((*test)[0].label, "18");
  auto train = LoadGsm8k(Gsm8kTrainFile());
  ASSERT_TRUE(train) << train.error().message;
  EXPECT_EQ(train->size(), 7473u);
  int negative = 0, with_commas = 0;
  for (const auto& item : *test) {
    negative += item.label.front() == '-';
    with_commas += item.label.find(',') != std::string::npos;
  }
  EXPECT_EQ(negative, 2);      // SOURCE.md's copy-time counts
  EXPECT_EQ(with_commas, 14);
}

// A few-shot prefix reads the first k items and stops: the train file's first 5 are the
// full load's first 5, and a bad line after the last one read is never reached.
TEST(Gsm8kData, LoadsTheFirstItemsOnly) {
  auto all = LoadGsm8k(Gsm8kTrainFile());
  auto first = LoadGsm8k(Gsm8kTrainFile(), 5);
  ASSERT_TRUE(all && first);
  ASSERT_EQ(first->size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ((*first)[i].answer, (*all)[i].answer) << i;
  const auto path = WriteTemp("gsm8k_bad_third.jsonl", "\n{\"question\": \"q1\", \"answer\": \"#### 1\"}\n"
                                                       "{\"question\": \"q2\", \"answer\": \"#### 2\"}\n{\"question\": }\n");
  auto two = LoadGsm8k(path, 2);
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_EQ((*two)[1].label, "2");
  auto three = LoadGsm8k(path, 3);
  ASSERT_FALSE(three);
  EXPECT_THAT(three.error().message, HasSubstr(path.string() + ":4:"));
}

TEST(Gsm8kData, BadLineNamesFileAndLine) {
  auto path = WriteTemp("gsm8k_bad_line.jsonl",
                        "{\"question\": \"q\", \"answer\": \"a\\n#### 1\"}\n{\"question\": \"q\", \"answer\": }\n");
  auto r = LoadGsm8k(path);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr(path.string() + ":2:"));
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
}

TEST(Gsm8kData, MissingFieldAndMissingMarker) {
  auto no_answer = LoadGsm8k(WriteTemp("gsm8k_no_answer.jsonl", "{\"question\": \"q\"}\n"));
  ASSERT_FALSE(no_answer);
  EXPECT_THAT(no_answer.error().message, HasSubstr(":1: field \"answer\": expected a string"));
  auto no_marker = LoadGsm8k(WriteTemp("gsm8k_no_marker.jsonl", "\n{\"question\": \"q\", \"answer\": \"5\"}\n"));
  ASSERT_FALSE(no_marker);
  EXPECT_THAT(no_marker.error().message, HasSubstr(":2: field \"answer\": no final \"#### N\" line"));
}

TEST(Gsm8kData, EmptyAndMissingFiles) {
  EXPECT_FALSE(LoadGsm8k(WriteTemp("gsm8k_empty.jsonl", "\n\n")));
  auto missing = LoadGsm8k("/nonexistent/gsm8k.jsonl");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/gsm8k.jsonl: cannot open file"));
}

TEST(Gsm8kData, RemovesCalculatorAnnotations) {
  EXPECT_EQ(RemoveCalculatorAnnotations("16 - 3 - 4 = <<16-3-4=9>>9 eggs\n#### 9"), "16 - 3 - 4 = 9 eggs\n#### 9");
  EXPECT_EQ(RemoveCalculatorAnnotations("a <<1+1=2>>2 b <<2*3=6>>6"), "a 2 b 6");
  EXPECT_EQ(RemoveCalculatorAnnotations("x << y"), "x << y");
}

TEST(Gsm8kPrompt, KShotFromTheShotSourceThenTheQuestion) {
  std::vector<Gsm8kItem> shots = {{"Q1?", "A1\n#### 1", "1"}, {"Q2?", "A2\n#### 2", "2"}, {"Q3?", "A3\n#### 3", "3"}};
  auto prefix = Gsm8kFewShotPrefix(shots, 2);
  ASSERT_TRUE(prefix);
  EXPECT_EQ(Gsm8kPrompt(*prefix, "Q?"),
            "Question: Q1?\nAnswer: A1\n#### 1\n\nQuestion: Q2?\nAnswer: A2\n#### 2\n\nQuestion: Q?\nAnswer:");
  EXPECT_EQ(Gsm8kPrompt(*Gsm8kFewShotPrefix(shots, 0), "Q?"), "Question: Q?\nAnswer:");
  auto too_many = Gsm8kFewShotPrefix(shots, 4);
  ASSERT_FALSE(too_many);
  EXPECT_THAT(too_many.error().message, HasSubstr("4 requested but the shot source has 3 items"));
}

}  // namespace
}  // namespace harness
