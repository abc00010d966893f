// A check run in a forked child, for a test that must change what the whole process may do (a
// file size limit of 0, no file descriptors left) without the change outliving the test.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include <gtest/gtest.h>

namespace harness::testing_util {

// Whether `check` returned true in a child of this process. The child leaves by _exit, so
// nothing of the parent's (open stores, gtest's output) is flushed or torn down twice; a child
// ended by a signal is a failure naming it.
inline ::testing::AssertionResult TrueInAChild(const std::function<bool()>& check) {
  const pid_t pid = fork();
  if (pid < 0) return ::testing::AssertionFailure() << "fork: " << std::strerror(errno);
  if (pid == 0) _exit(check() ? 0 : 1);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return ::testing::AssertionFailure() << "waitpid: " << std::strerror(errno);
  if (WIFSIGNALED(status)) return ::testing::AssertionFailure() << "the child ended on signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) != 0) return ::testing::AssertionFailure() << "the check was false in the child";
  return ::testing::AssertionSuccess();
}

}  // namespace harness::testing_util
