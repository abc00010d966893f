#include "harness/testing/kill_at_syscall.h"

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness::testing_util {
namespace {

// The shell writes f1, then f2: killed at its first write, f1 was created and holds
// nothing, and f2 never came to be; untraced to the end, both hold their byte.
TEST(KillAtSyscall, StopsTheProgramBeforeTheNthWatchedCall) {
  TempDir dir;
  auto in_dir = [&](int kill_at) {
    const std::string script = "cd '" + dir.path().string() + "' && printf a > f1; printf b > f2";
    return RunKilledAtSyscall({"/bin/sh", "-c", script}, {}, kill_at, dir / "out", dir / "err");
  };
  TracedRun whole = in_dir(0);
  ASSERT_EQ(whole.error, "");
  EXPECT_FALSE(whole.killed);
  EXPECT_EQ(whole.exit_code, 0);
  EXPECT_EQ(whole.calls, (std::vector<std::string>{"write", "write"}));
  EXPECT_EQ(ReadFile(dir / "f2"), "b");

  std::filesystem::remove(dir / "f1");
  std::filesystem::remove(dir / "f2");
  TracedRun first = in_dir(1);
  ASSERT_EQ(first.error, "");
  EXPECT_TRUE(first.killed);
  EXPECT_TRUE(std::filesystem::exists(dir / "f1"));
  EXPECT_EQ(ReadFile(dir / "f1"), "") << "the write was never made";
  EXPECT_FALSE(std::filesystem::exists(dir / "f2"));
}

// A child process of the program runs to its end, its writes made and not counted: the
// filter it inherits would fail its calls if the tracer did not follow it.
TEST(KillAtSyscall, AChildProcessWritesUncounted) {
  TempDir dir;
  const std::string script = "cd '" + dir.path().string() + "' && (printf c > f3; printf d >> f3) && printf a > f1";
  TracedRun whole = RunKilledAtSyscall({"/bin/sh", "-c", script}, {}, 0, dir / "out", dir / "err");
  ASSERT_EQ(whole.error, "");
  EXPECT_EQ(whole.exit_code, 0) << ReadFile(dir / "err");
  EXPECT_EQ(ReadFile(dir / "f3"), "cd");
  EXPECT_EQ(ReadFile(dir / "f1"), "a");
  EXPECT_EQ(whole.calls, (std::vector<std::string>{"write"}));

  TracedRun killed = RunKilledAtSyscall({"/bin/sh", "-c", script}, {}, 1, dir / "out", dir / "err");
  ASSERT_EQ(killed.error, "");
  EXPECT_TRUE(killed.killed);
  EXPECT_EQ(ReadFile(dir / "f1"), "") << "the program's own write was the first counted";
}

}  // namespace
}  // namespace harness::testing_util
