// harness bisect around its command, through the real binary on tiny git repositories:
// the paths the command is handed (absolute, whatever the spelling of --db), a command
// that leaves a child in the background, signals to the harness alone, a harness killed
// with kill -9 and the bisect after it, the --timeout rules, and edited logs and stored rows
// of the wrong shape.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/process_watch.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::SpawnHarness;
using testing_util::WaitForExit;
using testing_util::TempDir;
using testing_util::WriteFile;
using Clock = std::chrono::steady_clock;

using testing_util::GoneWithin;
using testing_util::PidsIn;
using testing_util::Running;
using Reaper = testing_util::KillListedOnExit;

// Waits until the file names n pids (the command started); false after 20 s.
bool WaitForPids(const fs::path& file, size_t n) {
  for (int i = 0; i < 1000; ++i) {
    if (PidsIn(file).size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

BisectSessionRow Session(const fs::path& db, int64_t id) {
  auto store = Store::OpenReadOnly(db);
  if (!store.ok()) return {};
  auto s = (*store)->bisect_reader().BisectSession(id);
  return s.ok() ? *s : BisectSessionRow{};
}

// A one-case JUnit file: x/y_0 passes, or fails. RUN is replaced per run (a file ingested
// twice for one commit adds nothing the second time; a rerun must add a run).
std::string Junit(bool pass) {
  return std::string(R"(<?xml version="1.0"?><!-- RUN --><testsuites><testsuite name="x" tests="1">)") +
         R"(<testcase name="y_0">)" + (pass ? "" : R"(<failure message="broken">broken</failure>)") +
         "</testcase></testsuite></testsuites>\n";
}

// Stores the commit's result.xml with `harness ingest` (which exits 0 whatever the case's
// status): sh store.sh HARNESS SHA WORKTREE [ingest flags...].
constexpr const char* kStoreScript = R"(bin=$1; sha=$2; wt=$3; shift 3
f=$(mktemp); sed "s/RUN/$$/" "$wt/result.xml" > "$f"
"$bin" ingest --format junit "$f" --case x/y_0 --commit "$sha" --repo "$wt" "$@"; rc=$?
rm -f "$f"; exit $rc
)";

// 12 commits; from commit 8 on, x/y_0 fails. Only what reaches the database tells good
// from bad: results written elsewhere leave an exit-code series that says "all good".
struct RelativeDb : ::testing::Test {
  TempDir dir;
  const int k = 8;
  std::vector<std::string> shas = testing_util::MakeGitRepo(dir / "repo", 12, [this](int i) {
    return std::map<std::string, std::string>{{"result.xml", Junit(i < k)}, {"store.sh", kStoreScript}};
  });
  const std::vector<std::string> ingest = {"sh", "{worktree}/store.sh", testing_util::kHarnessBinary, "{sha}", "{worktree}"};

  ProcessResult Bisect(std::vector<std::string> db_args, std::vector<std::string> command,
                       std::vector<std::pair<std::string, std::string>> env = {}) {
    std::vector<std::string> args = {"bisect", "--good", shas[0], "--bad", shas[11], "--case", "x/y_0",
                                     "--repo", "repo", "--format", "json"};
    args.insert(args.end(), db_args.begin(), db_args.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return RunHarness(args, {.cwd = dir.path(), .env = env, .timeout_s = 120});
  }
  // Every command step stored a run in db (besides `stored` runs before), and the answer
  // is the culprit.
  void ExpectCulpritStoredIn(const ProcessResult& r, const fs::path& db, int64_t stored = 0) {
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    Json j = testing_util::StdoutJson(r);
    EXPECT_EQ(j["verdict"], "culprit") << r.out;
    EXPECT_EQ(j["culprit"], shas[k - 1]) << r.out;
    int commands = 0;
    for (const auto& s : j["steps"])
      if (s["source"] == "command") {
        ++commands;
        EXPECT_FALSE(s["run_id"].is_null()) << "the run went elsewhere: " << s.dump();
      }
    EXPECT_GT(commands, 0) << r.out;
    auto store = Store::OpenReadOnly(db);
    ASSERT_TRUE(store.ok()) << db;
    int64_t runs = 0;
    while ((*store)->reader().Run(runs + 1).ok()) ++runs;
    EXPECT_EQ(runs, stored + commands) << "the runs are in " << db;
    EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 1u);
  }
};

TEST_F(RelativeDb, RelativeDbFlagWithStoredEndsFindsTheCulpritAndKeepsTheRuns) {
  // The ends are stored already, as after the nightly that raised the alarm (with the same
  // relative spelling, from the same folder).
  WriteFile(dir / "good.xml", Junit(true));
  WriteFile(dir / "bad.xml", Junit(false));
  for (auto [file, sha] : {std::pair{"good.xml", shas[0]}, {"bad.xml", shas[11]}}) {
    auto pre = RunHarness({"ingest", "--format", "junit", file, "--case", "x/y_0", "--commit", sha, "--repo", "repo",
                           "--db", "results.db"},
                          {.cwd = dir.path()});
    ASSERT_EQ(pre.exit_code, 0) << pre.err;
  }
  std::vector<std::string> command = ingest;
  command.insert(command.end(), {"--db", "{db}"});
  ExpectCulpritStoredIn(Bisect({"--db", "results.db"}, command), dir / "results.db", 2);
}

TEST_F(RelativeDb, HarnessDbEnvAndTheDefaultAreAbsoluteForTheCommand) {
  std::vector<std::string> command = ingest;
  command.insert(command.end(), {"--db", "{db}"});
  ExpectCulpritStoredIn(Bisect({}, command, {{"HARNESS_DB", "env.db"}}), dir / "env.db");
  // No --db and no $HARNESS_DB: ./harness.db. The command relies on $HARNESS_DB, which the
  // bisect sets to that file for it.
  ExpectCulpritStoredIn(Bisect({}, ingest, {{"HARNESS_DB", ""}}), dir / "harness.db");
}

// What the command is handed, written down by the command itself: {db}, {worktree},
// $HARNESS_DB and $HARNESS_ROOT, all absolute though each was given relative.
TEST(BisectSafetyE2E, EveryPathHandedToTheCommandIsAbsolute) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 4, [](int) {
    return std::map<std::string, std::string>{
        {"show.sh", "printf '%s\\n' \"$1\" \"$2\" \"$HARNESS_DB\" \"$HARNESS_ROOT\" > \"$3\"\nexit 0\n"}};
  });
  const fs::path root_rel = fs::relative(testing_util::kSourceRoot, dir.path());
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[3], "--case", "x/y_0", "--repo", "./repo", "--db",
                       "sub/../h.db", "--max-runs", "1", "--format", "json", "--", "sh", "{worktree}/show.sh", "{db}",
                       "{worktree}", (dir / "seen.txt").string()},
                      {.cwd = dir.path(), .env = {{"HARNESS_ROOT", root_rel.string()}}});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::ifstream in(dir / "seen.txt");
  std::vector<std::string> seen;
  for (std::string line; std::getline(in, line);) seen.push_back(line);
  ASSERT_EQ(seen.size(), 4u) << ReadFile(dir / "seen.txt");
  EXPECT_EQ(seen[0], (dir / "h.db").string()) << "{db}";
  EXPECT_TRUE(fs::path(seen[1]).is_absolute()) << "{worktree}: " << seen[1];
  EXPECT_EQ(seen[2], (dir / "h.db").string()) << "$HARNESS_DB";
  EXPECT_EQ(fs::weakly_canonical(seen[3]), fs::weakly_canonical(testing_util::kSourceRoot)) << "$HARNESS_ROOT";
  EXPECT_TRUE(fs::path(seen[3]).is_absolute()) << seen[3];
  // The session stored the repository as an absolute path too: its log replays anywhere.
  auto log = RunHarness({"bisect", "log", "1", "--db", (dir / "h.db").string()});
  EXPECT_NE(log.out.find("\"repo\":\"" + (dir / "repo").string() + "\""), std::string::npos) << log.out;
}

