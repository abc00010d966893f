// What harness bisect may take as evidence, through the real binary on tiny git
// repositories: a step that could not run (the harness's own usage and infrastructure
// errors, a command that cannot execute or is not found, a signal, a timeout, a command
// that stores nothing of the target or another case) is never read as a verdict; the ends
// vouch for the command; bisect --auto never confirms with a rerun that could not test;
// and `bisect replay` reads its log within a bound.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/sqlite_test_util.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
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

// A one-case JUnit file: x/y_0 passes, or fails. RUN is replaced per run (a file ingested
// twice for one commit adds nothing the second time).
std::string Junit(bool pass, const std::string& name = "y_0") {
  return std::string(R"(<?xml version="1.0"?><!-- RUN --><testsuites><testsuite name="x" tests="1">)") +
         R"(<testcase name=")" + name + R"(">)" + (pass ? "" : R"(<failure message="broken">broken</failure>)") +
         "</testcase></testsuite></testsuites>\n";
}

// A stack repository whose commit i (1-based; shas[i - 1]) has test.sh = script(i), and a
// database beside it.
struct Steps {
  TempDir dir;
  std::vector<std::string> shas;
  std::string repo = (dir / "repo").string();
  std::string db = (dir / "h.db").string();

  Steps(int n, const std::function<std::string(int)>& script,
        const std::function<std::map<std::string, std::string>(int)>& more = nullptr) {
    shas = testing_util::MakeGitRepo(dir / "repo", n, [&](int i) {
      auto files = more ? more(i) : std::map<std::string, std::string>{};
      files["test.sh"] = script(i);
      return files;
    });
  }
  // The nightlies at the ends, as after the one that raised the alarm: x/y_0 passes at the
  // known-good end and fails at the known-bad one.
  void StoreEnds() {
    for (auto [pass, sha] : {std::pair{true, shas.front()}, {false, shas.back()}}) {
      WriteFile(dir / "end.xml", Junit(pass));
      auto r = RunHarness({"ingest", "--format", "junit", (dir / "end.xml").string(), "--case", "x/y_0", "--commit",
                           sha, "--repo", repo, "--db", db});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  ProcessResult Bisect(std::vector<std::string> command = {"sh", "{worktree}/test.sh"},
                       std::vector<std::string> flags = {}, const std::string& format = "json") {
    std::vector<std::string> args = {"bisect", "--good", shas.front(), "--bad", shas.back(), "--case", "x/y_0",
                                     "--repo", repo, "--db", db, "--format", format};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return RunHarness(args, {.cwd = dir.path(), .timeout_s = 120});
  }
  BisectSessionRow Session(int64_t id) const {
    auto store = Store::OpenReadOnly(db);
    if (!store.ok()) return {};
    auto s = (*store)->bisect_reader().BisectSession(id);
    return s.ok() ? *s : BisectSessionRow{};
  }
};

// The exit 3 every untestable end gives: which end, its sha, why, the step's stderr; no
// answer on stdout, the session stored as an error, no worktree left.
void ExpectStoppedAtEnd(const ProcessResult& r, const Steps& s, const std::string& end, const std::string& why,
                        const std::string& stderr_text) {
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_TRUE(r.out.empty()) << "no answer: " << r.out;
  const std::string sha = end == "known-good" ? s.shas.front() : s.shas.back();
  EXPECT_NE(r.err.find("the " + end + " end " + ShortSha(sha)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(stderr_text), std::string::npos) << "the step's stderr: " << r.err;
  EXPECT_EQ(s.Session(1).status, "error");
  EXPECT_EQ(testing_util::WorktreeCount(s.dir / "repo"), 1u);
}

// A command that cannot test any commit, by each of the codes that say so (the harness's
// usage and infrastructure errors, git's "cannot test", the shell's cannot-execute and
// not-found): with the nightlies at both ends stored, the first step is an interior commit;
// it is skipped, the known-good end is run, cannot be tested either, and the bisect stops
// naming that end. Before, every step read as "bad": a culprit at the first commit, exit 0.
TEST(BisectTrustE2E, ACommandThatCannotTestAnyCommitStopsAtTheKnownGoodEnd) {
  for (int code : {2, 3, 125, 126, 127}) {
    SCOPED_TRACE(code);
    Steps s(12, [&](int) { return fmt::format("echo 'cannot run here: code {}' >&2\nexit {}\n", code, code); });
    ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
    auto r = s.Bisect();
    ExpectStoppedAtEnd(r, s, "known-good", fmt::format("exit {}", code), fmt::format("cannot run here: code {}", code));
    EXPECT_NE(r.err.find("the command is broken, not the commit"), std::string::npos) << r.err;
    // The interior commit is logged as skipped with its reason, then the end's run.
    auto log = RunHarness({"bisect", "log", "1", "--db", s.db});
    ASSERT_EQ(log.exit_code, 0) << log.err;
    EXPECT_NE(log.out.find(fmt::format(R"("untestable":"exit {})", code)), std::string::npos) << log.out;
    EXPECT_NE(log.out.find(fmt::format(R"("stderr_tail":"cannot run here: code {}")", code)), std::string::npos)
        << log.out;
  }
}

// A repeatable --case right before `--` takes one id: the command after `--`, and flags of
// its own such as --repo, are the command's, not the bisect's.
TEST(BisectTrustE2E, ACaseRightBeforeTheCommandTakesOneId) {
  Steps s(6, [](int i) { return std::string(i >= 4 ? "exit 1\n" : "exit 0\n"); });
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  auto r = RunHarness({"bisect", "--good", s.shas.front(), "--bad", s.shas.back(), "--repo", s.repo, "--db", s.db,
                       "--format", "json", "--case", "x/y_0", "--", "sh", "{worktree}/test.sh", "--repo", "--db"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["culprit"], s.shas[3]) << r.out;
}

// The same codes as a real program gives them: env(1) cannot execute a file that is not
// executable (126) and finds no program (127). On an empty store the search's first step
// may be any commit; whichever it is, no answer comes of it.
TEST(BisectTrustE2E, CannotExecuteAndNotFoundAreNoVerdict) {
  for (const auto& [tool, code] : {std::pair{"{worktree}/test.sh", 126}, {"{worktree}/no-such-tool", 127}}) {
    SCOPED_TRACE(code);
    Steps s(12, [](int) { return "exit 0\n"; });  // committed 100644: not executable
    auto r = s.Bisect({"env", tool});
    EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find(fmt::format("exit {}", code)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("could not test the known-"), std::string::npos) << r.err;
  }
}

// Untestable interior commits are skipped with their reason, never read as bad: here
// commits 3-8 cannot run the command (exit 2) and commit 10 is the culprit. Before, the
// skipped commits read as failures and the culprit was commit 3.
TEST(BisectTrustE2E, UntestableInteriorCommitsAreSkippedWithTheirReason) {
  Steps s(12, [](int i) {
    if (i >= 3 && i <= 8) return std::string("echo 'stack.json: no such file' >&2\nexit 2\n");
    return std::string(i >= 10 ? "exit 1\n" : "exit 0\n");
  });
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  auto r = s.Bisect();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "culprit") << r.out;
  EXPECT_EQ(j["culprit"], s.shas[9]) << r.out;
  int untestable = 0, good_end_runs = 0;
  for (const auto& step : j["steps"]) {
    if (step["source"] != "command") continue;
    const auto& ev = step["evidence"];
    good_end_runs += step["commit"] == s.shas[0];
    if (!ev.contains("untestable")) continue;
    ++untestable;
    EXPECT_EQ(ev["skip"], true) << step;
    EXPECT_EQ(step["verdict"], "skip") << step;
    EXPECT_NE(ev["untestable"].get<std::string>().find("exit 2 (the harness's usage error)"), std::string::npos) << step;
    EXPECT_EQ(ev["stderr_tail"], "stack.json: no such file") << step;
    const auto skipped = j["skipped"].get<std::vector<std::string>>();
    EXPECT_NE(std::find(skipped.begin(), skipped.end(), step["commit"].get<std::string>()), skipped.end()) << step;
  }
  EXPECT_GT(untestable, 0) << "the search never met an untestable commit: " << r.out;
  EXPECT_GT(good_end_runs, 0) << "the known-good end vouched for the command: " << r.out;
  // The text output shows the reason too.
  auto text = s.Bisect({"sh", "{worktree}/test.sh"}, {}, "text");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("cannot test: exit 2"), std::string::npos) << text.out;
}

// A wrapper that exits 2 after storing the case's result at some commits, and without storing
// anything at others (3 to 8): each step's progress line says whether its own results spoke.
// The stored ones read as good or bad "from its stored results"; the others are skipped on
// their exit alone, whatever the step before them stored.
TEST(BisectTrustE2E, EachStepLineSaysWhetherItsOwnStoredResultsSpoke) {
  Steps s(12, [](int i) { return i >= 3 && i <= 8 ? "echo 'stack.json: no such file' >&2\nexit 2\n" : ""; },
          [](int i) { return std::map<std::string, std::string>{{"result.xml", Junit(i < 10)}}; });
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  WriteFile(s.dir / "store.sh", fmt::format("sh \"$1/test.sh\" || exit $?\n"
                                            "f=$(mktemp); sed \"s/RUN/$$/\" \"$1/result.xml\" > \"$f\"\n"
                                            "\"{}\" ingest --format junit \"$f\" --case x/y_0 --commit \"$2\" "
                                            "--repo \"$1\" --db \"$3\" || exit 3; rm -f \"$f\"; exit 2\n",
                                            testing_util::kHarnessBinary));
  auto r = s.Bisect({"sh", (s.dir / "store.sh").string(), "{worktree}", "{sha}", "{db}"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(testing_util::StdoutJson(r)["culprit"], s.shas[9]) << r.out;
  int stored = 0, skipped = 0;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(": running the command at ") != std::string::npos || line.find("bisect step ") != 0) continue;
    SCOPED_TRACE(line);
    if (line.find(" is skip (") != std::string::npos) {
      ++skipped;
      EXPECT_NE(line.find(" is skip (exit 2 (the harness's usage error)) | "), std::string::npos);
    } else {
      ++stored;
      EXPECT_TRUE(line.find(" is good (from its stored results; exit 2 (the harness's usage error)) | ") !=
                      std::string::npos ||
                  line.find(" is bad (from its stored results; exit 2 (the harness's usage error)) | ") !=
                      std::string::npos);
    }
  }
  EXPECT_GT(stored, 0) << r.err;
  EXPECT_GT(skipped, 0) << r.err;
}

// The known-good and the known-bad end: a step there that cannot test stops at once, exit
// 3, naming the end; so does a signal or a timeout there. Only the end misbehaves, and the
// culprit sits beside it (commit 2, or the known-bad end itself), so the search must run
// that end to verify its answer.
TEST(BisectTrustE2E, AnUntestableEndStopsNamingIt) {
  struct Case {
    std::string end, script, why;
    std::vector<std::string> flags;
  };
  const std::vector<Case> cases = {
      {"known-bad", "echo 'no stack.json here' >&2\nexit 2\n", "exit 2 (the harness's usage error)", {}},
      {"known-good", "echo 'no stack.json here' >&2\nexit 127\n", "exit 127 (command not found)", {}},
      {"known-bad", "echo 'no stack.json here' >&2\nkill -9 $$\n", "killed by signal 9", {}},
      {"known-good", "echo 'no stack.json here' >&2\nexec sleep 30\n", "timed out", {"--timeout", "1"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.end + ": " + c.why);
    const int n = 8;
    Steps s(n, [&](int i) {
      if (c.end == "known-good") return i == 1 ? c.script : std::string("exit 1\n");
      return i == n ? c.script : std::string("exit 0\n");
    });
    auto r = s.Bisect({"sh", "{worktree}/test.sh"}, c.flags);
    ExpectStoppedAtEnd(r, s, c.end, c.why, "no stack.json here");
  }
}

// The same inside the range: with the ends' nightlies stored, the first step is an interior
// commit, and a signal, an aborting exit or a timeout there stops the bisect naming that
// commit by its sha alone, never as an end of the range.
TEST(BisectTrustE2E, AStepInsideTheRangeThatStopsTheBisectNamesItsCommitNotAnEnd) {
  struct Case {
    std::string script, why;
    std::vector<std::string> flags;
  };
  const std::vector<Case> cases = {
      {"echo 'lost the node' >&2\nkill -9 $$\n", "killed by signal 9 at ", {}},
      {"echo 'lost the node' >&2\nexit 129\n", "aborts the bisect", {}},
      {"echo 'lost the node' >&2\nexec sleep 30\n", "timed out at ", {"--timeout", "1"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    const int n = 8;
    Steps s(n, [&](int i) { return i == 1 ? std::string("exit 0\n") : i == n ? std::string("exit 1\n") : c.script; });
    ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
    auto r = s.Bisect({"sh", "{worktree}/test.sh"}, c.flags);
    EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find(c.why), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("lost the node"), std::string::npos) << r.err;
    int named = 0;
    for (int k = 1; k + 1 < n; ++k) named += r.err.find(" at " + ShortSha(s.shas[k])) != std::string::npos;
    EXPECT_EQ(named, 1) << "one interior commit, by its sha: " << r.err;
    EXPECT_EQ(r.err.find(" end "), std::string::npos) << r.err;
  }
}

// The known-good end must reproduce as good: a command that fails everywhere (a broken
// environment, not a broken commit) stops with exit 3 saying so. Before: a culprit at the
// first commit with confidence 0.99, exit 0.
TEST(BisectTrustE2E, AKnownGoodEndThatDoesNotReproduceStops) {
  Steps s(12, [](int) { return std::string("echo 'the test fails here' >&2\nexit 1\n"); });
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  auto r = s.Bisect();
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("the known-good end " + ShortSha(s.shas[0]) + " does not reproduce as good"), std::string::npos)
      << r.err;
  // The store's result of the case at the good end is what fails there, when the command
  // stores one: the same through `harness ingest`.
  Steps stored(12, [](int) { return std::string(); }, [](int) {
    return std::map<std::string, std::string>{{"result.xml", Junit(false)}};
  });
  ASSERT_NO_FATAL_FAILURE(stored.StoreEnds());
  // Each run's file made unique (the same file ingested again adds nothing).
  WriteFile(stored.dir / "store.sh", fmt::format("f=$(mktemp); sed \"s/RUN/$$/\" \"$1/result.xml\" > \"$f\"\n"
                                                 "\"{}\" ingest --format junit \"$f\" --case x/y_0 --commit \"$2\" "
                                                 "--repo \"$1\" --db \"$3\"; rc=$?; rm -f \"$f\"; exit $rc\n",
                                                 testing_util::kHarnessBinary));
  auto ingest = stored.Bisect({"sh", (stored.dir / "store.sh").string(), "{worktree}", "{sha}", "{db}"});
  EXPECT_EQ(ingest.exit_code, 3) << ingest.err << ingest.out;
  EXPECT_NE(ingest.err.find("does not reproduce as good when the command runs it: x/y_0 fails there"), std::string::npos) << ingest.err;
}

// The nightlies at a range's ends: the stand-in's GSM8K, with the fp8 fault at the bad end
// (the batched case loses about 16 questions).
void StoreGsm8kEnds(const std::string& good, const std::string& bad, const std::string& repo, const std::string& db) {
  for (const auto& [sha, fault] : {std::pair{good, ""}, {bad, "fp8-scale-unrepaired"}}) {
    std::vector<std::string> args = {"run", "--db", db, "--commit", sha, "--repo", repo, "--suite", "gsm8k"};
    if (*fault) args.insert(args.end(), {"--fault", fault});
    auto nightly = RunHarness(args);
    ASSERT_NE(nightly.exit_code, 3) << nightly.err;
  }
}

// The same for a metric: nightlies at the ends (the stand-in's GSM8K, the fp8 fault at the
// bad end), and a command that measures every commit with the fault on (a broken
// environment): the known-good end measures at the known-bad end's level, and the bisect
// stops with exit 3 naming both values. Before the good end's check read its values, such a
// bisect blamed the first commit.
TEST(BisectTrustE2E, AMetricKnownGoodEndThatMeasuresBadStops) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 6, [](int i) {
    return std::map<std::string, std::string>{{"n.txt", std::to_string(i)}};
  });
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  ASSERT_NO_FATAL_FAILURE(StoreGsm8kEnds(shas[0], shas[5], repo, db));
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[5], "--metric", "gsm8k", "--repo", repo, "--db", db,
                       "--format", "json", "--", testing_util::kHarnessBinary, "run", "--db", "{db}", "--commit", "{sha}",
                       "--repo", "{worktree}", "--suite", "gsm8k", "--fault", "fp8-scale-unrepaired"},
                      {.timeout_s = 300});
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("the known-good end " + ShortSha(shas[0]) + " does not reproduce as good when the command runs "
                       "it: gsm8k/"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("at or beyond the known-bad end's "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(the known-good end's was "), std::string::npos) << r.err;
}

// The known-good end vouches for a metric's command unless its value lies at or beyond the
// known-bad end's (and away from its own level). The command cannot test the first commit it
// is given (it stores nothing), so the known-good end is run to tell a broken command from a
// broken commit; there it measures far better than the end's nightly (a score of 0.99
// against 0.90 stored, 0.80 at the bad end: 18 noise sigmas away, in the good direction). It
// vouches all the same, and the search names the commit where the score falls.
TEST(BisectTrustE2E, AMetricKnownGoodEndThatMeasuresBetterThanItsNightlyVouches) {
  auto junit = [](double score) {
    return fmt::format(R"(<?xml version="1.0"?><!-- RUN --><testsuites><testsuite name="x" tests="1">)"
                       R"(<testcase name="y_0"><properties><property name="score" value="{}"/></properties>)"
                       "</testcase></testsuite></testsuites>\n",
                       score);
  };
  Steps s(
      12, [](int) { return std::string(); },
      [&](int i) {
        return std::map<std::string, std::string>{{"result.xml", junit(i >= 10 ? 0.80 : 0.99)}};
      });
  for (auto [score, sha] : {std::pair{0.90, s.shas.front()}, {0.80, s.shas.back()}}) {
    WriteFile(s.dir / "end.xml", junit(score));
    auto r = RunHarness({"ingest", "--format", "junit", (s.dir / "end.xml").string(), "--case", "gsm8k/y_0", "--commit",
                         sha, "--repo", s.repo, "--db", s.db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Stores nothing the first time; then ingests the worktree's result.xml (a unique copy).
  WriteFile(s.dir / "store.sh", fmt::format("d=$(dirname \"$3\"); if [ ! -e \"$d/once\" ]; then touch \"$d/once\"; "
                                            "exit 0; fi\nf=$(mktemp); sed \"s/RUN/$$/\" \"$1/result.xml\" > \"$f\"\n"
                                            "\"{}\" ingest --format junit \"$f\" --case gsm8k/y_0 --commit \"$2\" "
                                            "--repo \"$1\" --db \"$3\"; rc=$?; rm -f \"$f\"; exit $rc\n",
                                            testing_util::kHarnessBinary));
  auto r = RunHarness({"bisect",     "--good",      s.shas.front(), "--bad",     s.shas.back(),
                       "--metric",   "gsm8k/score", "--case",       "gsm8k/y_0", "--noise-sigma",
                       "0.005",      "--repo",      s.repo,         "--db",      s.db,
                       "--format",   "json",        "--",           "sh",        (s.dir / "store.sh").string(),
                       "{worktree}", "{sha}",       "{db}"},
                      {.cwd = s.dir.path(), .timeout_s = 120});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "culprit") << r.out;
  EXPECT_EQ(j["culprit"], s.shas[9]) << r.out;
  EXPECT_EQ(j["skipped"].size(), 1u) << "the commit the command could not test: " << r.out;
  std::vector<double> good_end_values;
  for (const auto& step : j["steps"])
    if (step["commit"] == s.shas.front() && step["source"] == "command")
      for (const auto& ob : step["evidence"]["observations"]) good_end_values.push_back(ob["value"].get<double>());
  EXPECT_EQ(good_end_values, std::vector<double>{0.99}) << "the known-good end vouched by one run: " << r.out;
}

// A command that stores another case and exits 0: for a status target the exit code
// speaks (git's convention), and the search finds the culprit its exit codes show; it is
// never the other case's result that decides.
TEST(BisectTrustE2E, AnotherCaseStoredLeavesAStatusTargetToTheExitCode) {
  Steps s(10, [](int i) { return std::string(i >= 6 ? "exit 1\n" : "exit 0\n"); }, [](int) {
    return std::map<std::string, std::string>{{"other.xml", Junit(false, "other_0")}};
  });
  // Ingest x/other_0 (failing everywhere), then exit as test.sh says.
  WriteFile(s.dir / "both.sh", fmt::format("\"{}\" ingest --format junit \"$1/other.xml\" --case x/other_0 --commit "
                                           "\"$2\" --repo \"$1\" --db \"$3\" >/dev/null || exit 3\nexec sh \"$1/test.sh\"\n",
                                           testing_util::kHarnessBinary));
  auto r = s.Bisect({"sh", (s.dir / "both.sh").string(), "{worktree}", "{sha}", "{db}"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(testing_util::StdoutJson(r)["culprit"], s.shas[5]) << r.out;
}

// The user's story: a relative --stack-config that exists in the folder the bisect was
// started from but not in the worktree. `harness run` exits 2 at every commit; the bisect
// must stop naming the known-good end and the run's own message, never name a culprit.
TEST(BisectTrustE2E, ARelativeStackConfigMissingInTheWorktreeIsNoCulprit) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 8, [&](int i) {
    return std::map<std::string, std::string>{
        {"stack.json", i >= 5 ? R"({"format_version": 1, "faults": ["sp-counts-bookkeeping-users"]})"
                              : R"({"format_version": 1})"}};
  });
  WriteFile(dir / "my-stack.json", R"({"format_version": 1})");  // the caller's folder only
  const std::string db = (dir / "h.db").string();
  const std::vector<std::string> run = {testing_util::kHarnessBinary, "run", "--db", "{db}", "--commit", "{sha}", "--repo",
                                        "{worktree}", "--suite", "sequence_parallel", "--filter",
                                        "sequence_parallel/*_0"};
  // The nightlies at the ends, from the caller's folder with the repository's stack configs.
  for (int i : {1, 8}) {
    auto show = RunProcess({"git", "-C", (dir / "repo").string(), "show", shas[i - 1] + ":stack.json"});
    ASSERT_TRUE(show.ok());
    WriteFile(dir / "end.json", show->out);
    auto nightly = RunHarness({"run", "--db", db, "--commit", shas[i - 1], "--repo", (dir / "repo").string(), "--suite",
                               "sequence_parallel", "--filter", "sequence_parallel/*_0", "--stack-config",
                               (dir / "end.json").string()});
    ASSERT_NE(nightly.exit_code, 2) << nightly.err;
  }
  std::vector<std::string> args = {"bisect", "--good", shas[0], "--bad", shas[7], "--case",
                                   "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0", "--repo", "repo", "--db",
                                   "h.db", "--format", "json", "--"};
  args.insert(args.end(), run.begin(), run.end());
  args.insert(args.end(), {"--stack-config", "my-stack.json"});
  auto r = RunHarness(args, {.cwd = dir.path(), .timeout_s = 120});
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("the known-good end " + ShortSha(shas[0])), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exit 2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("my-stack.json"), std::string::npos) << "the run's own message: " << r.err;
}

// A metric target: a command that stores nothing of it (exit 0, or results of another
// suite's case) cannot test the commit whatever its exit code. Empty store: the ends are
// run first to choose the cases, and stop naming the end. With the nightlies stored: the
// interior step is skipped, the known-good end vouches, and stops naming it.
TEST(BisectTrustE2E, AMetricTargetNeedsAStoredValue) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 6, [](int) {
    return std::map<std::string, std::string>{{"other.xml", Junit(true, "other_0")}};
  });
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  WriteFile(dir / "other.sh", fmt::format("echo 'stored the wrong case' >&2\n\"{}\" ingest --format junit "
                                          "\"$1/other.xml\" --case x/other_0 --commit \"$2\" --repo \"$1\" --db \"$3\""
                                          " >/dev/null\nexit 0\n",
                                          testing_util::kHarnessBinary));
  const std::vector<std::vector<std::string>> commands = {
      {"sh", "-c", "echo 'stored nothing' >&2; exit 0"},
      {"sh", (dir / "other.sh").string(), "{worktree}", "{sha}", "{db}"}};
  auto bisect = [&](const std::vector<std::string>& command) {
    std::vector<std::string> args = {"bisect", "--good", shas[0], "--bad", shas[5], "--metric", "gsm8k", "--repo",
                                     repo, "--db", db, "--format", "json", "--"};
    args.insert(args.end(), command.begin(), command.end());
    return RunHarness(args, {.timeout_s = 300});
  };
  for (const auto& command : commands) {
    SCOPED_TRACE(command.back());
    auto r = bisect(command);
    EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("could not test the known-good end " + ShortSha(shas[0])), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("stored "), std::string::npos) << r.err;
  }
  // The nightlies at the ends.
  ASSERT_NO_FATAL_FAILURE(StoreGsm8kEnds(shas[0], shas[5], repo, db));
  for (const auto& command : commands) {
    SCOPED_TRACE(command.back());
    auto r = bisect(command);
    EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("the known-good end " + ShortSha(shas[0])), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("stored no result of gsm8k/"), std::string::npos) << r.err;
  }
}

// A command that aborts (an exit of 128 or more, git's convention) while a metric target's
// ends are first run is an error naming the end, its exit and its stderr: nothing stored
// there is read as if the run had ended.
TEST(BisectTrustE2E, ACommandThatAbortsWhileTheEndsAreFirstRunStopsNamingIt) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 6, [](int i) {
    return std::map<std::string, std::string>{{"n.txt", std::to_string(i)}};
  });
  auto r = RunHarness(
      {"bisect", "--good", shas[0], "--bad", shas[5], "--metric", "gsm8k", "--repo", (dir / "repo").string(), "--db",
       (dir / "h.db").string(), "--format", "json", "--", "sh", "-c", "echo 'the node went away' >&2; exit 200"},
      {.timeout_s = 300});
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("the command exited 200 at the known-good end " + ShortSha(shas[0]) +
                       ": that aborts the bisect (git's convention)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the node went away"), std::string::npos) << r.err;
}

