// harness ingest through the real binary and a real SQLite file: what it stores is what
// history and compare show; the same file twice adds nothing; a malformed file leaves the
// files before it stored and nothing of itself; hostile files (entity bombs, deep nesting,
// devices, oversized files) are input errors naming the file, quickly and in little memory.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <tuple>

#include <gtest/gtest.h>

#include "harness/ingest/ingest.h"
#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::TempDir;
using testing_util::WriteFile;

std::string JunitXml(const std::string& matmul_child) {
  return R"(<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.test_ops" name="test_add" time="0.5"><properties><property name="max_abs_err" value="0.002"/></properties></testcase>
<testcase classname="tests.test_ops" name="test_matmul" time="1.5">)" +
         matmul_child + R"(</testcase>
<testcase classname="tests.test_ünï" name="test_skip"><skipped message="no GPU"/></testcase>
</testsuite></testsuites>
)";
}

// Runs stored, read through the public reads: run ids count up from 1.
int64_t CountRuns(const std::string& db) {
  auto store = Store::OpenReadOnly(db);
  EXPECT_TRUE(store.ok());
  int64_t n = 0;
  while ((*store)->reader().Run(n + 1).ok()) ++n;
  return n;
}

struct IngestFixture : ::testing::Test {
  TempDir dir;
  std::string db = (dir.path() / "h.db").string();
  std::vector<std::string> shas = testing_util::MakeGitRepo(dir.path() / "repo", 2);
  std::string repo = (dir.path() / "repo").string();
  std::string File(const std::string& name, const std::string& text) {
    WriteFile(dir.path() / name, text);
    return (dir.path() / name).string();
  }
};

// Run 2 of db, the failing JUnit file's: stored as an ingest run with its three cases.
void ExpectIngestedJunitRun(const std::string& db) {
  auto store = Store::OpenReadOnly(db);
  ASSERT_TRUE(store.ok());
  auto run2 = (*store)->reader().Run(2);
  ASSERT_TRUE(run2.ok());
  EXPECT_EQ(run2->stack, "ingest:junit");
  EXPECT_EQ(run2->status, RunStatus::kFail);
  EXPECT_NE(run2->config_json.find("\"format\":\"junit\""), std::string::npos) << run2->config_json;
  auto cases = (*store)->reader().FinishedCases(2);
  ASSERT_TRUE(cases.ok());
  ASSERT_EQ(cases->size(), 3u);
  EXPECT_EQ((*cases)[2].result.case_id, "pytest/tests.test_ünï.test_skip");
  EXPECT_EQ((*cases)[2].result.status, CaseStatus::kSkip);
}

