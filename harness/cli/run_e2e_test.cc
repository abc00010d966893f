// `harness run` and `harness history` end to end: the real binary, a real SQLite file,
// real git repositories.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::TempDir;
using testing_util::WriteFile;

TEST(RunE2E, StoresEveryCaseWithMetricsSamplesAndOps) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json",
            SelftestTable(R"({"outcome": "pass", "metric": 0.75, "samples": 4, "ops": 2, "note": "AT-RISK at gate 0.91"},
                             {"outcome": "fail", "metric": 0.25, "samples": 2, "note": "second line"},
                             {"outcome": "skip"})"));
  auto db = (dir / "h.db").string();
  auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--commit", "abc1230",
                       "--repo", dir.path().string(), "--junit", (dir / "junit.xml").string(), "--format", "json"});
  auto text = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", (dir / "t.db").string(),
                          "--commit", "abc1230", "--repo", dir.path().string()});
  EXPECT_NE(text.out.find("selftest/test_outcome_0  AT-RISK at gate 0.91"), std::string::npos) << text.out;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto summary = ParseJson(r.out, "stdout");
  ASSERT_TRUE(summary.ok()) << r.out;
  EXPECT_EQ((*summary)["summary"]["pass"], 1);
  EXPECT_EQ((*summary)["summary"]["fail"], 1);
  EXPECT_EQ((*summary)["summary"]["skip"], 1);
  EXPECT_EQ((*summary)["cases"][1]["id"], "selftest/test_outcome_1");
  const std::string fail_message = (*summary)["cases"][1]["message"];
  EXPECT_NE(fail_message.find("the row asks to fail"), std::string::npos);
  EXPECT_LT(fail_message.find("the row asks to fail"), fail_message.find("second line")) << "failures lead, notes follow";
  EXPECT_EQ((*summary)["cases"][0]["message"], "AT-RISK at gate 0.91") << "a passing case keeps its note";

  auto store = std::move(Store::Open(db)).value();
  auto run = *store->reader().Run(0);
  EXPECT_EQ(run.sha, "abc1230");
  EXPECT_EQ(run.status, RunStatus::kFail);
  auto cases = *store->reader().Cases(run.id);
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].result.case_id, "selftest/test_outcome_0");
  EXPECT_EQ(cases[0].result.status, CaseStatus::kPass);
  EXPECT_EQ(cases[0].result.message, "AT-RISK at gate 0.91");
  EXPECT_EQ(cases[1].result.status, CaseStatus::kFail);
  EXPECT_EQ(cases[2].result.status, CaseStatus::kSkip);
  EXPECT_EQ(store->reader().Samples(cases[0].id)->size(), 4u);
  EXPECT_EQ(store->reader().Ops(cases[0].id)->size(), 2u);
  auto metrics = *store->reader().Metrics(cases[0].id);
  ASSERT_EQ(metrics.size(), 1u);
  EXPECT_DOUBLE_EQ(metrics[0].value, 0.75);
  std::string junit = testing_util::ReadFile(dir / "junit.xml");
  EXPECT_NE(junit.find("<testcase classname=\"selftest\" name=\"test_outcome_1\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<failure message="), std::string::npos);
}

