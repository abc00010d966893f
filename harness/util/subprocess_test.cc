#include "harness/util/subprocess.h"

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/util/test_util.h"

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

// The timeout ends the command's children too: a shell's background sleep and a child of
// that child must not outlive it.
TEST(Subprocess, TimeoutKillsTheWholeProcessTree) {
  testing_util::TempDir dir;
  const auto pids = dir / "pids";
  const std::string script = "sleep 30 & echo $! >> '" + pids.string() + "'; "
                             "sh -c 'sleep 31 & echo $! >> \"$0\"; wait' '" + pids.string() + "' & wait";
  auto r = RunProcess({"sh", "-c", script}, {.timeout_s = 1.0});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  std::ifstream in(pids);
  std::vector<pid_t> started;
  for (pid_t p; in >> p;) started.push_back(p);
  ASSERT_EQ(started.size(), 2u) << "the script did not start both sleeps within the timeout";
  // Gone, or a zombie its new parent has yet to reap: either way not running. A killed
  // process takes a moment to die, so each gets up to 5 s (an unkilled sleep lasts 30).
  auto state_of = [](pid_t p) {
    std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const auto close = text.rfind(')');
    return close == std::string::npos || close + 2 >= text.size() ? 'X' : text[close + 2];
  };
  for (pid_t p : started) {
    char state = state_of(p);
    for (int i = 0; i < 100 && state != 'X' && state != 'Z'; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      state = state_of(p);
    }
    EXPECT_TRUE(state == 'X' || state == 'Z') << "sleep " << p << " still running (state " << state << ")";
  }
}

TEST(Subprocess, MissingProgramIsAnError) {
  auto r = RunProcess({"/nonexistent/program"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kInfra);
}

}  // namespace
}  // namespace harness