TEST_F(IngestFixture, JunitResultsShowInHistoryAndCompare) {
  const auto good = File("good.xml", JunitXml(""));
  const auto bad = File("bad.xml", JunitXml(R"(<failure message="0.91 &lt; 0.95">assert</failure>)"));
  auto first = RunHarness({"ingest", "--format", "junit", good, "--commit", "HEAD~1", "--repo", repo, "--db", db});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("run 1 (ingest:junit) at " + shas[0] + ": 3 cases, 2 pass, 0 fail, 0 error, 1 skip"),
            std::string::npos)
      << first.out;
  auto second = RunHarness({"ingest", "--format", "junit", bad, "--commit", shas[1], "--repo", repo, "--db", db});
  ASSERT_EQ(second.exit_code, 0) << second.err;

  auto history = RunHarness({"history", "--case", "pytest/tests.test_ops.test_matmul", "--db", db, "--format", "json"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  auto h = ParseJson(history.out, "history");
  ASSERT_TRUE(h.ok()) << history.out;
  ASSERT_EQ((*h)["commits"].size(), 2u);
  EXPECT_EQ((*h)["commits"][0]["commit"], shas[0]);
  EXPECT_EQ((*h)["commits"][0]["subject"], "commit 1");  // read from --repo
  EXPECT_EQ((*h)["commits"][0]["cases"][0]["runs"][0]["status"], "pass");
  EXPECT_EQ((*h)["commits"][1]["cases"][0]["runs"][0]["status"], "fail");

  auto metric = RunHarness({"history", "--case", "pytest/tests.test_ops.test_add", "--metric", "max_abs_err", "--db",
                            db, "--format", "json"});
  auto m = ParseJson(metric.out, "history");
  ASSERT_TRUE(m.ok()) << metric.out;
  EXPECT_EQ((*m)["commits"][1]["cases"][0]["runs"][0]["value"], 0.002);

  auto compare = RunHarness({"compare", shas[0], shas[1], "--db", db, "--format", "json"});
  EXPECT_EQ(compare.exit_code, 1) << compare.out << compare.err;  // pass -> fail regresses
  auto c = ParseJson(compare.out, "compare");
  ASSERT_TRUE(c.ok()) << compare.out;
  EXPECT_EQ((*c)["regressed"], true);
  bool seen = false;
  for (const auto& cc : (*c)["cases"]) {
    if (cc["case"] != "pytest/tests.test_ops.test_matmul") continue;
    seen = true;
    EXPECT_EQ(cc["status_a"], "pass");
    EXPECT_EQ(cc["status_b"], "fail");
  }
  EXPECT_TRUE(seen) << compare.out;

  ASSERT_NO_FATAL_FAILURE(ExpectIngestedJunitRun(db));

  // The report renders an ingested run like any other.
  const auto html = (dir.path() / "r.html").string();
  auto report = RunHarness({"report", "--db", db, "--out", html});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string page = testing_util::ReadFile(html);
  EXPECT_NE(page.find("pytest/tests.test_ops.test_matmul"), std::string::npos);
  EXPECT_NE(page.find("0.91 &lt; 0.95"), std::string::npos) << "the failure message, escaped";
}

TEST_F(IngestFixture, TheSameFileTwiceAddsNothing) {
  const auto good = File("good.xml", JunitXml(""));
  ASSERT_EQ(RunHarness({"ingest", "--format", "junit", good, "--commit", shas[0], "--db", db}).exit_code, 0);
  auto again = RunHarness({"ingest", "--format", "junit", good, "--commit", shas[0], "--db", db});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already ingested for " + shas[0] + ", nothing added"), std::string::npos) << again.out;
  EXPECT_EQ(CountRuns(db), 1);
  // Twice in one call is the same.
  auto twice = RunHarness({"ingest", "--format", "junit", good, good, "--commit", shas[0], "--db", db});
  ASSERT_EQ(twice.exit_code, 0);
  EXPECT_EQ(CountRuns(db), 1);
  // The same bytes for another commit, or read as another format, are new results.
  ASSERT_EQ(RunHarness({"ingest", "--format", "junit", good, "--commit", shas[1], "--db", db}).exit_code, 0);
  EXPECT_EQ(CountRuns(db), 2);
}

TEST_F(IngestFixture, AMalformedSecondFileLeavesTheFirstAndNothingOfItself) {
  const auto good = File("good.xml", JunitXml(""));
  const auto broken = File("broken.xml", "<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"a\">\n</testsuite>\n");
  auto r = RunHarness({"ingest", "--format", "junit", good, broken, "--commit", shas[0], "--db", db});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(broken + ":4:"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find(good + ": run 1"), std::string::npos) << r.out;
  EXPECT_EQ(CountRuns(db), 1);
  auto store = Store::OpenReadOnly(db);
  ASSERT_TRUE(store.ok());
  auto ids = (*store)->reader().KnownCases();
  ASSERT_TRUE(ids.ok());
  for (const auto& id : *ids) EXPECT_EQ(id.rfind("pytest/", 0), 0u) << id << " came from the broken file";
  // Fixed, the second file goes in.
  WriteFile(broken, "<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"a\"/>\n</testsuite></testsuites>\n");
  auto fixed = RunHarness({"ingest", "--format", "junit", good, broken, "--commit", shas[0], "--db", db});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(CountRuns(db), 2);
}

TEST_F(IngestFixture, GtestJsonWithAShaOnlyCommitAndASuiteName) {
  const auto report = File("g.json", R"({"tests": 2, "name": "AllTests", "testsuites": [
  {"name": "Kernels", "testsuite": [
    {"name": "Gemm", "status": "RUN", "result": "COMPLETED", "time": "0.2s", "classname": "Kernels"},
    {"name": "Conv", "status": "RUN", "result": "SKIPPED", "time": "0s", "classname": "Kernels"}]}]})");
  auto r = RunHarness({"ingest", "--format", "gtest-json", report, "--commit", "abcdef1234567", "--suite", "kernels",
                       "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto history = RunHarness({"history", "--suite", "kernels", "--db", db, "--format", "json"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  auto h = ParseJson(history.out, "history");
  ASSERT_TRUE(h.ok());
  ASSERT_EQ((*h)["commits"].size(), 1u);
  EXPECT_EQ((*h)["commits"][0]["commit"], "abcdef1234567");
  ASSERT_EQ((*h)["commits"][0]["cases"].size(), 2u);
  EXPECT_EQ((*h)["commits"][0]["cases"][0]["case"], "kernels/Kernels.Conv");
  EXPECT_EQ((*h)["commits"][0]["cases"][0]["runs"][0]["status"], "skip");
  EXPECT_EQ((*h)["commits"][0]["cases"][1]["runs"][0]["status"], "pass");
}

TEST_F(IngestFixture, UsageErrors) {
  const auto good = File("good.xml", JunitXml(""));
  auto fmt = RunHarness({"ingest", "--format", "nunit", good, "--commit", shas[0], "--db", db});
  EXPECT_EQ(fmt.exit_code, 2);
  EXPECT_NE(fmt.err.find("junit, gtest-json, lm-eval, sglang-gsm8k, sglang-gsm8k-raw, tensorcast-table"), std::string::npos) << fmt.err;
  EXPECT_EQ(RunHarness({"ingest", "--format", "junit", good, "--db", db}).exit_code, 2) << "--commit is required";
  EXPECT_EQ(RunHarness({"ingest", "--format", "junit", "--commit", shas[0], "--db", db}).exit_code, 2);
  auto missing = RunHarness({"ingest", "--format", "junit", (dir.path() / "nope.xml").string(), "--commit", shas[0],
                             "--db", db});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.xml: cannot open file"), std::string::npos) << missing.err;
  auto rev = RunHarness({"ingest", "--format", "junit", good, "--commit", "not-a-rev", "--repo", repo, "--db", db});
  EXPECT_EQ(rev.exit_code, 2);
  auto samples = RunHarness({"ingest", "--format", "junit", good, "--samples", good, "--commit", shas[0], "--db", db});
  EXPECT_EQ(samples.exit_code, 2);
  EXPECT_NE(samples.err.find("--samples belongs to --format lm-eval"), std::string::npos) << samples.err;
}

std::string LmEvalResults(double strict) {
  return R"({"results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": )" + std::to_string(strict) +
         R"(, "exact_match_stderr,strict-match": 0.05}}, "n-samples": {"gsm8k": {"original": 1319, "effective": 10}},
 "configs": {"gsm8k": {"num_fewshot": 5}}})";
}

