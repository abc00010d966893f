#include "harness/ingest/ingest_files.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::TempDir;

const CommitInfo kCommit{"0123456789abcdef0123456789abcdef01234567", {}, std::nullopt, std::nullopt, "c"};

std::string Testdata(const std::string& file) {
  return (std::filesystem::path(testing_util::kSourceRoot) / "harness/ingest/testdata" / file).string();
}

TEST(IngestFiles, BadRequestsAreRefusedBeforeAnyDatabase) {
  const auto unknown = PrepareIngest(IngestRequest{"xml", {"a.xml"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ExitCode::kUsage);
  EXPECT_NE(unknown.error().message.find("--format 'xml'"), std::string::npos) << unknown.error().message;
  const auto two = PrepareIngest(IngestRequest{"lm-eval", {"a.json", "b.json"}, {"s.jsonl"}});
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.error().message.find("exactly one FILE"), std::string::npos) << two.error().message;
  const auto missing = PrepareIngest(IngestRequest{"lm-eval", {"a.json"}, {"/nonexistent/s.jsonl"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/s.jsonl"), std::string::npos) << missing.error().message;
}

// A file written by a real JUnit producer, twice: the second time adds nothing. Then a bad
// file after a good one: the import stops at it, naming it, and the good one stays.
TEST(IngestFiles, EachFileIsOneRunAndABadFileStopsAfterTheOnesBefore) {
  TempDir dir;
  auto store = Store::Open(dir / "h.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  const IngestRequest first{"junit", {Testdata("jest-junit.xml")}};
  const auto options = PrepareIngest(first);
  ASSERT_TRUE(options.ok()) << options.error().message;
  std::vector<std::string> lines;
  auto report = [&](const std::string& line) { lines.push_back(line); };
  ASSERT_TRUE(IngestFiles((*store)->writer(), first, *options, kCommit, "host", report).ok());
  ASSERT_TRUE(IngestFiles((*store)->writer(), first, *options, kCommit, "host", report).ok());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find(": run 1 (ingest:junit) at " + kCommit.sha), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("already ingested for " + kCommit.sha + ", nothing added"), std::string::npos) << lines[1];

  const std::string bad = (dir / "bad.xml").string();
  testing_util::WriteFile(bad, "<testsuites><testsuite name=\"s\">");
  const IngestRequest two{"junit", {Testdata("xunit-c.xml"), bad}};
  lines.clear();
  const auto s = IngestFiles((*store)->writer(), two, *options, kCommit, "host", report);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(bad), std::string::npos) << s.error().message;
  ASSERT_EQ(lines.size(), 1u) << "the file before the bad one was written";
  EXPECT_NE(lines[0].find("xunit-c.xml: run 2"), std::string::npos) << lines[0];
  const auto runs = (*store)->reader().FinishedRuns();
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 2u);
}

}  // namespace
}  // namespace harness
