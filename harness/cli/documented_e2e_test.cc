// Behaviour the README and docs promise that no other test drives through the real binary:
// the exec stack protocol (answers, timeouts, signals, undecodable stderr), a key given by
// --api-key-env never leaving the process, serve-sim as a process, the
// database defaults, --filter and history --last, and the documented FP8 numbers.
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "harness/store/store.h"
#include "harness/testing/test_util.h"
#include "harness/util/git.h"
#include "harness/util/json_file.h"

namespace harness {
namespace {

namespace fs = std::filesystem;
using testing_util::ReadFile;
using testing_util::RunHarness;
using testing_util::SelftestTable;
using testing_util::SimProcess;
using testing_util::TempDir;
using testing_util::WriteFile;

// One text value from a read-only query ("" when there is none).
std::string QueryText(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string v;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 2000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_text(st, 0))
      v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return v;
}

int64_t QueryInt(const fs::path& db, const std::string& sql) {
  const std::string v = QueryText(db, sql);
  return v.empty() ? -1 : std::stoll(v);
}

// A well-formedness check by a real XML parser, not by our own eyes.
bool WellFormedXml(const fs::path& file, std::string* error) {
  auto r = RunProcess({"python3", "-c", "import xml.etree.ElementTree as E,sys; E.parse(sys.argv[1])", file.string()});
  if (!r.ok()) {
    *error = r.error().message;
    return false;
  }
  *error = r->err;
  return r->exit_code == 0;
}

// ---------------------------------------------------------------------------------------
// 1. --stack exec --stack-config FILE (docs/exec-protocol.md)

// An exec stack config running `sh <dir>/stack.sh` with the given script.
fs::path ExecConfig(const TempDir& dir, const std::string& script, double timeout_s = 30) {
  WriteFile(dir / "stack.sh", script);
  const fs::path config = dir / "exec.json";
  WriteFile(config, R"({"format_version": 1, "stack": "exec", "exec": {"command": ["sh", ")" +
                        (dir / "stack.sh").string() + R"("], "timeout_s": )" + std::to_string(timeout_s) + "}}");
  return config;
}

ProcessResult RunExecSuite(const TempDir& dir, const fs::path& config, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"run", "--suite", "sequence_parallel", "--filter", "sequence_parallel/*_1",
                                   "--stack-config", config.string(), "--db", (dir / "h.db").string(),
                                   "--commit", "abcdef0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunHarness(args, {.timeout_s = 60});
}

TEST(DocumentedE2E, ExecStackGetsTheRequestOnStdinAndItsOpTableIsStored) {
  TempDir dir;
  // The script keeps the request it was sent and answers a table with one row of its own,
  // so what is stored can only have come from it. It lacks reduce_scatter and all_gather,
  // so the case fails its checks: the failure has to name the missing op.
  const auto config = ExecConfig(dir, "cat > '" + (dir / "request.json").string() + "'\n" + R"(
printf '%s\n' '{"format_version": 1, "total_seconds": 0.0123, "ops": [
  {"op": "tensor_cast.rms_norm.default", "input_shapes": "[1, 64, 5120], [5120]", "calls": 2, "est_seconds": 0.00001},
  {"op": "from_the_script.op.default", "input_shapes": "[7]", "calls": 3}]}'
)");
  auto r = RunExecSuite(dir, config);
  EXPECT_EQ(r.exit_code, 1) << r.err;

  auto request = ParseJson(ReadFile(dir / "request.json"), "request.json");
  ASSERT_TRUE(request.ok()) << ReadFile(dir / "request.json");
  EXPECT_EQ((*request)["format_version"], 1);
  EXPECT_EQ((*request)["kind"], "compile");
  EXPECT_EQ((*request)["request"]["model"], "Qwen/Qwen3-32B");
  EXPECT_EQ((*request)["request"]["tp_size"], 2);
  EXPECT_EQ((*request)["request"]["disable_repetition"], true) << "case _1 runs with repetition off";

  auto store = std::move(Store::OpenReadOnly(dir / "h.db")).value();
  auto cases = *store->reader().Cases(1);
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].result.case_id, "sequence_parallel/test_sp_reduces_rms_norm_seq_dim_1");
  EXPECT_EQ(cases[0].result.status, CaseStatus::kFail);
  EXPECT_NE(cases[0].result.message.find("no tensor_cast.reduce_scatter.default"), std::string::npos)
      << cases[0].result.message;
  auto ops = *store->reader().Ops(cases[0].id);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[1].op, "from_the_script.op.default");
  EXPECT_EQ(ops[1].input_shapes, "[7]");
  EXPECT_EQ(ops[1].calls, 3);
  bool total = false;
  const auto metrics = *store->reader().Metrics(cases[0].id);  // a copy: the Result is a temporary
  for (const auto& m : metrics) total = total || (m.name == "est_total_s" && m.value == 0.0123);
  EXPECT_TRUE(total) << "total_seconds is stored as est_total_s";
}