// bisect --auto: a confirming rerun that could not test (exit 2 here: the relative stack
// config again) is no confirmation; the regression is reported unconfirmed, with why, and
// not bisected. Before, its exit code "confirmed" it and the bisect named a wrong culprit.
// A repository of six commits whose stack.json turns these faults on from commit 4
// (shas[3]), and the nightlies of commits 1 and 6 of these suites in dir/h.db, each with its
// commit's stack.json.
std::vector<std::string> FaultsFromCommit4(const TempDir& dir, const std::vector<std::string>& faults,
                                           const std::vector<std::string>& suites) {
  const std::string with_faults = Json{{"format_version", 1}, {"faults", faults}}.dump();
  auto shas = testing_util::MakeGitRepo(dir / "repo", 6, [&](int i) {
    return std::map<std::string, std::string>{{"stack.json", i >= 4 ? with_faults : R"({"format_version": 1})"}};
  });
  const std::string repo = (dir / "repo").string();
  for (int i : {1, 6}) {
    auto show = RunProcess({"git", "-C", repo, "show", shas[i - 1] + ":stack.json"});
    EXPECT_TRUE(show.ok());
    if (!show.ok()) return shas;
    WriteFile(dir / "end.json", show->out);
    std::vector<std::string> argv = {"run", "--db", (dir / "h.db").string(), "--commit", shas[i - 1], "--repo", repo,
                                     "--stack-config", (dir / "end.json").string()};
    for (const auto& suite : suites) argv.insert(argv.end(), {"--suite", suite});
    auto nightly = RunHarness(argv);
    EXPECT_NE(nightly.exit_code, 2) << nightly.err;
  }
  return shas;
}