// A command that leaves a child holding its stdout: each step ends when the command exits,
// not when the child does. With --timeout 5 a command that exited at once is no timeout.
TEST(BisectSafetyE2E, ABackgroundChildHoldingStdoutDoesNotHoldTheStep) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 16, [](int i) {
    return std::map<std::string, std::string>{
        {"test.sh", std::string("sleep 30 &\necho $! >> \"$1\"\necho started\nexit ") + (i >= 10 ? "1" : "0") + "\n"}};
  });
  Reaper reaper{dir / "pids"};
  const auto started = Clock::now();
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[15], "--case", "x/y_0", "--repo",
                       (dir / "repo").string(), "--db", (dir / "h.db").string(), "--timeout", "5", "--format", "json",
                       "--", "sh", "{worktree}/test.sh", (dir / "pids").string()});
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["culprit"], shas[9]) << r.out;
  const size_t runs = PidsIn(dir / "pids").size();
  EXPECT_EQ(runs, j["runs"].get<size_t>());
  // Each step may read its output for kDrainAfterExitS (0.5 s) after the exit; one step
  // waiting for its child would take 30 s (or time out at 5).
  EXPECT_LT(seconds, 1.0 + 0.75 * static_cast<double>(runs)) << runs << " steps";
}

// A command that runs until stopped: the shell and its background sleep both write their
// pids to $1; `wait` keeps the shell running.
constexpr const char* kSlowScript = "echo $$ >> \"$1\"\nsleep 30 &\necho $! >> \"$1\"\nwait\n";