TEST(DocumentedE2E, ExecStackTimeoutAndSignalAreCaseErrorsAndExitThree) {
  TempDir dir;
  // exec: the sleep is the command itself, so the kill on timeout leaves nothing behind.
  const auto sleeper = ExecConfig(dir, "cat >/dev/null\nexec sleep 30\n", 0.5);
  const auto started = std::chrono::steady_clock::now();
  auto timed_out = RunExecSuite(dir, sleeper);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20)) << "the timeout did not stop it";
  EXPECT_EQ(timed_out.exit_code, 3) << timed_out.err;
  EXPECT_EQ(QueryText(dir / "h.db", "SELECT status FROM case_results WHERE run_id = 1"), "error");
  const std::string timeout_message = QueryText(dir / "h.db", "SELECT message FROM case_results WHERE run_id = 1");
  EXPECT_NE(timeout_message.find("no answer within 0.5 s"), std::string::npos) << timeout_message;

  const auto killer = ExecConfig(dir, "cat >/dev/null\nkill -9 $$\n");
  auto killed = RunExecSuite(dir, killer);
  EXPECT_EQ(killed.exit_code, 3) << killed.err;
  EXPECT_EQ(QueryText(dir / "h.db", "SELECT status FROM case_results WHERE run_id = 2"), "error");
  const std::string signal_message = QueryText(dir / "h.db", "SELECT message FROM case_results WHERE run_id = 2");
  EXPECT_NE(signal_message.find("killed by signal 9"), std::string::npos) << signal_message;

  const auto garbage = ExecConfig(dir, "cat >/dev/null\necho 'not a table'\n");
  auto unparsable = RunExecSuite(dir, garbage);
  EXPECT_EQ(unparsable.exit_code, 3) << unparsable.err;
  EXPECT_EQ(QueryText(dir / "h.db", "SELECT status FROM case_results WHERE run_id = 3"), "error");
  const std::string parse_message = QueryText(dir / "h.db", "SELECT message FROM case_results WHERE run_id = 3");
  EXPECT_NE(parse_message.find("sh (stdout)"), std::string::npos) << parse_message;
}

// A command that answers, then leaves a child in the background holding its stdout: the
// answer is read once the command exits (the child is not waited for), so a timeout of
// 5 s is no timeout. timeout_s outside (0, 86400] is refused before any case runs.
TEST(DocumentedE2E, ExecStackAnswerIsReadWhenTheCommandExitsAndTimeoutIsBounded) {
  TempDir dir;
  const auto pids = dir / "pids";
  const auto config = ExecConfig(dir, "cat >/dev/null\nsleep 30 &\necho $! >> '" + pids.string() + "'\n" + R"(
printf '%s\n' '{"format_version": 1, "ops": [{"op": "tensor_cast.rms_norm.default", "calls": 1}]}'
)", 5);
  const auto started = std::chrono::steady_clock::now();
  auto r = RunExecSuite(dir, config);
  const auto took = std::chrono::steady_clock::now() - started;
  std::ifstream in(pids);
  for (pid_t p; in >> p;) kill(p, SIGKILL);
  EXPECT_EQ(r.exit_code, 1) << "the answer lacks the SP ops: a failed case, not a timed-out one. " << r.err;
  EXPECT_EQ(QueryText(dir / "h.db", "SELECT status FROM case_results WHERE run_id = 1"), "fail");
  EXPECT_LT(took, std::chrono::seconds(4)) << "the run waited for the background child";

  for (const std::string t : {"0", "-1", "1e300", "86401"}) {
    const auto bad = ExecConfig(dir, "cat >/dev/null\n", 1);
    WriteFile(bad, R"({"format_version": 1, "stack": "exec", "exec": {"command": ["true"], "timeout_s": )" + t + "}}");
    auto refused = RunExecSuite(dir, bad);
    EXPECT_EQ(refused.exit_code, 2) << t << ": " << refused.err;
    EXPECT_NE(refused.err.find("timeout_s: must be in (0, 86400] seconds"), std::string::npos)
        << t << ": " << refused.err;
  }
}

