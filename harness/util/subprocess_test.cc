#include "harness/util/subprocess.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <limits>
#include <optional>
#include <iterator>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

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

// The program's exit ends the wait: a child it left in the background holding stdout is
// read from for kDrainAfterExitS at most, not waited for, and is no timeout.
TEST(Subprocess, ExitEndsTheWaitThoughABackgroundChildHoldsStdout) {
  testing_util::TempDir dir;
  const auto pid_file = dir / "pid";
  const auto started = std::chrono::steady_clock::now();
  auto r = RunProcess({"sh", "-c", "sleep 30 & echo $! > '" + pid_file.string() + "'; echo done; exit 4"},
                      {.timeout_s = 5});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::ifstream in(pid_file);
  pid_t child = 0;
  in >> child;
  if (child > 0) kill(child, SIGKILL);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_EQ(r->out, "done\n");
  EXPECT_LT(seconds, kDrainAfterExitS + 1.0);
}

// A program that closes its output and keeps running is still timed out.
TEST(Subprocess, TimeoutHoldsAfterTheOutputIsClosed) {
  auto r = RunProcess({"sh", "-c", "exec >&- 2>&-; exec sleep 30"}, {.timeout_s = 0.3});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
}

TEST(Subprocess, TimeoutsOutsideTheirRangeAreRefused) {
  for (double t : {-1.0, 1e300, kMaxTimeoutS * 2, std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_FALSE(IsValidTimeout(t)) << t;
    auto r = RunProcess({"true"}, {.timeout_s = t});
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_EQ(r.error().code, ExitCode::kUsage);
  }
  EXPECT_TRUE(IsValidTimeout(0));
  EXPECT_TRUE(IsValidTimeout(kMaxTimeoutS));
}

// A stop signal caught while a forwarding run waits goes to the program's process group:
// here the program signals us itself, and it and its background child end.
TEST(Subprocess, StopSignalIsForwardedToTheProcessGroup) {
  StopSignals stop;
  const auto started = std::chrono::steady_clock::now();
  auto r = RunProcess({"sh", "-c", "sleep 30 & kill -TERM $PPID; wait"}, {.forward_stop_signals = true});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(StopSignals::Caught(), SIGTERM);
  EXPECT_EQ(r->stop_signal, SIGTERM);
  EXPECT_EQ(r->signal, SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

// The identity read at start is the kernel's (field 22 of /proc/PID/stat, as cut reads it),
// and a group is killed only through its leader's true identity.
TEST(Subprocess, ProcessIdentityAndKillingAGroupThroughIt) {
  std::optional<ProcessIdentity> seen;
  auto r = RunProcess({"sh", "-c", "cut -d' ' -f22 /proc/$$/stat"},
                      {.on_start = [&](pid_t pid) { seen = IdentifyProcess(pid); }});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(seen);
  EXPECT_EQ(std::to_string(seen->start_ticks) + "\n", r->out);
  EXPECT_FALSE(seen->boot_id.empty());

  std::atomic<pid_t> leader{0};
  std::optional<Result<ProcessResult>> result;
  std::thread runner([&] {
    result = RunProcess({"sh", "-c", "sleep 30 & wait"}, {.forward_stop_signals = true,
                                                          .on_start = [&](pid_t pid) { leader = pid; }});
  });
  while (leader == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto id = IdentifyProcess(leader);
  EXPECT_TRUE(id);
  if (id) {
    ProcessIdentity other = *id;
    other.start_ticks += 1;  // the same pid, another process
    EXPECT_FALSE(KillProcessGroupOf(other));
    EXPECT_TRUE(KillProcessGroupOf(*id));
  } else {
    kill(-leader, SIGKILL);
  }
  runner.join();
  ASSERT_TRUE(result && result->ok());
  EXPECT_EQ((*result)->signal, SIGKILL);
}

// Whether pid runs (a zombie or a gone process does not), waiting up to `seconds` for it to
// stop running when `until_gone` (a killed process takes a moment to die).
bool Running(pid_t pid, bool until_gone = false, double seconds = 5) {
  auto running = [pid] {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' && text[close + 2] != 'X';
  };
  for (int i = 0; until_gone && running() && i < seconds * 20; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return running();
}

pid_t PidIn(const std::filesystem::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// Two programs side by side (bisect --jobs), each leaving a child behind that re-parents to
// its parent's reaper (a subshell that exits), the second after the first started: the
// first one's exit must not end the second's child (without reapers of their own, the
// first one's exit ends every process re-parented to us since it started), and each
// child ends with its own program.
TEST(Subprocess, ProgramsSideBySideUnderReapersEndOnlyTheirOwnLeftovers) {
  BecomeChildSubreaper();  // as the harness binary is: leftovers would re-parent to us
  testing_util::TempDir dir;
  const auto a_pid = dir / "a.pid", b_pid = dir / "b.pid";
  const ProcessOptions options{.forward_stop_signals = true, .own_reaper = true};
  std::optional<Result<ProcessResult>> b;
  std::thread second([&] {
    b = RunProcess({"sh", "-c", "sleep 0.5; (sleep 60 & echo $! > '" + b_pid.string() + "'); sleep 3; exit 5"},
                   options);
  });
  auto a = RunProcess({"sh", "-c", "(sleep 60 & echo $! > '" + a_pid.string() + "'); sleep 1.5; exit 4"}, options);
  const pid_t a_child = PidIn(a_pid), b_child = PidIn(b_pid);
  const bool b_child_ran_after_a = b_child > 0 && Running(b_child);
  const bool a_child_gone = a_child > 0 && !Running(a_child, /*until_gone=*/true);
  second.join();
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b && b->ok());
  EXPECT_EQ(a->exit_code, 4);
  EXPECT_EQ((*b)->exit_code, 5);
  ASSERT_GT(a_child, 0);
  ASSERT_GT(b_child, 0) << "the second program had not left its child when the first ended";
  EXPECT_TRUE(a_child_gone) << "the first program's child outlived it";
  EXPECT_TRUE(b_child_ran_after_a) << "the first program's exit ended the second program's child";
  EXPECT_FALSE(Running(b_child, /*until_gone=*/true)) << "the second program's child outlived it";
}

// Under a reaper, a timeout ends the whole tree, a daemon that left the program's group
// (setsid) included, and the program's exit code and signal are the program's.
TEST(Subprocess, UnderAReaperATimeoutEndsTheTreeAndTheExitIsTheProgramsOwn) {
  testing_util::TempDir dir;
  const auto pid_file = dir / "daemon.pid";
  auto r = RunProcess({"sh", "-c", "(setsid sleep 60 & echo $! > '" + pid_file.string() + "'); sleep 30"},
                      {.timeout_s = 1.0, .forward_stop_signals = true, .own_reaper = true});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  const pid_t daemon = PidIn(pid_file);
  ASSERT_GT(daemon, 0);
  EXPECT_FALSE(Running(daemon, /*until_gone=*/true));
  auto killed = RunProcess({"sh", "-c", "echo out; echo err >&2; kill -KILL $$"}, {.own_reaper = true});
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->signal, SIGKILL);
  EXPECT_EQ(killed->out, "out\n");
  EXPECT_EQ(killed->err, "err\n");
  auto missing = RunProcess({"no-such-program-for-harness"}, {.own_reaper = true});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no such program in $PATH"), std::string::npos) << missing.error().message;
  auto cwd = RunProcess({"pwd"}, {.cwd = dir.path(), .env = {{"HARNESS_REAPER_TEST", "x y"}}, .own_reaper = true});
  ASSERT_TRUE(cwd.ok());
  EXPECT_EQ(cwd->out, dir.path().string() + "\n");
}

// A stop signal forwarded to a program under a reaper reaches the program (the reaper stays
// to end its leftovers), and the program's end by it is the result's.
TEST(Subprocess, UnderAReaperAStopSignalReachesTheProgram) {
  StopSignals stop;
  testing_util::TempDir dir;
  const auto pid_file = dir / "child.pid";
  const auto started = std::chrono::steady_clock::now();
  auto r = RunProcess({"sh", "-c", "(setsid sleep 60 & echo $! > '" + pid_file.string() + "'); kill -TERM " +
                                       std::to_string(getpid()) + "; sleep 30"},
                      {.forward_stop_signals = true, .own_reaper = true});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop_signal, SIGTERM);
  EXPECT_EQ(r->signal, SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  const pid_t child = PidIn(pid_file);
  ASSERT_GT(child, 0);
  EXPECT_FALSE(Running(child, /*until_gone=*/true));
}

TEST(Subprocess, MissingProgramIsAnError) {
  auto r = RunProcess({"/nonexistent/program"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ExitCode::kInfra);
}

TEST(Subprocess, OutputTailKeepsTheLastBytesWithoutTrailingBreaks) {
  EXPECT_EQ(OutputTail("short\n\n", 10), "short");
  EXPECT_EQ(OutputTail("0123456789abc\n", 5), "...9abc");
}

// A background program's output goes to its file; its exit is seen without reaping it, so
// its pid stays its own (a zombie) until Stop.
TEST(BackgroundProcess, ExitIsSeenWithoutReapingAndStopReportsIt) {
  testing_util::TempDir dir;
  auto p = BackgroundProcess::Start({"sh", "-c", "echo out; echo err >&2; exit 7"}, {.output = dir / "log"});
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto end = (*p)->WaitForExit(10);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->exit_code, 7);
  EXPECT_EQ(end->Describe(), "exit code 7");
  EXPECT_TRUE(std::filesystem::exists("/proc/" + std::to_string((*p)->pid()))) << "reaped before Stop";
  EXPECT_EQ((*p)->Stop().exit_code, 7);
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string((*p)->pid())));
  EXPECT_EQ(testing_util::ReadFile(dir / "log"), "out\nerr\n");
}

// SIGTERM to the group first: a program that obeys it ends long before the grace is over.
TEST(BackgroundProcess, StopSendsSigtermToTheGroupFirst) {
  testing_util::TempDir dir;
  auto p = BackgroundProcess::Start({"sh", "-c", "sleep 30 & exec sleep 30"},
                                    {.output = dir / "log", .stop_grace_s = 20});
  ASSERT_TRUE(p.ok()) << p.error().message;
  const pid_t group = (*p)->pid();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(ProcessGroupAlive(group));
  EXPECT_FALSE((*p)->WaitForExit(0.1)) << "it exits only when stopped";
  const auto started = std::chrono::steady_clock::now();
  const ProcessExit end = (*p)->Stop();
  EXPECT_EQ(end.signal, SIGTERM) << end.Describe();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  const bool alive = ProcessGroupAlive(group);
  EXPECT_FALSE(alive) << "the background sleep outlived its leader";
  if (alive) kill(-group, SIGKILL);
}

// What ignores SIGTERM is killed once the grace is over: the leader and its children.
TEST(BackgroundProcess, WhatIgnoresSigtermIsKilledAfterTheGrace) {
  testing_util::TempDir dir;
  auto p = BackgroundProcess::Start({"sh", "-c", "trap '' TERM; sleep 30 & echo ready; wait"},
                                    {.output = dir / "log", .stop_grace_s = 0.3});
  ASSERT_TRUE(p.ok()) << p.error().message;
  const pid_t group = (*p)->pid();
  for (int i = 0; i < 200 && testing_util::ReadFile(dir / "log").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto started = std::chrono::steady_clock::now();
  const ProcessExit end = (*p)->Stop();
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(end.signal, SIGKILL) << end.Describe();
  EXPECT_GE(took, std::chrono::milliseconds(300));
  EXPECT_LT(took, std::chrono::seconds(5));
  const bool alive = ProcessGroupAlive(group);
  EXPECT_FALSE(alive);
  if (alive) kill(-group, SIGKILL);
}

// The owner killed with SIGKILL cannot stop anything itself: its guardian stops the group.
TEST(BackgroundProcess, TheGuardianStopsTheGroupWhenItsOwnerIsKilled) {
  testing_util::TempDir dir;
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t owner = fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    auto p = BackgroundProcess::Start({"sh", "-c", "trap '' TERM; sleep 30 & wait"},
                                      {.output = dir / "log", .stop_grace_s = 0.5});
    pid_t ids[2] = {p.ok() ? (*p)->pid() : -1, p.ok() ? (*p)->guardian_pid() : -1};
    if (write(report[1], ids, sizeof ids) != sizeof ids) _exit(1);
    raise(SIGKILL);
  }
  close(report[1]);
  pid_t ids[2] = {-1, -1};
  ASSERT_EQ(read(report[0], ids, sizeof ids), static_cast<ssize_t>(sizeof ids));
  close(report[0]);
  waitpid(owner, nullptr, 0);
  ASSERT_GT(ids[0], 0);
  ASSERT_GT(ids[1], 0);
  bool alive = true;
  for (int i = 0; i < 300 && alive; ++i) {
    alive = ProcessGroupAlive(ids[0]);
    if (alive) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(alive) << "the server's group outlived its owner by 3 s";
  if (alive) kill(-ids[0], SIGKILL);
  // And the guardian itself is gone once it did its work.
  bool guardian = true;
  for (int i = 0; i < 300 && guardian; ++i) {
    guardian = ProcessGroupAlive(ids[1]);
    if (guardian) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(guardian);
}

TEST(BackgroundProcess, AMissingProgramOrABadGraceIsAnError) {
  testing_util::TempDir dir;
  auto missing = BackgroundProcess::Start({"/nonexistent/server"}, {.output = dir / "log"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ExitCode::kInfra);
  auto bad = BackgroundProcess::Start({"true"}, {.output = dir / "log", .stop_grace_s = 0});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ExitCode::kUsage);
}

}  // namespace
}  // namespace harness