// SIGINT, SIGTERM or SIGHUP to the harness alone: the command's process group gets it, the
// harness removes the worktree, stores the session as interrupted and exits 3 at once.
TEST(BisectSafetyE2E, AStopSignalToTheHarnessReachesTheCommandAndCleansUp) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    SCOPED_TRACE(sig);
    TempDir dir;
    auto shas = testing_util::MakeGitRepo(dir / "repo", 8, [](int) {
      return std::map<std::string, std::string>{{"slow.sh", kSlowScript}};
    });
    Reaper reaper{dir / "pids"};
    const pid_t harness = SpawnHarness({"bisect", "--good", shas[0], "--bad", shas[7], "--case", "x/y_0", "--repo",
                                        (dir / "repo").string(), "--db", (dir / "h.db").string(), "--", "sh",
                                        "{worktree}/slow.sh", (dir / "pids").string()},
                                       "/dev/null", dir / "stderr");
    ASSERT_TRUE(WaitForPids(dir / "pids", 2)) << ReadFile(dir / "stderr");
    kill(harness, sig);
    const int status = WaitForExit(harness, std::chrono::seconds(10));
    ASSERT_NE(status, -1) << "the harness waited for the command";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
    const std::string err = ReadFile(dir / "stderr");
    EXPECT_NE(err.find("interrupted by"), std::string::npos) << err;
    for (pid_t p : PidsIn(dir / "pids")) EXPECT_TRUE(GoneWithin(p, std::chrono::seconds(5))) << "pid " << p;
    EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 1u);
    const auto session = Session(dir / "h.db", 1);
    EXPECT_EQ(session.status, "error");
    EXPECT_NE(session.result_json.find("\"interrupted\":true"), std::string::npos) << session.result_json;
  }
}

// kill -9 of the harness can clean up nothing: the next bisect on the database does. It
// kills the command left running, removes the worktree and its registration, and marks the
// session interrupted, then bisects as asked.
TEST(BisectSafetyE2E, TheNextBisectCleansUpAfterAKilledOne) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 8, [](int i) {
    return std::map<std::string, std::string>{{"slow.sh", kSlowScript}, {"test.sh", i >= 5 ? "exit 1\n" : "exit 0\n"}};
  });
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  Reaper reaper{dir / "pids"};
  const pid_t harness = SpawnHarness({"bisect", "--good", shas[0], "--bad", shas[7], "--case", "x/y_0", "--repo", repo,
                                      "--db", db, "--", "sh", "{worktree}/slow.sh", (dir / "pids").string()},
                                     "/dev/null", dir / "stderr");
  ASSERT_TRUE(WaitForPids(dir / "pids", 2)) << ReadFile(dir / "stderr");
  kill(harness, SIGKILL);
  ASSERT_NE(WaitForExit(harness, std::chrono::seconds(10)), -1);
  // What kill -9 leaves: the command running, the worktree registered, the session running.
  const auto left = PidsIn(dir / "pids");
  for (pid_t p : left) EXPECT_TRUE(Running(p)) << "pid " << p;
  EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 2u);
  EXPECT_EQ(Session(dir / "h.db", 1).status, "running");

  auto next = RunHarness({"bisect", "--good", shas[0], "--bad", shas[7], "--case", "x/y_0", "--repo", repo, "--db", db,
                          "--format", "json", "--", "sh", "{worktree}/test.sh"});
  ASSERT_EQ(next.exit_code, 0) << next.err << next.out;
  EXPECT_EQ(testing_util::StdoutJson(next)["culprit"], shas[4]) << next.out;
  EXPECT_NE(next.err.find("bisect session 1: killed the command it left running"), std::string::npos) << next.err;
  EXPECT_NE(next.err.find("bisect session 1: removed its worktree"), std::string::npos) << next.err;
  EXPECT_NE(next.err.find("bisect session 1: its process is gone; marked interrupted"), std::string::npos) << next.err;
  for (pid_t p : left) EXPECT_TRUE(GoneWithin(p, std::chrono::seconds(5))) << "pid " << p;
  EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 1u);
  const auto first = Session(dir / "h.db", 1);
  EXPECT_EQ(first.status, "error");
  EXPECT_NE(first.result_json.find("\"interrupted\":true"), std::string::npos) << first.result_json;
  EXPECT_EQ(Session(dir / "h.db", 2).status, "culprit");
  // Nothing of either session is left beside the database.
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find("h.db.bisect"), std::string::npos) << e.path();
}