TEST(RunE2E, TwoCommitsGiveATwoRowHistory) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 2);
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "metric": 0.5})"));
  auto db = (dir / "h.db").string();
  for (const auto& sha : shas) {
    auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo",
                         (dir / "repo").string(), "--commit", sha});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto h = RunHarness({"history", "--db", db, "--case", "selftest/test_outcome_0", "--metric", "value", "--format", "json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  auto j = ParseJson(h.out, "stdout");
  ASSERT_TRUE(j.ok());
  ASSERT_EQ((*j)["commits"].size(), 2u);
  EXPECT_EQ((*j)["commits"][0]["commit"], shas[0]);
  EXPECT_EQ((*j)["commits"][0]["ordinal"], 1);
  EXPECT_EQ((*j)["commits"][1]["subject"], "commit 2");
  EXPECT_EQ((*j)["commits"][1]["cases"][0]["runs"][0]["value"], 0.5);
  EXPECT_EQ((*j)["commits"][1]["cases"][0]["mean"], 0.5);
  auto text = RunHarness({"history", "--db", db, "--case", "selftest/test_outcome_0", "--metric", "value"});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find(ShortSha(shas[1])), std::string::npos) << text.out;
  auto unknown = RunHarness({"history", "--db", db, "--case", "nope/x_0"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("selftest/test_outcome_0"), std::string::npos) << "names the known cases";
}

double MetricOf(const std::string& summary_json, int case_index, const std::string& name) {
  auto j = ParseJson(summary_json, "stdout");
  if (!j.ok()) return -99;
  for (const auto& m : (*j)["cases"][case_index]["metrics"])
    if (m["name"] == name) return m["value"].get<double>();
  return -98;
}

TEST(RunE2E, BaselineIsTheNewestPassingFirstParentAncestorOrTheGivenCommit) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 3);
  auto db = (dir / "h.db").string();
  auto suites = (dir / "suites").string();
  // One table for every run (it is part of the run's identity); the state file plays the
  // stack changing from commit to commit.
  const auto state = (dir / "state.json").string();
  WriteFile(dir / "suites/selftest.json",
            SelftestTable(R"({"outcome": "pass", "report_baseline": true, "state_file": ")" + state + "\"}"));
  auto run_at = [&](const std::string& sha, const std::string& state_json, std::vector<std::string> extra = {}) {
    WriteFile(state, state_json);
    std::vector<std::string> args = {"run", "--suites-dir", suites, "--db", db, "--repo", (dir / "repo").string(),
                                     "--commit", sha, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunHarness(args);
  };
  auto first = run_at(shas[0], R"({"outcome": "pass", "samples": 4})");
  EXPECT_EQ(MetricOf(first.out, 0, "baseline_samples"), -1) << "nothing before the first commit";
  auto second = run_at(shas[1], R"({"outcome": "fail", "samples": 2})");
  EXPECT_EQ(MetricOf(second.out, 0, "baseline_samples"), 4) << second.err;
  auto third = run_at(shas[2], R"({"outcome": "pass", "samples": 6})");
  EXPECT_EQ(MetricOf(third.out, 0, "baseline_samples"), 4) << "a failing parent is not a baseline";
  auto explicit_baseline = run_at(shas[2], R"({"outcome": "pass", "samples": 1})",
                                  {"--baseline", shas[1]});
  EXPECT_EQ(MetricOf(explicit_baseline.out, 0, "baseline_samples"), 2) << "--baseline takes that commit's result";
}

// A run against another endpoint or model is another identity: the stand-in's results must
// never be the baseline of a real model's (b = 1179 "REGRESSED" came from that mix).
TEST(RunE2E, BaselinesPairOnlyRunsOfTheSameIdentity) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 3);
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "samples": 4, "report_baseline": true})"));
  auto run_at = [&](const std::string& sha, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "--suites-dir", (dir / "suites").string(), "--db", (dir / "h.db").string(),
                                     "--repo", (dir / "repo").string(), "--commit", sha, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunHarness(args);
  };
  auto stand_in = run_at(shas[0], {});
  ASSERT_EQ(stand_in.exit_code, 0) << stand_in.err;
  auto model = run_at(shas[1], {"--endpoint", "http://127.0.0.1:9", "--model", "real-model"});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  EXPECT_EQ(MetricOf(model.out, 0, "baseline_samples"), -1) << "the stand-in's run is no baseline of a model";
  auto other_model = run_at(shas[2], {"--endpoint", "http://127.0.0.1:9", "--model", "other-model"});
  EXPECT_EQ(MetricOf(other_model.out, 0, "baseline_samples"), -1) << "nor one model's of another's";
  auto same_model = run_at(shas[2], {"--endpoint", "http://127.0.0.1:9", "--model", "real-model"});
  EXPECT_EQ(MetricOf(same_model.out, 0, "baseline_samples"), 4) << "the same model's earlier run is";
  auto new_port = run_at(shas[2], {"--endpoint", "http://127.0.0.1:10", "--model", "real-model"});
  EXPECT_EQ(MetricOf(new_port.out, 0, "baseline_samples"), 4) << "where the server listens is no part of it";
  auto explicit_other = run_at(shas[2], {"--baseline", shas[0], "--endpoint", "http://127.0.0.1:9", "--model", "real-model"});
  EXPECT_EQ(explicit_other.exit_code, 2) << "an explicit baseline of another identity is refused before any case";
  EXPECT_NE(explicit_other.err.find("another identity"), std::string::npos) << explicit_other.err;
}

