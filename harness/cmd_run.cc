// harness run: load the suite tables, pick the cases, build the stack, and run the
// cases through GoogleTest with the store listener. Exit 0 all passed, 1 a case failed,
// 2 usage/input error, 3 infrastructure error.
#include <fnmatch.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/catalogue.h"
#include "harness/commands.h"
#include "harness/git.h"
#include "harness/paths.h"
#include "harness/run_context.h"
#include "harness/run_listener.h"
#include "harness/stack.h"
#include "harness/store.h"
#include "harness/suite_table.h"
#include "harness/version.h"
#include "reports/junit.h"

namespace harness {
namespace {

struct RunOptions {
  std::vector<std::string> suites;
  std::string filter;
  std::string stack;
  std::string stack_config;
  std::vector<std::string> faults;
  std::string db = DefaultDbPath();
  std::string commit;
  std::string repo = ".";
  std::string junit;
  std::string format = "text";
  std::string suites_dir;
  std::string endpoint, model, api_key_env;
  std::string baseline;
  bool chat = false;
  bool list = false;
  bool resume = false;
};

struct SelectedCase {
  std::string case_id;
  std::string gtest_name;  // Suite/Fixture.test/N
};

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Every registered suite case, keyed by case id.
std::map<std::string, SelectedCase> RegisteredCases() {
  std::map<std::string, SelectedCase> out;
  auto* unit = testing::UnitTest::GetInstance();
  for (int i = 0; i < unit->total_test_suite_count(); ++i) {
    const auto* suite = unit->GetTestSuite(i);
    for (int j = 0; j < suite->total_test_count(); ++j) {
      const auto* info = suite->GetTestInfo(j);
      if (auto id = CaseIdOf(*info))
        out[id->second] = {id->second, std::string(info->test_suite_name()) + "." + info->name()};
    }
  }
  return out;
}

// Every table row must have a TEST_P behind it, or the table names a test that does not exist.
Status CheckTablesAgainstBinary(const std::vector<SuiteTable>& tables, const std::map<std::string, SelectedCase>& registered) {
  for (const auto& t : tables)
    for (const auto& [test, rows] : t.tests)
      for (const auto& row : rows)
        if (!registered.count(row.CaseId()))
          return UsageError(fmt::format("{}: tests.{}: no test of that name in suite '{}' of this binary", t.path, test, t.suite));
  return OkStatus();
}

Result<std::vector<SelectedCase>> Select(const RunOptions& o, const std::vector<SuiteTable>& tables,
                                         const std::map<std::string, SelectedCase>& registered) {
  std::set<std::string> suites;
  std::vector<std::string> known;
  for (const auto& t : tables) known.push_back(t.suite);
  if (o.suites.empty()) {
    for (const auto& t : tables)
      if (t.nightly) suites.insert(t.suite);
  } else {
    for (const auto& s : o.suites) {
      if (std::find(known.begin(), known.end(), s) == known.end())
        return UsageError(fmt::format("unknown suite '{}' (known: {})", s, Join(known, ", ")));
      suites.insert(s);
    }
  }
  std::vector<SelectedCase> out;
  std::vector<std::string> in_suites;
  for (const auto& t : tables) {
    if (!suites.count(t.suite)) continue;
    for (const auto& [test, rows] : t.tests)
      for (const auto& row : rows) {
        in_suites.push_back(row.CaseId());
        if (!o.filter.empty() && fnmatch(o.filter.c_str(), row.CaseId().c_str(), 0) != 0) continue;
        out.push_back(registered.at(row.CaseId()));
      }
  }
  if (out.empty())
    return UsageError(fmt::format("no case matches '{}' (known: {})", o.filter.empty() ? "*" : o.filter, Join(in_suites, ", ")));
  return out;
}

CommitInfo ResolveCommit(const RunOptions& o) {
  if (o.commit.empty()) {
    auto c = ReadCommit(o.repo, "HEAD");
    if (!c) throw FatalError(ExitCode::kUsage, fmt::format("{} (pass --commit SHA when not in a git checkout)", c.error().message));
    return *c;
  }
  if (auto c = ReadCommit(o.repo, o.commit)) return *c;
  // No git or not a commit of that repo: the commit is stored as given, without metadata.
  CommitInfo c;
  c.sha = o.commit;
  return c;
}

StackConfig BuildStackConfig(const RunOptions& o) {
  StackConfig config;
  if (!o.stack_config.empty()) config = ValueOrThrow(LoadStackConfig(o.stack_config));
  if (!o.stack.empty()) config.stack = o.stack;
  for (const auto& f : o.faults) config.faults.push_back(f);
  if (!config.faults.empty()) {
    auto catalogue = ValueOrThrow(LoadCatalogue(GoldenDir() / "regressions.json"));
    if (auto s = ValidateFaults(config.faults, catalogue); !s) throw FatalError(s.error());
  }
  return config;
}

std::optional<EndpointTarget> BuildEndpoint(const RunOptions& o, const StackConfig& config) {
  if (!o.endpoint.empty()) {
    if (o.model.empty()) throw FatalError(ExitCode::kUsage, "--endpoint needs --model NAME");
    return EndpointTarget{o.endpoint, o.model, o.chat, o.api_key_env};
  }
  if (config.stack == "openai") {
    JsonObject cfg(config.raw.value("openai", Json::object()), o.stack_config.empty() ? "stack config" : o.stack_config, "openai");
    return EndpointTarget{ValueOrThrow(cfg.String("base_url")), ValueOrThrow(cfg.String("model")),
                          ValueOrThrow(cfg.Bool("chat", false)), ValueOrThrow(cfg.String("api_key_env", ""))};
  }
  return std::nullopt;
}

// How far back a baseline is looked for on the first-parent chain.
constexpr int kBaselineSearchDepth = 1000;

BaselineLookup MakeBaselineLookup(Store& store, const RunOptions& o, const CommitInfo& commit, int64_t run_id) {
  std::vector<std::string> ancestors;
  std::string baseline_sha;
  if (!o.baseline.empty()) {
    auto c = ReadCommit(o.repo, o.baseline);
    baseline_sha = c ? c->sha : o.baseline;  // without git, as given
  } else if (commit.first_parent_ordinal) {
    auto a = FirstParentAncestors(o.repo, commit.sha, kBaselineSearchDepth);
    if (a) ancestors = std::move(a).value();
  }
  return [&store, baseline_sha, ancestors, ordinal = commit.first_parent_ordinal,
          run_id](const std::string& case_id) -> Result<std::optional<Baseline>> {
    std::optional<CaseRef> ref;
    if (!baseline_sha.empty()) {
      auto r = store.NewestCaseAt(case_id, baseline_sha, /*passing_only=*/false, run_id);
      if (!r) return r.error();
      if (!*r) return UsageError(fmt::format("--baseline {}: no stored result of {} at that commit", baseline_sha, case_id));
      ref = **r;
    } else if (!ancestors.empty()) {
      for (const auto& sha : ancestors) {
        auto r = store.NewestCaseAt(case_id, sha, /*passing_only=*/true, run_id);
        if (!r) return r.error();
        if (*r) {
          ref = **r;
          break;
        }
      }
    } else if (ordinal) {  // no git here: the stored first-parent order stands in for ancestry
      auto r = store.NewestCaseBelowOrdinal(case_id, *ordinal, /*passing_only=*/true, run_id);
      if (!r) return r.error();
      ref = *r;
    }
    if (!ref) return std::optional<Baseline>();
    auto samples = store.Samples(ref->case_result_id);
    if (!samples) return samples.error();
    return std::optional<Baseline>(Baseline{ref->sha, ref->run_id, ref->status, std::move(samples).value()});
  };
}

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string KeyDetail(const CaseSummary& s) {
  if (!s.message.empty()) {  // a failure, or a passing case's note (an AT-RISK verdict)
    std::string first = s.message.substr(0, s.message.find('\n'));
    // "file:line: message" -> message: the location is in the store and the JUnit file.
    if (auto p = first.find(": "); p != std::string::npos && first.find(':') < p) first = first.substr(p + 2);
    return first.size() > 100 ? first.substr(0, 97) + "..." : first;
  }
  if (!s.metrics.empty()) {
    const auto& m = s.metrics.front();
    std::string d = fmt::format("{}={:.4g}", m.name, m.value);
    if (m.low && m.high) d += fmt::format(" [{:.4g}, {:.4g}]", *m.low, *m.high);
    return d;
  }
  return "";
}

Json SummaryJson(int64_t run_id, const CommitInfo& commit, const std::vector<CaseSummary>& cases) {
  Json j;
  j["format_version"] = 1;
  j["run_id"] = run_id;
  j["commit"] = commit.sha;
  std::map<std::string, int> counts{{"pass", 0}, {"fail", 0}, {"error", 0}, {"skip", 0}};
  j["cases"] = Json::array();
  for (const auto& c : cases) {
    counts[c.status]++;
    Json cj{{"id", c.case_id}, {"status", c.status}, {"message", c.message}, {"duration_s", c.duration_s}};
    cj["metrics"] = Json::array();
    for (const auto& m : c.metrics) {
      Json mj{{"name", m.name}, {"value", m.value}, {"n", m.n}};
      if (m.low) mj["low"] = *m.low;
      if (m.high) mj["high"] = *m.high;
      cj["metrics"].push_back(mj);
    }
    j["cases"].push_back(cj);
  }
  j["summary"] = counts;
  return j;
}

void PrintTextSummary(const std::vector<CaseSummary>& cases) {
  std::size_t width = 4;
  for (const auto& c : cases) width = std::max(width, c.case_id.size());
  std::map<std::string, int> counts;
  std::printf("%-6s  %-*s  %s\n", "STATUS", static_cast<int>(width), "CASE", "DETAIL");
  for (const auto& c : cases) {
    counts[c.status]++;
    std::string status = c.status;
    for (auto& ch : status) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    std::printf("%-6s  %-*s  %s\n", status.c_str(), static_cast<int>(width), c.case_id.c_str(), KeyDetail(c).c_str());
  }
  std::printf("%d passed, %d failed, %d errors, %d skipped\n", counts["pass"], counts["fail"], counts["error"], counts["skip"]);
}

int RunCases(const RunOptions& o) {
  if (o.format != "text" && o.format != "json") throw FatalError(ExitCode::kUsage, "--format is text or json");
  auto tables = ValueOrThrow(LoadSuiteTables(o.suites_dir.empty() ? SuitesDir() : std::filesystem::path(o.suites_dir)));
  InstallSuiteTables(tables);
  int gtest_argc = 1;
  char gtest_arg0[] = "harness";
  char* gtest_argv[] = {gtest_arg0, nullptr};
  testing::InitGoogleTest(&gtest_argc, gtest_argv);
  auto registered = RegisteredCases();
  if (auto s = CheckTablesAgainstBinary(tables, registered); !s) throw FatalError(s.error());
  auto selected = ValueOrThrow(Select(o, tables, registered));

  if (o.list) {
    if (o.format == "json") {
      Json j = Json::array();
      for (const auto& c : selected) j.push_back(c.case_id);
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      for (const auto& c : selected) std::printf("%s\n", c.case_id.c_str());
    }
    return 0;
  }

  StackConfig config = BuildStackConfig(o);
  auto endpoint = BuildEndpoint(o, config);
  auto stack = ValueOrThrow(MakeStack(config));
  auto store = ValueOrThrow(Store::Open(o.db));
  CommitInfo commit = ResolveCommit(o);
  int64_t commit_id = ValueOrThrow(store->UpsertCommit(commit));

  std::optional<int64_t> resumed;
  std::set<std::string> finished;  // cases a resumed run already finished
  if (o.resume) {
    resumed = ValueOrThrow(store->FindInterruptedRun(commit_id, config.Hash()));
    if (resumed) {
      ValueOrThrow(store->ReopenRun(*resumed));
      for (const auto& c : ValueOrThrow(store->Cases(*resumed)))
        if (c.status != "running") finished.insert(c.case_id);
      std::fprintf(stderr, "harness: resuming run %lld (%zu cases already finished)\n",
                   static_cast<long long>(*resumed), finished.size());
    } else {
      std::fprintf(stderr, "harness: no interrupted run of this commit and config; starting a new run\n");
    }
  }
  int64_t run_id = resumed ? *resumed
                           : ValueOrThrow(store->BeginRun(NewRun{commit_id, config.stack, config.Hash(),
                                                                 config.ToJson().dump(), Hostname(), kVersion}));

  RunContext& ctx = CurrentRun();
  ctx.stack_config = config;
  ctx.stack = stack.get();
  ctx.endpoint = endpoint;
  ctx.baseline = MakeBaselineLookup(*store, o, commit, run_id);

  std::string filter;
  for (const auto& c : selected)
    if (!finished.count(c.case_id)) filter += (filter.empty() ? "" : ":") + c.gtest_name;
  GTEST_FLAG_SET(filter, filter.empty() ? "-*" : filter);

  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  delete listeners.Release(listeners.default_result_printer());
  auto* listener = new RunListener(*store, run_id, o.resume);
  listeners.Append(listener);  // owned by GoogleTest from here
  if (RUN_ALL_TESTS() != 0) {}  // the listener has every verdict; its summaries decide the exit code

  std::vector<CaseSummary> cases = listener->summaries();
  if (resumed) {  // the summary covers the whole run, not only this invocation
    std::vector<CaseSummary> all;
    for (const auto& c : ValueOrThrow(store->Cases(run_id))) {
      auto it = std::find_if(cases.begin(), cases.end(), [&](const CaseSummary& s) { return s.case_id == c.case_id; });
      if (it != cases.end()) all.push_back(*it);
      else all.push_back(CaseSummary{c.case_id, c.status, c.duration_s, c.message, ValueOrThrow(store->Metrics(c.id))});
    }
    cases = std::move(all);
  }
  bool any_error = listener->store_error().has_value(), any_fail = false;
  for (const auto& c : cases) {
    any_error |= c.status == "error";
    any_fail |= c.status == "fail";
  }
  std::string run_status = any_error ? "error" : any_fail ? "failed" : "passed";
  if (auto s = store->FinishRun(run_id, run_status); !s) any_error = true;

  if (!o.junit.empty()) {
    std::ofstream out(o.junit, std::ios::binary);
    out << reports::JunitXml(cases);
    if (!out) throw FatalError(ExitCode::kInfra, fmt::format("{}: cannot write JUnit XML", o.junit));
  }
  if (o.format == "json") std::printf("%s\n", SummaryJson(run_id, commit, cases).dump(2).c_str());
  else PrintTextSummary(cases);
  if (listener->store_error())
    std::fprintf(stderr, "harness: error: %s\n", listener->store_error()->message.c_str());
  ctx = RunContext();
  return static_cast<int>(any_error ? ExitCode::kInfra : any_fail ? ExitCode::kFail : ExitCode::kPass);
}

}  // namespace

CommandMain SetupRun(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  app.add_option("--suite", o->suites, "Suite to run (repeatable); default: every nightly suite");
  app.add_option("--filter", o->filter, "Glob over case ids, e.g. 'gmm/*_3'");
  app.add_option("--stack", o->stack, "Stack to drive: " + Join(StackNames(), "|") + " (default: the config's, else refstack)");
  app.add_option("--stack-config", o->stack_config, "Stack config JSON (device, precision, batch, faults, stack keys)");
  app.add_option("--fault", o->faults, "Reference-stack fault switch from golden/regressions.json (repeatable)");
  app.add_option("--db", o->db, "SQLite results database (env HARNESS_DB, default harness.db)");
  app.add_option("--commit", o->commit, "Commit the results belong to (default: git rev-parse HEAD in --repo)");
  app.add_option("--repo", o->repo, "Git repository of the stack under test (default: .)");
  app.add_option("--junit", o->junit, "Also write JUnit XML to this file");
  app.add_option("--format", o->format, "Summary format: text|json");
  app.add_option("--suites-dir", o->suites_dir, "Folder of suite tables (default: $HARNESS_ROOT/suites)");
  app.add_option("--endpoint", o->endpoint, "Eval loops talk to this OpenAI-compatible server instead of the stand-in");
  app.add_option("--model", o->model, "Model name to send to --endpoint");
  app.add_flag("--chat", o->chat, "Use /v1/chat/completions instead of /v1/completions");
  app.add_option("--api-key-env", o->api_key_env, "Environment variable holding the endpoint's API key");
  app.add_option("--baseline", o->baseline, "Commit to compare paired per-sample outcomes against (default: newest passing first-parent ancestor)");
  app.add_flag("--list", o->list, "List the selected cases and exit");
  app.add_flag("--resume", o->resume, "Continue the interrupted run of this commit and config");
  return [o] { return RunCases(*o); };
}

}  // namespace harness
