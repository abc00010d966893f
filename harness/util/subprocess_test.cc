#include "harness/util/subprocess.h"

#include <gtest/gtest.h>

namespace harness {
namespace {

TEST(Subprocess, CapturesOutputAndExitCode) {
  auto r = RunProcess({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 3);
}

TEST(Subprocess, ArgumentsAreNotInterpretedByAShell) {
  auto r = RunProcess({"printf", "%s", "$(echo injected); rm -rf /"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "$(echo injected); rm -rf /");
}

TEST(Subprocess, FeedsStdinAndSetsEnvAndCwd) {
  auto r = RunProcess({"sh", "-c", "cat; echo \"$HARNESS_T\"; pwd"},
                      {.cwd = "/tmp", .env = {{"HARNESS_T", "v"}}, .stdin_data = std::string("in\n")});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "in\nv\n/tmp\n");
}

TEST(Subprocess, KillsAfterTimeout) {
  auto r = RunProcess({"sleep", "30"}, {.timeout_s = 0.2});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, 9);
}

TEST(Subprocess, MissingProgramIsAnError) {
  auto r = RunProcess({"/nonexistent/program"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kInfra);
}

}  // namespace
}  // namespace harness