TEST(RunE2E, WithoutCommitReadsHeadOfTheRepo) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 1);
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  auto db = (dir / "h.db").string();
  auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo", (dir / "repo").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::move(Store::Open(db)).value()->reader().Run(0)->sha, shas[0]);
  auto no_git = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo", dir.path().string()});
  EXPECT_EQ(no_git.exit_code, 2);
  EXPECT_NE(no_git.err.find("--commit"), std::string::npos) << no_git.err;
}

TEST(RunE2E, BadInputExitsTwoWithAClearMessage) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  auto suites = (dir / "suites").string();
  auto db = (dir / "h.db").string();
  auto unknown_suite = RunHarness({"run", "--suites-dir", suites, "--db", db, "--commit", "abcdef0", "--suite", "nope"});
  EXPECT_EQ(unknown_suite.exit_code, 2);
  EXPECT_NE(unknown_suite.err.find("known: selftest"), std::string::npos) << unknown_suite.err;
  auto unknown_case = RunHarness({"run", "--suites-dir", suites, "--db", db, "--commit", "abcdef0", "--filter", "*_9"});
  EXPECT_EQ(unknown_case.exit_code, 2);
  EXPECT_NE(unknown_case.err.find("selftest/test_outcome_0"), std::string::npos) << unknown_case.err;
  auto unknown_fault = RunHarness({"run", "--suites-dir", suites, "--db", db, "--commit", "abcdef0", "--fault", "no-such-fault"});
  EXPECT_EQ(unknown_fault.exit_code, 2);
  EXPECT_NE(unknown_fault.err.find("known:"), std::string::npos) << unknown_fault.err;

  WriteFile(dir / "suites/selftest.json", "{\"format_version\": 1,\n\"suite\": \"selftest\",\n\"tests\": [}\n");
  auto malformed = RunHarness({"run", "--suites-dir", suites, "--db", db, "--commit", "abcdef0"});
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.err.find("selftest.json:3:"), std::string::npos) << malformed.err;

  WriteFile(dir / "suites/selftest.json",
            R"({"format_version": 2, "suite": "selftest", "params": {}, "tests": {"test_missing_in_binary": [{}]}})");
  auto missing = RunHarness({"run", "--suites-dir", suites, "--db", db, "--commit", "abcdef0"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("tests.test_missing_in_binary"), std::string::npos) << missing.err;

  // A wrongly typed or misspelt parameter is an input error before any case runs.
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "samples": "many"})"));
  auto mistyped = RunHarness({"run", "--suites-dir", suites, "--db", db, "--commit", "abcdef0"});
  EXPECT_EQ(mistyped.exit_code, 2);
  EXPECT_NE(mistyped.err.find("tests.test_outcome[0].samples: expected an integer"), std::string::npos) << mistyped.err;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass", "sampels": 3})"));
  auto typo = RunHarness({"run", "--suites-dir", suites, "--db", db, "--commit", "abcdef0"});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("(did you mean 'samples'?)"), std::string::npos) << typo.err;
  EXPECT_FALSE(std::filesystem::exists(db)) << "no input error may create or write the database";
}

