// The reaper of one program (ProcessOptions::own_reaper): the body of a process forked by
// RunProcess that makes itself the child subreaper (prctl PR_SET_CHILD_SUBREAPER), starts
// the program, and when the program exits kills whatever the program left running (its
// children re-parented to the reaper, daemons that called setsid included) and exits as the
// program did. Programs run side by side so each end only their own leftovers.
//
// It runs in the child of a fork of a process that may have threads, so it uses only
// async-signal-safe calls: everything it needs (the program's path, argv, environment) is
// prepared before the fork.
#pragma once

namespace harness {

struct ReaperPlan {
  const char* path = nullptr;     // the program, resolved against $PATH before the fork
  char* const* argv = nullptr;    // null-terminated
  char* const* envp = nullptr;    // null-terminated
  const char* cwd = nullptr;      // null: inherit
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;  // become the program's 0, 1 and 2
  // An O_CLOEXEC pipe's write end: the program's errno is written to it when execve fails,
  // so the caller can report why it did not start. It closes (EOF) when the program started.
  int exec_error_fd = -1;
  // The read end of a pipe on which the caller writes one byte once it has recorded the
  // reaper (the session lock names it): the program starts only then, so no command runs
  // that a later cleanup could not find. End of file instead (the caller died first): the
  // program never starts.
  int go_fd = -1;
  bool own_group = false;         // the reaper leads a process group of its own (the program joins it)
};

// Never returns: exits with the program's exit code, or by the signal that killed it.
[[noreturn]] void RunReaper(const ReaperPlan& plan);

}  // namespace harness