TEST(BisectTrustE2E, AutoNeverConfirmsWithARerunThatCouldNotTest) {
  TempDir dir;
  const auto shas = FaultsFromCommit4(dir, {"sp-counts-bookkeeping-users"}, {"sequence_parallel"});
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  WriteFile(dir / "my-stack.json", R"({"format_version": 1})");
  auto r = RunHarness({"bisect", "--auto", "--db", db, "--repo", repo, "--format", "json", "--", testing_util::kHarnessBinary, "run",
                       "--db", "{db}", "--repo", "{worktree}", "--commit", "{sha}", "--suite", "sequence_parallel",
                       "--stack-config", "my-stack.json"},
                      {.cwd = dir.path(), .timeout_s = 120});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Json j = testing_util::StdoutJson(r);
  ASSERT_FALSE(j["regressions"].empty()) << r.out;
  for (const auto& g : j["regressions"]) {
    EXPECT_EQ(g["confirmed"], false) << g;
    EXPECT_EQ(g["verdict"], "untestable") << g;
    EXPECT_TRUE(g["session"].is_null()) << "never bisected: " << g;
    EXPECT_TRUE(g["culprit"].is_null()) << g;
    EXPECT_NE(g["reason"].get<std::string>().find("unconfirmed: the rerun could not test (exit 2"), std::string::npos)
        << g;
    EXPECT_NE(g["untestable"].get<std::string>().find("my-stack.json"), std::string::npos) << g;
  }
  EXPECT_EQ(j["runs_total"], 1) << "the confirming rerun only";
  auto store = Store::OpenReadOnly(db);
  ASSERT_TRUE(store.ok());
  auto stored = (*store)->bisect_reader().Regressions();
  ASSERT_TRUE(stored.ok());
  for (const auto& g : *stored) {
    EXPECT_EQ(g.confirmation, "not-confirmed");
    EXPECT_NE(g.confirm_json.find("\"untestable\""), std::string::npos) << g.confirm_json;
  }
  // Text says so too.
  auto text = RunHarness({"bisect", "--auto", "--db", db, "--repo", repo, "--", testing_util::kHarnessBinary, "run", "--db", "{db}",
                          "--repo", "{worktree}", "--commit", "{sha}", "--suite", "sequence_parallel", "--stack-config",
                          "my-stack.json"},
                         {.cwd = dir.path(), .timeout_s = 120});
  EXPECT_NE(text.out.find("UNCONFIRMED: the rerun could not test (exit 2"), std::string::npos) << text.out << text.err;
  // The report says so on the failing cases, never "flaky".
  auto report = RunHarness({"report", "--db", db, "--format", "text"});
  EXPECT_NE(report.out.find("unconfirmed: the rerun of the bad commit could not test it"), std::string::npos)
      << report.out;
}