// Killed before its session had a row: with --metric and nothing stored at the ends, the
// command first runs at both ends to find the cases. The next bisect cleans that up too.
TEST(BisectSafetyE2E, TheNextBisectCleansUpAfterOneKilledBeforeItsSessionBegan) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 4, [](int) {
    return std::map<std::string, std::string>{{"slow.sh", kSlowScript}};
  });
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  Reaper reaper{dir / "pids"};
  const pid_t harness = SpawnHarness({"bisect", "--good", shas[0], "--bad", shas[3], "--metric", "gsm8k", "--repo",
                                      repo, "--db", db, "--", "sh", "{worktree}/slow.sh", (dir / "pids").string()},
                                     "/dev/null", dir / "stderr");
  ASSERT_TRUE(WaitForPids(dir / "pids", 2)) << ReadFile(dir / "stderr");
  kill(harness, SIGKILL);
  ASSERT_NE(WaitForExit(harness, std::chrono::seconds(10)), -1);
  const auto left = PidsIn(dir / "pids");
  EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 2u);

  auto next = RunHarness({"bisect", "--good", shas[0], "--bad", shas[3], "--case", "x/y_0", "--repo", repo, "--db", db,
                          "--max-runs", "0"});
  EXPECT_EQ(next.exit_code, 0) << next.err << next.out;
  EXPECT_NE(next.err.find("a bisect that had not begun its session: killed the command it left running"),
            std::string::npos)
      << next.err;
  EXPECT_NE(next.err.find("a bisect that had not begun its session: removed its worktree"), std::string::npos)
      << next.err;
  for (pid_t p : left) EXPECT_TRUE(GoneWithin(p, std::chrono::seconds(5))) << "pid " << p;
  EXPECT_EQ(testing_util::WorktreeCount(dir / "repo"), 1u);
}

