// Running a program by argv (never through a shell): captured output, optional stdin,
// working directory, extra environment, a timeout after which it is killed, and (for
// commands that run long in a tree of their own) Ctrl-C, SIGTERM and SIGHUP forwarded to it.
// Or in the background (a server), stopped with its process group on every path. Output
// is bounded: what is read into memory keeps a head and a tail (util/bounded_text.h), a
// server's log file too (util/bounded_log.h), each saying how many bytes were dropped.
// In a process that called BecomeChildSubreaper, whatever a program leaves running
// (double-forked daemons included: they re-parent to us) ends with it.
// Linux only: the exit is watched through a pidfd (kernel 5.3) and trees are found in /proc.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/util/bounded_log.h"
#include "harness/util/error.h"
#include "harness/util/number_range.h"

namespace harness {

// The longest timeout a caller may ask for: a day. Every timeout read from input is checked
// against it (and must be positive) before it reaches a clock, so 1e300 or inf is an input
// error rather than an overflowed deadline that has already passed.
inline constexpr double kMaxTimeoutS = 86400;
// A timeout flag's range (util/number_range.h): (0, kMaxTimeoutS] seconds.
inline constexpr NumberRange kTimeoutRange = NumberIn(0, kMaxTimeoutS, /*lo_open=*/true);
// Output is read until the program exits, then for at most this long: children it left in
// the background that still hold its stdout or stderr are not waited for.
inline constexpr double kDrainAfterExitS = 0.5;
// A program that a forwarded stop signal has not ended within this long is killed with
// its tree.
inline constexpr double kStopGraceS = 5;

// How much of each of stdout and stderr RunProcess keeps in memory by default: its first
// quarter as the head, the rest as the rolling tail.
inline constexpr std::size_t kMaxOutputBytes = std::size_t{16} << 20;

// Makes this process the child subreaper of its descendants (prctl
// PR_SET_CHILD_SUBREAPER): a process whose parent exits re-parents to us rather than to
// init, so RunProcess and BackgroundProcess find and end what a program left behind
// (daemons that forked and called setsid included). The harness binary calls it first
// thing; without it, only the program's process group and live tree are ended.
void BecomeChildSubreaper();

// True when t is a timeout RunProcess accepts: 0 (none) or in (0, kMaxTimeoutS].
bool IsValidTimeout(double t);

struct ProcessOptions {
  std::filesystem::path cwd;                                  // empty: inherit
  std::vector<std::pair<std::string, std::string>> env;       // set on top of ours
  std::optional<std::string> stdin_data;                      // empty: /dev/null
  double timeout_s = 0;                                       // 0: none; else in (0, kMaxTimeoutS]
  // Run the program in a process group of its own and forward to that group each SIGINT,
  // SIGTERM or SIGHUP that a StopSignals catches while it runs (below). Without it the
  // program shares our process group, so a terminal's Ctrl-C reaches both.
  bool forward_stop_signals = false;
  // Run the program under a reaper of its own (a forked process that is the child
  // subreaper of what it starts): whatever the program leaves running re-parents to the
  // reaper, not to us, and the reaper kills it with its tree when the program exits, then
  // exits as the program did. So programs run side by side (bisect --jobs) end only their
  // own leftovers: without it, one program's exit ends whatever re-parented to us since it
  // started, another's leftovers included. The reaper leads the process group and is the
  // pid on_start and the result see; a timeout or a stop signal reaches its whole tree.
  bool own_reaper = false;
  // When set, and it turns true while the program runs, the program is stopped as for a
  // forwarded stop signal (SIGTERM to its group, killed with its tree after kStopGraceS):
  // how a caller ends one of several programs it runs side by side. Needs forward_stop_signals.
  const std::atomic<bool>* stop = nullptr;
  // Called once the program started, with its pid (with forward_stop_signals, also its
  // process group's id). With own_reaper, the reaper's pid, and before the program starts:
  // the program waits for it to return, so what it records (the session lock) names every
  // program that ever ran.
  std::function<void(pid_t)> on_start;
  // Of each of stdout and stderr, at most this many bytes are kept (a head and a tail).
  std::size_t max_output_bytes = kMaxOutputBytes;
};

struct ProcessResult {
  int exit_code = -1;     // valid when signal == 0
  int signal = 0;         // the signal that ended it, if any
  bool timed_out = false;
  int stop_signal = 0;    // the first stop signal forwarded to it, if any
  // Head and tail of what it wrote, with "[... N bytes dropped ...]" between when cut.
  std::string out;
  std::string err;
  uint64_t out_dropped = 0;  // bytes of stdout not kept
  uint64_t err_dropped = 0;
};

// Fails (exit-3 error) only when the program could not be started or watched; a timeout
// IsValidTimeout refuses is a usage error.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// While one is alive, SIGINT, SIGTERM and SIGHUP no longer end this process: they are
// recorded, RunProcess forwards them (ProcessOptions::forward_stop_signals), and the caller
// stops at its next step. A signal that was ignored on entry (nohup, a script's `cmd &`)
// stays ignored. One at a time; the previous handlers come back on destruction.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // The first signal caught since construction, 0 when none.
  static int Caught();

