// harness bisect --jobs K through the real binary (issue 35 §1): steps side by side on a
// real git repository, each in a slot of its own; what one step leaves running is its own;
// a session killed with -9 while two steps run is cleaned up entry by entry; two runs at one
// commit at once are told apart by the step that made each.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/store/store.h"
#include "harness/testing/process_watch.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"

namespace harness {
namespace bisect_jobs_e2e_test {

namespace fs = std::filesystem;
using testing_util::RunHarness;
using testing_util::SpawnHarness;
using testing_util::TempDir;
using Clock = std::chrono::steady_clock;

using testing_util::GoneWithin;
using testing_util::PidsIn;
using testing_util::Running;
using Reaper = testing_util::KillListedOnExit;

// One step's interval as the command wrote it to slot<S>.log: "start|end <ns> <sha>".
struct Interval {
  int slot = 0;
  int64_t start = 0, end = 0;
  std::string sha;
};

std::vector<Interval> Intervals(const fs::path& dir, int slots) {
  std::vector<Interval> out;
  for (int s = 0; s < slots; ++s) {
    std::ifstream in(dir / fmt::format("slot{}.log", s));
    std::string word, sha;
    int64_t ns = 0;
    while (in >> word >> ns >> sha) {
      if (word == "start") out.push_back(Interval{s, ns, 0, sha});
      else if (!out.empty() && out.back().slot == s && out.back().sha == sha) out.back().end = ns;
    }
  }
  return out;
}

// The step script: writes its start and end (nanoseconds) to $1/slot$3.log, leaves a
// child behind that re-parents (a subshell that exits: the pid goes to $1/pids), sleeps
// longer in slot 1 than in slot 0 so steps end while others run, checks that its child
// still runs (another step's end must not have killed it: else exit 200, which aborts the
// bisect), and exits 1 from commit K on.
std::string StepScript(bool bad) {
  return std::string(
             "echo start $(date +%s%N) $2 >> \"$1/slot$3.log\"\n"
             "(sleep 60 & echo $! >> \"$1/pids\"; echo $! > \"$1/child-$2-$$\")\n"
             "if [ \"$3\" = 1 ]; then sleep 0.9; else sleep 0.4; fi\n"
             "kill -0 $(cat \"$1/child-$2-$$\") || exit 200\n"
             "echo end $(date +%s%N) $2 >> \"$1/slot$3.log\"\n"
             "exit ") +
         (bad ? "1" : "0") + "\n";
}

// Each step that ran is told as a step when it starts, with its commit's subject, and when it
// ends, with its verdict (a step ended beside another is no confirming rerun of bisect
// --auto): bad from shas[k - 1] on.
void ExpectEachStepToldWithItsVerdict(const std::vector<Interval>& steps, const std::vector<std::string>& shas, int k,
                                      const std::string& err) {
  for (const auto& s : steps) {
    const auto index = std::find(shas.begin(), shas.end(), s.sha) - shas.begin();
    const std::string started =
        fmt::format(": running the command at {} \"commit {}\"", s.sha.substr(0, 12), index + 1);
    const std::string told = fmt::format(": {} is {}", s.sha.substr(0, 12), index >= k - 1 ? "bad" : "good");
    for (const std::string& what : {started, told}) {
      bool found = false;
      std::istringstream lines(err);
      for (std::string line; std::getline(lines, line) && !found;)
        found = line.rfind("bisect step ", 0) == 0 && line.find(what) != std::string::npos;
      EXPECT_TRUE(found) << "no line \"bisect step N" << what << "\" in:\n" << err;
    }
  }
  EXPECT_EQ(err.find("confirm"), std::string::npos) << err;
}

// A scripted history of 24 commits, bad from commit 15 on, bisected with --jobs 2: two steps
// overlap, the culprit is right, every step's leftover child ended with it but none was
// ended by the other step's end, and the session's stored steps and rounds, `bisect log`
// and the slots' files agree.
TEST(BisectJobsE2E, TwoStepsOverlapAndTheCulpritIsRight) {
  TempDir dir;
  const int k = 15;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 24, [&](int i) {
    return std::map<std::string, std::string>{{"test.sh", StepScript(i >= k)}};
  });
  Reaper reaper{dir / "pids"};
  const std::string db = (dir / "h.db").string();
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[23], "--case", "x/y_0", "--repo",
                       (dir / "repo").string(), "--db", db, "--jobs", "2", "--format", "json", "--", "sh",
                       "{worktree}/test.sh", dir.path().string(), "{sha}", "{slot}"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "culprit") << r.out;
  EXPECT_EQ(j["culprit"], shas[k - 1]) << r.out;
  const int runs = j["runs"].get<int>();
  const auto steps = Intervals(dir.path(), 2);
  ASSERT_EQ(static_cast<int>(steps.size()), runs) << "one interval per command";
  int overlaps = 0;
  for (const auto& a : steps) {
    EXPECT_GT(a.end, 0) << "a step in slot " << a.slot << " did not end cleanly: " << r.err;
    for (const auto& b : steps)
      if (a.slot == 0 && b.slot == 1 && a.start < b.end && b.start < a.end) ++overlaps;
  }
  EXPECT_GE(overlaps, 2) << "two steps ran at once";
  // Each slot ran one step at a time.
  for (const auto& a : steps)
    for (const auto& b : steps)
      if (&a != &b && a.slot == b.slot) {
        EXPECT_FALSE(a.start < b.end && b.start < a.end) << a.sha << " " << b.sha;
      }
  for (pid_t p : PidsIn(dir / "pids")) EXPECT_TRUE(GoneWithin(p, std::chrono::seconds(5))) << "leftover " << p;
  EXPECT_EQ(PidsIn(dir / "pids").size(), static_cast<size_t>(runs));
  EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 1u) << "worktrees are removed";
  // The stored session: its steps, its rounds fewer than its steps, its log one line per step.
  const Json time = j["time"];
  EXPECT_EQ(time["steps"], runs);
  EXPECT_LT(time["rounds"].get<int>(), runs) << time;
  EXPECT_GE(time["rounds"].get<int>(), (runs + 1) / 2) << time;
  auto log = RunHarness({"bisect", "log", std::to_string(j["session"].get<int>()), "--db", db});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  std::istringstream lines(log.out);
  int command_steps = 0;
  std::map<std::string, int> per_sha;
  for (std::string line; std::getline(lines, line);) {
    const Json l = Json::parse(line);
    if (l["kind"] == "step" && l["source"] == "command") ++command_steps, ++per_sha[l["sha"].get<std::string>()];
  }
  EXPECT_EQ(command_steps, runs) << log.out;
  for (const auto& s : steps) EXPECT_GT(per_sha[s.sha], 0) << s.sha << " ran but is not in the log";
  ExpectEachStepToldWithItsVerdict(steps, shas, k, r.err);
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find("h.db.bisect"), std::string::npos) << e.path();
}

