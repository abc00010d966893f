// harness run: the flags, then run/run.h does the work. Exit 0 all passed, 1 a case
// failed, 2 usage/input error, 3 infrastructure error.
#include <cstdio>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/commands.h"
#include "harness/cli/numeric_option.h"
#include "harness/eval/question_list.h"
#include "harness/results/metric_names.h"
#include "harness/results/night_verdict.h"
#include "harness/run/run.h"
#include "harness/stack/catalogue.h"
#include "harness/store/resolve_commit.h"
#include "harness/util/git.h"
#include "harness/util/output_file.h"
#include "harness/util/paths.h"
#include "reports/junit.h"
#include "reports/run_summary.h"
#include "runners/openai/served_models.h"

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
  std::optional<uint64_t> seed;
  int rerun_at_risk = 0;
  std::string shard;
  std::string nightly;
  std::string questions;
};

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

// How long the server may take to list its models (GET /v1/models) before the run goes on
// keyed by the requested model alone.
constexpr double kModelListTimeoutS = 10;

// The eval endpoint: --endpoint, else the one the stack's config section names (the openai
// stack's), whose session starts the server when the section launches one.
std::optional<EndpointTarget> BuildEndpoint(const RunOptions& o, const StackConfig& config, const Stack& stack,
                                            std::unique_ptr<EvalEndpointSession>& session) {
  std::optional<EndpointTarget> target;
  if (!o.endpoint.empty()) {
    if (o.model.empty()) throw FatalError(ExitCode::kUsage, "--endpoint needs --model NAME");
    target = EndpointTarget{o.endpoint, o.model, o.chat, o.api_key_env};
  } else if (stack.ServesEvalEndpoint()) {
    session = ValueOrThrow(stack.OpenEvalEndpoint(config, o.stack_config.empty() ? "stack config" : o.stack_config));
    target = session->endpoint;
  } else if (!o.api_key_env.empty() || o.chat || !o.model.empty()) {
    throw FatalError(ExitCode::kUsage, "--model, --chat and --api-key-env go with --endpoint URL");
  }
  // An unset key variable would send every request unauthenticated: an input error, before any case runs.
  if (target && !target->api_key_env.empty()) {
    const char* key = std::getenv(target->api_key_env.c_str());
    if (!key || !*key)
      throw FatalError(ExitCode::kUsage,
                       fmt::format("--api-key-env {}: that environment variable is not set", target->api_key_env));
  }
  return target;
}

// --shard wins over GoogleTest's environment variables, which CI engines set.
Shard ChooseShard(const RunOptions& o) {
  if (!o.shard.empty()) return ValueOrThrow(ParseShard(o.shard));
  return ValueOrThrow(ShardFromEnvironment()).value_or(Shard{});
}

// What RunSuites is asked: the selected cases of this shard, the stack and endpoint, the
// baseline, resume and nightly; session gets the stack's endpoint session, if it serves one.
RunRequest BuildRunRequest(const RunOptions& o, std::vector<std::string> selected, std::vector<SuiteTable> tables,
                           const Shard& shard, const StackConfig& config, const Stack& stack,
                           std::unique_ptr<EvalEndpointSession>& session) {
  RunRequest request;
  request.case_ids = std::move(selected);
  request.tables = std::move(tables);
  request.stack_config = config;
  request.endpoint = BuildEndpoint(o, request.stack_config, stack, session);
  request.repo = o.repo;
  request.baseline_rev = o.baseline;
  request.resume = o.resume;
  request.noise_seed = o.seed;
  request.shard = shard;
  // --nightly wins over the CI engine's pipeline or run id. A run a bisect command makes
  // (HARNESS_BISECT) belongs to no nightly, even inside the nightly's CI job.
  if (const char* made_for = std::getenv("HARNESS_BISECT")) request.made_for = made_for;
  request.nightly = !o.nightly.empty() || !request.made_for.empty() ? o.nightly : NightlyFromEnvironment();
  if (shard.count > 1 && request.nightly.empty())
    throw FatalError(ExitCode::kUsage, fmt::format("shard {} needs --nightly ID (e.g. the CI pipeline id; default "
                                                   "$CI_PIPELINE_ID or $GITHUB_RUN_ID): it is what makes the shards "
                                                   "one logical run after 'harness merge'",
                                                   shard.Word()));
  return request;
}

