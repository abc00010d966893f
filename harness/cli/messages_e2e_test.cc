// Error messages quote user data cut and sanitized and name the actual cause, through the
// real binary: a 60 MB key and a 30 MB number in a stack config, a NUL and ESC sequences
// in a config's value and in an argument, a launch cwd that does not exist.
#include <gtest/gtest.h>

#include <string>

#include "harness/testing/test_util.h"

// A namespace of its own: the unity build puts this file beside launch_e2e_test.cc.
namespace harness::messages_e2e {
namespace {

namespace fs = std::filesystem;
using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

// A message fit for a terminal: short, no raw ESC, NUL or other C0 control but newline.
void ExpectSafe(const std::string& err, const std::string& what) {
  EXPECT_LT(err.size(), 10000u) << what << ": " << err.substr(0, 2000);
  for (unsigned char c : err)
    if (c < 0x20 && c != '\n' && c != '\t') {
      ADD_FAILURE() << what << ": control byte " << static_cast<int>(c) << " in " << err.substr(0, 2000);
      break;
    }
}

ProcessResult RunWithConfig(const TempDir& dir, const std::string& config) {
  WriteFile(dir / "stack.json", config);
  return RunHarness({"run", "--db", (dir / "h.db").string(), "--commit", "abc1234", "--stack-config",
                     (dir / "stack.json").string(), "--suite", "gmm"});
}

TEST(MessagesE2E, AHugeKeyOrNumberInAConfigIsQuotedCut) {
  TempDir dir;
  const std::string key(60 << 20, 'k');
  auto r = RunWithConfig(dir, R"({"format_version": 1, ")" + key + R"(": 1})");
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 2000);
  ExpectSafe(r.err, "60 MB key");
  EXPECT_NE(r.err.find("(62914560 bytes)"), std::string::npos) << r.err.substr(0, 2000);

  const std::string number(30 << 20, '7');
  r = RunWithConfig(dir, R"({"format_version": 1, "batch": )" + number + "}");
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 2000);
  ExpectSafe(r.err, "30 MB number");
  EXPECT_NE(r.err.find("bytes)"), std::string::npos) << r.err.substr(0, 2000);
}

TEST(MessagesE2E, NulAndEscapeSequencesAreShownEscapedAndDoNotCutTheMessage) {
  TempDir dir;
  auto r = RunWithConfig(dir, R"({"format_version": 1, "stack": "ref\u0000\u001b[2J\u001b]0;pwned\u0007stack"})");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectSafe(r.err, "NUL and ESC in a value");
  EXPECT_NE(r.err.find("ref\\x00\\x1b[2J\\x1b]0;pwned\\x07stack"), std::string::npos) << r.err;

  auto arg = RunHarness({"frobnicate\x1b[31m", "x"});
  EXPECT_EQ(arg.exit_code, 2);
  ExpectSafe(arg.err, "ESC in the command's name");
  EXPECT_NE(arg.err.find("frobnicate\\x1b[31m"), std::string::npos) << arg.err;
}

TEST(MessagesE2E, AMissingLaunchCwdIsNamedAsSuch) {
  TempDir dir;
  const std::string missing = (dir / "no-such-folder").string();
  auto r = RunWithConfig(dir, R"({"format_version": 1, "stack": "openai", "openai": {"model": "m", "launch": {
      "command": ["python3", "-m", "http.server", "{port}"], "cwd": ")" + missing + R"("}}})");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("launch cwd '" + missing + "' does not exist"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("No such file or directory"), std::string::npos) << r.err;
  ExpectSafe(r.err, "missing cwd");

  // An exec stack's missing cwd: its cause, not the program's.
  auto e = RunWithConfig(dir, R"({"format_version": 1, "stack": "exec", "exec": {"command": ["true"], "cwd": ")" +
                                  missing + R"("}})");
  EXPECT_EQ(e.exit_code, 3) << e.err;
  EXPECT_NE((e.out + e.err).find("working directory '" + missing + "' does not exist"), std::string::npos)
      << e.out << e.err;
}

}  // namespace
}  // namespace harness::messages_e2e
