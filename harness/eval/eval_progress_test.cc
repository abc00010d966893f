#include "harness/eval/eval_progress.h"

#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness::eval_progress_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Drain(std::FILE* f) {
  std::rewind(f);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  return out;
}

TEST(EvalProgress, RendersDoneTotalAccuracyRateAndEta) {
  std::FILE* out = std::tmpfile();
  EvalProgress p("gsm8k/test_0", 10, 4, out, /*terminal=*/false, /*plain_interval_s=*/3600);
  p.Record(true, true);
  p.Record(true, false);
  p.Record(false, false);   // an error: done, not answered
  const std::string line = p.Render();
  EXPECT_THAT(line, StartsWith("gsm8k/test_0  7/10  acc 0.500  "));
  EXPECT_THAT(line, HasSubstr(" req/s  ETA "));
  EXPECT_EQ(Drain(out), "");   // plain mode prints only every interval
  p.Finish();
  const std::string printed = Drain(out);
  EXPECT_THAT(printed, StartsWith("gsm8k/test_0  7/10  acc 0.500"));
  EXPECT_EQ(printed.back(), '\n');
  EXPECT_EQ(printed.find('\r'), std::string::npos);
  std::fclose(out);
}

TEST(EvalProgress, TerminalRewritesOneLine) {
  std::FILE* out = std::tmpfile();
  EvalProgress p("x", 2, 0, out, /*terminal=*/true);
  p.Record(true, true);
  p.Record(true, true);
  p.Finish();
  const std::string printed = Drain(out);
  EXPECT_THAT(printed, StartsWith("\r"));
  EXPECT_THAT(printed, HasSubstr("x  2/2  acc 1.000"));
  EXPECT_THAT(printed, HasSubstr("ETA 0s"));
  std::fclose(out);
}

// The label is shown through the one ProgressLine, which makes text safe for a terminal.
TEST(EvalProgress, HostileLabelPrintsNoEscapeInAPipe) {
  std::FILE* out = std::tmpfile();
  EvalProgress p("gsm8k/x\x1b[2J\rboom", 1, 0, out, /*terminal=*/false);
  p.Record(true, true);
  p.Finish();
  const std::string printed = Drain(out);
  EXPECT_EQ(printed.find('\x1b'), std::string::npos);
  EXPECT_EQ(printed.find('\r'), std::string::npos);
  EXPECT_THAT(printed, HasSubstr("1/1  acc 1.000"));
  std::fclose(out);
}

TEST(EvalProgress, NoAnswersYet) {
  std::FILE* out = std::tmpfile();
  EvalProgress p("x", 5, 0, out, false);
  EXPECT_THAT(p.Render(), HasSubstr("0/5  acc -  0.0 req/s  ETA -"));
  std::fclose(out);
}

}  // namespace harness::eval_progress_test