// bisect --auto with two regressions, one confirming rerun that stored the results of one
// (sequence_parallel's case: reproduced) and not of the other (gmm's two cases), and then
// exited 2. Each regression gets its own answer from that one rerun: sequence_parallel's is
// confirmed and bisected; gmm's could not be tested, and why names gmm's cases, never the
// other's; the stored confirmation of each says the same. gmm's target comes first, so a
// reason read from its neighbour shows.
TEST(BisectTrustE2E, AutoTellsEachRegressionWhatTheOneRerunShowedOfIt) {
  TempDir dir;
  const auto shas = FaultsFromCommit4(
      dir, {"sp-counts-bookkeeping-users", "gmm-no-mxfp4-quant-fusion", "graph-topo-disorder"},
      {"gmm", "sequence_parallel"});
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  // Runs sequence_parallel's cases only, then says it could not test (exit 2).
  WriteFile(dir / "step.sh",
            "\"$1\" run --db \"$2\" --repo \"$3\" --commit \"$4\" --suite gmm --suite sequence_parallel "
            "--stack-config \"$3/stack.json\" --filter 'sequence_parallel/*' > /dev/null 2>&1\nexit 2\n");
  auto r = RunHarness({"bisect", "--auto", "--db", db, "--repo", repo, "--format", "json", "--", "sh",
                       (dir / "step.sh").string(), testing_util::kHarnessBinary, "{db}", "{worktree}", "{sha}"},
                      {.cwd = dir.path(), .timeout_s = 120});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["regressions"].size(), 2u) << r.out;
  const Json& gmm = j["regressions"][0];
  const Json& sp = j["regressions"][1];
  ASSERT_EQ(gmm["suite"], "gmm") << r.out;
  ASSERT_EQ(sp["suite"], "sequence_parallel") << r.out;
  EXPECT_EQ(gmm["confirmation"], "not-confirmed") << gmm;
  EXPECT_EQ(gmm["verdict"], "untestable") << gmm;
  EXPECT_TRUE(gmm["session"].is_null()) << gmm;
  ASSERT_TRUE(gmm["untestable"].is_string()) << gmm;
  const std::string why = gmm["untestable"].get<std::string>();
  EXPECT_NE(why.find("exit 2 (the harness's usage error); it stored no result of gmm/test_qwen3_dynamic_quant_3, "
                     "gmm/test_qwen3_fp_0 at " + ShortSha(shas[5]) + "; its stderr was empty"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("sequence_parallel/"), std::string::npos) << why;
  EXPECT_EQ(sp["confirmation"], "confirmed") << sp;
  EXPECT_TRUE(sp["untestable"].is_null()) << sp;
  EXPECT_EQ(sp["verdict"], "culprit") << sp;
  EXPECT_EQ(sp["culprit"], shas[3]) << sp;  // commit 4, the first with the faults
  // Each step's results spoke, not its exit 2, and its progress line says so.
  for (const char* verdict : {" is good (from its stored results; exit 2 (the harness's usage error)) | ",
                              " is bad (from its stored results; exit 2 (the harness's usage error)) | "})
    EXPECT_NE(r.err.find(verdict), std::string::npos) << verdict << "\n" << r.err;
  auto store = Store::OpenReadOnly(db);
  ASSERT_TRUE(store.ok());
  auto stored = (*store)->bisect_reader().Regressions();
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 2u);
  for (const auto& g : *stored) {
    const Json reruns = Json::parse(g.confirm_json);
    ASSERT_EQ(reruns.size(), 1u) << g.confirm_json;
    EXPECT_EQ(reruns[0]["exit_code"], 2) << g.confirm_json;
    if (g.suite == "gmm") {
      EXPECT_EQ(g.confirmation, "not-confirmed");
      EXPECT_TRUE(reruns[0]["reproduced"].is_null()) << g.confirm_json;
      EXPECT_EQ(reruns[0].value("untestable", ""), why) << g.confirm_json;
    } else {
      EXPECT_EQ(g.confirmation, "confirmed");
      EXPECT_EQ(reruns[0]["reproduced"], true) << g.confirm_json;
      EXPECT_FALSE(reruns[0].contains("untestable")) << g.confirm_json;
    }
  }
}

// bisect replay reads a regular file within a bound: /dev/zero, a FIFO, a directory and a
// sparse file past the limit are each exit 2 naming the file, in bounded memory (under a
// 1 GiB address-space limit; before, /dev/zero ended in bad_alloc and a 4 GiB sparse file
// took 3.4 GB).
// AddressSanitizer reserves terabytes of shadow memory and cannot start under an
// address-space limit: the sanitized suite runs the same files without it, the optimized
// suite (ci/test.sh runs both) holds the binary to the limit.
TEST(BisectTrustE2E, ReplayReadsABoundedRegularFile) {
  TempDir dir;
  ASSERT_EQ(mkfifo((dir / "fifo").c_str(), 0600), 0);
  fs::create_directories(dir / "folder");
  {
    std::ofstream sparse(dir / "sparse.log", std::ios::binary);
  }
  fs::resize_file(dir / "sparse.log", std::uintmax_t{4} << 30);
  for (const std::string& file :
       {std::string("/dev/zero"), (dir / "fifo").string(), (dir / "folder").string(), (dir / "sparse.log").string()}) {
    SCOPED_TRACE(file);
    std::vector<std::string> argv = {testing_util::kHarnessBinary, "bisect", "replay", file, "--db", (dir / "h.db").string()};
    if (!testing_util::kAddressSanitizer) argv.insert(argv.begin(), {"prlimit", "--as=1073741824", "--"});
    auto r = RunProcess(argv,
                        {.env = {{"HARNESS_ROOT", testing_util::kSourceRoot}}, .timeout_s = 60});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->exit_code, 2) << r->err;
    EXPECT_NE(r->err.find(file + ": "), std::string::npos) << r->err;
  }
}


// A stored session whose header is not one (a store edited by hand, or damaged): `bisect log`
// names the session and the field, prints no log, and the session is left as it was.
TEST(BisectTrustE2E, AStoredSessionWithAMalformedHeaderIsNamedByLog) {
  Steps s(6, [](int i) { return fmt::format("exit {}\n", i >= 4 ? 1 : 0); });
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  auto r = s.Bisect();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int64_t session = testing_util::StdoutJson(r)["session"].get<int64_t>();
  ASSERT_EQ(RunHarness({"bisect", "log", std::to_string(session), "--db", s.db}).exit_code, 0);
  testing_util::ExecSql(s.db, R"(UPDATE bisect_sessions SET args_json = '{"format_version": 1, "good": 5}')");
  auto log = RunHarness({"bisect", "log", std::to_string(session), "--db", s.db});
  EXPECT_EQ(log.signal, 0);
  EXPECT_EQ(log.exit_code, 2) << "bad input, as a malformed log file is: " << log.err;
  EXPECT_TRUE(log.out.empty()) << log.out;
  EXPECT_NE(log.err.find(fmt::format("bisect session {}", session)), std::string::npos) << log.err;
  EXPECT_NE(log.err.find("good"), std::string::npos) << log.err;
  EXPECT_EQ(s.Session(session).status, "culprit") << "left as it was";
}

