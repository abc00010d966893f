// Long work says what it is doing, through the real binary: bisect's and merge's progress on
// stderr, one line per event in a pipe (no escape sequence), one rewritten line with colour
// on a terminal (a pty), no colour there with NO_COLOR; stdout stays the answer.
#include <gtest/gtest.h>

#include <pty.h>

#include <sstream>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::TempDir;

using testing_util::LinesWith;

// Runs the binary on a new pseudo-terminal (stdout and stderr both); returns what it wrote.
std::string RunOnTerminal(const std::vector<std::string>& args, bool no_colour) {
  std::vector<std::string> argv_strings = {testing_util::kHarnessBinary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  winsize size{.ws_row = 24, .ws_col = 400, .ws_xpixel = 0, .ws_ypixel = 0};
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  if (pid == 0) {
    setenv("HARNESS_ROOT", testing_util::kSourceRoot, 1);
    if (no_colour) setenv("NO_COLOR", "1", 1);
    else unsetenv("NO_COLOR");
    execv(argv[0], argv.data());
    _exit(127);
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(master, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  return out;
}

// 16 commits; from commit 10 on plain.sh exits 1: the step verdicts are good and bad.
struct ProgressE2E : ::testing::Test {
  TempDir dir;
  std::vector<std::string> shas = testing_util::MakeGitRepo(dir / "repo", 16, [](int i) {
    return std::map<std::string, std::string>{{"plain.sh", i >= 10 ? "exit 1\n" : "exit 0\n"}};
  });
  std::vector<std::string> Bisect(const std::string& db_name, const std::string& format) {
    return {"bisect", "--good", shas[0], "--bad", shas[15], "--case", "x/y_0", "--repo", (dir / "repo").string(),
            "--db", (dir / db_name).string(), "--format", format, "--", "sh", "{worktree}/plain.sh"};
  }
};

TEST_F(ProgressE2E, APipeGetsOneLinePerEventWithItsFieldsAndNoEscape) {
  auto r = RunHarness(Bisect("h.db", "json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = testing_util::StdoutJson(r);
  ASSERT_EQ(j["culprit"], shas[9]) << "stdout is the answer alone: " << r.out;
  const auto starts = LinesWith(r.err, ": running the command at ");
  const auto lines = LinesWith(r.err, "bisect step ");
  EXPECT_EQ(starts.size(), j["runs"].get<std::size_t>()) << r.err;
  ASSERT_EQ(lines.size(), 2 * starts.size()) << "a start and an end per command: " << r.err;
  for (const auto& line : lines) {
    EXPECT_NE(line.find(" | leading: "), std::string::npos) << line;
    EXPECT_NE(line.find(" runs, "), std::string::npos) << line;
    EXPECT_NE(line.find(" questions | "), std::string::npos) << line;
    EXPECT_NE(line.find(" elapsed"), std::string::npos) << line;
  }
  // The commit of each start is named (its short sha, and its subject where the session
  // knows it: the known-good end's); the culprit's step says bad with the command's exit
  // code; once one command ended, what is left is estimated.
  EXPECT_NE(r.err.find(": running the command at " + shas[0].substr(0, 12) + " \"commit 1\""), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(shas[9].substr(0, 12) + " is bad (exit 1)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(shas[0].substr(0, 12) + " is good (exit 0)"), std::string::npos) << r.err;
  EXPECT_NE(lines.back().find(" left"), std::string::npos) << lines.back();
  EXPECT_EQ(LinesWith(r.err, "left unknown").size(), 1u) << "only before the first command ended: " << r.err;
  EXPECT_EQ(lines.back().find("left unknown"), std::string::npos);
  EXPECT_NE(lines.back().find("first bad " + shas[9].substr(0, 12)), std::string::npos) << lines.back();
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "an escape sequence in a pipe";
}

// A step's exit is said in the words its evidence uses (step_exit.h): a command that cannot
// test a commit (exit 125) is named as such, not as a bare number.
TEST(StepExitProgressE2E, AnExitWithAMeaningIsSaidInItsWords) {
  TempDir dir;
  const auto shas = testing_util::MakeGitRepo(dir / "repo", 16, [](int i) {
    const char* exit = i >= 11 ? "exit 1\n" : i >= 3 ? "exit 125\n" : "exit 0\n";  // i counts from 1
    return std::map<std::string, std::string>{{"plain.sh", exit}};
  });
  auto r = RunHarness({"bisect", "--good", shas[0], "--bad", shas[15], "--case", "x/y_0", "--repo",
                       (dir / "repo").string(), "--db", (dir / "h.db").string(), "--", "sh", "{worktree}/plain.sh"});
  ASSERT_NE(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(" is skip (exit 125 (the command cannot test this commit))"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" is bad (exit 1) "), std::string::npos) << r.err;
}

TEST_F(ProgressE2E, ATerminalGetsOneRewrittenLineInColourUnlessNoColor) {
  const std::string colour = RunOnTerminal(Bisect("a.db", "text"), false);
  EXPECT_NE(colour.find("\r\x1b[2Kbisect step "), std::string::npos) << colour;
  EXPECT_NE(colour.find("\x1b[31mbad\x1b[0m"), std::string::npos) << colour;
  EXPECT_NE(colour.find("\x1b[32mgood\x1b[0m"), std::string::npos) << colour;
  // Events rewrite one line: no line break between them, one before the answer.
  const auto first = colour.find("bisect step ");
  const auto answer = colour.find("culprit");
  ASSERT_NE(answer, std::string::npos) << colour;
  EXPECT_EQ(colour.substr(first, colour.rfind("bisect step ") - first).find('\n'), std::string::npos) << colour;

  const std::string plain = RunOnTerminal(Bisect("b.db", "text"), true);
  EXPECT_NE(plain.find("\r\x1b[2Kbisect step "), std::string::npos) << plain;
  EXPECT_EQ(plain.find("\x1b[3"), std::string::npos) << "NO_COLOR: no colour " << plain;
  EXPECT_NE(plain.find(" is bad"), std::string::npos) << plain;
}

TEST(MergeProgressE2E, EachInputIsALineOnStderrAndTheCountsStayOnStdout) {
  TempDir dir;
  testing_util::WriteFile(dir / "suites/selftest.json", testing_util::SelftestTable(R"({"outcome": "pass"})"));
  std::vector<std::string> inputs;
  for (const char* sha : {"aaaa0001", "aaaa0002"}) {
    inputs.push_back((dir / (std::string(sha) + ".db")).string());
    ASSERT_EQ(RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", inputs.back(), "--repo",
                          dir.path().string(), "--commit", sha})
                  .exit_code,
              0);
  }
  auto r = RunHarness({"merge", (dir / "out.db").string(), inputs[0], inputs[1]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(LinesWith(r.err, "merge 1/2: merging " + inputs[0]).size(), 1u) << r.err;
  EXPECT_EQ(LinesWith(r.err, "merge 2/2: " + inputs[1] + ": 1 runs added | ").size(), 1u) << r.err;
  EXPECT_EQ(LinesWith(r.out, "merge ").size(), 0u) << "progress stays off stdout: " << r.out;
  EXPECT_NE(r.out.find("merged 2 databases"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace harness