TEST(DocumentedE2E, ExecStackUndecodableStderrKeepsJunitAndJsonWellFormed) {
  TempDir dir;
  // The message quotes the command's stderr; bytes that are not UTF-8 must not break XML or JSON.
  const auto config = ExecConfig(dir, "cat >/dev/null\nprintf '\\377\\376 broken <&> \\001' >&2\nexit 1\n");
  auto r = RunExecSuite(dir, config, {"--junit", (dir / "junit.xml").string(), "--format", "json"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto summary = ParseJson(r.out, "stdout");
  ASSERT_TRUE(summary.ok()) << summary.error().message << "\n" << r.out;
  EXPECT_EQ((*summary)["cases"][0]["status"], "error");
  const std::string message = (*summary)["cases"][0]["message"];
  EXPECT_NE(message.find("exit code 1"), std::string::npos) << message;
  EXPECT_NE(message.find("broken"), std::string::npos) << "the stderr is still quoted: " << message;
  std::string xml_error;
  EXPECT_TRUE(WellFormedXml(dir / "junit.xml", &xml_error)) << xml_error << "\n" << ReadFile(dir / "junit.xml");
  EXPECT_NE(ReadFile(dir / "junit.xml").find("broken"), std::string::npos);
}

// ---------------------------------------------------------------------------------------
// 2. --endpoint --chat --api-key-env VAR: the key is sent, never stored or printed.
TEST(DocumentedE2E, ApiKeyFromTheEnvironmentIsNeverStoredOrPrinted) {
  TempDir dir;
  SimProcess sim({"--port", "0"});
  ASSERT_EQ(sim.url().rfind("http://127.0.0.1:", 0), 0u) << sim.url();
  const std::string secret = "sk-test-SECRET-12345";
  const fs::path db = dir / "h.db", junit = dir / "junit.xml", report = dir / "report.html";
  auto r = RunHarness({"run", "--suite", "gsm8k", "--filter", "gsm8k/*_0", "--endpoint", sim.url(), "--model",
                       "refstack-sim", "--chat", "--api-key-env", "HARNESS_TEST_API_KEY", "--db", db.string(),
                       "--junit", junit.string(), "--commit", "abcdef0"},
                      {.env = {{"HARNESS_TEST_API_KEY", secret}}, .timeout_s = 120});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto rep = RunHarness({"report", "--db", db.string(), "--out", report.string()});
  EXPECT_EQ(rep.exit_code, 0) << rep.err;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM samples"), 1319) << "the case did not run against the endpoint";
  EXPECT_EQ(QueryText(db, "SELECT status FROM case_results"), "pass");

  std::vector<std::pair<std::string, std::string>> outputs = {
      {"stdout", r.out}, {"stderr", r.err}, {"report stdout", rep.out}, {"report stderr", rep.err},
      {"database", ReadFile(db)}, {"junit", ReadFile(junit)}, {"report", ReadFile(report)}};
  if (fs::exists(db.string() + "-wal")) outputs.emplace_back("wal", ReadFile(db.string() + "-wal"));
  for (const auto& [name, bytes] : outputs)
    EXPECT_EQ(bytes.find("SECRET-12345"), std::string::npos) << "the key leaked into " << name;
  EXPECT_FALSE(ReadFile(junit).empty());
  EXPECT_FALSE(ReadFile(report).empty());
  // The run went the chat route of that endpoint (the identity records the route, not the key).
  auto identity = ParseJson(QueryText(db, "SELECT config_json FROM runs"), "runs.config_json");
  ASSERT_TRUE(identity.ok());
  EXPECT_EQ((*identity)["endpoint"]["chat"], true) << identity->dump();
  EXPECT_FALSE((*identity)["endpoint"].contains("base_url")) << "where it ran is no part of what was measured";
  EXPECT_EQ((*identity)["endpoint"]["served_models"], Json::array({"refstack-sim"})) << identity->dump();
  auto context = ParseJson(QueryText(db, "SELECT context_json FROM runs"), "runs.context_json");
  ASSERT_TRUE(context.ok());
  EXPECT_EQ((*context)["endpoint"]["base_url"], sim.url()) << context->dump();
}

// ---------------------------------------------------------------------------------------
// 4. serve-sim --port 0 --profile --stack-config: a URL, /v1/models, a run against it, SIGTERM → 0.
TEST(DocumentedE2E, ServeSimServesTheProfileAndStopsOnSigterm) {
  TempDir dir;
  WriteFile(dir / "stack.json", R"({"format_version": 1, "faults": ["fp8-scale-unrepaired"]})");
  SimProcess sim({"--port", "0", "--profile", std::string(testing_util::kSourceRoot) + "/golden/sim/demo.json",
                  "--stack-config", (dir / "stack.json").string()});
  ASSERT_EQ(sim.url().rfind("http://127.0.0.1:", 0), 0u) << sim.url();
  auto models = RunProcess({"python3", "-c",
                            "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + '/v1/models', "
                            "timeout=10).read().decode())",
                            sim.url()});
  ASSERT_TRUE(models.ok());
  auto list = ParseJson(models->out, "/v1/models");
  ASSERT_TRUE(list.ok()) << models->out << models->err;
  EXPECT_EQ((*list)["data"][0]["id"], "refstack-sim") << "the profile's model";

  const fs::path db = dir / "h.db";
  auto r = RunHarness({"run", "--suite", "gsm8k", "--filter", "gsm8k/*_0", "--endpoint", sim.url(), "--model",
                       "refstack-sim", "--db", db.string(), "--commit", "abcdef0"},
                      {.timeout_s = 120});
  EXPECT_NE(r.exit_code, 3) << r.err;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM samples"), 1319) << r.err;
  // The faulty kernels at the profile's batch of 64 cost the documented 16 questions.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM samples WHERE outcome = 'correct'"), 1202) << r.out;
  EXPECT_EQ(sim.Terminate(), 0);
}

// ---------------------------------------------------------------------------------------
// 4b. Nightlies of one model behind servers on other ports pair with the night before: the
// endpoint's URL says where a run ran, not what it measured (docs/store.md). A server with
// the fault on is REGRESSED; another model, requested or served, never pairs.
// The demo model without its simulated latency and transport trouble (quick.json, returned),
// and the same served under another model name (other.json): what pairs is the subject, and
// five nightlies at 20 ms a question were half a minute of waiting.
std::string WriteQuickDemoProfiles(const fs::path& dir) {
  const std::string demo = std::string(testing_util::kSourceRoot) + "/golden/sim/demo.json";
  Json quick = ValueOrThrow(ParseJson(ReadFile(demo), demo));
  quick["latency"] = {{"first_token_s", 0}, {"per_token_s", 0}};
  quick["faults"] = {{"http_5xx", 0}, {"http_429", 0}, {"dropped_connection", 0}};
  WriteFile(dir / "quick.json", quick.dump());
  quick["model"] = "other-sim";
  WriteFile(dir / "other.json", quick.dump());
  return (dir / "quick.json").string();
}

TEST(DocumentedE2E, NightliesBehindNewPortsPairWithTheNightBefore) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 5);
  const std::string profile = WriteQuickDemoProfiles(dir.path());
  WriteFile(dir / "faulty.json", R"({"format_version": 1, "faults": ["fp8-scale-unrepaired"]})");
  const std::string db = (dir / "h.db").string();
  auto nightly = [&](const std::string& sha, const std::string& url, const std::string& model) {
    return RunHarness({"run", "--suite", "gsm8k", "--endpoint", url, "--model", model, "--db", db, "--repo",
                       (dir / "repo").string(), "--commit", sha, "--format", "json"},
                      {.timeout_s = 120});
  };
  auto verdict = [](const ProcessResult& r) -> std::string {
    auto j = ParseJson(r.out, "stdout");
    if (!j.ok() || (*j)["cases"].empty()) return "(no output)";
    for (const auto& m : (*j)["cases"][0]["metrics"])
      if (m["name"] == "baseline_verdict") return m["verdict"];
    return "(none)";
  };
  std::vector<std::string> urls;
  {
    SimProcess first({"--port", "0", "--profile", profile});
    auto r = nightly(shas[0], first.url(), "refstack-sim");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(verdict(r), "(none)") << "the first nightly has no baseline";
    urls.push_back(first.url());
  }
  {
    SimProcess second({"--port", "0", "--profile", profile});
    ASSERT_NE(second.url(), urls[0]) << "the second server must listen elsewhere";
    auto r = nightly(shas[1], second.url(), "refstack-sim");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(verdict(r), "SAME") << r.out;
    auto other = nightly(shas[3], second.url(), "other-model");
    EXPECT_EQ(verdict(other), "(none)") << "another requested model never pairs: " << other.out;
  }
  {
    SimProcess third({"--port", "0", "--profile", profile, "--stack-config", (dir / "faulty.json").string()});
    auto r = nightly(shas[2], third.url(), "refstack-sim");
    EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
    EXPECT_EQ(verdict(r), "REGRESSED") << r.out;
  }
  {
    SimProcess swapped({"--port", "0", "--profile", (dir / "other.json").string()});
    auto r = nightly(shas[4], swapped.url(), "refstack-sim");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(verdict(r), "(none)") << "a server that lists another model never pairs: " << r.out;
  }
  // Where each nightly ran is kept beside it.
  EXPECT_NE(QueryText(db, "SELECT context_json FROM runs WHERE id = 1").find(urls[0]), std::string::npos);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(DISTINCT config_hash) FROM runs WHERE id IN (1, 2, 4)"), 1);
}