// A log an older harness wrote: a metric target of two cases with no per-question keys
// ("questions" came later) and observations by value only. Replayed with its repository
// (the flip rates' history is read per case), it answers as the session did.
TEST(BisectTrustE2E, AnOlderLogOfTwoCasesWithoutQuestionKeysReplays) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 6);
  const std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  ASSERT_NO_FATAL_FAILURE(StoreGsm8kEnds(shas[0], shas[5], repo, db));
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[5], "--metric", "gsm8k", "--repo", repo, "--db", db,
                       "--max-runs", "0", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json session = testing_util::StdoutJson(r);
  auto log = RunHarness({"bisect", "log", std::to_string(session["session"].get<int64_t>()), "--db", db});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  std::string older;
  std::istringstream lines(log.out);
  for (std::string line; std::getline(lines, line);) {
    Json j = Json::parse(line);
    if (j["kind"] == "session") {
      Json& target = j["target"];
      ASSERT_EQ(target["cases"].size(), 1u) << line;
      target["cases"].push_back("gsm8k/test_gsm8k_accuracy_0");
      target["specs"].insert(target["specs"].begin() + 1, target["specs"][0]);
      target.erase("questions");
    } else {
      Json observations = Json::array();
      for (Json o : j["evidence"]["observations"]) {
        o.erase("questions");
        if (o["series"] == 0) {
          Json twin = o;
          twin["series"] = 1;
          observations.push_back(twin);
        } else {
          o["series"] = o["series"].get<int>() + 1;
        }
        observations.push_back(o);
      }
      j["evidence"]["observations"] = observations;
    }
    older += j.dump() + "\n";
  }
  const fs::path file = dir / "older.log";
  testing_util::WriteFile(file, older);
  auto replay = RunHarness({"bisect", "replay", file.string(), "--db", db, "--format", "json"});
  EXPECT_EQ(replay.signal, 0) << replay.err;
  ASSERT_EQ(replay.exit_code, 0) << replay.err << replay.out;
  const Json again = testing_util::StdoutJson(replay);
  EXPECT_EQ(again["cases"].size(), 2u) << replay.out;
  EXPECT_EQ(again["verdict"], session["verdict"]) << replay.out;
}

// A log is one session: a real session's log with its session line given twice (as a
// paste of two logs would) is exit 2 naming the second, and replays nothing.
TEST(BisectTrustE2E, ALogWithTwoSessionLinesNamesTheSecond) {
  Steps s(6, [](int i) { return fmt::format("exit {}\n", i >= 4 ? 1 : 0); });
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  auto r = s.Bisect();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int64_t session = testing_util::StdoutJson(r)["session"].get<int64_t>();
  auto log = RunHarness({"bisect", "log", std::to_string(session), "--db", s.db});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  const std::string first = log.out.substr(0, log.out.find('\n') + 1);
  ASSERT_NE(first.find("\"kind\":\"session\""), std::string::npos) << log.out;
  const fs::path file = fs::path(s.db).parent_path() / "twice.log";
  testing_util::WriteFile(file, log.out + first);
  const int lines = static_cast<int>(std::count(log.out.begin(), log.out.end(), '\n')) + 1;
  auto replay = RunHarness({"bisect", "replay", file.string(), "--db", s.db});
  EXPECT_EQ(replay.exit_code, 2) << replay.err;
  EXPECT_NE(replay.err.find(fmt::format("{}:{}: a second session line (a log is one session)", file.string(), lines)),
            std::string::npos)
      << replay.err;
  EXPECT_TRUE(replay.out.empty()) << replay.out;
}