// --jobs is a numeric flag: 0, -1, x and 65 are refused with exit 2 naming the flag and its
// range, on bisect and bisect --auto alike.
TEST(BisectJobsE2E, JobsOutsideItsRangeIsExitTwo) {
  TempDir dir;
  for (const std::string bad : {"0", "-1", "x", "65", "1.5"}) {
    for (const bool automatic : {false, true}) {
      std::vector<std::string> args = {"bisect", "--jobs", bad, "--db", (dir / "h.db").string()};
      if (automatic) args.push_back("--auto");
      else args.insert(args.end(), {"--good", "a", "--bad", "b", "--case", "x/y_0"});
      args.insert(args.end(), {"--", "true"});
      auto r = RunHarness(args);
      EXPECT_EQ(r.exit_code, 2) << bad << r.err;
      EXPECT_NE(r.err.find("--jobs"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("[1, 64]"), std::string::npos) << r.err;
    }
  }
}

// --max-runs caps the runs of a session with steps side by side too: four free slots and
// three runs of budget start three commands, not four, and the answer is the range left.
TEST(BisectJobsE2E, TheRunBudgetCapsTheStepsStartedTogether) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 32, [](int i) {
    return std::map<std::string, std::string>{{"test.sh", i >= 20 ? "echo run >> \"$1\"\nexit 1\n"
                                                                  : "echo run >> \"$1\"\nexit 0\n"}};
  });
  const auto ran = dir / "ran.log";
  for (const std::string jobs : {"4", "2"}) {
    fs::remove(ran);
    auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[31], "--case", "x/y_" + jobs, "--repo",
                         (dir / "repo").string(), "--db", (dir / "h.db").string(), "--jobs", jobs, "--max-runs", "3",
                         "--format", "json", "--", "sh", "{worktree}/test.sh", ran.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const Json j = testing_util::StdoutJson(r);
    EXPECT_EQ(j["verdict"], "ambiguous") << r.out;
    EXPECT_LE(j["runs"].get<int>(), 3) << r.out;
    std::ifstream in(ran);
    int commands = 0;
    for (std::string line; std::getline(in, line);) ++commands;
    EXPECT_LE(commands, 3) << "--jobs " << jobs << ": commands that ran";
    EXPECT_GE(commands, 1);
  }
}