 private:
  struct sigaction old_[3] {};
  bool installed_[3] = {false, false, false};
};

// "SIGINT", "SIGTERM", ... ("signal N" for others).
std::string SignalName(int sig);

// The last max_bytes of a program's output, where its error usually is: "..." in front when
// cut, trailing line breaks dropped, bytes as the program wrote them (every output of ours
// escapes or repairs them, util/utf8.h).
std::string OutputTail(const std::string& output, std::size_t max_bytes);

// How a program ended: its exit code, or the signal that killed it.
struct ProcessExit {
  int exit_code = -1;  // valid when signal == 0
  int signal = 0;
  std::string Describe() const;  // "exit code 1", "killed by SIGKILL"
};

struct BackgroundOptions {
  std::filesystem::path cwd;                                  // empty: inherit
  std::vector<std::pair<std::string, std::string>> env;       // set on top of ours
  std::filesystem::path output;                               // stdout and stderr are appended here, bounded
  std::size_t log_head_bytes = kLogHeadBytes;                 // (util/bounded_log.h)
  std::size_t log_tail_bytes = kLogTailBytes;
  double stop_grace_s = kStopGraceS;                          // SIGTERM to SIGKILL; in (0, kMaxTimeoutS]
};

// A program that runs beside us (a server) until it is stopped: in a process group of its
// own, stdin /dev/null, stdout and stderr appended to a file through a BoundedLog. Its group is stopped on every
// path: by Stop() or the destructor (SIGTERM to the group; what is still alive after
// stop_grace_s is killed, with the program's descendants), and, when this process dies
// first by any means (a signal, kill -9, a crash), by a guardian: a small process forked at
// Start, in a group of its own and deaf to SIGINT, SIGTERM and SIGHUP, that notices our end
// (a pipe only we hold closes) and sends the group the same SIGTERM, then SIGKILL.
// Processes that left the group (setsid, a double fork) re-parent to us when we are the
// child subreaper (BecomeChildSubreaper), get the same SIGTERM and are killed with the
// group. Not covered: those, when we die first (the guardian knows only the group), and
// the guardian killed by SIGKILL together with us (a killed session or cgroup takes the
// server with it anyway).
class BackgroundProcess {
 public:
  // Fails (exit-3 error) when the program could not be started; a grace outside its range
  // is a usage error.
  static Result<std::unique_ptr<BackgroundProcess>> Start(const std::vector<std::string>& argv,
                                                          const BackgroundOptions& options);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }  // also its process group's id
  // Bytes of its output the log dropped (valid after Stop).
  uint64_t log_dropped() const { return log_dropped_; }
  pid_t guardian_pid() const { return guardian_pid_; }
  // Waits up to timeout_s for the program to exit: its end when it has. It is not reaped
  // before Stop, so its pid and group id stay its own however long it lies dead.
  std::optional<ProcessExit> WaitForExit(double timeout_s);
  // Stops the group as above, reaps the program and dismisses the guardian. Its end (the
  // first call's, for every later one).
  ProcessExit Stop();

 private:
  BackgroundProcess() = default;
  pid_t pid_ = -1;
  int exit_fd_ = -1;       // pidfd of the program
  pid_t guardian_pid_ = -1;
  int guardian_fd_ = -1;   // our end of the guardian's pipe
  double stop_grace_s_ = kStopGraceS;
  std::optional<ProcessExit> exited_;   // seen by WaitForExit
  std::optional<ProcessExit> stopped_;  // Stop's answer
  std::unique_ptr<BoundedLog> log_;
  uint64_t log_dropped_ = 0;
  int64_t start_ticks_ = 0;  // when it started: processes adopted later are its leftovers
};

// Whether any process of group pgid is alive (one that died and was not reaped yet does not count).
bool ProcessGroupAlive(pid_t pgid);

// A process as the kernel knows it: its pid, when it started (clock ticks since boot) and
// the boot, so a later look can tell it from another process that got the same pid.
struct ProcessIdentity {
  int64_t pid = 0;
  int64_t start_ticks = 0;
  std::string boot_id;
};
std::optional<ProcessIdentity> IdentifyProcess(pid_t pid);
// Kills the process group `leader` leads, and every descendant of it, when the leader is
// still that very process; false when it is gone (then nothing is killed: its pid and
// group id may belong to someone else by now).
bool KillProcessGroupOf(const ProcessIdentity& leader);

}  // namespace harness