// Ten documents; the first `wrong` answered wrongly (strict-match rows, plus flexible ones to skip).
std::string LmEvalSamples(int wrong) {
  std::string out;
  for (int i = 0; i < 10; ++i) {
    const bool ok = i >= wrong;
    out += R"({"doc_id": )" + std::to_string(i) + R"(, "target": "#### )" + std::to_string(i) +
           R"(", "filtered_resps": [")" + (ok ? std::to_string(i) : "[invalid]") +
           R"("], "filter": "strict-match", "exact_match": )" + (ok ? "1.0" : "0.0") + "}\n";
    out += R"({"doc_id": )" + std::to_string(i) + R"(, "filtered_resps": ["x"], "filter": "flexible-extract", "exact_match": 1.0})" "\n";
  }
  return out;
}

TEST_F(IngestFixture, LmEvalSamplesPairByDocumentInCompare) {
  const auto r0 = File("a/results_2026.json", LmEvalResults(1.0));
  const auto s0 = File("a/samples_gsm8k_2026.jsonl", LmEvalSamples(0));
  const auto r1 = File("b/results_2026.json", LmEvalResults(0.4));
  const auto s1 = File("b/samples_gsm8k_2026.jsonl", LmEvalSamples(6));
  // --samples takes one path, so the results FILE may follow it.
  auto a = RunHarness({"ingest", "--format", "lm-eval", "--samples", s0, r0, "--case", "gsm8k/lm_eval_5shot",
                       "--commit", shas[0], "--repo", repo, "--db", db});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = RunHarness({"ingest", "--format", "lm-eval", r1, "--samples", s1, "--case", "gsm8k/lm_eval_5shot",
                       "--commit", shas[1], "--repo", repo, "--db", db});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto store = Store::OpenReadOnly(db);
  ASSERT_TRUE(store.ok());
  auto cases = (*store)->reader().FinishedCases(2);
  ASSERT_TRUE(cases.ok());
  ASSERT_EQ(cases->size(), 1u);
  EXPECT_EQ((*cases)[0].result.case_id, "gsm8k/lm_eval_5shot");
  auto samples = (*store)->reader().Samples((*cases)[0].id);
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 10u);
  EXPECT_EQ((*samples)[0].key, "0");
  EXPECT_EQ(Word((*samples)[0].outcome), "wrong");
  EXPECT_EQ((*samples)[0].extracted, "[invalid]");

  auto compare = RunHarness({"compare", shas[0], shas[1], "--db", db, "--format", "json"});
  EXPECT_EQ(compare.exit_code, 1) << compare.out << compare.err;
  auto c = ParseJson(compare.out, "compare");
  ASSERT_TRUE(c.ok()) << compare.out;
  ASSERT_EQ((*c)["cases"].size(), 1u);
  const auto& paired = (*c)["cases"][0]["paired"];
  EXPECT_EQ(paired["paired"], 10);
  EXPECT_EQ(paired["verdict"], "REGRESSED") << paired.dump();  // 6 flips to wrong, none to right: p = 0.031

  auto history = RunHarness({"history", "--case", "gsm8k/lm_eval_5shot", "--metric", "exact_match,strict-match",
                             "--db", db, "--format", "json"});
  auto h = ParseJson(history.out, "history");
  ASSERT_TRUE(h.ok()) << history.out << history.err;
  EXPECT_EQ((*h)["commits"][1]["cases"][0]["runs"][0]["value"], 0.4);
  EXPECT_EQ((*h)["commits"][1]["cases"][0]["runs"][0]["n"], 10);
  // Malformed samples name file:line and store nothing.
  const auto bad = File("c/samples_gsm8k_x.jsonl", "{\"doc_id\": 0, \"exact_match\": 1}\n{\"doc_id\": 1}\n");
  auto broken = RunHarness({"ingest", "--format", "lm-eval", r1, "--samples", bad, "--commit", shas[0], "--db", db});
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.err.find(bad + ":2: exact_match"), std::string::npos) << broken.err;
  EXPECT_EQ(CountRuns(db), 2);
}

