#include "harness/bisect/step_exit.h"

#include <gtest/gtest.h>

#include <string>

namespace harness::bisect {
namespace step_exit_test {

// git bisect run's convention for a status target, code by code at every boundary; a
// metric target reads no code as a verdict.
TEST(StepExit, EachCodeMeansWhatGitBisectRunSaysAndTheHarnessCodesCannotTest) {
  const struct {
    int64_t code;
    ExitMeaning status;
  } table[] = {
      {0, ExitMeaning::kGood},        {1, ExitMeaning::kBad},         {2, ExitMeaning::kUntestable},
      {3, ExitMeaning::kUntestable},  {4, ExitMeaning::kBad},         {124, ExitMeaning::kBad},
      {125, ExitMeaning::kSkip},      {126, ExitMeaning::kUntestable}, {127, ExitMeaning::kUntestable},
      {128, ExitMeaning::kAbort},     {129, ExitMeaning::kAbort},     {255, ExitMeaning::kAbort},
      {-1, ExitMeaning::kAbort},      {-9, ExitMeaning::kAbort},
  };
  for (const auto& row : table) {
    EXPECT_EQ(MeaningOfExit(row.code, true), row.status) << "exit " << row.code;
    const ExitMeaning metric = row.code < 0 || row.code >= 128 ? ExitMeaning::kAbort : ExitMeaning::kUntestable;
    EXPECT_EQ(MeaningOfExit(row.code, false), metric) << "exit " << row.code << " of a metric bisect";
  }
}

TEST(StepExit, TheCodesThatCannotTestAreNamedInWords) {
  EXPECT_EQ(ExitWords(2), "exit 2 (the harness's usage error)");
  EXPECT_EQ(ExitWords(3), "exit 3 (the harness's infrastructure error)");
  EXPECT_EQ(ExitWords(125), "exit 125 (the command cannot test this commit)");
  EXPECT_EQ(ExitWords(126), "exit 126 (the command cannot execute)");
  EXPECT_EQ(ExitWords(127), "exit 127 (command not found)");
  EXPECT_EQ(ExitWords(1), "exit 1");
  EXPECT_EQ(ExitWords(124), "exit 124");
}

// The last kStderrTailBytes, line ends at the end dropped (\n, \r\n, several), a UTF-8
// character cut by the limit one U+FFFD, line ends inside kept.
TEST(StepExit, TheStderrTailIsTheLastBytesWithoutTrailingLineEnds) {
  EXPECT_EQ(StderrTail(""), "");
  EXPECT_EQ(StderrTail("\n\r\n"), "");
  EXPECT_EQ(StderrTail("no such file\r\n\n"), "no such file");
  EXPECT_EQ(StderrTail("first\nsecond\n"), "first\nsecond");
  const std::string exact(kStderrTailBytes, 'x');
  EXPECT_EQ(StderrTail(exact), exact);
  EXPECT_EQ(StderrTail("head" + exact), exact) << "only the last bytes";
  // "é" is two bytes: the limit cuts after its first, which reads as one U+FFFD.
  const std::string cut = "\xc3\xa9" + std::string(kStderrTailBytes - 1, 'y');
  EXPECT_EQ(StderrTail(cut), "\xef\xbf\xbd" + std::string(kStderrTailBytes - 1, 'y'));
}

}  // namespace step_exit_test
}  // namespace harness::bisect
