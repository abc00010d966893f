// `harness compare` shows what changed, through the real binary: unchanged cases and
// latency or throughput metrics are counted unless --all asks for them, and compare's own
// pairing is labelled as B against A, computed now.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "harness/testing/test_util.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

// An sglang GSM8K result line (docs/ingest.md): accuracy, latency and throughput.
std::string SglangLine(double accuracy, double latency, double throughput) {
  return fmt::format(R"({{"task": "gsm8k", "backend": "srt", "latency": {}, "accuracy": {}, "output_throughput": {}, "num_requests": 200}})",
                     latency, accuracy, throughput) + "\n";
}

struct CompareChangesE2E : ::testing::Test {
  TempDir dir;
  std::string db = (dir / "h.db").string();
  std::string repo = (dir / "repo").string();
  std::vector<std::string> shas = testing_util::MakeGitRepo(dir / "repo", 2);
  // At commit i: two selftest cases (the first one's value given), and two sglang results:
  // sglang/gsm8k with accuracy steady, sglang/moved with the accuracy given; both timings differ.
  void StoreAt(int i, double value, double moved_accuracy) {
    WriteFile(dir / "suites/selftest.json",
              SelftestTable(fmt::format(R"({{"outcome": "pass", "metric": {}, "samples": 10}},
                                           {{"outcome": "pass", "metric": 0.5}})", value)));
    auto run = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo", repo, "--commit", shas[i]});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const double latency = 40.0 + i * 3.5, throughput = 1800.0 + i * 77;
    WriteFile(dir / fmt::format("steady{}.jsonl", i), SglangLine(0.925, latency, throughput));
    // Its own bytes (an identical file is one ingest): a quarter second slower.
    WriteFile(dir / fmt::format("moved{}.jsonl", i), SglangLine(moved_accuracy, latency + 0.25, throughput));
    for (const auto& [file, id] : {std::pair{"steady", "sglang/gsm8k"}, {"moved", "sglang/moved"}}) {
      auto r = RunHarness({"ingest", "--format", "sglang-gsm8k", (dir / fmt::format("{}{}.jsonl", file, i)).string(),
                           "--case", id, "--commit", shas[i], "--repo", repo, "--db", db});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
};

TEST_F(CompareChangesE2E, UnchangedCasesAndTimingsAreCountedUnlessAllIsAsked) {
  ASSERT_NO_FATAL_FAILURE(StoreAt(0, 0.75, 0.925));
  ASSERT_NO_FATAL_FAILURE(StoreAt(1, 0.25, 0.5));
  auto r = RunHarness({"compare", shas[0], shas[1], "--db", db});
  ASSERT_LE(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("A = " + shas[0].substr(0, 12) + "  B = " + shas[1].substr(0, 12) + "  4 case(s)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("selftest/test_outcome_0  PASS\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("metric value: 0.75 → 0.25 (-0.5)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", B against A, computed now"), std::string::npos) << "compare's own pairing: " << r.out;
  EXPECT_NE(r.out.find("sglang/moved  PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("metric accuracy: 0.925 → 0.5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 latency or throughput metric(s) changed (--all shows them)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("latency_s"), std::string::npos) << r.out;
  // The steady GSM8K result (only its timings moved) and the steady selftest case: counted.
  EXPECT_EQ(r.out.find("sglang/gsm8k"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("selftest/test_outcome_1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 unchanged case(s) not listed (--all lists them)"), std::string::npos) << r.out;

  auto all = RunHarness({"compare", shas[0], shas[1], "--db", db, "--all"});
  EXPECT_EQ(all.exit_code, r.exit_code) << all.err;
  EXPECT_NE(all.out.find("sglang/gsm8k  PASS"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("selftest/test_outcome_1  PASS"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("metric latency_s: 40 → 43.5 (+3.5)"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("metric output_throughput: 1800 → 1877 (+77)"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("not listed"), std::string::npos) << all.out;
  // JSON is for machines: every case, whatever --all says.
  auto j = testing_util::StdoutJson(RunHarness({"compare", shas[0], shas[1], "--db", db, "--format", "json"}));
  EXPECT_EQ(j["cases"].size(), 4u);
}

}  // namespace
}  // namespace harness