// ---------------------------------------------------------------------------------------
// 5. The database: --db, else $HARNESS_DB, else ./harness.db.
TEST(DocumentedE2E, DatabaseDefaultsToHarnessDbEnvThenTheWorkingDirectory) {
  TempDir dir;
  WriteFile(dir / "suites/selftest.json", SelftestTable(R"({"outcome": "pass"})"));
  fs::create_directories(dir / "work");
  // Whatever the test's own environment says, the second run must see no HARNESS_DB.
  unsetenv("HARNESS_DB");
  const std::vector<std::string> args = {"run", "--suites-dir", (dir / "suites").string(), "--commit", "abcdef0"};
  auto with_env = RunHarness(args, {.cwd = dir / "work", .env = {{"HARNESS_DB", (dir / "env.db").string()}}});
  ASSERT_EQ(with_env.exit_code, 0) << with_env.err;
  EXPECT_EQ(QueryInt(dir / "env.db", "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_FALSE(fs::exists(dir / "work/harness.db")) << "HARNESS_DB was ignored";
  auto in_cwd = RunHarness(args, {.cwd = dir / "work"});
  ASSERT_EQ(in_cwd.exit_code, 0) << in_cwd.err;
  EXPECT_EQ(QueryInt(dir / "work/harness.db", "SELECT COUNT(*) FROM runs"), 1);
  EXPECT_EQ(QueryInt(dir / "env.db", "SELECT COUNT(*) FROM runs"), 1);
}

// ---------------------------------------------------------------------------------------
// 6. A positive --filter glob; history --last N.
TEST(DocumentedE2E, FilterRunsOnlyMatchingCasesAndHistoryLastKeepsTheNewest) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 3);
  WriteFile(dir / "suites/selftest.json",
            SelftestTable(R"({"outcome": "pass"}, {"outcome": "pass", "metric": 0.5}, {"outcome": "fail"})"));
  const std::string db = (dir / "h.db").string();
  for (const auto& sha : shas) {
    auto r = RunHarness({"run", "--suites-dir", (dir / "suites").string(), "--db", db, "--repo",
                         (dir / "repo").string(), "--commit", sha, "--filter", "selftest/*_1"});
    ASSERT_EQ(r.exit_code, 0) << "_2 fails, so it must not have run: " << r.err;
  }
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM case_results"), 3);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM case_results WHERE case_id = 'selftest/test_outcome_1'"), 3);

  auto h = RunHarness({"history", "--db", db, "--case", "selftest/test_outcome_1", "--last", "2", "--format", "json"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  auto j = ParseJson(h.out, "stdout");
  ASSERT_TRUE(j.ok()) << h.out;
  ASSERT_EQ((*j)["commits"].size(), 2u) << h.out;
  EXPECT_EQ((*j)["commits"][0]["commit"], shas[1]);
  EXPECT_EQ((*j)["commits"][1]["commit"], shas[2]);
  auto text = RunHarness({"history", "--db", db, "--case", "selftest/test_outcome_1", "--last", "2"});
  EXPECT_EQ(text.out.find(ShortSha(shas[0])), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(ShortSha(shas[2])), std::string::npos) << text.out;
}

// The metric name of the case whose id ends with case_suffix in a `run --format json`
// summary (null when there is none).
Json CaseMetric(const ProcessResult& r, const std::string& case_suffix, const std::string& name) {
  auto j = ParseJson(r.out, "stdout");
  if (!j.ok()) return nullptr;
  for (const auto& c : (*j)["cases"]) {
    const std::string id = c["id"];
    if (id.size() < case_suffix.size() || id.compare(id.size() - case_suffix.size(), case_suffix.size(), case_suffix))
      continue;
    for (const auto& m : c["metrics"])
      if (m["name"] == name) return m;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// 7. The FP8 numbers of docs/gsm8k.md through `harness run` and `harness compare`.
// The fault switches say where and how a run ran, not what it measured (docs/store.md), so
// the healthy nightly is the faulty one's baseline: the seed's story, 0.925 -> 0.912 at
// batch 64, told by `harness run` itself.
TEST(DocumentedE2E, Fp8ScaleFaultCostsSixteenQuestionsAtBatch64) {
  TempDir dir;
  auto shas = testing_util::MakeGitRepo(dir / "repo", 2);
  const std::string db = (dir / "h.db").string();
  auto run_at = [&](const std::string& sha, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "--suite", "gsm8k", "--db", db, "--repo",
                                     (dir / "repo").string(), "--commit", sha, "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunHarness(args, {.timeout_s = 240});
  };
  auto correct = [&](int64_t run_id, const std::string& case_suffix) {
    return QueryInt(db, "SELECT COUNT(*) FROM samples s JOIN case_results c ON c.id = s.case_result_id "
                        "WHERE c.run_id = " + std::to_string(run_id) + " AND c.case_id LIKE '%" + case_suffix +
                        "' AND s.outcome = 'correct'");
  };

  auto healthy = run_at(shas[0], {});
  ASSERT_EQ(healthy.exit_code, 0) << healthy.err;
  EXPECT_EQ(CaseMetric(healthy, "_1", "accuracy")["n"], 1319) << healthy.out;
  EXPECT_EQ(correct(1, "_1"), 1218);
  EXPECT_EQ(correct(1, "_0"), 1218);

  // The faulty nightly on the next commit: its baseline is the healthy one (same measured
  // identity, the fault only in its context). At batch 64 it lost 16 questions and gained
  // none: REGRESSED, exit 1; at batch 1 the repaired layout changes nothing: SAME.
  auto faulty = run_at(shas[1], {"--fault", "fp8-scale-unrepaired"});
  EXPECT_EQ(faulty.exit_code, 1) << faulty.err << faulty.out;
  EXPECT_EQ(correct(2, "_1"), 1202);
  EXPECT_EQ(CaseMetric(faulty, "_1", "baseline_verdict")["verdict"], "REGRESSED") << faulty.out;
  EXPECT_EQ(CaseMetric(faulty, "_1", "mcnemar_b")["value"], 16) << faulty.out;
  EXPECT_EQ(CaseMetric(faulty, "_1", "mcnemar_c")["value"], 0) << faulty.out;
  EXPECT_EQ(CaseMetric(faulty, "_0", "baseline_verdict")["verdict"], "SAME") << faulty.out;
  EXPECT_EQ(CaseMetric(faulty, "_0", "mcnemar_b")["value"], 0) << faulty.out;
  EXPECT_EQ(QueryText(db, "SELECT config_hash FROM runs WHERE id = 1"),
            QueryText(db, "SELECT config_hash FROM runs WHERE id = 2"));
  EXPECT_NE(QueryText(db, "SELECT context_json FROM runs WHERE id = 2").find("fp8-scale-unrepaired"),
            std::string::npos) << "the fault is stored with the run";
  EXPECT_EQ(QueryText(db, "SELECT config_json FROM runs WHERE id = 2").find("fp8-scale-unrepaired"),
            std::string::npos) << "and is no part of what was measured";

  // compare pairs any two commits per question: the documented REGRESSED, b = 16, c = 0.
  auto cmp = RunHarness({"compare", shas[0], shas[1], "--case", "gsm8k/*_1", "--db", db, "--format", "json"});
  EXPECT_EQ(cmp.exit_code, 1) << cmp.err;
  auto j = ParseJson(cmp.out, "stdout");
  ASSERT_TRUE(j.ok()) << cmp.out;
  ASSERT_EQ((*j)["cases"].size(), 1u) << cmp.out;
  const auto& paired = (*j)["cases"][0]["paired"];
  EXPECT_EQ(paired["verdict"], "REGRESSED") << cmp.out;
  EXPECT_EQ(paired["b"], 16) << cmp.out;
  EXPECT_EQ(paired["c"], 0) << cmp.out;
  auto text = RunHarness({"compare", shas[0], shas[1], "--case", "gsm8k/*_1", "--db", db});
  EXPECT_NE(text.out.find("paired: REGRESSED (b=16 lost, c=0 gained of 1319 paired samples"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace harness