// The point of per-sample import: McNemar pairs an lm-eval run with the harness's own GSM8K
// run question by question (lm-eval doc ids are the test-set indexes, as the native keys).
TEST_F(IngestFixture, LmEvalSamplesPairWithANativeGsm8kRun) {
  const std::string case_id = "gsm8k/test_gsm8k_accuracy_1";
  auto native = RunHarness({"run", "--suite", "gsm8k", "--filter", case_id, "--commit", shas[0], "--repo", repo,
                            "--db", db, "--format", "json"});
  ASSERT_EQ(native.exit_code, 0) << native.err;
  std::map<std::string, std::string> outcome;
  {
    auto store = Store::OpenReadOnly(db);
    ASSERT_TRUE(store.ok());
    auto cases = (*store)->reader().FinishedCases(1);
    ASSERT_TRUE(cases.ok());
    ASSERT_EQ(cases->size(), 1u);
    auto stored = (*store)->reader().Samples((*cases)[0].id);
    ASSERT_TRUE(stored.ok());
    for (const auto& s : *stored) outcome[s.key] = Word(s.outcome);
  }
  ASSERT_EQ(outcome.size(), 1319u);
  // lm-eval answers the first ten documents the other way round from the native run.
  std::string rows;
  int native_correct = 0;
  for (int i = 0; i < 10; ++i) {
    const bool was = outcome[std::to_string(i)] == "correct";
    native_correct += was;
    rows += R"({"doc_id": )" + std::to_string(i) + R"(, "filtered_resps": ["1"], "exact_match": )" +
            (was ? "0" : "1") + "}\n";
  }
  const auto results = File("r/results.json", LmEvalResults(0.5));
  const auto samples = File("r/samples_gsm8k_x.jsonl", rows);
  auto ingest = RunHarness({"ingest", "--format", "lm-eval", results, "--samples", samples, "--case", case_id,
                            "--commit", shas[1], "--repo", repo, "--db", db});
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
  auto compare = RunHarness({"compare", shas[0], shas[1], "--db", db, "--case", case_id, "--format", "json"});
  auto c = ParseJson(compare.out, "compare");
  ASSERT_TRUE(c.ok()) << compare.out << compare.err;
  ASSERT_EQ((*c)["cases"].size(), 1u);
  const auto& paired = (*c)["cases"][0]["paired"];
  ASSERT_TRUE(paired.is_object()) << compare.out;
  EXPECT_EQ(paired["paired"], 10);  // the ten documents both sides answered
  EXPECT_EQ(paired["b"].get<int>() + paired["c"].get<int>(), 10) << paired.dump();
  EXPECT_TRUE(paired["b"] == native_correct || paired["c"] == native_correct) << paired.dump();
}

TEST_F(IngestFixture, SglangLinesAreRunsAndAnAppendedLineIsTheOnlyNewOne) {
  const std::string line1 =
      R"({"task": "gsm8k", "backend": "srt", "num_gpus": 1, "latency": 41.5, "accuracy": 0.925, "invalid": 0.002, "output_throughput": 1830.2, "num_requests": 1319, "other": {"num_questions": 1319, "parallel": 1319}})";
  const std::string line2 = R"({"task": "gsm8k", "backend": "srt", "latency": 40.0, "accuracy": 0.93, "num_requests": 200})";
  const auto file = File("result.jsonl", line1 + "\n");
  auto first = RunHarness({"ingest", "--format", "sglang-gsm8k", file, "--commit", shas[0], "--db", db});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  WriteFile(file, line1 + "\n" + line2 + "\n");
  auto second = RunHarness({"ingest", "--format", "sglang-gsm8k", file, "--commit", shas[0], "--db", db});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find(file + ":1: already ingested"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find(file + ":2: run 2 (ingest:sglang-gsm8k)"), std::string::npos) << second.out;
  EXPECT_EQ(CountRuns(db), 2);
  auto history = RunHarness({"history", "--case", "sglang/gsm8k", "--metric", "accuracy", "--db", db, "--format", "json"});
  auto h = ParseJson(history.out, "history");
  ASSERT_TRUE(h.ok()) << history.out << history.err;
  ASSERT_EQ((*h)["commits"][0]["cases"][0]["runs"].size(), 2u);
  EXPECT_EQ((*h)["commits"][0]["cases"][0]["runs"][0]["value"], 0.925);
  EXPECT_EQ((*h)["commits"][0]["cases"][0]["runs"][0]["n"], 1319);
  EXPECT_EQ((*h)["commits"][0]["cases"][0]["runs"][1]["value"], 0.93);
  // A bad third line: nothing of this file is written, and the error names its line.
  WriteFile(file, line1 + "\n" + line2 + "\n" + R"({"task": "gsm8k", "latency": 3})" + "\n");
  auto bad = RunHarness({"ingest", "--format", "sglang-gsm8k", file, "--commit", shas[1], "--db", db});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(file + ":3: accuracy"), std::string::npos) << bad.err;
  EXPECT_EQ(CountRuns(db), 2);
}