// --timeout is seconds in (0, 86400]; leaving it out means none. Every other value is an
// input error, also in an edited log.
TEST(BisectSafetyE2E, TimeoutOutsideItsRangeIsExitTwo) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 4, [](int i) {
    return std::map<std::string, std::string>{{"test.sh", i >= 3 ? "exit 1\n" : "exit 0\n"}};
  });
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  for (const std::string t : {"0", "-1", "nan", "inf", "1e300", "86401"}) {
    auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[3], "--case", "x/y_0", "--repo", repo, "--db", db,
                         "--timeout", t, "--", "sh", "{worktree}/test.sh"});
    EXPECT_EQ(r.exit_code, 2) << t << ": " << r.err;
    EXPECT_NE(r.err.find("--timeout"), std::string::npos) << t << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "h.db") && Session(dir / "h.db", 1).id != 0) << "no session began";
  auto ok = RunHarness({"bisect", "--good", shas[0], "--bad", shas[3], "--case", "x/y_0", "--repo", repo, "--db", db,
                        "--timeout", "86400", "--format", "json", "--", "sh", "{worktree}/test.sh"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(testing_util::StdoutJson(ok)["culprit"], shas[2]) << ok.out;
  auto log = RunHarness({"bisect", "log", "1", "--db", db});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  // The log with one field of its session line given another value ("" when the field is missing).
  auto edit = [&](const std::string& field, const std::string& value) {
    std::string text = log.out;
    const std::string key = "\"" + field + "\":";
    const auto at = text.find(key);
    if (at == std::string::npos) return std::string();
    const auto end = text.find_first_of(",}", at);
    return text.replace(at + key.size(), end - at - key.size(), value);
  };
  const std::string edited = edit("command_timeout_s", "-1");
  ASSERT_FALSE(edited.empty()) << log.out;
  WriteFile(dir / "edited.log", edited);
  auto replay = RunHarness({"bisect", "replay", (dir / "edited.log").string(), "--db", db});
  EXPECT_EQ(replay.exit_code, 2) << replay.err;
  EXPECT_NE(replay.err.find("--timeout: -1 is not a number in (0, 86400]"), std::string::npos) << replay.err;
  // A field of the wrong type is exit 2 naming the log's line and the field, never a crash.
  for (const auto& [field, value] : {std::pair{"max_runs", "\"sixty\""}, {"confidence", "[]"}, {"metric", "7"}}) {
    const std::string mistyped = edit(field, value);
    ASSERT_FALSE(mistyped.empty()) << field << ": " << log.out;
    WriteFile(dir / "mistyped.log", mistyped);
    auto r = RunHarness({"bisect", "replay", (dir / "mistyped.log").string(), "--db", db});
    EXPECT_EQ(r.exit_code, 2) << field << ": " << r.err;
    EXPECT_NE(r.err.find("mistyped.log:1"), std::string::npos) << field << ": " << r.err;
    EXPECT_NE(r.err.find(field), std::string::npos) << field << ": " << r.err;
  }
}

// A step's evidence of the wrong shape, in an edited log or a stored row, is exit 2 naming
// the log's line or the session's step, and the key: never a crash.
TEST(BisectSafetyE2E, MistypedEvidenceIsExitTwoNamingItsLineAndKey) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 4, [](int i) {
    return std::map<std::string, std::string>{{"test.sh", i >= 3 ? "exit 1\n" : "exit 0\n"}};
  });
  const std::string db = (dir / "h.db").string();
  auto ok = RunHarness({"bisect", "--good", shas[0], "--bad", shas[3], "--case", "x/y_0", "--repo",
                        (dir / "repo").string(), "--db", db, "--", "sh", "{worktree}/test.sh"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  auto log = RunHarness({"bisect", "log", "1", "--db", db});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  const auto line = std::count(log.out.begin(), log.out.end(), '\n') + 1;  // the step appended below
  const std::pair<std::string, std::string> mistyped[] = {
      {R"({"observations":"x"})", "evidence.observations: expected a list"},
      {R"({"observations":[{"series":"one","failed":true}]})", "evidence.observations[0].series"},
      {R"({"observations":[{"series":1,"failed":"yes"}]})", "evidence.observations[0].failed"},
      {R"({"observations":[{"series":7,"failed":true}]})",
       "evidence.observations[0].series: the target has series 0 to 1"},
      {R"({"observations":[],"skip":"no"})", "evidence.skip"},
      {R"({"observations":[],"case_results":[1.5]})", "evidence.case_results"},
  };
  for (const auto& [evidence, key] : mistyped) {
    WriteFile(dir / "mistyped.log",
              log.out + R"({"kind":"step","sha":")" + shas[1] + R"(","source":"command","evidence":)" + evidence + "}\n");
    auto r = RunHarness({"bisect", "replay", (dir / "mistyped.log").string(), "--db", db});
    EXPECT_EQ(r.exit_code, 2) << evidence << ": " << r.err;
    EXPECT_NE(r.err.find("mistyped.log:" + std::to_string(line)), std::string::npos) << evidence << ": " << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << evidence << ": " << r.err;
  }
  {
    auto store = Store::Open(db);
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE((*store)
                    ->bisect_record()
                    .AddBisectStep(1, {99, shas[1], "command", std::nullopt, std::nullopt,
                                       R"({"observations":[{"series":"one","failed":true}],"skip":false})", "{}"})
                    .ok());
  }
  auto stored = RunHarness({"bisect", "log", "1", "--db", db});
  EXPECT_EQ(stored.exit_code, 2) << stored.err;
  EXPECT_NE(stored.err.find("bisect session 1 step 99: evidence.observations[0].series"), std::string::npos) << stored.err;
}

}  // namespace
}  // namespace harness