TEST(RunE2E, UnwritableDatabaseExitsThree) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", "/nonexistent-dir/h.db", "--commit", "abcdef0"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("cannot open database"), std::string::npos) << r.err;
}

TEST(RunE2E, InfraErrorInACaseExitsThree) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"}, {"outcome": "error"})"));
  auto db = (dir / "h.db").string();
  auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--commit", "abcdef0"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(std::move(Store::Open(db)).value()->reader().Run(0)->status, RunStatus::kError);
}

TEST(RunE2E, ListPrintsCaseIdsWithoutRunning) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "fail"}, {"outcome": "fail"})"));
  auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", (dir / "h.db").string(), "--list"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "selftest/test_outcome_0\nselftest/test_outcome_1\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "h.db")) << "--list must not touch the database";
}

// Waits (up to 15 s) until the second selftest case has streamed a few samples into db,
// then kills pid without warning; whether it was streaming by then.
bool KillOnceStreaming(pid_t pid, const std::string& db) {
  bool streaming = false;
  for (int i = 0; i < 600 && !streaming; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_busy_timeout(raw, 1000);
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(raw,
                             "SELECT COUNT(*) FROM samples s JOIN case_results c ON c.id = s.case_result_id "
                             "WHERE c.case_id = 'selftest/test_outcome_1'",
                             -1, &st, nullptr) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW)
        streaming = sqlite3_column_int(st, 0) >= 5;
      sqlite3_finalize(st);
    }
    sqlite3_close(raw);
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return streaming;
}

void ExpectIntegrityOk(const std::string& db) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(raw);
}

// Kill -9 in the middle of a case: the database stays consistent and the finished cases
// (and the streamed samples of the running one) are stored; --resume finishes the rest.
TEST(RunE2E, KillMidSuiteLeavesAConsistentDatabaseAndResumeFinishes) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json",
            SelftestTable(R"({"outcome": "pass", "samples": 3}, {"outcome": "pass", "samples": 100, "sleep_ms": 20})"));
  auto db = (dir / "h.db").string();
  pid_t pid = testing_util::SpawnHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--commit", "00000001"});
  ASSERT_GE(pid, 0);
  const bool streaming = KillOnceStreaming(pid, db);
  ASSERT_TRUE(streaming) << "the second case never started streaming";

  ASSERT_NO_FATAL_FAILURE(ExpectIntegrityOk(db));
  int64_t killed_run = 0;
  size_t samples_before = 0;
  {
    auto store = std::move(Store::Open(db)).value();
    auto run = *store->reader().Run(0);
    killed_run = run.id;
    EXPECT_EQ(run.status, RunStatus::kRunning);
    auto cases = *store->reader().Cases(run.id);
    ASSERT_EQ(cases.size(), 2u);
    EXPECT_EQ(cases[0].result.status, CaseStatus::kPass);
    EXPECT_EQ(store->reader().Samples(cases[0].id)->size(), 3u);
    EXPECT_EQ(cases[1].result.status, CaseStatus::kRunning);
    samples_before = store->reader().Samples(cases[1].id)->size();
    EXPECT_GE(samples_before, 5u);
    EXPECT_LT(samples_before, 100u);
  }
  auto resumed = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--commit", "00000001", "--resume"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming run"), std::string::npos) << resumed.err;
  auto store = std::move(Store::Open(db)).value();
  auto run = *store->reader().Run(0);
  EXPECT_EQ(run.id, killed_run) << "resume continues the same run";
  EXPECT_EQ(run.status, RunStatus::kPass);
  auto cases = *store->reader().Cases(run.id);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[1].result.status, CaseStatus::kPass);
  EXPECT_EQ(store->reader().Samples(cases[1].id)->size(), 100u);
}

}  // namespace
}  // namespace harness
