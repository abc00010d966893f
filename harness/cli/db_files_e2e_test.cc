// What the commands leave beside the database, through the real binary: SQLite's -wal and
// -shm files are gone once the last command has closed it, readers included (a nightly
// ended with both beside out/harness.db, left by `harness report`).
#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

TEST(DbFilesE2E, NoWalOrShmIsLeftBehindByWritersOrReaders) {
  TempDir dir;
  const std::string db = (dir / "h.db").string();
  WriteFile(dir / "suites/selftest.json", testing_util::SelftestTable(R"({"outcome": "pass", "metric": 0.5})"));
  auto leftovers = [&] {
    std::string out;
    for (const char* suffix : {"-wal", "-shm"})
      if (std::filesystem::exists(db + suffix)) out += db + suffix + " ";
    return out;
  };
  for (const char* sha : {"aaaa0001", "aaaa0002"}) {
    auto run = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo",
                           dir.path().string(), "--commit", sha});
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }
  EXPECT_EQ(leftovers(), "") << "after run";
  for (const std::vector<std::string>& reader :
       {std::vector<std::string>{"report", "--db", db, "--out", (dir / "r.html").string()},
        std::vector<std::string>{"report", "--db", db, "--format", "markdown", "--out", (dir / "r.md").string()},
        std::vector<std::string>{"history", "--db", db, "--suite", "selftest"},
        std::vector<std::string>{"compare", "aaaa0001", "aaaa0002", "--db", db}}) {
    auto r = RunHarness(reader);
    EXPECT_EQ(r.exit_code, 0) << reader[0] << ": " << r.err;
    EXPECT_EQ(leftovers(), "") << "after " << reader[0] << " " << reader[2];
  }
  // A reader still refuses to write: the file is the same bytes after every reader.
  const std::string before = testing_util::ReadFile(db);
  ASSERT_EQ(RunHarness({"report", "--db", db, "--format", "text", "--out", (dir / "r.txt").string()}).exit_code, 0);
  EXPECT_TRUE(testing_util::ReadFile(db) == before);
}

}  // namespace
}  // namespace harness