// --questions FILE: the question indices of a partial run (none when FILE names every
// question: a whole run). Only a suite whose table says evaluates_questions takes them.
std::optional<std::vector<int64_t>> PartialQuestions(const RunOptions& o, const std::vector<SuiteTable>& tables,
                                                     const std::vector<std::string>& selected) {
  if (o.questions.empty()) return std::nullopt;
  if (auto s = CheckQuestionsSelectable(tables, selected, o.questions); !s) throw FatalError(s.error());
  auto list = ValueOrThrow(LoadGsm8kQuestionList(o.questions));
  if (list.whole()) return std::nullopt;
  return std::move(list.indices);
}

// One line on stderr per rerun case: its status, accuracy and gate.
void PrintReruns(const std::vector<RunResult>& reruns) {
  for (std::size_t k = 0; k < reruns.size(); ++k)
    for (const auto& c : reruns[k].cases) {
      std::string detail;
      for (const auto& m : c.metrics) {
        if (m.name == metric_names::kAccuracy) detail += fmt::format(", accuracy {:.4f}", m.value);
        if (m.name == metric_names::kGateVerdict) detail += fmt::format(", gate {}", m.label);
      }
      std::fprintf(stderr, "harness: rerun %zu (run %lld) %s: %s%s\n", k + 1, static_cast<long long>(reruns[k].run_id),
                   c.case_id.c_str(), std::string(Label(c.status)).c_str(), detail.c_str());
    }
}

// The run's summary on stdout (text or JSON) and its exit code: both state the night's
// verdict (harness/results/night_verdict.h), as JUnit does.
int ReportRun(const RunOptions& o, const RunRequest& request, const RunResult& result, const NightSummary& night) {
  if (o.format == "json") {
    Json j = reports::RunSummaryJson(result.run_id, request.commit.sha, result.identity_hash, result.context,
                                     result.cases);
    j["partial_questions"] = request.questions ? Json(request.questions->size()) : Json(nullptr);
    j["night_verdict"] = Word(night.verdict);
    j["night"] = night.Line();
    std::printf("%s\n", DumpJson(j).c_str());
  } else {
    std::fputs(reports::RunSummaryText(result.cases, night).c_str(), stdout);
  }
  if (result.store_error) std::fprintf(stderr, "harness: error: %s\n", result.store_error->message.c_str());
  return night.ExitCode();
}

// The night's verdict over the run's cases; a run that could not store them is incomplete.
NightSummary JudgeRun(const RunResult& result) {
  NightCounts counts;
  for (const auto& c : result.cases) counts.Add(c);
  counts.not_stored = result.store_error.has_value() || result.status == RunStatus::kRunning;
  return JudgeNight(counts);
}

int RunCommand(const RunOptions& o) {
  if (o.format != "text" && o.format != "json") throw FatalError(ExitCode::kUsage, "--format is text or json");
  auto tables = ValueOrThrow(PrepareSuites(o.suites_dir.empty() ? SuitesDir() : std::filesystem::path(o.suites_dir)));
  auto selected = ValueOrThrow(SelectCases(tables, o.suites, o.filter));
  const Shard shard = ChooseShard(o);
  selected = CasesOfShard(selected, tables, shard);
  if (o.list) {
    if (o.format == "json") std::printf("%s\n", DumpJson(Json(selected)).c_str());
    else
      for (const auto& c : selected) std::printf("%s\n", c.c_str());
    return 0;
  }
  std::unique_ptr<EvalEndpointSession> session;
  auto questions = PartialQuestions(o, tables, selected);
  const StackConfig config = BuildStackConfig(o);
  auto stack = ValueOrThrow(MakeStack(config));
  RunRequest request = BuildRunRequest(o, std::move(selected), std::move(tables), shard, config, *stack, session);
  request.questions = std::move(questions);
  if (!o.junit.empty()) ValueOrThrow(CheckOutputPath(o.junit, o.db, "--junit"));
  request.commit = ResolveCommitOption(o.commit, o.repo);
  auto store = ValueOrThrow(Store::Open(o.db));
  request.commit.sha = ValueOrThrow(StoredSpelling(store->reader(), request.commit.sha));  // one commit, one sha
  // A server the stack launches starts once every input is checked; it stops with its
  // process group when the session ends, however the run ends (and by its guardian when
  // this process dies).
  if (session) {
    if (auto started = session->Start(o.db); !started) throw FatalError(started.error());
    request.endpoint = session->endpoint;
    request.server_log = session->server_log;
  }
  if (request.endpoint) request.endpoint->served_models = openai::ServedModels(*request.endpoint, kModelListTimeoutS);
  RunResult result = ValueOrThrow(RunSuites(request, *stack, *store));
  // Reruns are evidence for the flaky thresholds, stored as runs of their own; the summary,
  // JUnit and the exit code stay those of the nightly run itself (docs/report.md).
  if (o.rerun_at_risk > 0 && !result.store_error)
    PrintReruns(ValueOrThrow(RerunAtRisk(request, result, o.rerun_at_risk, *stack, *store)));
  session.reset();

  const NightSummary night = JudgeRun(result);
  if (!o.junit.empty()) ValueOrThrow(WriteOutputFile(o.junit, reports::JunitXml(result.cases, {}, &night)));
  return ReportRun(o, request, result, night);
}

}  // namespace