// One run per results file and commit: samples given later attach to the run the results
// became, and the results alone again add nothing, so no newer run without samples hides
// the paired verdict (issue 21).
TEST_F(IngestFixture, LmEvalSamplesGivenLaterAttachToTheOneRunOfTheirResults) {
  const auto r0 = File("a/results_2026.json", LmEvalResults(1.0));
  const auto s0 = File("a/samples_gsm8k_2026.jsonl", LmEvalSamples(0));
  const auto r1 = File("b/results_2026.json", LmEvalResults(0.4));
  const auto s1 = File("b/samples_gsm8k_2026.jsonl", LmEvalSamples(6));
  for (const auto& [results, samples, sha] : {std::tuple{r0, s0, shas[0]}, std::tuple{r1, s1, shas[1]}}) {
    auto alone = RunHarness({"ingest", "--format", "lm-eval", results, "--commit", sha, "--db", db});
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    auto later = RunHarness({"ingest", "--format", "lm-eval", results, "--samples", samples, "--commit", sha, "--db", db});
    ASSERT_EQ(later.exit_code, 0) << later.err;
    EXPECT_NE(later.out.find("already ingested for " + sha), std::string::npos) << later.out;
    EXPECT_NE(later.out.find("10 samples added to 1 case(s)"), std::string::npos) << later.out;
    auto again = RunHarness({"ingest", "--format", "lm-eval", results, "--commit", sha, "--db", db});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.out.find("nothing added"), std::string::npos) << again.out;
    auto twice = RunHarness({"ingest", "--format", "lm-eval", results, "--samples", samples, "--commit", sha, "--db", db});
    EXPECT_NE(twice.out.find("nothing added"), std::string::npos) << "samples are attached once: " << twice.out;
  }
  EXPECT_EQ(CountRuns(db), 2);
  auto store = Store::OpenReadOnly(db);
  ASSERT_TRUE(store.ok());
  auto cases = (*store)->reader().FinishedCases(2);
  ASSERT_TRUE(cases.ok());
  ASSERT_EQ(cases->size(), 1u);
  EXPECT_EQ((*cases)[0].result.message, "accuracy is lm-eval's exact_match,strict-match");
  auto samples = (*store)->reader().Samples((*cases)[0].id);
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 10u);
  EXPECT_EQ((*samples)[0].completion, "[invalid]") << "no resps in these rows: the filtered answer";
  auto metrics = (*store)->reader().Metrics((*cases)[0].id);
  ASSERT_TRUE(metrics.ok());
  bool accuracy = false;
  for (const auto& m : *metrics) accuracy = accuracy || (m.name == "accuracy" && m.value == 0.4 && m.n == 10);
  EXPECT_TRUE(accuracy);
  auto compare = RunHarness({"compare", shas[0], shas[1], "--db", db, "--format", "json"});
  EXPECT_EQ(compare.exit_code, 1) << compare.out << compare.err;
  auto c = ParseJson(compare.out, "compare");
  ASSERT_TRUE(c.ok()) << compare.out;
  EXPECT_EQ((*c)["cases"][0]["paired"]["paired"], 10) << compare.out;
  // The trend reads the metric the paired verdict reads.
  auto history = RunHarness({"history", "--case", "lm-eval/gsm8k", "--metric", "accuracy", "--db", db, "--format", "json"});
  auto h = ParseJson(history.out, "history");
  ASSERT_TRUE(h.ok()) << history.out << history.err;
  EXPECT_EQ((*h)["commits"][1]["cases"][0]["runs"][0]["value"], 0.4);
}

// bench_sglang.py's --raw-result-file, per question: two sglang runs pair, and an sglang run
// pairs with the native GSM8K case by question index.
TEST_F(IngestFixture, SglangRawResultsPairAcrossSglangRunsAndWithTheNativeSuite) {
  auto raw = [](int wrong_from) {
    std::string rows;
    for (int i = 0; i < 12; ++i)
      rows += (i ? "\n" : "") + std::string(R"({"prompt_id": )") + std::to_string(i) +
              R"(, "prompt": "Question: ...", "output": " answer )" + std::to_string(i) + R"(", "correct": )" +
              (i < wrong_from ? "true" : "false") + "}";
    return rows;  // written with "\n".join: no newline after the last row
  };
  const std::string line = R"({"task": "gsm8k", "backend": "srt", "latency": 3.5, "accuracy": 0.5, "num_requests": 200, "other": {"num_questions": 200, "parallel": 64}})";
  const auto results0 = File("s0/result.jsonl", line + "\n");
  const auto results1 = File("s1/result.jsonl", line + "\n");
  const auto raw0 = File("s0/raw.jsonl", raw(12));
  const auto raw1 = File("s1/raw.jsonl", raw(0));
  auto a = RunHarness({"ingest", "--format", "sglang-gsm8k", results0, "--samples", raw0, "--commit", shas[0], "--db", db});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  // The line first, its raw results later: they attach to the line's run.
  auto b = RunHarness({"ingest", "--format", "sglang-gsm8k", results1, "--commit", shas[1], "--db", db});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto b2 = RunHarness({"ingest", "--format", "sglang-gsm8k", results1, "--samples", raw1, "--commit", shas[1], "--db", db});
  ASSERT_EQ(b2.exit_code, 0) << b2.err;
  EXPECT_NE(b2.out.find("12 samples added to 1 case(s)"), std::string::npos) << b2.out;
  EXPECT_EQ(CountRuns(db), 2);
  auto compare = RunHarness({"compare", shas[0], shas[1], "--db", db, "--format", "json"});
  EXPECT_EQ(compare.exit_code, 1) << compare.out << compare.err;
  auto c = ParseJson(compare.out, "compare");
  ASSERT_TRUE(c.ok()) << compare.out;
  const auto& paired = (*c)["cases"][0]["paired"];
  EXPECT_EQ(paired["paired"], 12) << compare.out;
  EXPECT_EQ(paired["b"], 12) << compare.out;
  auto store = Store::OpenReadOnly(db);
  ASSERT_TRUE(store.ok());
  auto cases = (*store)->reader().FinishedCases(2);
  ASSERT_TRUE(cases.ok());
  auto metrics = (*store)->reader().Metrics((*cases)[0].id);
  ASSERT_TRUE(metrics.ok());
  for (const auto& m : *metrics)
    if (m.name == "accuracy") {
      EXPECT_EQ(m.value, 0.0);
      EXPECT_EQ(m.n, 12) << "n is what ran, not the 200 asked";
    }

  // Against the native suite: the raw file as a run of its own, named as the native case.
  const std::string case_id = "gsm8k/test_gsm8k_accuracy_1";
  const std::string db2 = (dir.path() / "native.db").string();
  auto native = RunHarness({"run", "--suite", "gsm8k", "--filter", case_id, "--commit", shas[0], "--repo", repo,
                            "--db", db2, "--format", "json"});
  ASSERT_EQ(native.exit_code, 0) << native.err;
  auto sg = RunHarness({"ingest", "--format", "sglang-gsm8k-raw", raw1, "--case", case_id, "--commit", shas[1],
                        "--repo", repo, "--db", db2});
  ASSERT_EQ(sg.exit_code, 0) << sg.err;
  auto vs = RunHarness({"compare", shas[0], shas[1], "--db", db2, "--case", case_id, "--format", "json"});
  auto v = ParseJson(vs.out, "compare");
  ASSERT_TRUE(v.ok()) << vs.out << vs.err;
  ASSERT_TRUE((*v)["cases"][0]["paired"].is_object()) << vs.out;
  EXPECT_EQ((*v)["cases"][0]["paired"]["paired"], 12);
}

