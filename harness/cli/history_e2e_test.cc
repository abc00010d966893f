// `harness history` as a person reads it, through the real binary: the value column holds
// the suite's headline metric when no --metric is given, and the columns stay aligned when a
// commit was run many times and a subject is hostile.
#include <gtest/gtest.h>

#include <sstream>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

// The selftest table declaring "value" its headline metric.
std::string HeadlineTable(const std::string& rows) {
  std::string t = testing_util::SelftestTable(rows);
  const std::string at = R"("nightly": true,)";
  return t.replace(t.find(at), at.size(), at + R"( "headline_metric": {"name": "value"},)");
}

// A git repository of two commits; the second one's subject is hostile: an escape sequence,
// code points of several bytes, and length.
std::vector<std::string> HostileRepo(const std::filesystem::path& dir, const std::string& subject) {
  auto shas = testing_util::MakeGitRepo(dir, 1);
  ProcessOptions o{.cwd = dir, .env = {{"GIT_AUTHOR_NAME", "t"}, {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
                                       {"GIT_COMMITTER_NAME", "t"}, {"GIT_COMMITTER_EMAIL", "t@example.invalid"}}};
  EXPECT_TRUE(RunProcess({"git", "commit", "-q", "--allow-empty", "-m", subject}, o).ok());
  auto head = RunProcess({"git", "rev-parse", "HEAD"}, o);
  shas.push_back(head.ok() ? head->out.substr(0, 40) : "");
  return shas;
}

// Where each line's SUBJECT column starts, in code points.
std::vector<std::size_t> SubjectColumns(const std::string& text, const std::vector<std::string>& subjects) {
  std::vector<std::size_t> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    for (const auto& s : subjects)
      if (auto at = line.find(s); at != std::string::npos) {
        std::size_t columns = 0;
        for (std::size_t i = 0; i < at; ++i) columns += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
        out.push_back(columns);
        break;
      }
  return out;
}

struct HistoryE2E : ::testing::Test {
  TempDir dir;
  std::string db = (dir / "h.db").string();
  std::string suites = (dir / "suites").string();
  void Run(const std::string& sha, int times) {
    for (int i = 0; i < times; ++i) {
      auto r = RunHarness({"run", "--suites-dir", suites, "--db", db, "--repo", (dir / "repo").string(), "--commit", sha});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
};

TEST_F(HistoryE2E, WithoutMetricTheHeadlineMetricFillsTheValueColumn) {
  WriteFile(dir / "suites/selftest.json", HeadlineTable(R"({"outcome": "pass", "metric": 0.75, "samples": 4})"));
  auto shas = testing_util::MakeGitRepo(dir / "repo", 2);
  Run(shas[0], 1);
  Run(shas[1], 2);
  auto r = RunHarness({"history", "--db", db, "--case", "selftest/test_outcome_0", "--suites-dir", suites});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("STATUS     value"), std::string::npos) << "the header names the metric: " << r.out;
  EXPECT_NE(r.out.find("PASS       0.75       commit 1"), std::string::npos) << "one run: its value: " << r.out;
  EXPECT_NE(r.out.find("PASS,PASS  mean 0.75"), std::string::npos) << r.out;
  auto j = testing_util::StdoutJson(
      RunHarness({"history", "--db", db, "--case", "selftest/test_outcome_0", "--suites-dir", suites, "--format", "json"}));
  EXPECT_EQ(j["metric"], "value");
  EXPECT_EQ(j["commits"][1]["cases"][0]["mean"], 0.75);
  // A table that declares no headline metric (the shipped selftest table): statuses only.
  auto plain = RunHarness({"history", "--db", db, "--case", "selftest/test_outcome_0"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("0.75"), std::string::npos) << plain.out;
}

TEST_F(HistoryE2E, ManyRunsAndAHostileSubjectKeepTheColumnsAligned) {
  WriteFile(dir / "suites/selftest.json", HeadlineTable(R"({"outcome": "pass", "metric": 0.123456789, "samples": 4})"));
  const std::string hostile = "\x1b[31mred \xc3\xbc" "n\xc3\xaf" "c\xc3\xb8" "d\xc3\xa9 " + std::string(300, 'x');
  auto shas = HostileRepo(dir / "repo", hostile);
  Run(shas[0], 1);
  Run(shas[1], 7);
  auto r = RunHarness({"history", "--db", db, "--suite", "selftest", "--suites-dir", suites});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "a raw escape reached the terminal";
  EXPECT_NE(r.out.find("PASS,PASS,PASS,PASS,PASS,PASS,PASS"), std::string::npos) << r.out;
  const auto columns = SubjectColumns(r.out, {"SUBJECT", "commit 1", R"(\x1b[31mred )"});
  ASSERT_EQ(columns.size(), 3u) << r.out;
  EXPECT_EQ(columns[0], columns[1]) << r.out;
  EXPECT_EQ(columns[0], columns[2]) << r.out;
}

}  // namespace
}  // namespace harness
