// Output flags (`run --junit`, `report --out`) aimed at the process's own stdout, through the
// real binary with its stdout a log file opened O_APPEND, as `harness ... >> ci.log` leaves
// it (set up here without a shell): the output goes after what the log held, never
// replacing the file, and what the command prints afterwards follows it in the same file.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness {
// Named, not anonymous: the unity build puts this file beside other tests of scale_tests.
namespace output_stdout_e2e {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

// Runs the binary with stdout the file `log` opened for appending (stderr to `err`, also
// appended); returns its exit code, -1 when it did not exit.
int RunAppendingTo(const std::vector<std::string>& args, const fs::path& log, const fs::path& err) {
  std::vector<std::string> argv_strings = {testing_util::kHarnessBinary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int out_fd = open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  const int err_fd = open(err.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("HARNESS_ROOT", testing_util::kSourceRoot, 1);
    if (dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out_fd);
  close(err_fd);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

struct StdoutFixture {
  TempDir dir;
  fs::path db = dir / "h.db";
  fs::path log = dir / "ci.log";
  fs::path err = dir / "err.log";
  std::string earlier = "earlier line of the CI log: <keep me> \"and me\" \xE2\x9C\x93\n";

  StdoutFixture() {
    WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "note": "<b>&amp;</b>"},
                                                              {"outcome": "fail", "note": "second"})"));
    WriteFile(log, earlier);
  }
  std::vector<std::string> Run(const std::string& junit) const {
    return {"run", "--suites-dir", (dir / "suites").string(), "--db", db.string(), "--commit", "abc1230",
            "--repo", dir.path().string(), "--junit", junit};
  }
};

// Every spelling of the process's own stdout: the device names and the log's own path.
TEST(OutputStdoutE2E, RunJunitToStdoutAppendsToTheRedirectedLog) {
  for (const std::string& name : {std::string("/dev/stdout"), std::string("/proc/self/fd/1"), std::string("log")}) {
    StdoutFixture f;
    const std::string junit = name == "log" ? f.log.string() : name;
    const auto before = fs::status(f.log);
    ASSERT_EQ(RunAppendingTo(f.Run(junit), f.log, f.err), 1) << name << ": " << ReadFile(f.err);
    const std::string log = ReadFile(f.log);
    EXPECT_EQ(log.rfind(f.earlier, 0), 0u) << name << ": the earlier log is gone:\n" << log;
    const auto xml = log.find("<testsuites");
    const auto case_xml = log.find("name=\"test_outcome_1\"");
    // run's own summary, printed after the JUnit file is written
    const auto summary = log.rfind("selftest/test_outcome_1");
    ASSERT_NE(xml, std::string::npos) << name << ": no JUnit in the log:\n" << log;
    ASSERT_NE(case_xml, std::string::npos) << log;
    EXPECT_GT(summary, log.find("</testsuites>")) << name << ": the summary is not after the JUnit:\n" << log;
    EXPECT_EQ(log.find("<testsuites", xml + 1), std::string::npos) << "the JUnit is in the log twice";
    EXPECT_EQ(fs::status(f.log).permissions(), before.permissions());
    EXPECT_TRUE(fs::is_regular_file(f.log));
    // No temporary file was left beside the log.
    int entries = 0;
    for (const auto& e : fs::directory_iterator(f.dir.path()))
      entries += e.path().filename().string().rfind(".ci.log.tmp-", 0) == 0;
    EXPECT_EQ(entries, 0) << name;
  }
}

// report --out at the log it is appended to, in two formats, one after the other: both
// reports and the earlier line are in the log, in order.
TEST(OutputStdoutE2E, ReportOutToTheLogItsStdoutAppendsTo) {
  StdoutFixture f;
  ASSERT_EQ(RunHarness(f.Run((f.dir / "junit.xml").string())).exit_code, 1);
  ASSERT_EQ(RunAppendingTo({"report", "--db", f.db.string(), "--format", "text", "--out", f.log.string()}, f.log,
                           f.err),
            0)
      << ReadFile(f.err);
  const std::string after_text = ReadFile(f.log);
  ASSERT_EQ(RunAppendingTo({"report", "--db", f.db.string(), "--format", "html", "--out", "/dev/stdout"}, f.log, f.err),
            0)
      << ReadFile(f.err);
  const std::string log = ReadFile(f.log);
  EXPECT_EQ(log.rfind(f.earlier, 0), 0u) << "the earlier log is gone:\n" << log.substr(0, 2000);
  EXPECT_GT(after_text.size(), f.earlier.size()) << "the text report is not in the log";
  EXPECT_EQ(log.rfind(after_text, 0), 0u) << "the html report replaced the text one";
  EXPECT_NE(log.find("<html", after_text.size()), std::string::npos) << "the html report is not after the text one";
  // A file that is not stdout is still replaced whole, atomically.
  const fs::path other = f.dir / "other.html";
  WriteFile(other, "old content that must go");
  ASSERT_EQ(RunAppendingTo({"report", "--db", f.db.string(), "--out", other.string()}, f.log, f.err), 0);
  EXPECT_EQ(ReadFile(other).find("old content"), std::string::npos);
}

}  // namespace output_stdout_e2e
}  // namespace harness