// A malformed raw-result file, as a run of its own (sglang-gsm8k-raw) and as the samples of
// a result line (--samples): exit 2 naming the file, the line and (for a syntax error) the
// column, and nothing stored.
TEST_F(IngestFixture, AMalformedSglangRawFileNamesItsLineAndStoresNothing) {
  const std::string good = R"({"prompt_id": 0, "output": "a", "correct": true})";
  const auto syntax = File("raw/syntax.jsonl", good + "\n" + R"({"prompt_id": 1, "output": "b", "correct": tru})" + "\n");
  const auto typed = File("raw/typed.jsonl", good + "\n" + R"({"prompt_id": 1, "output": "b", "correct": "yes"})" + "\n");
  const auto line = File("raw/result.jsonl", R"({"task": "gsm8k", "accuracy": 0.5, "num_requests": 2})" "\n");
  for (const auto& [file, where] : {std::pair{syntax, syntax + ":2:47: syntax error"},
                                    std::pair{typed, typed + ":2: correct: expected true or false"}}) {
    SCOPED_TRACE(file);
    auto raw = RunHarness({"ingest", "--format", "sglang-gsm8k-raw", file, "--case", "gsm8k/test_gsm8k_accuracy_1",
                           "--commit", shas[0], "--db", db});
    EXPECT_EQ(raw.exit_code, 2) << raw.err;
    EXPECT_NE(raw.err.find(where), std::string::npos) << raw.err;
    auto samples = RunHarness({"ingest", "--format", "sglang-gsm8k", line, "--samples", file, "--commit", shas[0],
                               "--db", db});
    EXPECT_EQ(samples.exit_code, 2) << samples.err;
    EXPECT_NE(samples.err.find(where), std::string::npos) << samples.err;
  }
  EXPECT_EQ(CountRuns(db), 0);
}

// A raw-results file without a row (the run ended before its first answer) is no run of 0
// questions, alone or as a line's samples; a results file without a line says so, and neither
// stores anything.
TEST_F(IngestFixture, AnEmptySglangFileStoresNothingAndSaysSo) {
  const auto empty = File("raw/empty.jsonl", "");
  const auto line = File("raw/result.jsonl", R"({"task": "gsm8k", "accuracy": 0.5, "num_requests": 2})"
                                             "\n");
  auto raw = RunHarness({"ingest", "--format", "sglang-gsm8k-raw", empty, "--case", "gsm8k/test_gsm8k_accuracy_1",
                         "--commit", shas[0], "--db", db});
  EXPECT_EQ(raw.exit_code, 2) << raw.err;
  EXPECT_NE(raw.err.find(empty + ": no raw result in it: the run answered no question"), std::string::npos) << raw.err;
  auto samples =
      RunHarness({"ingest", "--format", "sglang-gsm8k", line, "--samples", empty, "--commit", shas[0], "--db", db});
  EXPECT_EQ(samples.exit_code, 2) << samples.err;
  EXPECT_NE(samples.err.find(empty + ": no raw result in it"), std::string::npos) << samples.err;
  auto no_line = RunHarness({"ingest", "--format", "sglang-gsm8k", empty, "--commit", shas[0], "--db", db});
  EXPECT_EQ(no_line.exit_code, 0) << no_line.err;
  EXPECT_EQ(no_line.out, empty + ": no result line in it, nothing stored\n");
  EXPECT_EQ(CountRuns(db), 0);
}

// No samples on either side: disjoint 95 % intervals with B's accuracy below A's are a
// regression (exit 1); overlapping ones only inform (issue 21: sglang 0.76 -> 0.00 was exit 0).
TEST_F(IngestFixture, CompareWithoutSamplesRegressesOnDisjointAccuracyIntervals) {
  auto line = [](double accuracy) {
    return R"({"task": "gsm8k", "backend": "srt", "accuracy": )" + std::to_string(accuracy) +
           R"(, "num_requests": 200, "other": {"num_questions": 200}})" "\n";
  };
  const auto a = File("a.jsonl", line(0.76));
  const auto b = File("b.jsonl", line(0.0));
  const auto close = File("c.jsonl", line(0.74));
  ASSERT_EQ(RunHarness({"ingest", "--format", "sglang-gsm8k", a, "--commit", shas[0], "--db", db}).exit_code, 0);
  ASSERT_EQ(RunHarness({"ingest", "--format", "sglang-gsm8k", b, "--commit", shas[1], "--db", db}).exit_code, 0);
  auto down = RunHarness({"compare", shas[0], shas[1], "--db", db});
  EXPECT_EQ(down.exit_code, 1) << down.out << down.err;
  EXPECT_NE(down.out.find("are disjoint, B below A (regressed)"), std::string::npos) << down.out;
  auto up = RunHarness({"compare", shas[1], shas[0], "--db", db});
  EXPECT_EQ(up.exit_code, 0) << up.out;
  ASSERT_EQ(RunHarness({"ingest", "--format", "sglang-gsm8k", close, "--commit", shas[1], "--db", db}).exit_code, 0);
  auto overlapping = RunHarness({"compare", shas[0], shas[1], "--db", db});
  EXPECT_EQ(overlapping.exit_code, 0) << overlapping.out;
  EXPECT_NE(overlapping.out.find("overlap (no evidence of a change)"), std::string::npos) << overlapping.out;
}

