// A scripted history with two drops of one metric in one range (docs/bisect.md, "Several
// culprits"), for the e2e tests of bisect --max-culprits and of the report that shows its
// culprits: a git repository of 24 commits whose gsm8k/t.acc accuracy is 0.92 until commit 8,
// 0.86 from it and 0.78 from commit 17 on, one JUnit result per commit ingested through the
// binary (store only: a bisect with --max-runs 0 answers from it).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "harness/testing/test_util.h"

namespace harness::testing_util {

struct TwoDropsHistory {
  std::vector<std::string> shas;  // shas[7] (commit 8) drops 6 pp, shas[16] (commit 17) 8 pp more
  std::string repo, db;
  // The bisect of the whole range by the stored results, every culprit up to max_culprits.
  std::vector<std::string> BisectArgs(const std::string& format, int max_culprits) const {
    return {"bisect", "--good", shas[0], "--bad", shas[23], "--metric", "gsm8k/accuracy", "--case", "gsm8k/t.acc",
            "--repo", repo, "--db", db, "--format", format, "--max-runs", "0", "--max-culprits",
            std::to_string(max_culprits)};
  }
};

// Commits 8 and 17 have subject culprit_subject + " 8" (" 17"); the others "commit N".
inline TwoDropsHistory MakeTwoDropsHistory(const std::filesystem::path& dir, const std::string& culprit_subject) {
  auto accuracy = [](int i) { return i >= 17 ? 0.78 : i >= 8 ? 0.86 : 0.92; };
  TwoDropsHistory h;
  h.shas = MakeGitRepo(dir / "repo", 24, nullptr, [&](int i) {
    return i == 8 || i == 17 ? culprit_subject + " " + std::to_string(i) : "commit " + std::to_string(i);
  });
  h.repo = (dir / "repo").string();
  h.db = (dir / "h.db").string();
  for (std::size_t k = 0; k < h.shas.size(); ++k) {
    WriteFile(dir / "r.xml", fmt::format(R"(<testsuite name="gsm8k"><testcase classname="t" name="acc"><properties>)"
                                         R"(<property name="accuracy" value="{}"/></properties></testcase></testsuite>)",
                                         accuracy(static_cast<int>(k) + 1)));
    auto in = RunHarness({"ingest", "--format", "junit", (dir / "r.xml").string(), "--commit", h.shas[k], "--repo",
                          h.repo, "--db", h.db});
    EXPECT_EQ(in.exit_code, 0) << in.err;
  }
  return h;
}

}  // namespace harness::testing_util