CommandMain SetupRun(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  app.add_option("--suite", o->suites, "Suite to run (repeatable); default: every nightly suite")
      ->allow_extra_args(false);
  app.add_option("--filter", o->filter, "Glob over case ids, e.g. 'gmm/*_3'");
  app.add_option("--stack", o->stack,
                 fmt::format("Stack to drive: {} (default: the config's, else refstack)", fmt::join(StackNames(), "|")));
  app.add_option("--stack-config", o->stack_config, "Stack config JSON (device, precision, batch, faults, stack keys)");
  app.add_option("--fault", o->faults, "Reference-stack fault switch from golden/regressions.json (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--db", o->db, "SQLite results database (env HARNESS_DB, default harness.db)");
  app.add_option("--commit", o->commit, "Commit the results belong to: a hex sha, or a revision of --repo (default: HEAD)");
  app.add_option("--repo", o->repo, "Git repository of the stack under test (default: .)");
  app.add_option("--junit", o->junit, "Also write JUnit XML to this file");
  app.add_option("--format", o->format, "Summary format: text|json");
  app.add_option("--suites-dir", o->suites_dir, "Folder of suite tables (default: $HARNESS_ROOT/suites)");
  app.add_option("--endpoint", o->endpoint, "Eval loops talk to this OpenAI-compatible server instead of the stand-in");
  app.add_option("--model", o->model, "Model name to send to --endpoint");
  app.add_flag("--chat", o->chat, "Use /v1/chat/completions instead of /v1/completions");
  app.add_option("--api-key-env", o->api_key_env, "Environment variable holding the endpoint's API key");
  app.add_option("--baseline", o->baseline,
                 "Commit to compare paired per-sample outcomes against (default: newest passing first-parent ancestor)");
  app.add_flag("--list", o->list, "List the selected cases and exit");
  app.add_flag("--resume", o->resume, "Continue the interrupted run of this commit and identity");
  AddNumericOption(app, "--seed", o->seed, kSeedRange,
                 "Noise seed of a stand-in with rerun noise (default: the run id); not part of the run identity");
  AddNumericOption(app, "--rerun-at-risk", o->rerun_at_risk, WholeIn(0, 100),
                 "Rerun each AT-RISK case up to N times (stopping once its reruns settle it), each rerun stored as "
                 "a run of its own");
  app.add_option("--shard", o->shard,
                 "Run shard I of N (0-based, e.g. 1/4) of the selected cases, even by expected cost (default: "
                 "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS when set)");
  app.add_option("--questions", o->questions,
                 "File of GSM8K question keys, one per line ('#' comments, '*' for all): evaluate only those; the run "
                 "is stored partial, bisect evidence that never feeds a gate, baseline or trend (docs/gsm8k.md)");
  app.add_option("--nightly", o->nightly,
                 "Id shared by the shards of one nightly; default gitlab-$CI_PIPELINE_ID, else "
                 "github-$GITHUB_RUN_ID when set; needed with --shard");
  return [o] { return RunCommand(*o); };
}

}  // namespace harness