// A command that runs until stopped: its shell and its background sleep write their pids.
constexpr const char* kSlowScript = "echo $$ >> \"$1\"\nsleep 60 &\necho $! >> \"$1\"\nwait\n";

// kill -9 of a harness running two steps: its lock names both worktrees and both commands;
// the next bisect kills both commands (the processes the lock names, checked by identity)
// and removes both worktrees.
TEST(BisectJobsE2E, TheNextBisectCleansUpBothStepsOfAKilledOne) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 16, [](int i) {
    return std::map<std::string, std::string>{{"slow.sh", kSlowScript}, {"test.sh", i >= 9 ? "exit 1\n" : "exit 0\n"}};
  });
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  Reaper reaper{dir / "pids"};
  const pid_t harness = SpawnHarness({"bisect", "--good", shas[0], "--bad", shas[15], "--case", "x/y_0", "--repo",
                                      repo, "--db", db, "--jobs", "2", "--", "sh", "{worktree}/slow.sh",
                                      (dir / "pids").string()},
                                     "/dev/null", dir / "stderr");
  for (int i = 0; i < 1000 && PidsIn(dir / "pids").size() < 4; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(PidsIn(dir / "pids").size(), 4u) << testing_util::ReadFile(dir / "stderr");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the lock names both commands
  const Json lock = Json::parse(testing_util::ReadFile(dir / "h.db.bisect-1.lock"));
  ASSERT_EQ(lock["slots"].size(), 2u) << lock;
  for (const auto& slot : lock["slots"]) EXPECT_TRUE(slot.contains("command")) << lock;
  kill(harness, SIGKILL);
  waitpid(harness, nullptr, 0);
  const auto left = PidsIn(dir / "pids");
  for (pid_t p : left) EXPECT_TRUE(Running(p)) << "pid " << p;
  EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 3u);

  auto next = RunHarness({"bisect", "--good", shas[0], "--bad", shas[15], "--case", "x/y_0", "--repo", repo, "--db",
                          db, "--jobs", "2", "--format", "json", "--", "sh", "{worktree}/test.sh"});
  ASSERT_EQ(next.exit_code, 0) << next.err << next.out;
  EXPECT_EQ(testing_util::StdoutJson(next)["culprit"], shas[8]) << next.out;
  auto count = [&](const std::string& what) {
    int n = 0;
    for (auto at = next.err.find(what); at != std::string::npos; at = next.err.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("bisect session 1: killed the command it left running"), 2) << next.err;
  EXPECT_EQ(count("bisect session 1: removed its worktree"), 2) << next.err;
  for (pid_t p : left) EXPECT_TRUE(GoneWithin(p, std::chrono::seconds(5))) << "pid " << p;
  EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 1u);
}