// A bisect log whose lines are not a session: each is exit 2 naming the file, the line and
// what is wrong with it, before any command runs or anything is stored.
TEST(BisectTrustE2E, AMalformedLogNamesItsLineAndWhatIsWrong) {
  TempDir dir;
  const struct {
    std::string text, where, words;
  } logs[] = {
      {"# a comment\n{\"sha\":\"abc\"}\n", ":2", "kind"},
      {"{\"kind\":\"sesion\"}\n", ":1", "unknown kind 'sesion' (session or step)"},
      {"\n{\"kind\":\"step\",\"sha\":\"abc\"}\n", ":2", "a step before the session line"},
      {"# nothing but a comment\n", "", "no session line: not a bisect log"},
      {"{\"kind\":\n", ":1", ""},
  };
  for (const auto& log : logs) {
    SCOPED_TRACE(log.text);
    const fs::path file = dir / "session.log";
    testing_util::WriteFile(file, log.text);
    auto r = RunHarness({"bisect", "replay", file.string(), "--db", (dir / "h.db").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(file.string() + log.where + ":"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(log.words), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "h.db")) << "nothing stored";
  }
}

// --- Stray bisect locks (docs/bisect.md, "A harness that dies without cleaning up") ---

bool WaitForFile(const fs::path& file) {
  for (int i = 0; i < 1500; ++i) {
    if (fs::exists(file) && fs::file_size(file) > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A bisect killed with kill -9 while its command runs: what it leaves is a real leftover
// (its lock h.db.bisect-1.lock naming a registered worktree under /tmp/harness-bisect-*).
struct KilledBisect {
  TempDir dir;
  std::vector<std::string> shas = testing_util::MakeGitRepo(dir / "repo", 6, [](int i) {
    return std::map<std::string, std::string>{{"slow.sh", "echo $$ > \"$1\"\nexec sleep 30\n"},
                                              {"test.sh", i >= 4 ? "exit 1\n" : "exit 0\n"}};
  });
  std::string repo = (dir / "repo").string();

  void Kill(const std::string& db) {
    const pid_t harness =
        SpawnHarness({"bisect", "--good", shas[0], "--bad", shas[5], "--case", "x/y_0", "--repo", repo, "--db", db,
                      "--", "sh", "{worktree}/slow.sh", (dir / "pid").string()},
                     dir / "killed.log", dir / "killed.log.err");
    ASSERT_TRUE(WaitForFile(dir / "pid")) << ReadFile(dir / "killed.log.err");
    kill(harness, SIGKILL);
    WaitForExit(harness, std::chrono::seconds(60));
    ASSERT_EQ(testing_util::WorktreeCount(dir / "repo"), 2u) << "the killed bisect left its worktree";
  }
  ~KilledBisect() {
    std::ifstream in(dir / "pid");
    for (pid_t p; in >> p;) kill(p, SIGKILL);
  }
  ProcessResult Bisect(const std::string& db) {
    return RunHarness({"bisect", "--good", shas[0], "--bad", shas[5], "--case", "x/y_0", "--repo", repo, "--db", db,
                       "--format", "json", "--", "sh", "{worktree}/test.sh"});
  }
};

// Locks no process holds, planted beside the database, name paths the harness never made:
// a folder outside its worktree root, a symbolic link under the root that points outside,
// a real folder under the root the repository never registered, a path that leaves the
// root through "..": each is left alone with a warning, and the bisect answers. Before, each
// was removed recursively (a canary through the link too). Files of a lock's shape whose
// names the harness never makes are not locks: kept as they were. Last, a lock naming "/".
TEST(BisectTrustE2E, AStrayLockDeletesNothing) {
  KilledBisect k;
  const fs::path db = k.dir / "h.db";
  WriteFile(k.dir / "outside" / "wt" / "canary", "keep");
  WriteFile(k.dir / "linked" / "wt" / "canary", "keep");
  std::string made = "/tmp/harness-bisect-XXXXXX";
  ASSERT_NE(mkdtemp(made.data()), nullptr);
  const fs::path unregistered = made;
  WriteFile(unregistered / "wt" / "canary", "keep");
  std::string link_name = "/tmp/harness-bisect-XXXXXX";
  ASSERT_NE(mkdtemp(link_name.data()), nullptr);
  fs::remove(link_name);
  const fs::path link = link_name;
  fs::create_directory_symlink(k.dir / "linked", link);
  const std::vector<std::pair<std::string, fs::path>> planted = {
      {"h.db.bisect-7.lock", k.dir / "outside" / "wt"},
      {"h.db.bisect-8.lock", link / "wt"},
      {"h.db.bisect-pending-1-abcdef.lock", unregistered / "wt"},
      {"h.db.bisect-9.lock", unregistered / ".." / ".." / (k.dir / "outside" / "wt").relative_path()},
  };
  for (const auto& [name, worktree] : planted)
    WriteFile(k.dir / name, Json{{"pid", 1}, {"repo", k.repo}, {"worktree", worktree.string()}}.dump());
  // Names of the lock's shape that are neither a session's nor a pending bisect's are not
  // locks at all: not read, not warned about, not removed.
  const std::string not_a_lock = Json{{"pid", 1}, {"repo", k.repo}, {"worktree", (k.dir / "outside" / "wt").string()}}.dump();
  const std::vector<std::string> not_locks = {
      "h.db.bisect-notes.lock",           "h.db.bisect-12x.lock",           "h.db.bisect--1.lock",
      "h.db.bisect-0.lock",               "h.db.bisect-012.lock",           "h.db.bisect-1234567890123456789.lock",
      "h.db.bisect-pending-.lock",        "h.db.bisect-pending-1.lock",     "h.db.bisect-pending-x-abcdef.lock",
      "h.db.bisect-pending--abcdef.lock", "h.db.bisect-pending-1-abcde.lock", "h.db.bisect-pending-1-abcdefg.lock",
      "h.db.bisect-pending-1-ab.def.lock", "h.db.bisect-pending-1-pending-2.lock", "h.db.bisect-xpending-1-abcdef.lock"};
  for (const std::string& name : not_locks) WriteFile(k.dir / name, not_a_lock);
  auto r = k.Bisect(db.string());
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  for (const std::string& name : not_locks) EXPECT_EQ(ReadFile(k.dir / name), not_a_lock) << name << ": " << r.err;
  EXPECT_EQ(r.err.find("a bisect that had not begun its session"), r.err.rfind("a bisect that had not begun its session"))
      << "one pending lock was planted: " << r.err;
  for (const auto& [name, worktree] : planted)
    EXPECT_NE(r.err.find("(worktree '" + worktree.string() + "')"), std::string::npos) << name << ": " << r.err;
  EXPECT_NE(r.err.find("warning:"), std::string::npos) << r.err;
  const bool kept = fs::exists(k.dir / "outside" / "wt" / "canary") && fs::exists(k.dir / "linked" / "wt" / "canary") &&
                    fs::exists(unregistered / "wt" / "canary") && fs::is_symlink(link);
  fs::remove(link);
  fs::remove_all(unregistered);
  ASSERT_TRUE(kept) << "a planted lock removed what it named: " << r.err;
  // Only once the checks above hold: "/" (never run this against a harness that trusts locks).
  WriteFile(k.dir / "h.db.bisect-10.lock", Json{{"repo", k.repo}, {"worktree", "/"}}.dump());
  auto root = k.Bisect(db.string());
  EXPECT_EQ(root.exit_code, 0) << root.err;
  EXPECT_NE(root.err.find("(worktree '/')"), std::string::npos) << root.err;
  EXPECT_TRUE(fs::exists("/tmp")) << "still here";
}

// A session whose lock cannot take its session's name (here a directory already holds
// h.db.bisect-1.lock) stops before any step: exit 3 naming the lock, no command run, what
// was there kept, and the session stored as an error at once, not left "running" for the
// next bisect to find. Once the name is free, the next bisect runs as usual.
TEST(BisectTrustE2E, ASessionThatCannotTakeItsLockStopsBeforeAnyStep) {
  TempDir marks;
  const fs::path ran = marks / "ran";
  Steps s(6, [&](int i) { return fmt::format("echo {} >> '{}'\nexit {}\n", i, ran.string(), i >= 4 ? 1 : 0); });
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  const fs::path taken = s.db + ".bisect-1.lock";
  WriteFile(taken / "canary", "keep");
  auto r = s.Bisect();
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find(taken.string() + ": cannot rename the bisect lock"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(ran)) << "a step ran: " << ReadFile(ran);
  EXPECT_EQ(ReadFile(taken / "canary"), "keep");
  const auto session = s.Session(1);
  EXPECT_EQ(session.status, "error");
  EXPECT_NE(session.result_json.find("cannot rename the bisect lock"), std::string::npos) << session.result_json;
  EXPECT_EQ(testing_util::WorktreeCount(s.dir / "repo"), 1u);
  fs::remove_all(taken);
  auto again = s.Bisect();
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(testing_util::StdoutJson(again)["culprit"], s.shas[3]) << again.out;
  EXPECT_EQ(again.err.find("marked interrupted"), std::string::npos) << "session 1 was left running: " << again.err;
  EXPECT_TRUE(fs::exists(ran));
}

// A database whose name leaves no room for a pending lock's name (238 characters: its own
// lock and session locks fit in NAME_MAX, "h...db.bisect-pending-PID-XXXXXX.lock" does not)
// stops before any session or step with the file system's reason, exit 3.
TEST(BisectTrustE2E, ALockThatCannotBeCreatedStopsBeforeAnySession) {
  TempDir marks;
  const fs::path ran = marks / "ran";
  Steps s(4, [&](int i) { return fmt::format("echo {} >> '{}'\nexit {}\n", i, ran.string(), i >= 3 ? 1 : 0); });
  s.db = (s.dir / ("h" + std::string(235, 'd') + ".db")).string();
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  auto r = s.Bisect();
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("cannot create the bisect lock: " + std::string(std::strerror(ENAMETOOLONG))), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(ran)) << "a step ran: " << ReadFile(ran);
  EXPECT_FALSE(s.Session(1).id) << "no session begun";
  EXPECT_EQ(testing_util::WorktreeCount(s.dir / "repo"), 1u);
}

// Without a command the store is the only evidence: two stored ends say that some commit of
// the range broke the case, not which. The answer is ambiguous over the whole range, with the
// commit a command would run next; nothing runs, no worktree is made, and the session stores
// the same verdict.
TEST(BisectTrustE2E, StoredEndsWithoutACommandAreAmbiguousOverTheRange) {
  Steps s(6, [](int i) { return fmt::format("exit {}\n", i >= 4 ? 1 : 0); });
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  auto r = RunHarness({"bisect", "--good", s.shas.front(), "--bad", s.shas.back(), "--case", "x/y_0", "--repo", s.repo,
                       "--db", s.db, "--format", "json"},
                      {.cwd = s.dir.path(), .timeout_s = 120});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = testing_util::StdoutJson(r);
  EXPECT_EQ(j["verdict"], "ambiguous") << r.out;
  EXPECT_TRUE(j["culprit"].is_null()) << r.out;
  EXPECT_EQ(j["runs"], 0) << r.out;
  EXPECT_EQ(j["range"], Json(std::vector<std::string>(s.shas.begin() + 1, s.shas.end()))) << r.out;
  const std::string reason = j["reason"].get<std::string>();
  const std::string lead = "the store has too little evidence and no command follows -- to run ";
  ASSERT_EQ(reason.rfind(lead, 0), 0u) << reason;
  const std::string next = reason.substr(lead.size());
  EXPECT_TRUE(std::any_of(s.shas.begin() + 1, s.shas.end() - 1,
                          [&](const std::string& sha) { return ShortSha(sha) == next; }))
      << "an interior commit of the range: " << reason;
  EXPECT_EQ(s.Session(j["session"].get<int64_t>()).status, "ambiguous");
  EXPECT_EQ(testing_util::WorktreeCount(s.dir / "repo"), 1u);
}

// {worktree} in a command, anywhere in an argument, needs --repo (there is no worktree
// without one), by hand and with --auto: exit 2 before anything runs or is written.
TEST(BisectTrustE2E, AWorktreeInTheCommandWithoutARepoIsAUsageError) {
  Steps s(4, [](int) { return "exit 0\n"; });
  ASSERT_NO_FATAL_FAILURE(s.StoreEnds());
  const auto before = fs::last_write_time(s.db);
  for (const std::string arg : {"{worktree}/test.sh", "--dir={worktree}"}) {
    SCOPED_TRACE(arg);
    auto by_hand = RunHarness({"bisect", "--good", s.shas.front(), "--bad", s.shas.back(), "--case", "x/y_0", "--db",
                               s.db, "--", "sh", arg});
    EXPECT_EQ(by_hand.exit_code, 2) << by_hand.err << by_hand.out;
    EXPECT_NE(by_hand.err.find("{worktree} in the command needs --repo"), std::string::npos) << by_hand.err;
    auto automatic = RunHarness({"bisect", "--auto", "--db", s.db, "--", "sh", arg});
    EXPECT_EQ(automatic.exit_code, 2) << automatic.err << automatic.out;
    EXPECT_NE(automatic.err.find("{worktree} in the command needs --repo"), std::string::npos) << automatic.err;
  }
  EXPECT_EQ(fs::last_write_time(s.db), before);
  EXPECT_FALSE(s.Session(1).id) << "no session begun";
}

// A lock copied with a database (another database's session 1) is not this database's
// session 1: the worktree it names is left alone. The database it came from still cleans up
// after its own killed bisect.
TEST(BisectTrustE2E, ALockCopiedFromAnotherDatabaseIsNotTrustedButARealLeftoverIsCleaned) {
  KilledBisect k;
  const fs::path a = k.dir / "a.db", b = k.dir / "b.db";
  auto first = k.Bisect(b.string());  // b.db's own session 1, finished
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_NO_FATAL_FAILURE(k.Kill(a.string()));
  fs::copy_file(k.dir / "a.db.bisect-1.lock", k.dir / "b.db.bisect-1.lock");
  auto copied = k.Bisect(b.string());
  EXPECT_EQ(copied.exit_code, 0) << copied.err;
  EXPECT_NE(copied.err.find("warning: bisect session 1: its lock is not trusted"), std::string::npos) << copied.err;
  EXPECT_NE(copied.err.find("the session is culprit, not running"), std::string::npos) << copied.err;
  EXPECT_EQ(testing_util::WorktreeCount(k.dir / "repo"), 2u) << "a.db's worktree is not b.db's to remove";
  // b.db's session 1 finished with a culprit: a lock left beside it does not reopen it.
  EXPECT_EQ(copied.err.find("marked interrupted"), std::string::npos) << copied.err;
  {
    auto store = Store::OpenReadOnly(b.string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto session = (*store)->bisect_reader().BisectSession(1);
    ASSERT_TRUE(session.ok()) << session.error().message;
    EXPECT_EQ(session->status, "culprit");
    EXPECT_EQ(session->result_json.find("interrupted"), std::string::npos) << session->result_json;
  }
  // The real leftover, by its own database: cleaned as before.
  auto own = k.Bisect(a.string());
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_NE(own.err.find("bisect session 1: removed its worktree"), std::string::npos) << own.err;
  EXPECT_NE(own.err.find("bisect session 1: killed the command it left running"), std::string::npos) << own.err;
  EXPECT_EQ(testing_util::WorktreeCount(k.dir / "repo"), 1u);
}

// A bisect killed between two steps leaves a lock whose slot names its worktree and no
// command (the last one ended, the next not begun): the worktree is removed, nothing is
// killed, and the session is marked interrupted. Here the lock of a bisect killed during its
// command is rewritten to that state (the window is too short to hit with a signal).
TEST(BisectTrustE2E, ALockLeftBetweenTwoStepsRemovesItsWorktreeAndKillsNothing) {
  KilledBisect k;
  const fs::path db = k.dir / "h.db";
  ASSERT_NO_FATAL_FAILURE(k.Kill(db.string()));
  const fs::path lock = k.dir / "h.db.bisect-1.lock";
  Json left = Json::parse(ReadFile(lock));
  ASSERT_TRUE(left["slots"].is_array() && left["slots"].size() == 1u) << left.dump();
  ASSERT_TRUE(left["slots"][0].contains("command")) << left.dump();
  left["slots"][0].erase("command");
  WriteFile(lock, left.dump());
  auto r = k.Bisect(db.string());
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.err.find("bisect session 1: removed its worktree"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("killed the command"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bisect session 1: its process is gone; marked interrupted"), std::string::npos) << r.err;
  EXPECT_EQ(testing_util::WorktreeCount(k.dir / "repo"), 1u);
  pid_t command = 0;
  std::ifstream(k.dir / "pid") >> command;
  EXPECT_EQ(kill(command, 0), 0) << "the command no lock named was left alone";
}

// --- One answer per nightly (bisect --auto) ---

// Two nightlies of sequence_parallel with the SP fault on from commit 4 of 6.
struct Nightlies {
  TempDir dir;
  std::vector<std::string> shas = testing_util::MakeGitRepo(dir / "repo", 6, [](int i) {
    return std::map<std::string, std::string>{
        {"stack.json", i >= 4 ? R"({"format_version": 1, "faults": ["sp-counts-bookkeeping-users"]})"
                              : R"({"format_version": 1})"},
        {"run.sh", "sleep \"$1\"\nshift\nexec \"$@\"\n"}};
  });
  std::string repo = (dir / "repo").string(), db = (dir / "h.db").string();
  Nightlies() {
    for (int i : {1, 6}) {
      auto show = RunProcess({"git", "-C", repo, "show", shas[i - 1] + ":stack.json"});
      WriteFile(dir / "end.json", show.ok() ? show->out : "");
      auto r = RunHarness({"run", "--db", db, "--commit", shas[i - 1], "--repo", repo, "--suite", "sequence_parallel",
                           "--stack-config", (dir / "end.json").string()});
      EXPECT_NE(r.exit_code, 2) << r.err;
    }
  }
  // bisect --auto whose command first sleeps `sleep` seconds.
  std::vector<std::string> Args(const std::string& sleep, std::vector<std::string> flags = {}) {
    return ArgsWith(
        {"sh", "{worktree}/run.sh", sleep, testing_util::kHarnessBinary, "run", "--db", "{db}", "--repo", "{worktree}",
         "--commit", "{sha}", "--suite", "sequence_parallel", "--stack-config", "{worktree}/stack.json"},
        std::move(flags));
  }
  // bisect --auto with this command.
  std::vector<std::string> ArgsWith(const std::vector<std::string>& command, std::vector<std::string> flags = {}) {
    std::vector<std::string> args = {"bisect", "--auto", "--db", db, "--repo", repo, "--format", "json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return args;
  }
  size_t Stored(const char* what) {
    auto store = Store::OpenReadOnly(db);
    if (!store.ok()) return 0;
    if (std::string(what) == "sessions") {
      auto ids = (*store)->bisect_reader().BisectSessionIds();
      return ids.ok() ? ids->size() : 0;
    }
    auto rows = (*store)->bisect_reader().Regressions();
    return rows.ok() ? rows->size() : 0;
  }
};

// bisect --auto: a confirming rerun that aborts (exit 200) is an error naming the commit and
// its stderr, not a rerun that stored nothing (which would report the regression unconfirmed).
TEST(BisectTrustE2E, AConfirmingRerunThatAbortsIsAnErrorNamingIt) {
  Nightlies n;
  auto r = RunHarness(n.ArgsWith({"sh", "-c", "echo 'no GPU on this node' >&2; exit 200"}), {.timeout_s = 300});
  EXPECT_EQ(r.exit_code, 3) << r.err << r.out;
  EXPECT_NE(r.err.find("the command exited 200 confirming at " + ShortSha(n.shas[5]) + ": no answer"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no GPU on this node"), std::string::npos) << r.err;
}

// A second bisect --auto of the same nightly reports the stored answer and runs nothing; the
// report counts each regression once; --again answers anew and replaces it.
// bisect --auto of the nightlies, answered anew, in `answer`: it has one regression.
void AnswerAnew(Nightlies& n, Json& answer) {
  auto first = RunHarness(n.Args("0"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  answer = testing_util::StdoutJson(first);
  ASSERT_EQ(answer["regressions"].size(), 1u) << first.out;
}

TEST(BisectTrustE2E, AutoAnswersANightlyOnce) {
  Nightlies n;
  Json a;
  ASSERT_NO_FATAL_FAILURE(AnswerAnew(n, a));
  EXPECT_EQ(a["regressions"][0]["culprit"], n.shas[3]) << a;
  EXPECT_EQ(a["stored"], false);
  const size_t sessions = n.Stored("sessions"), regressions = n.Stored("regressions");
  ASSERT_EQ(regressions, 1u);

  auto second = RunHarness(n.Args("0"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const Json b = testing_util::StdoutJson(second);
  EXPECT_EQ(b["stored"], true) << second.out;
  ASSERT_EQ(b["regressions"].size(), 1u) << second.out;
  EXPECT_EQ(b["regressions"][0]["culprit"], n.shas[3]) << second.out;
  EXPECT_EQ(b["regressions"][0]["regression"], a["regressions"][0]["regression"]) << second.out;
  EXPECT_EQ(b["regressions"][0]["session"], a["regressions"][0]["session"]) << second.out;
  // The stored answer is the answer: every field of the regression as first reported (its
  // target's kind, metric and cases with their values among them).
  for (const auto& [key, value] : a["regressions"][0].items())
    EXPECT_EQ(b["regressions"][0][key], value) << key << ": " << second.out;
  EXPECT_EQ(n.Stored("sessions"), sessions) << "nothing ran";
  EXPECT_EQ(n.Stored("regressions"), 1u) << "stored once";
  auto text = RunHarness({"report", "--db", n.db, "--format", "text"});
  EXPECT_NE(text.out.find("1 regressions found by bisect --auto, 1 with a culprit"), std::string::npos) << text.out;

  auto again = RunHarness(n.Args("0", {"--again"}));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const Json c = testing_util::StdoutJson(again);
  EXPECT_EQ(c["stored"], false);
  ASSERT_EQ(c["regressions"].size(), 1u) << again.out;
  EXPECT_EQ(c["regressions"][0]["culprit"], n.shas[3]);
  EXPECT_NE(c["regressions"][0]["session"], a["regressions"][0]["session"]) << "bisected anew";
  EXPECT_EQ(n.Stored("regressions"), 1u) << "replaced, not added";
  auto report = RunHarness({"report", "--db", n.db, "--format", "json"});
  EXPECT_EQ(testing_util::StdoutJson(report)["regressions_with_culprit"], 1) << report.out;
}

// An answer stored as ambiguous (the budget ran out: one confirming rerun and one step) is
// reported from the store with the range it was left between, as first reported.
TEST(BisectTrustE2E, AutoAnswersAnAmbiguousNightlyOnceWithItsRange) {
  Nightlies n;
  auto first = RunHarness(n.Args("0", {"--max-runs", "2"}));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const Json a = testing_util::StdoutJson(first);
  ASSERT_EQ(a["regressions"].size(), 1u) << first.out;
  ASSERT_EQ(a["regressions"][0]["verdict"], "ambiguous") << first.out;
  ASSERT_GE(a["regressions"][0]["range"].size(), 2u) << first.out;
  auto second = RunHarness(n.Args("0", {"--max-runs", "2"}));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const Json b = testing_util::StdoutJson(second);
  EXPECT_EQ(b["stored"], true) << second.out;
  ASSERT_EQ(b["regressions"].size(), 1u) << second.out;
  for (const auto& [key, value] : a["regressions"][0].items())
    EXPECT_EQ(b["regressions"][0][key], value) << key << ": " << second.out;
}

// A stored regression whose cases the nightly pair no longer shows regressed (here a row
// edited by hand to a case that does not exist, in hostile text) is still the stored answer,
// with its kind, and the output says that its metric and values are not shown. Before, it
// was shown without them and without a word.
TEST(BisectTrustE2E, AStoredRegressionNoLongerFoundIsShownAsStoredAndSaysSo) {
  Nightlies n;
  Json a;
  ASSERT_NO_FATAL_FAILURE(AnswerAnew(n, a));
  const std::string hostile = "sequence_parallel/<b>\"&'\x1b[31m_0";
  std::string quoted;
  for (char c : Json::array({hostile}).dump()) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  testing_util::ExecSql(n.db, "UPDATE regressions SET cases_json = '" + quoted + "'");

  auto second = RunHarness(n.Args("0"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const Json b = testing_util::StdoutJson(second);
  EXPECT_EQ(b["stored"], true) << second.out;
  ASSERT_EQ(b["regressions"].size(), 1u) << second.out;
  EXPECT_EQ(b["regressions"][0]["culprit"], a["regressions"][0]["culprit"]) << second.out;
  EXPECT_EQ(b["regressions"][0]["kind"], a["regressions"][0]["kind"]) << second.out;
  EXPECT_EQ(b["regressions"][0]["cases"], Json::array({{{"case", hostile}, {"kind", a["regressions"][0]["kind"]}}}))
      << second.out;
  EXPECT_NE(second.err.find(fmt::format("regression {} (sequence_parallel): its cases are no longer found regressed",
                                        a["regressions"][0]["regression"].get<int64_t>())),
            std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("without its metric and per-case values"), std::string::npos) << second.err;
  EXPECT_EQ(second.err.find('\x1b'), std::string::npos) << "no raw escape reaches the terminal";
}

// A six-commit stack history whose fault lands at commit 4, its ends stored, and bisects
// of it whose database fails from the Nth read or lock on (the preload library
// harness/testing/io_fault_preload.cc; the steps the bisect starts run unfaulted, so the
// fault is the bisect's own).
struct FaultedStoreHistory {
  TempDir dir;
  std::vector<std::string> shas;
  std::string repo = (dir / "repo").string();
  fs::path preload = fs::path(testing_util::kHarnessBinary).parent_path() / "libharness_io_fault.so";

  struct Faulted {
    ProcessResult result;
    int64_t allowed = 0, refused = 0;   // the database's reads and locks that succeeded, and failed
  };

  void StoreEnds() {
    shas = testing_util::MakeGitRepo(dir / "repo", 6, [](int i) {
      return std::map<std::string, std::string>{
          {"stack.json", i >= 4 ? R"({"format_version": 1, "faults": ["sp-counts-bookkeeping-users"]})"
                                : R"({"format_version": 1})"}};
    });
    for (int i : {1, 6}) {
      auto show = RunProcess({"git", "-C", repo, "show", shas[i - 1] + ":stack.json"});
      ASSERT_TRUE(show.ok());
      WriteFile(dir / "end.json", show->out);
      auto nightly = RunHarness({"run", "--db", (dir / "ends.db").string(), "--commit", shas[i - 1], "--repo", repo,
                                 "--suite", "sequence_parallel", "--filter", "sequence_parallel/*_0", "--stack-config",
                                 (dir / "end.json").string()});
      ASSERT_EQ(nightly.exit_code, i == 1 ? 0 : 1) << nightly.err;
    }
    ASSERT_TRUE(fs::exists(preload)) << preload;
  }

  fs::path Db(int64_t budget) const { return dir / fmt::format("h{}.db", budget); }

  // `harness args...` with the database db failing from the `budget`-th read or lock on.
  Faulted RunFaulted(const std::vector<std::string>& args, const fs::path& db, int64_t budget) const {
    const fs::path report = dir / fmt::format("io{}.txt", budget);
    // The preload library comes before the sanitizer's runtime in the asan build.
    const char* asan = std::getenv("ASAN_OPTIONS");
    const std::string asan_options = std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "verify_asan_link_order=0";
    Faulted f;
    f.result = RunHarness(args, {.env = {{"LD_PRELOAD", preload.string()},
                                         {"HARNESS_IO_FAULT_FILE", db.string()},
                                         {"HARNESS_IO_FAULT_AFTER", std::to_string(budget)},
                                         {"HARNESS_IO_FAULT_REPORT", report.string()},
                                         {"ASAN_OPTIONS", asan_options}},
                                 .timeout_s = 300});
    std::istringstream io(ReadFile(report));
    std::string allowed, refused;
    io >> allowed >> f.allowed >> refused >> f.refused;
    EXPECT_TRUE(allowed == "allowed" && refused == "refused") << "the preload library did not run: " << f.result.err;
    return f;
  }

  // A bisect of the history on a copy of the ends, its database failing after `budget`.
  Faulted Bisect(int64_t budget) {
    fs::copy_file(dir / "ends.db", Db(budget));
    return RunFaulted({"bisect", "--good", shas[0], "--bad", shas[5], "--case",
                       "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_0", "--repo", repo, "--db",
                       Db(budget).string(), "--format", "json", "--", testing_util::kHarnessBinary, "run", "--db",
                       "{db}", "--commit", "{sha}", "--repo", "{worktree}", "--suite", "sequence_parallel",
                       "--filter", "sequence_parallel/*_0", "--stack-config", "{worktree}/stack.json"},
                      Db(budget), budget);
  }

  // Whether err is an error naming the database db, from the code that read it.
  static bool NamesTheDatabase(const std::string& err, const fs::path& db) {
    const std::string named = db.string() + ": ";
    for (const char* prefix :
         {"harness: error: ", "harness: error: database ", "harness: error: bisect session 1: database "})
      if (err.find(prefix + named) != std::string::npos) return true;
    return false;
  }

  // What a bisect whose database failed may answer: the true culprit, stored as the
  // session's (a refusal it got past: SQLite's checkpoint as the store closes), or exit 3
  // naming the database, from the code that read it (not from code that read on past the
  // error and threw), with no culprit on stdout.
  void ExpectErrorOrTheTrueCulprit(int64_t budget, const ProcessResult& r) {
    if (r.exit_code == 0) {
      EXPECT_EQ(testing_util::StdoutJson(r)["culprit"], shas[3]) << "fault after " << budget << ": " << r.out;
      auto stored = Store::OpenReadOnly(Db(budget));
      ASSERT_TRUE(stored.ok()) << stored.error().message;
      auto session = (*stored)->bisect_reader().BisectSession(1);
      ASSERT_TRUE(session.ok()) << session.error().message;
      EXPECT_EQ(session->status, "culprit") << budget;
      EXPECT_EQ(session->culprit, shas[3]) << budget;
      return;
    }
    EXPECT_EQ(r.exit_code, 3) << "fault after " << budget << ": " << r.err << r.out;
    EXPECT_TRUE(NamesTheDatabase(r.err, Db(budget))) << "fault after " << budget << ": " << r.err;
    EXPECT_EQ(r.out.find(shas[3]), std::string::npos) << "an error, and a culprit on stdout: " << r.out;
  }
};

// The bisect's store failing at any point (a read or a lock of its database refused from
// the Nth on): every outcome is an error that says so (exit 3) or the true culprit, never
// another commit, "no culprit", a usage error or a crash.
TEST(BisectTrustE2E, AStoreThatFailsAtAnyPointIsAnErrorOrTheTrueCulpritNeverAnother) {
  FaultedStoreHistory h;
  ASSERT_NO_FATAL_FAILURE(h.StoreEnds());
  const FaultedStoreHistory::Faulted whole = h.Bisect(int64_t{1} << 40);
  ASSERT_EQ(whole.result.exit_code, 0) << whole.result.err;
  ASSERT_EQ(testing_util::StdoutJson(whole.result)["culprit"], h.shas[3]) << whole.result.out;
  ASSERT_EQ(whole.refused, 0);
  ASSERT_GE(whole.allowed, 60) << "the bisect made so few reads and locks that the sweep proves little";
  // Points spread over every operation the bisect makes (the first among them), and every
  // operation of a window in the middle a sixth of the whole long: a step's cycle (read its
  // results and evidence, the run that made them, its samples, store the step) repeats
  // each step, so one whole cycle reaches each of its reads.
  std::set<int64_t> budgets;
  for (int64_t b = 0; b < whole.allowed; b += std::max<int64_t>(1, whole.allowed / 12)) budgets.insert(b);
  for (int64_t b = whole.allowed / 2; b < whole.allowed / 2 + whole.allowed / 6; ++b) budgets.insert(b);
  for (const int64_t budget : budgets) {
    const FaultedStoreHistory::Faulted f = h.Bisect(budget);
    EXPECT_GT(f.refused, 0) << budget;
    h.ExpectErrorOrTheTrueCulprit(budget, f.result);
  }
}

// A metric target with nothing stored at the ends runs the ends first, before the search has
// any step of its own: the reads that start each of those runs were reached by no sweep, and
// an error of theirs could be dropped unseen. Here the command stores nothing, so the clean
// answer is that the known-good end could not be tested; a fault at any read or lock is an
// error naming the database or that same answer, never a crash or another answer.
TEST(BisectTrustE2E, AStoreThatFailsWhileTheEndsAreFirstRunIsAnError) {
  FaultedStoreHistory h;
  h.shas = testing_util::MakeGitRepo(h.dir / "repo", 6, [](int) {
    return std::map<std::string, std::string>{{"stack.json", R"({"format_version": 1})"}};
  });
  auto bisect = [&](int64_t budget) {
    return h.RunFaulted({"bisect", "--good", h.shas[0], "--bad", h.shas[5], "--metric", "gsm8k", "--repo", h.repo,
                         "--db", h.Db(budget).string(), "--format", "json", "--", "sh", "-c",
                         "echo 'stored nothing' >&2; exit 0"},
                        h.Db(budget), budget);
  };
  const FaultedStoreHistory::Faulted whole = bisect(int64_t{1} << 40);
  const std::string untested = "could not test the known-good end " + ShortSha(h.shas[0]);
  ASSERT_EQ(whole.result.exit_code, 3) << whole.result.err;
  ASSERT_NE(whole.result.err.find(untested), std::string::npos) << whole.result.err;
  ASSERT_EQ(whole.refused, 0);
  ASSERT_GE(whole.allowed, 10) << "so few reads and locks that the sweep proves little";
  for (int64_t budget = 0; budget < whole.allowed; ++budget) {
    const FaultedStoreHistory::Faulted f = bisect(budget);
    EXPECT_GT(f.refused, 0) << budget;
    EXPECT_EQ(f.result.exit_code, 3) << "fault after " << budget << ": " << f.result.err;
    EXPECT_TRUE(FaultedStoreHistory::NamesTheDatabase(f.result.err, h.Db(budget)) ||
                f.result.err.find(untested) != std::string::npos)
        << "fault after " << budget << ": " << f.result.err;
    EXPECT_TRUE(f.result.out.empty()) << f.result.out;
  }
}

// Two bisect --auto of one nightly at once: the second is exit 3 naming the process that
// holds the nightly, and runs nothing; the first answers.
TEST(BisectTrustE2E, ConcurrentAutoBisectsOfANightlyExcludeEachOther) {
  Nightlies n;
  // The first: its confirming rerun takes 3 s, and the budget ends there (--max-runs 1).
  const pid_t first = SpawnHarness(n.Args("3", {"--max-runs", "1"}), n.dir / "first.out", n.dir / "first.out.err");
  const fs::path lock = n.db + ".auto-bisect-2.lock";
  ASSERT_TRUE(WaitForFile(lock)) << ReadFile(n.dir / "first.out.err");
  auto second = RunHarness(n.Args("0"));
  EXPECT_EQ(second.exit_code, 3) << second.err << second.out;
  EXPECT_NE(second.err.find("already running in process " + std::to_string(first)), std::string::npos) << second.err;
  EXPECT_EQ(WaitForExit(first, std::chrono::seconds(60)), 0)
      << "exit 0 within 60 s: " << ReadFile(n.dir / "first.out.err");
  EXPECT_EQ(n.Stored("regressions"), 1u);
  EXPECT_FALSE(fs::exists(lock)) << "released";
}

}  // namespace
}  // namespace harness