constexpr const char* kSpTable = R"(-----------------------------------------  --------------  ------------  ----------
                   Name                    analytic total  analytic avg  # of Calls
-----------------------------------------  --------------  ------------  ----------
tensor_cast.all_gather.default                   10.000ms       5.000ms           2
tensor_cast.reduce_scatter.default               10.000ms       5.000ms           2
)";

TEST_F(IngestFixture, TensorCastTablesAreOpRowsCompareDiffs) {
  const std::string end = "-----------------------------------------  --------------  ------------  ----------\n";
  const auto before = File("before/sp.txt", std::string(kSpTable) + end);
  const auto after = File("after/sp.txt", std::string(kSpTable) +
                                              "tensor_cast.all_reduce.default                    4.000ms       4.000ms           1\n" + end);
  ASSERT_EQ(RunHarness({"ingest", "--format", "tensorcast-table", before, "--case", "sequence_parallel/step",
                        "--commit", shas[0], "--db", db}).exit_code, 0);
  auto r = RunHarness({"ingest", "--format", "tensorcast-table", after, "--case", "sequence_parallel/step", "--commit",
                       shas[1], "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto compare = RunHarness({"compare", shas[0], shas[1], "--db", db, "--format", "json"});
  auto c = ParseJson(compare.out, "compare");
  ASSERT_TRUE(c.ok()) << compare.out << compare.err;
  ASSERT_EQ((*c)["cases"].size(), 1u);
  EXPECT_EQ((*c)["cases"][0]["case"], "sequence_parallel/step");
  ASSERT_EQ((*c)["cases"][0]["ops"]["added"].size(), 1u) << compare.out;
  EXPECT_NE((*c)["cases"][0]["ops"]["added"][0].dump().find("tensor_cast.all_reduce.default"), std::string::npos);
  auto bad = RunHarness({"ingest", "--format", "tensorcast-table", File("x.txt", "no table here\n"), "--commit",
                         shas[0], "--db", db});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("x.txt:"), std::string::npos) << bad.err;
}

// The table docs/exec-protocol.md shows has a shapes cell one character wider than its
// dashes; both readers of TensorCast tables (ingest and the exec stack's stdout) store it
// whole, where reading by the dashes' widths stored "[1, 64, 5120], [5120".
TEST_F(IngestFixture, TheExecProtocolExampleTableIsStoredWholeByIngestAndByTheExecStack) {
  const std::string doc = testing_util::ReadFile(std::filesystem::path(testing_util::kSourceRoot) / "docs/exec-protocol.md");
  const auto start = doc.find("```\nINFO compiling");
  ASSERT_NE(start, std::string::npos) << "the example moved";
  const auto example = File("example.txt", doc.substr(start + 4, doc.find("```", start + 4) - start - 4));

  auto ingest = RunHarness({"ingest", "--format", "tensorcast-table", example, "--commit", shas[0], "--db", db});
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
  // The exec stack answers every request with the example, as a command printing it would.
  const auto script = File("stack.sh", "cat >/dev/null\ncat '" + example + "'\n");
  const auto config =
      File("exec.json", R"({"format_version": 1, "stack": "exec", "exec": {"command": ["sh", ")" + script + R"("]}})");
  auto run = RunHarness({"run", "--suite", "sequence_parallel", "--filter", "sequence_parallel/*_1", "--stack-config",
                         config, "--db", db, "--commit", shas[1]});
  EXPECT_EQ(run.exit_code, 1) << "the example lacks the ops the suite checks: " << run.err;

  auto store = Store::OpenReadOnly(db);
  ASSERT_TRUE(store.ok());
  for (int64_t run_id : {1, 2}) {
    SCOPED_TRACE(run_id == 1 ? "ingest" : "exec stack");
    auto cases = (*store)->reader().FinishedCases(run_id);
    ASSERT_TRUE(cases.ok());
    ASSERT_EQ(cases->size(), 1u);
    auto ops = (*store)->reader().Ops((*cases)[0].id);
    ASSERT_TRUE(ops.ok());
    ASSERT_EQ(ops->size(), 1u);
    EXPECT_EQ((*ops)[0].op, "tensor_cast.rms_norm.default");
    EXPECT_EQ((*ops)[0].input_shapes, "[1, 64, 5120], [5120]");
    EXPECT_EQ((*ops)[0].calls, 2);
  }
}

// The issue's file: 110 KB, one 50 KB entity referenced 20,000 times, took 2.95 GB and 4 s
// (libxml2 expanded every reference when the failure's text was read). The declaration is
// refused as it is read.
TEST_F(IngestFixture, AJunitEntityBombIsRefusedAtItsDeclaration) {
  std::string xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE testsuites [\n<!ENTITY b \"" + std::string(50'000, 'A') +
                    "\">\n]>\n<testsuites><testsuite name=\"s\"><testcase name=\"a\"><failure>";
  for (int i = 0; i < 20'000; ++i) xml += "&b;";
  xml += "</failure></testcase></testsuite></testsuites>\n";
  const auto bomb = File("bomb.xml", xml);
  const auto started = std::chrono::steady_clock::now();
  auto r = RunHarness({"ingest", "--format", "junit", bomb, "--commit", shas[0], "--db", db}, {.timeout_s = 60});
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(bomb + ":3: <!ENTITY b> refused"), std::string::npos) << r.err;
  EXPECT_LT(elapsed, std::chrono::seconds(3)) << "refused before any expansion";
  EXPECT_EQ(CountRuns(db), 0);
}

// 150,000 nested arrays were a SIGSEGV (stack overflow copying the parsed JSON).
TEST_F(IngestFixture, DeeplyNestedJsonIsAnInputErrorNamingThePlace) {
  const std::string deep = std::string(150'000, '[') + std::string(150'000, ']');
  struct Input {
    const char* format;
    const char* name;
    std::string text;
    std::string place;
  };
  const Input inputs[] = {
      {"gtest-json", "g.json", "{\"testsuites\": " + deep + "}", ":1:271:"},
      {"lm-eval", "r.json", "{\"results\": {\"t\": {\"acc,none\": 0.5}}, \"configs\": " + deep + "}", ":1:305:"},
      {"sglang-gsm8k", "s.jsonl", "{\"accuracy\": 0.9}\n{\"accuracy\": 0.9, \"other\": " + deep + "}\n", ":2:283:"},
  };
  for (const auto& in : inputs) {
    SCOPED_TRACE(in.format);
    const auto path = File(in.name, in.text);
    auto r = RunHarness({"ingest", "--format", in.format, path, "--commit", shas[0], "--db", db});
    EXPECT_EQ(r.signal, 0);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(path + in.place + " arrays and objects nested deeper than 256 levels"), std::string::npos)
        << r.err;
  }
  const auto results = File("results.json", R"({"results": {"t": {"acc,none": 0.5}}})");
  const auto samples = File("samples_t_1.jsonl", "{\"doc_id\": 0, \"exact_match\": 1, \"target\": " + deep + "}\n");
  auto r =
      RunHarness({"ingest", "--format", "lm-eval", results, "--samples", samples, "--commit", shas[0], "--db", db});
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(samples + ":1:298: arrays and objects nested deeper"), std::string::npos) << r.err;
  EXPECT_EQ(CountRuns(db), 0);
}

// Runs the binary with its address space capped (where the build allows it: ASan reserves
// terabytes of shadow), so a reader that reads without bound fails the test quickly instead
// of taking the machine's memory. stderr goes to err.
ProcessResult RunHarnessInBoundedMemory(const std::vector<std::string>& args, const std::filesystem::path& err) {
  std::vector<std::string> argv_strings = {testing_util::kHarnessBinary};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid == 0) {
    setenv("HARNESS_ROOT", testing_util::kSourceRoot, 1);
    if (!freopen("/dev/null", "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(126);
    if (!testing_util::kAddressSanitizer) {
      const rlimit lim{rlim_t{2} << 30, rlim_t{2} << 30};
      setrlimit(RLIMIT_AS, &lim);
    }
    alarm(60);  // and never endless
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ProcessResult r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.err = testing_util::ReadFile(err);
  return r;
}

// `ingest /dev/zero` read until bad_alloc; a directory was exit 3 with a libstdc++ message.
TEST_F(IngestFixture, DevicesDirectoriesAndOversizedFilesAreRefusedNamingTheFile) {
  const auto err = dir.path() / "err.txt";
  ASSERT_EQ(mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
  // Sparse: one byte over the format's limit by size, nothing on disk.
  const auto big = File("big.json", "");
  ASSERT_EQ(truncate(big.c_str(), static_cast<off_t>(MaxIngestFileBytes("gtest-json") + 1)), 0);
  const auto big_samples = File("samples_t_1.jsonl", "");
  ASSERT_EQ(truncate(big_samples.c_str(), static_cast<off_t>(kMaxLmEvalSamplesFileBytes + 1)), 0);
  const auto results = File("results.json", R"({"results": {"t": {"acc,none": 0.5}}})");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string root = dir.path().string();
  const Case cases[] = {
      {{"--format", "gtest-json", "/dev/zero"}, "/dev/zero: not a regular file (a character device)"},
      {{"--format", "junit", root}, root + ": not a regular file (a directory)"},
      {{"--format", "sglang-gsm8k", root + "/fifo"}, root + "/fifo: not a regular file (a FIFO)"},
      {{"--format", "gtest-json", big}, big + ": 67108865 bytes, over the 64 MiB limit for gtest-json files"},
      {{"--format", "lm-eval", results, "--samples", "/dev/zero"}, "/dev/zero: not a regular file"},
      {{"--format", "lm-eval", results, "--samples", big_samples},
       big_samples + ": 268435457 bytes, over the 256 MiB limit for samples files"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"ingest", "--commit", shas[0], "--db", db};
    args.insert(args.end(), c.args.begin(), c.args.end());
    SCOPED_TRACE(c.args.back());
    auto r = RunHarnessInBoundedMemory(args, err);
    EXPECT_EQ(r.signal, 0) << r.err;
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace harness