BisectSessionRow Session(const fs::path& db, int64_t id) {
  auto store = Store::OpenReadOnly(db);
  if (!store.ok()) return {};
  auto s = (*store)->bisect_reader().BisectSession(id);
  return s.ok() ? *s : BisectSessionRow{};
}

// SIGTERM or SIGINT to a harness running two steps reaches both steps' groups: the harness
// exits 3 at once, both trees are gone, both worktrees removed, the session interrupted.
TEST(BisectJobsE2E, AStopSignalEndsBothStepsAndCleansUp) {
  for (int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(sig);
    TempDir dir;
    auto shas = testing_util::MakeGitRepo(dir / "repo", 16, [](int) {
      return std::map<std::string, std::string>{{"slow.sh", kSlowScript}};
    });
    Reaper reaper{dir / "pids"};
    const pid_t harness = SpawnHarness({"bisect", "--good", shas[0], "--bad", shas[15], "--case", "x/y_0", "--repo",
                                        (dir / "repo").string(), "--db", (dir / "h.db").string(), "--jobs", "2", "--",
                                        "sh", "{worktree}/slow.sh", (dir / "pids").string()},
                                       "/dev/null", dir / "stderr");
    for (int i = 0; i < 1000 && PidsIn(dir / "pids").size() < 4; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(PidsIn(dir / "pids").size(), 4u) << testing_util::ReadFile(dir / "stderr");
    kill(harness, sig);
    const int status = testing_util::WaitForExit(harness, std::chrono::seconds(10));
    ASSERT_NE(status, -1) << "the harness waited for the commands";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
    EXPECT_NE(testing_util::ReadFile(dir / "stderr").find("interrupted by"), std::string::npos);
    for (pid_t p : PidsIn(dir / "pids")) EXPECT_TRUE(GoneWithin(p, std::chrono::seconds(5))) << "pid " << p;
    EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 1u);
    const auto session = Session(dir / "h.db", 1);
    EXPECT_EQ(session.status, "error");
    EXPECT_NE(session.result_json.find("\"interrupted\":true"), std::string::npos) << session.result_json;
  }
}

// A step that times out ends its whole tree; an end the command cannot test stops the
// bisect with exit 3 once the step running beside it is stopped and cleaned up.
TEST(BisectJobsE2E, ATimeoutOrAnUntestableEndStopsTheOtherStepToo) {
  TempDir dir;
  // The known-good end (commit 1) cannot be tested (exit 125 after a moment); every other
  // commit runs until stopped.
  auto shas = testing_util::MakeGitRepo(dir / "repo", 16, [](int i) {
    return std::map<std::string, std::string>{
        {"step.sh", i == 1 ? "sleep 0.5; exit 125\n" : kSlowScript}};
  });
  Reaper reaper{dir / "pids"};
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  const auto started = Clock::now();
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[15], "--case", "x/y_0", "--repo", repo, "--db", db,
                       "--jobs", "2", "--", "sh", "{worktree}/step.sh", (dir / "pids").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("could not test the known-good end"), std::string::npos) << r.err;
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(20)) << "the other step was waited for, not stopped";
  EXPECT_FALSE(PidsIn(dir / "pids").empty()) << "the other step did not start beside the first";
  for (pid_t p : PidsIn(dir / "pids")) EXPECT_TRUE(GoneWithin(p, std::chrono::seconds(5))) << "pid " << p;
  EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 1u);

  TempDir dir2;
  auto slow = testing_util::MakeGitRepo(dir2 / "repo", 16, [](int) {
    return std::map<std::string, std::string>{{"slow.sh", kSlowScript}};
  });
  Reaper reaper2{dir2 / "pids"};
  auto timed = RunHarness({"bisect", "--good", slow[0], "--bad", slow[15], "--case", "x/y_0", "--repo",
                           (dir2 / "repo").string(), "--db", (dir2 / "h.db").string(), "--jobs", "2", "--timeout",
                           "1", "--", "sh", "{worktree}/slow.sh", (dir2 / "pids").string()});
  EXPECT_EQ(timed.exit_code, 3) << timed.err;
  EXPECT_NE(timed.err.find("timed out"), std::string::npos) << timed.err;
  EXPECT_EQ(PidsIn(dir2 / "pids").size(), 4u) << "both steps started";
  for (pid_t p : PidsIn(dir2 / "pids")) EXPECT_TRUE(GoneWithin(p, std::chrono::seconds(5))) << "pid " << p;
  EXPECT_EQ(testing_util::WorktreeCount(dir2 / "repo"), 1u);
}

// Two runs at one commit at once, storing different values: a step reads back only the run
// its own command made. Here the step's command itself starts the other run first, made for
// another step of the session ($HARNESS_BISECT "session 1 step 999", as a second step at the
// same commit would be) with the opposite stack config; the step's evidence is its own run's
// alone, and the culprit is right.
TEST(BisectJobsE2E, TwoRunsAtOneCommitAreToldApartByTheStepThatMadeEach) {
  TempDir dir;
  const int k = 6;
  const std::string faulty = R"({"format_version": 1, "faults": ["sp-counts-bookkeeping-users"]})";
  const std::string clean = R"({"format_version": 1})";
  auto shas = testing_util::MakeGitRepo(dir / "repo", 10, [&](int i) {
    return std::map<std::string, std::string>{{"stack.json", i >= k ? faulty : clean}};
  });
  testing_util::WriteFile(dir / "faulty.json", faulty);
  testing_util::WriteFile(dir / "clean.json", clean);
  const std::string db = (dir / "h.db").string();
  const std::string script =
      "run() { \"$1\" run --db \"$2\" --commit \"$3\" --repo \"$4\" --suite sequence_parallel --filter "
      "'sequence_parallel/*_0' --stack-config \"$5\" >/dev/null; }\n"
      "if grep -q faults \"$4/stack.json\"; then other=\"$5\"; else other=\"$6\"; fi\n"
      "HARNESS_BISECT='session 1 step 999' run \"$1\" \"$2\" \"$3\" \"$4\" \"$other\" || true\n"
      "run \"$1\" \"$2\" \"$3\" \"$4\" \"$4/stack.json\"\n";
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[9], "--case",
                       "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0", "--repo", (dir / "repo").string(),
                       "--db", db, "--format", "json", "--", "sh", "-c", script, "sh", testing_util::kHarnessBinary, "{db}", "{sha}",
                       "{worktree}", (dir / "clean.json").string(), (dir / "faulty.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["culprit"], shas[k - 1]) << r.out;
  auto store = std::move(Store::OpenReadOnly(db)).value();
  int command_steps = 0;
  for (const auto& step : j["steps"]) {
    if (step["source"] != "command") continue;
    ++command_steps;
    ASSERT_EQ(step["evidence"]["case_results"].size(), 1u) << "the other step's run was read as this one's: " << step;
    auto run = store->reader().Run(step["run_id"].get<int64_t>());
    ASSERT_TRUE(run.ok());
    const Json context = Json::parse(run->context_json);
    const std::string made_for = context.value("bisect", "");
    EXPECT_EQ(made_for.rfind("session 1 step ", 0), 0u) << made_for;
    EXPECT_NE(made_for, "session 1 step 999");
  }
  EXPECT_GT(command_steps, 2);
}

}  // namespace bisect_jobs_e2e_test
}  // namespace harness
